/* Jitter: the per-frame delay drawn around `delay` (netem's tabledist).
 *
 *   delay TIME JITTER [CORR] [distribution uniform|normal|pareto|paretonormal|FILE]
 * Without a distribution (or with `uniform`) the delay is netem's
 * discrete uniform on [TIME - JITTER, TIME + JITTER - 1 ns]; with a table
 * it is TIME + JITTER * entry / 8192 (JITTER is then the standard
 * deviation). A negative result is taken as 0 (the frame is not sent
 * before it arrives). */
#ifndef LE_JITTER_H
#define LE_JITTER_H

#include <stdint.h>

#include "config.h"
#include "dist_table.h"
#include "rng.h"

struct le_jitter_state {
	struct le_rng rng;
	uint64_t last;
	int primed;
	struct le_dist_table table;
};

/* Allocates the table (generated, or read from the config's file). */
int le_jitter_init(struct le_jitter_state *s, const struct le_link_config *c, uint64_t seed,
		   uint32_t direction, uint32_t cls, char *err, size_t errlen);
void le_jitter_free(struct le_jitter_state *s);
/* Live change: `n` continues o's stream and correlated memory (n keeps
 * its own table). */
void le_jitter_carry(struct le_jitter_state *n, const struct le_jitter_state *o);
/* le_jitter_delay for any distribution and correlation: one draw. */
le_ns_t le_jitter_draw(struct le_jitter_state *s, const struct le_link_config *c);

/* The frame's delay (>= 0): one draw when jitter > 0, none otherwise.
 * The uniform draw without correlation (netem's default, and the jitter
 * rows of the benchmark) inline: a call per frame cost about a third of
 * the draw. The same draw as le_jitter_draw's (test_jitter's twin). */
static inline le_ns_t le_jitter_delay(struct le_jitter_state *s, const struct le_link_config *c)
{
	if (c->jitter == 0)
		return c->delay;
	if (s->table.size == 0 && le_corr_none(c->jitter_corr)) {
		/* delay and jitter are at most an hour each: no int64 overflow. */
		const int64_t d = le_tabledist_uniform((int64_t)c->delay, (int64_t)c->jitter, le_rng_u64(&s->rng));

		return d < 0 ? 0 : (le_ns_t)d;
	}
	return le_jitter_draw(s, c);
}

#endif
