/* Per-frame chances with netem's meanings: duplicate, corrupt, reorder.
 *
 * Each has its own random stream (rng.h) and optional netem correlation.
 *   duplicate P [CORR]  the frame is copied; the copy goes through the
 *                       link again (loss, corrupt, queue) but is never
 *                       copied itself (netem re-enqueues the clone at the
 *                       root with tc_depth++)
 *   corrupt P [CORR]    one random bit of the frame's first contiguous
 *                       bytes is flipped (netem: one bit within the
 *                       linear head, skb_headlen); checksums are left
 *                       wrong, as netem does
 *   reorder P [CORR] [gap N]  a chosen frame skips the delay
 *                       (link_stages.h, reorder_now) */
#ifndef LE_PERFRAME_H
#define LE_PERFRAME_H

#include <stdint.h>

#include "config.h"
#include "rng.h"

struct le_chance_state {
	struct le_rng rng;
	uint64_t last;
	int primed;
	uint64_t left; /* a rare chance's gap (rng.h le_rng_chance_gap) */
};

void le_chance_init(struct le_chance_state *s, uint64_t seed, uint32_t direction, uint32_t cls,
		    enum le_rng_stream stream);
/* A draw through the correlated generator (le_chance_draw's rare case). */
int le_chance_draw_corr(struct le_chance_state *s, const struct le_chance *c);
/* One trial: as gaps when the chance is rare and uncorrelated (one draw
 * per event), else one draw (through the correlated generator when a
 * correlation is set). Inline: every frame asks each stage. */
static inline int le_chance_draw(struct le_chance_state *s, const struct le_chance *c)
{
	if (le_corr_none(c->corr))
		return le_rng_chance_any(&s->rng, c->p, &s->left);
	return le_chance_draw_corr(s, c);
}
/* The quiet trials ahead (rng.h le_rng_chance_quiet): none when
 * correlated (every trial moves the generator's memory). */
static inline uint64_t le_chance_quiet(const struct le_chance_state *s, const struct le_chance *c)
{
	return le_corr_none(c->corr) ? le_rng_chance_quiet(c->p, s->left) : 0;
}
/* n quiet trials passed (n <= le_chance_quiet). */
static inline void le_chance_skip(struct le_chance_state *s, const struct le_chance *c, uint64_t n)
{
	le_rng_chance_skip(c->p, &s->left, n);
}
/* Live change from chance oc to nc: `n` continues o's stream and
 * correlated memory, and o's gap while the probability stays the same. */
void le_chance_carry(struct le_chance_state *n, const struct le_chance_state *o, const struct le_chance *nc,
		     const struct le_chance *oc);
/* Flips one uniformly chosen bit among the first n bytes (n >= 1); two
 * more draws from the same stream. Returns the bit's index (byte*8+bit). */
uint64_t le_corrupt_bytes(struct le_chance_state *s, uint8_t *bytes, uint32_t n);

#endif
