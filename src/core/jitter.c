/* Jitter; see jitter.h. */
#include "jitter.h"

#include <string.h>

void le_jitter_carry(struct le_jitter_state *n, const struct le_jitter_state *o)
{
	n->rng = o->rng;
	n->last = o->last;
	n->primed = o->primed;
}

int le_jitter_init(struct le_jitter_state *s, const struct le_link_config *c, uint64_t seed,
		   uint32_t direction, uint32_t cls, char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	le_rng_seed_class(&s->rng, seed, direction, cls, LE_STREAM_JITTER);
	if (c->jitter == 0)
		return 0;
	return le_dist_table_init(&s->table, c->dist, c->dist_file, err, errlen);
}

void le_jitter_free(struct le_jitter_state *s)
{
	le_dist_table_free(&s->table);
}

/* Never inlined: the draw loops call it only for tables and correlation,
 * and inlined into link_burst.c's (which LTO did once a third of them
 * came) its registers cost the uniform draw's loop 5 instructions a frame
 * (cachegrind, the jitter row). */
__attribute__((noinline)) le_ns_t le_jitter_draw(struct le_jitter_state *s, const struct le_link_config *c)
{
	uint64_t rnd;
	int64_t d;

	if (c->jitter == 0)
		return c->delay;
	if (le_corr_none(c->jitter_corr)) {
		rnd = le_rng_u64(&s->rng);
	} else {
		if (!s->primed) {
			s->last = le_rng_u64(&s->rng);
			s->primed = 1;
		}
		rnd = le_rng_corr(&s->rng, c->jitter_corr, &s->last);
	}
	/* delay and jitter are at most an hour each: no int64 overflow. */
	d = le_tabledist((int64_t)c->delay, (int64_t)c->jitter, rnd, &s->table);
	return d < 0 ? 0 : (le_ns_t)d;
}
