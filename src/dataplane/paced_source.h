/* A paced wire inside linkemud, for on-time benchmarks (--paced-source).
 *
 * Issue 12 asks for each row's emulation error at the rate it claims,
 * with the input paced to that rate. A paced generator in another
 * process needs a CPU of its own, and these machines have two: one for
 * the lcore, one for the kernel and every tool. This source costs the
 * lcore what net_null's receive costs (a bulk allocation, three fields a
 * frame), so the lcore's budget is what it would be behind a NIC.
 *
 * It models a wire that delivers a frame every 1/pps seconds into a
 * receive ring of `ring` descriptors: frame k arrives at start + k/pps
 * (start: the first poll). A poll receives the frames that have arrived
 * and wait in the ring, oldest first; when more have arrived than the
 * ring holds, the oldest beyond it are lost and counted as `missed`, as
 * a NIC counts imissed. Each delivered frame's wait in the ring (the
 * poll's time minus its arrival) is recorded: linkemud stamps a frame
 * when its poll receives it, so the wait is what a paced sender would
 * see on top of linkemud's own emulation error.
 *
 * It runs as an RX callback (rte_eth_add_rx_callback) on a net_null port
 * given no-rx=1 (which receives nothing of its own and frees what it is
 * sent): it appends the arrived frames to what the driver returned. One
 * writer (the lcore that polls the port); the control thread reads the
 * counters as it reads the lcores' histograms. */
#ifndef DP_PACED_SOURCE_H
#define DP_PACED_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include <rte_ethdev.h>
#include <rte_mempool.h>

#include "hist.h"
#include "le_time.h"
#include "tsc_clock.h"

#define DP_PACED_FRAME_LEN 64 /* bytes: the 14.88 Mpps of 10 GbE */

struct dp_paced_source {
	const struct tsc_clock *clock;
	struct rte_mempool *pool;
	uint16_t port;
	uint32_t ring;              /* descriptors of the modelled receive ring */
	uint64_t pps;
	uint64_t frames_per_ns_q64; /* pps / 1e9, 0.64 fixed point */
	uint64_t ns_per_frame_q32;  /* 1e9 / pps, 32.32 fixed point */
	le_ns_t start;              /* arrival of frame 0 */
	int started;
	uint64_t arrived;           /* frames delivered or missed so far */
	uint64_t delivered;
	uint64_t missed;
	struct le_hist wait;        /* per delivered frame: poll time - arrival */
	const struct rte_eth_rxtx_callback *cb;
};

/* Checks that `port` is a net_null port that receives nothing of its
 * own (no-rx=1), then attaches the source to its queue 0. The port must
 * be started. 0, or -1 with a message naming the port and what is wrong. */
int dp_paced_source_start(struct dp_paced_source *s, uint16_t port, uint64_t pps, uint32_t ring,
			  const struct tsc_clock *clock, struct rte_mempool *pool, char *err, size_t errlen);
/* Detaches it (after the lcores stopped). */
void dp_paced_source_stop(struct dp_paced_source *s);

#endif
