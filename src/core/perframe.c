/* Per-frame chances; see perframe.h. */
#include "perframe.h"

void le_chance_carry(struct le_chance_state *n, const struct le_chance_state *o, const struct le_chance *nc,
		     const struct le_chance *oc)
{
	*n = *o;
	if (!le_prob_same(nc->p, oc->p))
		n->left = 0;
}

void le_chance_init(struct le_chance_state *s, uint64_t seed, uint32_t direction, uint32_t cls,
		    enum le_rng_stream stream)
{
	le_rng_seed_class(&s->rng, seed, direction, cls, stream);
	s->last = 0;
	s->primed = 0;
	s->left = 0;
}

int le_chance_draw_corr(struct le_chance_state *s, const struct le_chance *c)
{
	if (!s->primed) {
		s->last = le_rng_u64(&s->rng); /* netem's init_crandom */
		s->primed = 1;
	}
	return le_rng_chance_corr(&s->rng, c->p, c->corr, &s->last);
}

uint64_t le_corrupt_bytes(struct le_chance_state *s, uint8_t *bytes, uint32_t n)
{
	uint64_t byte = le_rng_below(&s->rng, n);
	unsigned bit = (unsigned)(le_rng_u64(&s->rng) >> 61); /* top 3 bits: 0..7 */

	bytes[byte] ^= (uint8_t)(1u << bit);
	return byte * 8 + bit;
}
