/* Log-linear histogram; geometry in hist.h.
 *
 * For v >= HALF, let b be the index of v's top bit and shift = b - (SUB-1):
 * the bucket is shift * HALF + (v >> shift), where v >> shift lies in
 * [HALF, 2*HALF). For v < 2*HALF the shift is 0 and the index is v itself,
 * so small values are exact; OR-ing HALF into v before clz folds the
 * v < HALF case into the same formula without a branch. */
#include "hist.h"

#include <math.h>
#include <string.h>

#define SUB (LE_HIST_SUB_BITS - 1)

void le_hist_init(struct le_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

unsigned le_hist_index(uint64_t v)
{
	unsigned b = 63u - (unsigned)__builtin_clzll(v | LE_HIST_HALF);
	unsigned shift = b - SUB;

	return shift * LE_HIST_HALF + (unsigned)(v >> shift);
}

uint64_t le_hist_bucket_low(unsigned idx)
{
	unsigned shift;

	if (idx < LE_HIST_HALF)
		return idx;
	shift = idx / LE_HIST_HALF - 1;
	return (uint64_t)(LE_HIST_HALF + idx % LE_HIST_HALF) << shift;
}

uint64_t le_hist_bucket_high(unsigned idx)
{
	if (idx < LE_HIST_HALF)
		return idx;
	return le_hist_bucket_low(idx) + ((uint64_t)1 << (idx / LE_HIST_HALF - 1)) - 1;
}

/* n values v into their bucket: the last one, counted as overflow, for
 * values past the largest kept. */
static void add_to_bucket(struct le_hist *h, uint64_t v, uint64_t n)
{
	if (v >> LE_HIST_MAX_BITS) {
		h->overflow += n;
		h->bucket[LE_HIST_BUCKETS - 1] += n;
	} else {
		h->bucket[le_hist_index(v)] += n;
	}
}

void le_hist_record_n(struct le_hist *h, uint64_t v, uint64_t n)
{
	add_to_bucket(h, v, n);
	h->count += n;
	h->sum += (double)v * (double)n;
	h->min = v < h->min ? v : h->min;
	h->max = v > h->max ? v : h->max;
}

void le_hist_record_lateness(struct le_hist *h, uint64_t now, const uint64_t *deadline, unsigned n)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	/* Summed exactly and made a double once a burst: a uint64_t to
	 * double conversion is a branchy sequence on x86-64 (no unsigned
	 * form before AVX-512), and two per run cost ~10 instructions a
	 * frame where every frame has its own deadline (jitter). n < 2^32
	 * values below 2^64 each sum to under 2^96. */
	unsigned __int128 sum = 0;

	for (unsigned i = 0, j; i < n; i = j) {
		const uint64_t d = deadline[i];
		uint64_t v, k;

		for (j = i + 1; j < n && deadline[j] == d; j++)
			;
		v = now >= d ? now - d : 0;
		k = j - i;
		add_to_bucket(h, v, k);
		sum += (unsigned __int128)v * k;
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
	}
	if (n == 0)
		return;
	h->count += n;
	h->sum += (double)sum;
	h->min = lo < h->min ? lo : h->min;
	h->max = hi > h->max ? hi : h->max;
}

void le_hist_record(struct le_hist *h, uint64_t v)
{
	le_hist_record_n(h, v, 1);
}

void le_hist_merge(struct le_hist *dst, const struct le_hist *src)
{
	for (unsigned i = 0; i < LE_HIST_BUCKETS; i++)
		dst->bucket[i] += src->bucket[i];
	dst->count += src->count;
	dst->overflow += src->overflow;
	dst->sum += src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

uint64_t le_hist_quantile(const struct le_hist *h, double q)
{
	uint64_t rank, seen = 0;
	double r;

	if (h->count == 0)
		return 0;
	if (!(q > 0.0)) /* q <= 0 or NaN */
		return h->min;
	if (q >= 1.0)
		return h->max;
	r = ceil(q * (double)h->count);
	rank = r < 1.0 ? 1 : (uint64_t)r;
	for (unsigned i = 0; i < LE_HIST_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen >= rank) {
			uint64_t hi = le_hist_bucket_high(i);
			return hi < h->max ? hi : h->max;
		}
	}
	return h->max; /* not reached while count == sum of buckets */
}

double le_hist_mean(const struct le_hist *h)
{
	return h->count ? h->sum / (double)h->count : 0.0;
}
