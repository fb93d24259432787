/* Loss models; see loss.h. The chains follow the current sch_netem.c
 * (loss_gilb_ell, loss_4state), with 64-bit thresholds instead of
 * netem's 32-bit ones; gemodel's rare chances are drawn as gaps (the same
 * trials, fewer draws: rng.h le_rng_chance_gap). */
#include "loss.h"

void le_loss_carry(struct le_loss_state *n, const struct le_loss_state *o, int streams,
		   const struct le_loss_config *nc, const struct le_loss_config *oc)
{
	const int same_model = nc->model == oc->model;

	if (streams) {
		n->rng = o->rng;
		n->last = o->last;
		n->primed = o->primed;
		if (same_model && le_prob_same(nc->p, oc->p))
			n->left_p = o->left_p;
		for (int i = 0; same_model && i < 4; i++)
			if (le_prob_same(nc->prob[i], oc->prob[i]))
				n->left[i] = o->left[i];
	}
	if (same_model)
		n->state = o->state;
}

void le_loss_init_class(struct le_loss_state *s, uint64_t seed, uint32_t direction, uint32_t cls)
{
	le_rng_seed_class(&s->rng, seed, direction, cls, LE_STREAM_LOSS);
	s->last = 0;
	s->primed = 0;
	s->state = 1; /* netem starts both chains in state 1 (Good / gap-receive) */
	s->left_p = 0;
	for (int i = 0; i < 4; i++)
		s->left[i] = 0;
}

void le_loss_init(struct le_loss_state *s, uint64_t seed, uint32_t direction)
{
	le_loss_init_class(s, seed, direction, 0);
}

/* 4-state: prob[] = p13, p31, p32, p23, p14; cum[] holds the cumulative
 * thresholds the comparisons need (config.c fills them). */
static int four_state(struct le_loss_state *s, const struct le_loss_config *c)
{
	uint64_t u = le_rng_u64(&s->rng);

#define BELOW(p) ((p).always || u < (p).threshold)
	switch (s->state) {
	case 1:
		if (BELOW(c->prob[4])) {          /* p14: isolated loss */
			s->state = 4;
			return 1;
		}
		if (BELOW(c->cum[0])) {           /* p14 + p13: a burst starts */
			s->state = 3;
			return 1;
		}
		return 0;
	case 2:
		if (BELOW(c->prob[3])) {          /* p23: back into the burst's losses */
			s->state = 3;
			return 1;
		}
		return 0;
	case 3:
		if (BELOW(c->prob[2])) {          /* p32: a receive inside the burst */
			s->state = 2;
			return 0;
		}
		if (BELOW(c->cum[1])) {           /* p32 + p31: the burst ends */
			s->state = 1;
			return 0;
		}
		return 1;
	default:                                  /* 4: one loss, then back to 1 */
		s->state = 1;
		return 0;
	}
#undef BELOW
}

int le_loss_decide_model(struct le_loss_state *s, const struct le_loss_config *c)
{
	switch (c->model) {
	case LE_LOSS_RANDOM:
		if (le_corr_none(c->corr))
			return le_rng_chance_any(&s->rng, c->p, &s->left_p);
		if (!s->primed) {
			s->last = le_rng_u64(&s->rng); /* netem's init_crandom */
			s->primed = 1;
		}
		return le_rng_chance_corr(&s->rng, c->p, c->corr, &s->last);
	case LE_LOSS_GEMODEL:
		return le_loss_gemodel(s, c);
	case LE_LOSS_STATE:
		return four_state(s, c);
	case LE_LOSS_NONE:
	default:
		return 0;
	}
}
