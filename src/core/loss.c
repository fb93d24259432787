/* Loss stage; see loss.h. */
#include "loss.h"

void le_loss_init(struct le_loss_state *s, uint64_t seed, uint32_t direction)
{
	le_rng_seed(&s->rng, seed, direction, LE_STREAM_LOSS);
}

int le_loss_decide(struct le_loss_state *s, const struct le_loss_config *c)
{
	switch (c->model) {
	case LE_LOSS_RANDOM:
		/* Exactly one draw per frame, even when p is 0 or 1, so the
		 * stream's position depends only on how many frames arrived. */
		return le_rng_chance(&s->rng, c->p);
	case LE_LOSS_NONE:
	default:
		return 0;
	}
}
