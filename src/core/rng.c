/* xoshiro256** streams keyed by (seed, direction, stream); see rng.h. */
#include "rng.h"

#include <math.h>

/* splitmix64's output function: a bijection on 64 bits with good
 * avalanche, used both to derive stream keys and to expand them. */
static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t splitmix64(uint64_t *x)
{
	*x += 0x9e3779b97f4a7c15ULL;
	return mix64(*x);
}

static void seed_key(struct le_rng *r, uint64_t key)
{

	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&key);
	/* The all-zero state is xoshiro's only fixed point. */
	if ((r->s[0] | r->s[1] | r->s[2] | r->s[3]) == 0)
		r->s[0] = 1;
}

void le_rng_seed(struct le_rng *r, uint64_t seed, uint32_t direction, enum le_rng_stream stream)
{
	/* Two bijective rounds: for a fixed seed, distinct (direction, stream)
	 * pairs give distinct keys, and vice versa; the key then starts a
	 * splitmix64 sequence, as the xoshiro authors recommend. */
	uint64_t key = mix64(seed);
	key = mix64(key ^ (((uint64_t)direction << 32) | (uint32_t)stream));
	seed_key(r, key);
}

void le_rng_seed_class(struct le_rng *r, uint64_t seed, uint32_t direction, uint32_t cls,
		       enum le_rng_stream stream)
{
	uint64_t key = mix64(seed);
	key = mix64(key ^ (((uint64_t)direction << 32) | (uint32_t)stream));
	/* A third round only for classes other than the default, so class 0
	 * keeps le_rng_seed's stream exactly. */
	if (cls != 0)
		key = mix64(key ^ (0xc1a55ULL << 40) ^ cls);
	seed_key(r, key);
}

struct le_prob le_prob_from_double(double p)
{
	struct le_prob r = { 0, 0 };
	double t;

	if (!(p > 0.0)) /* also NaN: never */
		return r;
	if (p >= 1.0) {
		r.threshold = UINT64_MAX;
		r.always = 1;
		return r;
	}
	/* ldexp is exact (a power-of-two scale), so the only rounding is the
	 * final round-to-integer. p < 1 bounds t by 2^64 - 2^11, which fits. */
	t = round(ldexp(p, 64));
	r.threshold = t >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)t;
	return r;
}

double le_prob_to_double(struct le_prob p)
{
	if (p.always)
		return 1.0;
	return ldexp((double)p.threshold, -64);
}

struct le_corr le_corr_from_double(double rho)
{
	struct le_corr c = { 0, 0 };
	struct le_prob p = le_prob_from_double(rho);

	/* The same exact fixed-point scaling as probabilities. */
	c.rho = p.threshold;
	c.full = p.always;
	return c;
}

uint64_t le_rng_gap(struct le_rng *r, struct le_prob p)
{
	double u, log_q, g;

	if (p.threshold == 0)
		return LE_PROB_RARE_BELOW; /* p = 0: never (le_rng_chance_any does not ask) */
	/* u uniform on (0, 1] in steps of 2^-53 (never 0, so log(u) is finite).
	 * G = floor(ln u / ln(1-p)): G >= g exactly when u <= (1-p)^g, which
	 * has probability (1-p)^g, the geometric law. log1p keeps ln(1-p)
	 * accurate for the smallest p (1e-9 and below). */
	u = (double)((le_rng_u64(r) >> 11) + 1) * 0x1p-53;
	log_q = log1p(-ldexp((double)p.threshold, -64));
	g = floor(log(u) / log_q);
	return g >= (double)LE_PROB_RARE_BELOW ? LE_PROB_RARE_BELOW : (uint64_t)g;
}

uint64_t le_rng_corr(struct le_rng *r, struct le_corr c, uint64_t *last)
{
	uint64_t u = le_rng_u64(r);
	unsigned __int128 mix;

	if (c.full)
		return *last;
	/* u * (2^64 - rho) + last * rho < 2^128: no overflow. */
	mix = (unsigned __int128)u * ((unsigned __int128)1 << 64) - (unsigned __int128)u * c.rho +
	      (unsigned __int128)(*last) * c.rho;
	*last = (uint64_t)(mix >> 64);
	return *last;
}
