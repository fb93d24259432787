/* Seeded pseudo-random streams for the link model.
 *
 * One independent stream per (seed, direction, impairment), so changing one
 * impairment's parameters never changes the draws of another (changing the
 * delay does not change which frames are lost). Generator: xoshiro256**,
 * state seeded by splitmix64 over a mix of the three keys. */
#ifndef LE_RNG_H
#define LE_RNG_H

#include <stdint.h>

struct le_rng {
	uint64_t s[4];
};

/* Stream identities: keep these values stable, they are part of what
 * "the same seed gives the same run" means across versions. */
enum le_rng_stream {
	LE_STREAM_LOSS = 1,
	LE_STREAM_JITTER = 2,
	LE_STREAM_DUPLICATE = 3,
	LE_STREAM_CORRUPT = 4,
	LE_STREAM_REORDER = 5,
	LE_STREAM_SLOT = 6,
};

void le_rng_seed(struct le_rng *r, uint64_t seed, uint32_t direction, enum le_rng_stream stream);
/* The same for the link of class `cls` in a path (le_path): class 0, the
 * default link, gets exactly le_rng_seed's stream, so a configuration
 * without classes draws what it always drew; other classes get streams
 * independent of it and of each other. */
void le_rng_seed_class(struct le_rng *r, uint64_t seed, uint32_t direction, uint32_t cls,
		       enum le_rng_stream stream);
/* The next 64 bits of the stream (xoshiro256**). Inline: the model
 * draws several times per frame (jitter, loss, duplicate, corrupt,
 * reorder), and a call each cost more than the draw. */
static inline uint64_t le_rng_u64(struct le_rng *r)
{
	uint64_t *s = r->s;
	const uint64_t x = s[1] * 5;
	const uint64_t result = ((x << 7) | (x >> 57)) * 9;
	const uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = (s[3] << 45) | (s[3] >> 19);
	return result;
}

/* Uniform integer in [0, n) for n >= 1, by multiply-shift (Lemire): one
 * draw, bias below n / 2^64, negligible for every n the model uses. */
static inline uint64_t le_rng_below(struct le_rng *r, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)le_rng_u64(r) * n) >> 64);
}

/* Probability p in [0, 1] as a 64-bit threshold: an event happens when a
 * uniform u64 draw is < threshold. p = 1 maps to UINT64_MAX plus the
 * `always` flag so that a certain event is certain (always implies the top
 * threshold: le_prob_rare relies on it). Exact to ~2^-53
 * relative, so 1e-9 is represented to 1e-25 absolute. */
struct le_prob {
	uint64_t threshold;
	int always;
};

struct le_prob le_prob_from_double(double p);
double le_prob_to_double(struct le_prob p);

/* A rare chance drawn as gaps: the same independent trials, with
 * probability p each, as a draw per trial compared with p's threshold,
 * but one draw per event instead of one per trial. The number of trials that fail before the next success
 * is geometric, P(G = g) = (1-p)^g p, and is drawn by inversion (rng.c).
 * At `duplicate 1%` that is one draw every hundred frames, where an
 * impaired link draws for several such chances on every frame.
 *
 * Rare means 0 < p < 1/4: a gap costs a logarithm or two, which pays
 * when events are rare. */
#define LE_PROB_RARE_BELOW (UINT64_C(1) << 62)
static inline int le_prob_rare(struct le_prob p)
{
	/* 1 <= threshold < 2^62 in one comparison (0 wraps to the top); a
	 * certain p has the top threshold too (le_prob_from_double). Asked
	 * for every chance of every frame: three tests here measured 40
	 * instructions a frame on the all-stages row. */
	return p.threshold - 1 < LE_PROB_RARE_BELOW - 1;
}
static inline int le_prob_same(struct le_prob a, struct le_prob b)
{
	return a.threshold == b.threshold && a.always == b.always;
}
/* Trials that fail before the next success, for a rare p (at most 2^62:
 * at 10^9 trials a second, 146 years). One draw. */
uint64_t le_rng_gap(struct le_rng *r, struct le_prob p);
/* One trial of a rare chance. *left is the trials up to and including
 * the next success, 0 when no gap is drawn yet (a new stream, or a live
 * change to another p: trials are memoryless, so a gap drawn afresh under
 * the new p is exact, where one drawn under the old p would not be; a
 * change that keeps p keeps the gap, so it changes nothing). *left
 * belongs to one p: a caller that changes p resets it. */
static inline int le_rng_chance_gap(struct le_rng *r, struct le_prob p, uint64_t *left)
{
	if (*left == 0)
		*left = le_rng_gap(r, p) + 1;
	return --*left == 0;
}
/* Trials of an uncorrelated chance (le_rng_chance_any) ahead that fail
 * for certain and draw nothing: the rest of a rare chance's gap before
 * its success (none while no gap is drawn: the next trial draws it),
 * every trial of p = 0, none otherwise. le_rng_chance_skip takes n of
 * them (n <= the quiet trials) at once, as n trials would. A caller that
 * knows its next frames meet no event skips their trials this way
 * (link_stages.c, pass_quietly). */
static inline uint64_t le_rng_chance_quiet(struct le_prob p, uint64_t left)
{
	if (le_prob_rare(p))
		return left ? left - 1 : 0;
	return p.threshold == 0 ? UINT64_MAX : 0; /* certain p = 1 has the top threshold */
}
static inline void le_rng_chance_skip(struct le_prob p, uint64_t *left, uint64_t n)
{
	if (le_prob_rare(p))
		*left -= n;
}
/* A chance, uncorrelated: as gaps when rare, without a draw when certain
 * (p = 0 or 1), else one draw per trial under the threshold. *left is the
 * gap state (used only when rare). */
static inline int le_rng_chance_any(struct le_rng *r, struct le_prob p, uint64_t *left)
{
	if (le_prob_rare(p))
		return le_rng_chance_gap(r, p, left);
	if (p.always || p.threshold == 0)
		return p.always;
	return le_rng_u64(r) < p.threshold;
}

/* netem's correlated random numbers (sch_netem.c get_crandom), in 64 bits:
 *     next = (u * (1 - rho) + last * rho), with u a fresh uniform draw
 * computed exactly in fixed point. rho = 0 is a plain draw (and keeps no
 * state), rho = 1 repeats the first value forever. This is netem's
 * formula, kept for compatibility, and it is known to be flawed: the
 * output is no longer uniform (its variance shrinks as rho grows), so a
 * correlated `loss 10% 50%` does not lose 10 % of frames. docs/grammar.md
 * says so. */
struct le_corr {
	uint64_t rho;   /* weight of the previous value, scaled to 2^64 */
	int full;       /* rho == 1 */
};

struct le_corr le_corr_from_double(double rho);
static inline int le_corr_none(struct le_corr c)
{
	return c.rho == 0; /* full has the top rho (le_corr_from_double) */
}
/* One correlated draw; *last is the generator's memory (start it with a
 * draw from the same stream, as netem does). */
uint64_t le_rng_corr(struct le_rng *r, struct le_corr c, uint64_t *last);
/* An event with probability p, drawn through the correlated generator. */
static inline int le_rng_chance_corr(struct le_rng *r, struct le_prob p, struct le_corr c,
				     uint64_t *last)
{
	uint64_t u = le_corr_none(c) ? le_rng_u64(r) : le_rng_corr(r, c, last);
	return p.always || u < p.threshold;
}

#endif
