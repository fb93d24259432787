/* pacegen's histograms: bins of HIST_NS up to HIST_BINS x HIST_NS (20 ms),
 * the rest in the last bin and counted as over; quantiles read as the
 * upper edge of the bin that holds them (never above the maximum). The
 * last bin has no edge but the maximum: what lands there may be any
 * value up to it. */
#ifndef PACE_HIST_H
#define PACE_HIST_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#define HIST_NS 100   /* histogram bin width */
#define HIST_BINS 200000 /* 20 ms */

struct hist {
	uint64_t n, max, over;
	uint32_t bin[HIST_BINS];
};

static void hist_add(struct hist *h, uint64_t ns)
{
	h->n++;
	if (ns > h->max)
		h->max = ns;
	uint64_t b = ns / HIST_NS;
	if (b >= HIST_BINS) {
		h->over++;
		b = HIST_BINS - 1;
	}
	h->bin[b]++;
}

/* Upper edge of the bin holding quantile q (ns): the ceil(q n)-th
 * smallest value (nearest rank), as linkemud's le_hist_quantile reads its
 * error, so that the source's figures and the emulator's compare. */
static uint64_t hist_q(const struct hist *h, double q)
{
	if (!h->n)
		return 0;
	double r = q * (double)h->n;
	uint64_t rank = r < 1.0 ? 1 : r >= (double)h->n ? h->n : (uint64_t)r, seen = 0;
	if (rank < h->n && (double)rank < r)
		rank++; /* ceil, without libm */
	for (uint64_t b = 0; b < HIST_BINS; b++) {
		seen += h->bin[b];
		if (seen >= rank && b == HIST_BINS - 1)
			return h->max;
		if (seen >= rank)
			return (b + 1) * HIST_NS < h->max ? (b + 1) * HIST_NS : h->max;
	}
	return h->max;
}

static void hist_json(const char *name, const struct hist *h)
{
	printf("\"%s\": {\"count\": %" PRIu64 ", \"p50\": %" PRIu64 ", \"p99\": %" PRIu64 ", \"p999\": %" PRIu64
	       ", \"max\": %" PRIu64 ", \"over_20ms\": %" PRIu64 "}",
	       name, h->n, hist_q(h, 0.5), hist_q(h, 0.99), hist_q(h, 0.999), h->max, h->over);
}

#endif
