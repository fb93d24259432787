/* Log-linear histogram: geometry, quantiles, merge, overflow. */
#include <math.h>

#include "hist.h"
#include "minitest.h"

static struct le_hist h, h2, h3; /* large: keep them off the stack */

static void geometry(void)
{
	unsigned bad = 0;

	/* Values below 2^SUB_BITS have a bucket of their own. */
	for (uint64_t v = 0; v < (1u << LE_HIST_SUB_BITS); v++)
		bad += le_hist_index(v) != v || le_hist_bucket_low((unsigned)v) != v ||
		       le_hist_bucket_high((unsigned)v) != v;
	CHECK_EQ_U64(bad, 0);

	/* Buckets tile [0, 2^MAX_BITS) with no gap or overlap. */
	bad = 0;
	for (unsigned i = 0; i + 1 < LE_HIST_BUCKETS; i++)
		bad += le_hist_bucket_high(i) + 1 != le_hist_bucket_low(i + 1);
	CHECK_EQ_U64(bad, 0);
	CHECK_EQ_U64(le_hist_bucket_low(0), 0);
	CHECK_EQ_U64(le_hist_bucket_high(LE_HIST_BUCKETS - 1), (1ULL << LE_HIST_MAX_BITS) - 1);
	CHECK_EQ_U64(le_hist_index((1ULL << LE_HIST_MAX_BITS) - 1), LE_HIST_BUCKETS - 1);

	/* A sweep across every octave, including each power of two and its
	 * neighbours: v is inside its bucket, and the bucket is narrow. */
	unsigned outside = 0, wide = 0, n = 0;
	for (unsigned b = 0; b < LE_HIST_MAX_BITS; b++) {
		uint64_t base = 1ULL << b;
		uint64_t vs[] = { base - 1, base, base + 1, base + base / 3, base + base / 2,
				  2 * base - 1 };
		for (unsigned k = 0; k < sizeof(vs) / sizeof(vs[0]); k++) {
			uint64_t v = vs[k];
			unsigned i = le_hist_index(v);
			uint64_t lo = le_hist_bucket_low(i), hi = le_hist_bucket_high(i);

			n++;
			outside += i >= LE_HIST_BUCKETS || v < lo || v > hi;
			/* (hi - lo + 1) / lo <= 1/128, in integers; buckets
			 * below 128 hold a single value, so have no error. */
			wide += lo < 128 ? hi != lo : (hi - lo + 1) * 128 > lo;
		}
	}
	CHECK(n > 200);
	CHECK_EQ_U64(outside, 0);
	CHECK_EQ_U64(wide, 0);
}

static void exact_small_values(void)
{
	le_hist_init(&h);
	CHECK_EQ_U64(le_hist_quantile(&h, 0.5), 0); /* empty */
	CHECK(le_hist_mean(&h) == 0.0);
	CHECK_EQ_U64(h.min, UINT64_MAX);

	for (uint64_t v = 1; v <= 100; v++)
		le_hist_record(&h, v);
	CHECK_EQ_U64(h.count, 100);
	CHECK_EQ_U64(h.min, 1);
	CHECK_EQ_U64(h.max, 100);
	CHECK(le_hist_mean(&h) == 50.5);
	CHECK_EQ_U64(le_hist_quantile(&h, 0.0), 1);
	CHECK_EQ_U64(le_hist_quantile(&h, 0.01), 1);
	CHECK_EQ_U64(le_hist_quantile(&h, 0.5), 50);
	CHECK_EQ_U64(le_hist_quantile(&h, 0.501), 51); /* ceil(50.1) = 51st */
	CHECK_EQ_U64(le_hist_quantile(&h, 0.99), 99);
	CHECK_EQ_U64(le_hist_quantile(&h, 1.0), 100);
}

static void quantiles_uniform(void)
{
	le_hist_init(&h);
	for (uint64_t v = 1; v <= 10000; v++)
		le_hist_record(&h, v);
	uint64_t p50 = le_hist_quantile(&h, 0.5), p99 = le_hist_quantile(&h, 0.99);
	CHECK(p50 >= 5000 && p50 <= 5050, "p50 = %llu", (unsigned long long)p50);
	CHECK(p99 >= 9900 && p99 <= 9999, "p99 = %llu", (unsigned long long)p99);
	/* Upper edge of the bucket holding the true value, so never below it. */
	CHECK_EQ_U64(le_hist_quantile(&h, 1.0), 10000);
	CHECK_EQ_U64(le_hist_quantile(&h, 0.0), 1);

	/* Capped to max: one value in a wide bucket reports itself. */
	le_hist_init(&h);
	le_hist_record(&h, 1000001);
	CHECK_EQ_U64(le_hist_quantile(&h, 0.5), 1000001);
}

