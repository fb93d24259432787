/* Seeded streams: reproducible, independent per key, exact probabilities. */
#include <math.h>

#include "minitest.h"
#include "rng.h"

#define N 1000

static void fill(uint64_t *out, uint64_t seed, uint32_t dir, enum le_rng_stream st)
{
	struct le_rng r;

	le_rng_seed(&r, seed, dir, st);
	for (int i = 0; i < N; i++)
		out[i] = le_rng_u64(&r);
}

/* Number of positions where two sequences agree: ~0 for independent ones. */
static unsigned agree(const uint64_t *a, const uint64_t *b)
{
	unsigned n = 0;

	for (int i = 0; i < N; i++)
		n += a[i] == b[i];
	return n;
}

static void reproducible_and_independent(void)
{
	static uint64_t ref[N], other[N];

	fill(ref, 42, 0, LE_STREAM_LOSS);
	fill(other, 42, 0, LE_STREAM_LOSS);
	CHECK_EQ_U64(agree(ref, other), N);

	fill(other, 43, 0, LE_STREAM_LOSS);
	CHECK_EQ_U64(agree(ref, other), 0);
	fill(other, 42, 1, LE_STREAM_LOSS);
	CHECK_EQ_U64(agree(ref, other), 0);
	fill(other, 42, 0, LE_STREAM_JITTER);
	CHECK_EQ_U64(agree(ref, other), 0);

	/* Swapping keys between fields must not give the same stream. */
	fill(ref, 1, 2, LE_STREAM_LOSS);
	fill(other, 2, 1, LE_STREAM_LOSS);
	CHECK_EQ_U64(agree(ref, other), 0);

	/* Seed 0 is a valid seed and not degenerate. */
	fill(ref, 0, 0, LE_STREAM_LOSS);
	unsigned zeros = 0;
	for (int i = 0; i < N; i++)
		zeros += ref[i] == 0;
	CHECK_EQ_U64(zeros, 0);

	/* Not shifted copies of each other either (a weak seeding mix could
	 * make stream B the stream A advanced by a few steps). */
	fill(ref, 42, 0, LE_STREAM_LOSS);
	fill(other, 42, 0, LE_STREAM_DUPLICATE);
	unsigned shifted = 0;
	for (int lag = 1; lag < 16; lag++)
		for (int i = 0; i + lag < N; i++)
			shifted += ref[i + lag] == other[i] || ref[i] == other[i + lag];
	CHECK_EQ_U64(shifted, 0);
}

/* Known-answer test: pins the generator and seeding, whose output is part
 * of "the same seed gives the same run" across versions. */
static void known_answer(void)
{
	struct le_rng r;

	/* xoshiro256** from the reference state {1, 2, 3, 4}: the first outputs
	 * are 11520, 0, 1509978240, 1215971899390074240 (reference code). */
	r.s[0] = 1, r.s[1] = 2, r.s[2] = 3, r.s[3] = 4;
	CHECK_EQ_U64(le_rng_u64(&r), 11520);
	CHECK_EQ_U64(le_rng_u64(&r), 0);
	CHECK_EQ_U64(le_rng_u64(&r), 1509978240);
	CHECK_EQ_U64(le_rng_u64(&r), 1215971899390074240ULL);

	/* Seeding (splitmix64 mix of the keys), from an independent Python
	 * model of rng.c's le_rng_seed. */
	le_rng_seed(&r, 42, 0, LE_STREAM_LOSS);
	CHECK_EQ_U64(le_rng_u64(&r), 11379732081414505584ULL);
	CHECK_EQ_U64(le_rng_u64(&r), 17081893551471562615ULL);
	CHECK_EQ_U64(le_rng_u64(&r), 120734312084713249ULL);
	le_rng_seed(&r, 0, 1, LE_STREAM_LOSS);
	CHECK_EQ_U64(le_rng_u64(&r), 6297039007251995963ULL);
	CHECK_EQ_U64(le_rng_u64(&r), 2700729496253434206ULL);
	CHECK_EQ_U64(le_rng_u64(&r), 15911300039832554864ULL);
}

static void probabilities(void)
{
	struct le_prob p;
	struct le_rng r;
	unsigned hits;
	uint64_t left = 0; /* a gap, unused: p = 0 and 1 are not rare */

	p = le_prob_from_double(0.0);
	CHECK(p.threshold == 0 && !p.always);
	p = le_prob_from_double(-1.0);
	CHECK(p.threshold == 0 && !p.always);
	p = le_prob_from_double(NAN);
	CHECK(p.threshold == 0 && !p.always);
	p = le_prob_from_double(1.0);
	CHECK(p.threshold == UINT64_MAX && p.always);
	p = le_prob_from_double(2.0);
	CHECK(p.always);
	p = le_prob_from_double(0.5);
	CHECK_EQ_U64(p.threshold, 1ULL << 63);
	CHECK(!p.always);
	p = le_prob_from_double(0.25);
	CHECK_EQ_U64(p.threshold, 1ULL << 62);

	/* 1e-9: threshold = round(1e-9 * 2^64) = 18446744073.709551616 -> 18446744074. */
	p = le_prob_from_double(1e-9);
	CHECK(p.threshold >= 18446744073ULL && p.threshold <= 18446744075ULL, "threshold %llu",
	      (unsigned long long)p.threshold);
	CHECK_EQ_U64(p.threshold, 18446744074ULL);
	CHECK(fabs(le_prob_to_double(p) - 1e-9) < 1e-19);

	/* The largest double below 1 is not certain, but nearly. */
	p = le_prob_from_double(nextafter(1.0, 0.0));
	CHECK(!p.always);
	CHECK_EQ_U64(p.threshold, UINT64_MAX - 2047);
	CHECK(le_prob_to_double(le_prob_from_double(1.0)) == 1.0);
	CHECK(le_prob_to_double(le_prob_from_double(0.0)) == 0.0);
	CHECK(le_prob_to_double(le_prob_from_double(0.3)) == 0.3);

	le_rng_seed(&r, 7, 0, LE_STREAM_LOSS);
	hits = 0;
	for (int i = 0; i < 100000; i++)
		hits += le_rng_chance_any(&r, le_prob_from_double(0.0), &left);
	CHECK_EQ_U64(hits, 0);
	hits = 0;
	for (int i = 0; i < 100000; i++)
		hits += le_rng_chance_any(&r, le_prob_from_double(1.0), &left);
	CHECK_EQ_U64(hits, 100000);
}

