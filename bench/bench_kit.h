/* What the in-process C benchmarks share: frames that are only numbers
 * (nothing to free), a monotonic clock in ns, and sorting for medians. */
#ifndef BENCH_KIT_H
#define BENCH_KIT_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "frame.h"

static void bench_nop_free(void *ctx, void *h)
{
	(void)ctx;
	(void)h;
}

static const struct le_frame_ops bench_ops = {NULL, NULL, bench_nop_free, NULL, NULL, NULL};

static inline uint64_t bench_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The median of n values (sorts them). */
static inline double bench_median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), bench_cmp_double);
	return v[n / 2];
}

#endif