static void merge(void)
{
	uint64_t x = 88172645463325252ULL;

	le_hist_init(&h);
	le_hist_init(&h2);
	le_hist_init(&h3);
	for (int i = 0; i < 20000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64: test data only */
		uint64_t v = x >> (20 + x % 40);
		le_hist_record(&h, v);
		le_hist_record(i % 3 ? &h2 : &h3, v);
	}
	le_hist_merge(&h2, &h3);
	CHECK_EQ_U64(h2.count, h.count);
	CHECK_EQ_U64(h2.min, h.min);
	CHECK_EQ_U64(h2.max, h.max);
	CHECK(memcmp(h2.bucket, h.bucket, sizeof(h.bucket)) == 0);
	CHECK(fabs(h2.sum - h.sum) <= 1e-12 * h.sum, "%g vs %g", h2.sum, h.sum);

	/* Merging an empty histogram changes nothing, including min. */
	le_hist_init(&h3);
	le_hist_merge(&h2, &h3);
	CHECK_EQ_U64(h2.min, h.min);
	CHECK_EQ_U64(h2.count, h.count);
}

static void overflow(void)
{
	le_hist_init(&h);
	le_hist_record(&h, (1ULL << LE_HIST_MAX_BITS) - 1); /* largest kept value */
	CHECK_EQ_U64(h.overflow, 0);
	le_hist_record(&h, 1ULL << LE_HIST_MAX_BITS);
	le_hist_record(&h, UINT64_MAX);
	CHECK_EQ_U64(h.overflow, 2);
	CHECK_EQ_U64(h.count, 3);
	CHECK_EQ_U64(h.bucket[LE_HIST_BUCKETS - 1], 3);
	CHECK_EQ_U64(h.max, UINT64_MAX);
	CHECK_EQ_U64(le_hist_quantile(&h, 1.0), UINT64_MAX);

	le_hist_init(&h2);
	le_hist_merge(&h2, &h);
	CHECK_EQ_U64(h2.overflow, 2);
}

/* A sender's record of a burst's lateness is what recording each frame's
 * own would give: every bucket, count, overflow, min, max; the sum to
 * double rounding. Bursts with runs of equal deadlines (a fixed delay),
 * each its own (jitter), deadlines after the send time (counted as 0),
 * lateness past the largest kept value, and empty bursts. */
static void lateness_as_per_frame(void)
{
	uint64_t x = 7, d[64];
	unsigned bad = 0;

	le_hist_init(&h);
	le_hist_init(&h2);
	for (unsigned burst = 0; burst < 20000; burst++) {
		uint64_t now = 1ULL << 40, n;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		n = x % 65;
		for (unsigned i = 0; i < n; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			/* Every other burst in long runs (one deadline for
			 * a whole RX burst, as a plain delay gives). */
			if ((burst & 1) && i && x % 8 != 7) {
				d[i] = d[i - 1];
				continue;
			}
			switch (x % 8) {
			case 0:
				d[i] = i ? d[i - 1] : now; /* a run */
				break;
			case 1:
				d[i] = now + x % 1000; /* not yet due: 0 */
				break;
			case 2:
				now = UINT64_MAX;
				d[i] = x % 4; /* past the largest kept value */
				break;
			default:
				d[i] = now - (x >> 8) % (1ULL << (x % 40));
			}
		}
		le_hist_record_lateness(&h, now, d, (unsigned)n);
		for (unsigned i = 0; i < n; i++)
			le_hist_record(&h2, now >= d[i] ? now - d[i] : 0);
	}
	for (unsigned i = 0; i < LE_HIST_BUCKETS; i++)
		bad += h.bucket[i] != h2.bucket[i];
	CHECK_EQ_U64(bad, 0);
	CHECK_EQ_U64(h.count, h2.count);
	CHECK(h.count > 500000, "%llu values", (unsigned long long)h.count);
	CHECK(h.overflow == h2.overflow && h.overflow > 0, "overflow %llu vs %llu",
	      (unsigned long long)h.overflow, (unsigned long long)h2.overflow);
	CHECK_EQ_U64(h.min, h2.min);
	CHECK_EQ_U64(h.max, h2.max);
	CHECK(fabs(h.sum - h2.sum) <= 1e-9 * h2.sum, "sum %g vs %g", h.sum, h2.sum);
}

int main(void)
{
	geometry();
	exact_small_values();
	quantiles_uniform();
	merge();
	overflow();
	lateness_as_per_frame();
	return mt_summary();
}