/* Class streams: class 0 is exactly the plain stream (a config without
 * classes draws what it always drew); other classes differ. Correlated
 * draws: rho 0 is the plain stream, rho 1 repeats. below(n) is in range. */
static void classes_and_correlation(void)
{
	struct le_rng a, b, c;
	unsigned same = 0, in_range = 1;

	le_rng_seed(&a, 9, 1, LE_STREAM_JITTER);
	le_rng_seed_class(&b, 9, 1, 0, LE_STREAM_JITTER);
	le_rng_seed_class(&c, 9, 1, 3, LE_STREAM_JITTER);
	for (int i = 0; i < 1000; i++) {
		uint64_t x = le_rng_u64(&a), y = le_rng_u64(&b), z = le_rng_u64(&c);
		CHECK(x == y);
		same += x == z;
	}
	CHECK_EQ_U64(same, 0);

	struct le_corr none = le_corr_from_double(0), full = le_corr_from_double(1), half = le_corr_from_double(0.5);
	uint64_t last = 12345;
	CHECK(le_corr_none(none) && !le_corr_none(half) && full.full);
	CHECK_EQ_U64(half.rho, 1ULL << 63);
	le_rng_seed(&a, 1, 0, LE_STREAM_LOSS);
	for (int i = 0; i < 100; i++)
		CHECK_EQ_U64(le_rng_corr(&a, full, &last), 12345);
	/* rho 1/2: next = (u + last) / 2 */
	le_rng_seed(&a, 1, 0, LE_STREAM_LOSS);
	b = a;
	last = 1000;
	uint64_t u = le_rng_u64(&b), v = le_rng_corr(&a, half, &last);
	CHECK_EQ_U64(v, (uint64_t)(((unsigned __int128)u + 1000) / 2));
	for (int i = 0; i < 100000; i++)
		in_range &= le_rng_below(&a, 7) < 7;
	CHECK(in_range);
}

/* Gaps of rare chances (le_rng_gap): geometric, P(G = g) = (1-p)^g p.
 * For n gaps: the sample mean against (1-p)/p, with sd sqrt(1-p)/(p
 * sqrt(n)), and the share of zero gaps (a success at once) against p,
 * with sd sqrt(p(1-p)/n); two-sided 99.9 % bounds (3.2905 sd, normal
 * approximation: n = 10^5 and the rarest count, n p, is 10^4). Down to
 * p = 1e-12, where ln(1-p) needs log1p. And the trials a gap stands for
 * lose at the rate p (le_rng_chance_gap). */
static void gaps(void)
{
	static const double ps[] = { 0.2, 0.1, 1e-2, 1e-5, 1e-9, 1e-12 };
	const int n = 100000;

	for (unsigned i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		const double p = ps[i];
		struct le_prob lp = le_prob_from_double(p);
		struct le_rng r;
		double sum = 0, zeros = 0;

		CHECK(le_prob_rare(lp), "p = %g is rare", p);
		le_rng_seed(&r, 31, 0, LE_STREAM_LOSS);
		for (int j = 0; j < n; j++) {
			uint64_t g = le_rng_gap(&r, lp);
			sum += (double)g;
			zeros += g == 0;
		}
		double mean = (1 - p) / p, sd = sqrt(1 - p) / (p * sqrt(n));
		CHECK(fabs(sum / n - mean) <= 3.2905 * sd, "p = %g: mean gap %g, expected %g +- %g", p,
		      sum / n, mean, 3.2905 * sd);
		if (p >= 0.1) {
			double zsd = sqrt(p * (1 - p) / n);
			CHECK(fabs(zeros / n - p) <= 3.2905 * zsd, "p = %g: %g of gaps 0", p, zeros / n);
		}
	}
	/* p = 0.2 as trials: 10^6 of them, n p = 2 x 10^5 successes. */
	struct le_prob lp = le_prob_from_double(0.2);
	struct le_rng r;
	uint64_t left = 0;
	double k = 0;
	le_rng_seed(&r, 32, 1, LE_STREAM_DUPLICATE);
	for (int j = 0; j < 1000000; j++)
		k += le_rng_chance_gap(&r, lp, &left);
	CHECK(fabs(k - 2e5) <= 3.2905 * sqrt(1e6 * 0.2 * 0.8), "%g successes", k);
	/* Not rare: certain, never, and 1/4 or more. */
	CHECK(!le_prob_rare(le_prob_from_double(0)) && !le_prob_rare(le_prob_from_double(1)) &&
	      !le_prob_rare(le_prob_from_double(0.25)) && le_prob_rare(le_prob_from_double(0.2499)));
}

int main(void)
{
	classes_and_correlation();
	reproducible_and_independent();
	known_answer();
	probabilities();
	gaps();
	return mt_summary();
}
