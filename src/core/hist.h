/* Log-linear histogram of non-negative nanosecond values (HDR style).
 *
 * Values below 2^LE_HIST_SUB_BITS are counted exactly; above, each power of
 * two is split into 2^(LE_HIST_SUB_BITS-1) equal buckets, so a bucket's
 * width is at most 1/2^(LE_HIST_SUB_BITS-1) of its lower bound: with 8
 * sub-bits the relative error of any reported value is below 0.8 %.
 * Values up to 2^LE_HIST_MAX_BITS - 1 ns (~78 hours) are kept; larger ones
 * land in the last bucket and are counted in `overflow`.
 *
 * Fixed size, no allocation, single writer: the data plane keeps one per
 * lcore and direction and merges on read. */
#ifndef LE_HIST_H
#define LE_HIST_H

#include <stdint.h>

#define LE_HIST_SUB_BITS 8
#define LE_HIST_MAX_BITS 48
#define LE_HIST_HALF (1u << (LE_HIST_SUB_BITS - 1))
#define LE_HIST_BUCKETS ((LE_HIST_MAX_BITS - LE_HIST_SUB_BITS + 2) * LE_HIST_HALF)

struct le_hist {
	uint64_t count;
	uint64_t overflow;
	uint64_t min;   /* UINT64_MAX when empty */
	uint64_t max;
	double sum;     /* for the mean; exact enough for means, not used for quantiles */
	uint64_t bucket[LE_HIST_BUCKETS];
};

void le_hist_init(struct le_hist *h);
void le_hist_record(struct le_hist *h, uint64_t v);
/* n values v at once (n >= 1): the same as n calls of le_hist_record. */
void le_hist_record_n(struct le_hist *h, uint64_t v, uint64_t n);
/* For each of the n deadlines, the time `now` is past it (0 when it is
 * not): what a sender records as the emulation error of n frames sent
 * at once. The same as le_hist_record_n per run of equal deadlines, in
 * one call: frames with jitter each have their own deadline, and a call
 * per frame cost the data plane ~37 instructions a frame. */
void le_hist_record_lateness(struct le_hist *h, uint64_t now, const uint64_t *deadline, unsigned n);
/* dst += src */
void le_hist_merge(struct le_hist *dst, const struct le_hist *src);
/* Value at quantile q in [0, 1]: the upper edge of the bucket holding the
 * ceil(q*count)-th smallest value (capped to max; q = 0 gives min). 0 when
 * empty. */
uint64_t le_hist_quantile(const struct le_hist *h, double q);
double le_hist_mean(const struct le_hist *h);

/* Bucket geometry, exposed for tests. */
unsigned le_hist_index(uint64_t v);
uint64_t le_hist_bucket_low(unsigned idx);
uint64_t le_hist_bucket_high(unsigned idx); /* inclusive */

#endif
