#include "tsc_clock.h"

#include <math.h>
#include <time.h>

/* A (tsc, ns) pair taken as close together as possible: the clock read
 * sandwiched between two TSC reads, keeping the tightest of a few tries. */
static void sample_pair(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best_width = UINT64_MAX;
	*tsc = 0;
	*ns = 0;
	for (int i = 0; i < 16; i++) {
		struct timespec ts;
		uint64_t t0 = rte_rdtsc_precise();
		clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
		uint64_t t1 = rte_rdtsc_precise();
		if (t1 - t0 < best_width) {
			best_width = t1 - t0;
			*tsc = t0 + (t1 - t0) / 2;
			*ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
		}
	}
}

int tsc_clock_calibrate(struct tsc_clock *c, unsigned window_ms)
{
	uint64_t tsc_a, ns_a, tsc_b, ns_b;

	if (window_ms < 50)
		window_ms = 50;
	sample_pair(&tsc_a, &ns_a);
	struct timespec nap = {.tv_sec = window_ms / 1000, .tv_nsec = (long)(window_ms % 1000) * 1000000L};
	nanosleep(&nap, NULL);
	sample_pair(&tsc_b, &ns_b);

	c->nominal_hz = (double)rte_get_tsc_hz();
	c->hz = (double)(tsc_b - tsc_a) * 1e9 / (double)(ns_b - ns_a);
	if (!(c->hz > 1e6) || fabs(c->hz / c->nominal_hz - 1.0) > 0.05)
		return -1;
	/* ns per cycle as 32.32 fixed point */
	c->mult = (uint64_t)llround((double)(ns_b - ns_a) * 4294967296.0 / (double)(tsc_b - tsc_a));
	c->tsc0 = rte_rdtsc();
	return 0;
}
