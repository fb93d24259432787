#include "poll_gaps.h"

void dp_poll_gaps_init(struct dp_poll_gaps *g)
{
	g->last = 0;
	g->observed_ns = 0;
	for (unsigned k = 0; k < DP_POLL_GAP_FINE; k++)
		g->fine[k] = 0;
	le_hist_init(&g->hist);
}

void dp_poll_gaps_merge(struct le_hist *h, uint64_t *observed_ns, const struct dp_poll_gaps *g)
{
	*observed_ns += g->observed_ns;
	le_hist_merge(h, &g->hist);
	for (unsigned k = 0; k < DP_POLL_GAP_FINE; k++) {
		uint64_t n = g->fine[k];
		if (n == 0)
			continue;
		uint64_t low = k * 1024 < DP_POLL_GAP_MIN_NS ? DP_POLL_GAP_MIN_NS : k * 1024;
		le_hist_record_n(h, (low + (k + 1) * 1024) / 2, n);
	}
}

/* sum over gaps of (g - x)+, in ns */
static double excess_over(const struct le_hist *h, double x)
{
	double sum = 0;
	for (unsigned i = 0; i < LE_HIST_BUCKETS; i++) {
		if (!h->bucket[i])
			continue;
		double mid = ((double)le_hist_bucket_low(i) + (double)le_hist_bucket_high(i)) / 2;
		if (mid > x)
			sum += (mid - x) * (double)h->bucket[i];
	}
	return sum;
}

uint64_t dp_poll_gaps_lateness(const struct le_hist *gaps, uint64_t observed_ns, double q)
{
	double want = (1 - q) * (double)observed_ns;
	if (gaps->count == 0 || observed_ns == 0 || excess_over(gaps, 0) <= want)
		return 0;
	/* excess_over falls as x grows: bisect between 0 and the longest gap */
	double lo = 0, hi = (double)le_hist_bucket_high(le_hist_index(gaps->max));
	while (hi - lo > 1) {
		double mid = (lo + hi) / 2;
		if (excess_over(gaps, mid) > want)
			lo = mid;
		else
			hi = mid;
	}
	return (uint64_t)hi;
}
