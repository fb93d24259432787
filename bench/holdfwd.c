/* holdfwd: the floor of holding frames in their mbufs.
 *
 * Two ports bridged on one lcore, both directions, like testpmd's io
 * forward, except that every frame is held for --hold-us before it is
 * sent: a FIFO of (mbuf, due time) per direction, nothing else. No model,
 * no classification, no counters but the frames sent. So it measures what
 * holding costs by itself on this machine: after a millisecond at tens of
 * Mpps the held mbufs (two header lines each, which the driver's free
 * reads) are out of the cache, and no forwarder that keeps frames in
 * their mbufs can send faster than this loop does.
 *
 * bench/forwarding.py runs it beside testpmd and linkemud's `delay 1ms`
 * row, in the same invocation, so the row's ratio to testpmd can be read
 * against this floor's. The held mbufs' header lines are prefetched when
 * they become due, as linkemud's take_due does (--no-prefetch to see what
 * that buys).
 *
 *   holdfwd EAL-ARGS -- [--hold-us U] [--seconds S] [--mbufs N] [--no-prefetch]
 *
 * Prints one JSON line: {"tx_pps": .., "held_max": .., "hold_us": ..}. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#define TOOL_PROG "holdfwd"
#include "bench_args.h"
#include "dpdk_kit.h"

/* linkemud's burst (DP_DATAPLANE_BURST), so that the floor is taken the
 * way linkemud takes frames. */
#define BURST 64u
#define NPORTS 2
/* Entries of a direction's FIFO: a power of two above what a second of
 * holding at 30 Mpps would need is not the point; above the pool is. */
#define FIFO_ORDER 20u
#define FIFO_SIZE (1u << FIFO_ORDER)
#define FIFO_MASK (FIFO_SIZE - 1u)

/* About linkemud's pool for `limit 100000`. */
#define MBUFS_DEFAULT (2u * 65536u + 8192u)

struct held {
	struct rte_mbuf *m;
	uint64_t due; /* TSC */
};

/* One direction: frames from port `in`, held, sent to port `out`. */
struct direction {
	uint16_t in, out;
	struct held *fifo;
	uint32_t head, tail; /* free-running; tail - head held */
	uint64_t sent, held_max;
};

/* Takes a burst in, then sends what is due: the order linkemud's
 * run-to-completion loop uses. A frame the FIFO has no room for is freed
 * (it never happens with the pool smaller than the FIFO). */
static void poll_direction(struct direction *d, uint64_t hold, int prefetch)
{
	struct rte_mbuf *m[BURST];
	uint16_t n = rte_eth_rx_burst(d->in, 0, m, BURST);
	uint64_t now = rte_rdtsc();

	for (uint16_t i = 0; i < n; i++) {
		if (d->tail - d->head == FIFO_SIZE) {
			rte_pktmbuf_free(m[i]);
			continue;
		}
		d->fifo[d->tail & FIFO_MASK] = (struct held){m[i], now + hold};
		d->tail++;
	}
	if (d->tail - d->head > d->held_max)
		d->held_max = d->tail - d->head;
	unsigned k = 0;
	while (k < BURST && d->head + k != d->tail && d->fifo[(d->head + k) & FIFO_MASK].due <= now) {
		m[k] = d->fifo[(d->head + k) & FIFO_MASK].m;
		k++;
	}
	if (prefetch)
		for (unsigned i = 0; i < k; i++) {
			rte_prefetch0(m[i]);
			rte_prefetch0((char *)m[i] + RTE_CACHE_LINE_SIZE);
		}
	uint16_t sent = k ? rte_eth_tx_burst(d->out, 0, m, (uint16_t)k) : 0;
	d->head += sent; /* the rest stay at the FIFO's head, in order */
	d->sent += sent;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: holdfwd EAL-ARGS -- [--hold-us U] [--seconds S] [--mbufs N] [--no-prefetch]\n"
		   "  --hold-us  each frame held, 0 .. 1000000 us (default 1000)\n"
		   "  --seconds  counted, 0.001 .. 86400 (default 3)\n"
		   "  --mbufs    the pool, 4096 .. %u (default %u)\n",
		FIFO_SIZE - 1, MBUFS_DEFAULT);
}

