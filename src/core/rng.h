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
uint64_t le_rng_u64(struct le_rng *r);

/* Probability p in [0, 1] as a 64-bit threshold: an event happens when a
 * uniform u64 draw is < threshold. p = 1 maps to UINT64_MAX plus the
 * `always` flag so that a certain event is certain. Exact to ~2^-53
 * relative, so 1e-9 is represented to 1e-25 absolute. */
struct le_prob {
	uint64_t threshold;
	int always;
};

struct le_prob le_prob_from_double(double p);
double le_prob_to_double(struct le_prob p);
static inline int le_rng_chance(struct le_rng *r, struct le_prob p)
{
	uint64_t u = le_rng_u64(r);
	return p.always || u < p.threshold;
}

#endif
