/* What the in-process C benchmarks share: frames that are only numbers
 * (nothing to free), one UDP/IPv4 frame for those whose rules read bytes,
 * a monotonic clock in ns, the thread's CPU time, and sorting for
 * medians. */
#ifndef BENCH_KIT_H
#define BENCH_KIT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
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

/* The thread's CPU time in seconds: another process sharing the CPU does
 * not count (though it still cools the caches). */
static inline double bench_thread_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One 64-byte UDP/IPv4 frame, 198.18.0.1:5000 -> 198.18.1.1:5000, that
 * every handle may point to, so all frames share it. The model reads it
 * (class rules), and `corrupt` flips bits in it: a flip would change
 * what later frames' rules read, so a benchmark running `corrupt` calls
 * bench_udp4_restore() once the frames that could have been flipped have
 * been classified. */
#define BENCH_UDP4_LEN 64
static const uint8_t bench_udp4_template[BENCH_UDP4_LEN] = {
	[12] = 0x08, [13] = 0x00,                   /* IPv4 */
	[14] = 0x45, [16] = 0, [17] = 50, [22] = 64, [23] = 17, /* UDP */
	[26] = 198, [27] = 18, [28] = 0, [29] = 1, [30] = 198, [31] = 18, [32] = 1, [33] = 1,
	[34] = 0x13, [35] = 0x88, [36] = 0x13, [37] = 0x88, /* ports 5000 -> 5000 */
};
static uint8_t bench_udp4_frame[BENCH_UDP4_LEN];

static inline void bench_udp4_restore(void)
{
	memcpy(bench_udp4_frame, bench_udp4_template, BENCH_UDP4_LEN);
}

static inline uint8_t *bench_udp4(void)
{
	return bench_udp4_frame;
}

/* le_frame_ops.bytes for handles that point to bench_udp4(). */
static inline uint8_t *bench_udp4_bytes(void *ctx, void *h, uint32_t *n)
{
	(void)ctx;
	(void)h;
	*n = BENCH_UDP4_LEN;
	return bench_udp4();
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