int main(int argc, char **argv)
{
	double hold_us = 1000, seconds = 3;
	unsigned mbufs = MBUFS_DEFAULT;
	int prefetch = 1;
	/* Read before EAL starts. strtod took "nan" and "" (a NaN hold went
	 * through an undefined cast into the TSC) and "inf" seconds. */
	for (int i = bench_own_args(argc, argv); i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(a, "--no-prefetch")) {
			prefetch = 0;
			continue;
		}
		if (strcmp(a, "--hold-us") && strcmp(a, "--seconds") && strcmp(a, "--mbufs"))
			return usage_error("unknown option '%s'", a);
		if (i + 1 >= argc)
			return usage_error("%s needs a value", a);
		const char *v = argv[++i];
		uint64_t n;
		if (!strcmp(a, "--hold-us")) {
			if (parse_double_in(v, 0, 1e6, &hold_us))
				return usage_error("--hold-us '%s': microseconds, 0 .. 1000000", v);
		} else if (!strcmp(a, "--seconds")) {
			if (parse_double_in(v, 0.001, 86400, &seconds))
				return usage_error("--seconds '%s': seconds, 0.001 .. 86400", v);
		} else if (parse_u64(v, 4096, FIFO_SIZE - 1, &n)) {
			return usage_error("--mbufs '%s': 4096 .. %u", v, FIFO_SIZE - 1);
		} else {
			mbufs = (unsigned)n;
		}
	}
	int used = rte_eal_init(argc, argv);
	if (used < 0) {
		fprintf(stderr, "holdfwd: EAL init failed\n");
		return 1;
	}
	if (rte_eth_dev_count_avail() < NPORTS) {
		fprintf(stderr, "holdfwd: needs two ports (e.g. --vdev=net_null0 --vdev=net_null1)\n");
		return 1;
	}
	/* The lcore's cache as linkemud's (MBUF_CACHE in its main.c). */
	struct rte_mempool *pool = rte_pktmbuf_pool_create("holdfwd", mbufs, RTE_MEMPOOL_CACHE_MAX_SIZE, 0,
							   RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
	if (!pool) {
		fprintf(stderr, "holdfwd: no pool of %u mbufs: %s\n", mbufs, rte_strerror(rte_errno));
		return 1;
	}
	struct direction dir[NPORTS] = {{.in = 0, .out = 1}, {.in = 1, .out = 0}};
	for (int p = 0; p < NPORTS; p++) {
		if (bench_port_init((uint16_t)p, pool)) {
			fprintf(stderr, "holdfwd: port %d did not start\n", p);
			return 1;
		}
		dir[p].fifo = calloc(FIFO_SIZE, sizeof(struct held));
		if (!dir[p].fifo) {
			fprintf(stderr, "holdfwd: out of memory\n");
			return 1;
		}
	}
	bench_catch_stop();
	uint64_t hz = rte_get_tsc_hz();
	uint64_t hold = (uint64_t)(hold_us * 1e-6 * (double)hz);
	/* A warm-up of a hold and a bit, so the FIFOs are full when counting. */
	uint64_t t0 = rte_rdtsc(), start = t0 + hold + hz / 10;
	uint64_t end = start + (uint64_t)(seconds * (double)hz);
	uint64_t base = 0;
	int counting = 0;
	while (!bench_stop) {
		for (int p = 0; p < NPORTS; p++)
			poll_direction(&dir[p], hold, prefetch);
		uint64_t now = rte_rdtsc();
		if (!counting && now >= start) {
			base = dir[0].sent + dir[1].sent;
			start = now;
			counting = 1;
		}
		if (now >= end)
			break;
	}
	double elapsed = (double)(rte_rdtsc() - start) / (double)hz;
	uint64_t sent = dir[0].sent + dir[1].sent - base;
	printf("{\"tx_pps\": %.0f, \"held_max\": %" PRIu64 ", \"hold_us\": %g, \"prefetch\": %s}\n",
	       counting ? (double)sent / elapsed : 0.0,
	       dir[0].held_max > dir[1].held_max ? dir[0].held_max : dir[1].held_max, hold_us,
	       prefetch ? "true" : "false");
	for (int p = 0; p < NPORTS; p++) {
		struct rte_mbuf *m[BURST];
		while (dir[p].head != dir[p].tail) {
			unsigned k = 0;
			while (k < BURST && dir[p].head != dir[p].tail)
				m[k++] = dir[p].fifo[dir[p].head++ & FIFO_MASK].m;
			rte_pktmbuf_free_bulk(m, k);
		}
		rte_eth_dev_stop((uint16_t)p);
		free(dir[p].fifo);
	}
	rte_eal_cleanup();
	return counting ? 0 : 1;
}
