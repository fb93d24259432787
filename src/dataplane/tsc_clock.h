/* Nanoseconds from the TSC, calibrated against CLOCK_MONOTONIC_RAW.
 *
 * rte_get_tsc_hz() may be a rounded nominal value (0.15 % off on our VMs:
 * 1.5 ms of error on a 1 s delay), so the rate is measured at start over a
 * calibration window. Conversion is a 64x64->128 multiply and a shift. */
#ifndef DP_TSC_CLOCK_H
#define DP_TSC_CLOCK_H

#include <stdint.h>

#include <rte_cycles.h>

#include "le_time.h"

struct tsc_clock {
	uint64_t tsc0;       /* TSC at ns 0 */
	uint64_t mult;       /* ns per cycle, scaled by 2^32 */
	double hz;           /* measured TSC rate */
	double nominal_hz;   /* what DPDK reports, for comparison */
};

/* Measures the TSC rate over `window_ms` (>= 50). Returns 0, or -1 when
 * the clocks disagree wildly (unstable TSC). */
int tsc_clock_calibrate(struct tsc_clock *c, unsigned window_ms);

static inline le_ns_t tsc_clock_ns(const struct tsc_clock *c, uint64_t tsc)
{
	return (le_ns_t)(((unsigned __int128)(tsc - c->tsc0) * c->mult) >> 32);
}

static inline le_ns_t tsc_clock_now(const struct tsc_clock *c)
{
	return tsc_clock_ns(c, rte_rdtsc());
}

#endif
