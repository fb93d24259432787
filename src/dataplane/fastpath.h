/* The fast path: what each lcore does, as a list of tasks.
 *
 * A layout (layout.c) hands every lcore one or more tasks; an lcore loops
 * over its tasks until told to stop. Every task belongs to one direction
 * and is run by exactly one lcore, so its counters, histogram and pending
 * buffer have a single writer and need no locks or atomics on the fast
 * path. The link model of a direction is touched by one task only (the
 * run-to-completion task or the pipeline worker), which also adopts a new
 * model from the control thread at a burst boundary (model_slot.h).
 *
 *   run to completion:  port_in -> link -> port_out
 *   pipeline:           RX: port_in -> rx_ring
 *                       WORKER: rx_ring -> link -> tx_ring
 *                       TX: tx_ring -> port_out
 */
#ifndef DP_FASTPATH_H
#define DP_FASTPATH_H

#include <stdint.h>

#include <rte_common.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "counters.h"
#include "dp_counters.h"
#include "hist.h"
#include "link.h"
#include "model_slot.h"
#include "poll_gaps.h"
#include "punt.h"
#include "tsc_clock.h"

#define DP_BURST_MAX 512u
/* mbufs a direction with a compact store keeps from the frames it copied,
 * for the next compact frames out (dp_direction.spare): taken from the
 * pool, so the pool counts them (mbufs_needed, main.c). */
#define DP_SPARE_MBUFS (2 * DP_BURST_MAX)
/* linkemud's burst unless --burst says otherwise. 64 rather than DPDK's
 * customary 32: measured 2026-11-30 against 32 on every forwarding row
 * (forwarding.py --compare, 5 rounds), 1.02-1.25x the rate, ahead in 4 or
 * 5 rounds of 5 on each row (docs/performance.md, "Bursts of 64"). The
 * kernel plane keeps the options' 32 (its batches are system calls). */
#define DP_DATAPLANE_BURST 64u
/* Frames between two readings of a direction's depth against
 * --compact-after (fastpath.c, offer_to_model), in bursts of the burst
 * size: 64 bursts of 32. Above DP_MAX_BURST, so at least one burst. */
#define DP_COMPACT_CHECK_FRAMES 2048u
/* Lateness past which a poll takes a second burst of due frames
 * (fastpath.c, behind()): ten microseconds, a few polls at full input. */
#define DP_BEHIND_NS 10000u
#define DP_MIN_FRAME 14u /* an Ethernet header; shorter frames are counted malformed */

/* Frames a port or ring did not take yet. They go first on the next pass,
 * which turns a busy port into backpressure (later frames, visible in the
 * emulation error; then `limit` drops) instead of silent loss. */
struct dp_pending {
	struct rte_mbuf *m[DP_BURST_MAX];
	/* Copied out of the mbufs on entry: once tx_burst hands a frame to the
	 * driver it is no longer ours to read. */
	uint32_t len[DP_BURST_MAX];
	le_ns_t deadline[DP_BURST_MAX];
	unsigned first;
	unsigned count;
	unsigned unresolved; /* compact frames among them still without an mbuf */
	le_ns_t sent_at;     /* when send_pending last handed frames to the port */
};

struct dp_paced_source;

struct dp_direction {
	enum le_direction id;
	uint16_t port_in;
	uint16_t port_out;
	struct dp_model_slot models; /* the link model, swappable at run time */
	struct rte_ring *rx_ring;   /* pipeline only */
	struct rte_ring *tx_ring;   /* pipeline only */
	struct dp_punt_set *punt;   /* punted classes' channels; NULL: none */
	struct dp_paced_source *paced; /* on port_in (--paced-source); NULL: none */
	struct dp_counters shutdown_ctr; /* written by the main lcore after the stop */
	uint64_t ring_flushed[2];   /* rx_ring, tx_ring: freed from them at shutdown */
	/* Held short frames' bytes (compact_frames.h); NULL: frames keep
	 * their mbufs. Written by the model's task only. */
	struct le_compact_store *compact;
	uint32_t compact_after;     /* ... once the models hold this many mbufs */
	uint32_t compact_check;     /* bursts until the models' depth is read again */
	int compacting;             /* the last reading was past compact_after */
	uint64_t compact_tx_wait;   /* sends put off: the send pool was empty */
	/* mbufs of frames just copied into the store, kept to carry the next
	 * due compact frames out: a frame in, one out, no pool round trip. */
	unsigned nspare;
	struct rte_mbuf *spare[DP_SPARE_MBUFS];
	/* Pipeline: RX lcore's promise that every frame stamped before this
	 * time is in rx_ring. On its own cache line: written every poll. */
	le_ns_t rx_watermark __rte_cache_aligned;
};

enum dp_task_kind {
	DP_TASK_RUN_TO_COMPLETION,
	DP_TASK_RX,
	DP_TASK_WORKER,
	DP_TASK_TX,
};

const char *dp_task_kind_name(enum dp_task_kind k);

/* Read-only for the lcores once they run. */
struct dp_context {
	const struct tsc_clock *clock;
	int meta_offset;
	unsigned burst;
	volatile int *stop;     /* set by the signal handler */
	struct rte_mempool *tx_pool; /* mbufs for compact frames on their way out */
};

/* A task's counts as of one burst boundary, copied by its own lcore. */
struct dp_task_snapshot {
	struct dp_counters ctr;
	uint64_t ring_in, ring_out;
	unsigned held;
	struct dp_model_slot_snapshot models;   /* tasks that run the model */
};

struct dp_task {
	enum dp_task_kind kind;
	struct dp_direction *dir;
	const struct dp_context *ctx;
	struct dp_counters ctr;  /* rx, tx and data-plane drops of this task */
	uint64_t ring_in;        /* frames taken from the ring before it (pipeline) */
	uint64_t ring_out;       /* frames put on the ring after it (pipeline) */
	struct le_hist error;    /* emulation error (send time - deadline), TX-side tasks */
	struct dp_poll_gaps gaps; /* between polls, tasks that run the model (poll_gaps.h) */
	struct dp_pending pending;
	/* Snapshot on request (snapshot.h): a reader bumps snap_req, the
	 * lcore fills `snap` between two polls and sets snap_done to it. On
	 * their own cache line, so a request does not disturb the counters. */
	uint64_t snap_req __rte_cache_aligned;
	uint64_t snap_done;
	struct dp_task_snapshot snap;
} __rte_cache_aligned;

/* One pass of the task; returns the number of frames it moved (so an
 * idle lcore could back off; today they all busy-poll). */
unsigned dp_task_poll(struct dp_task *t);

/* Copies the task's counts (and its model's, if it runs one) into *out.
 * The task's own lcore, or anyone once the lcores stopped. */
void dp_task_snapshot(const struct dp_task *t, struct dp_task_snapshot *out);

/* Between polls, on the task's lcore: answers a pending snapshot request.
 * One load when there is none. */
static inline void dp_task_serve_snapshot(struct dp_task *t)
{
	uint64_t req = __atomic_load_n(&t->snap_req, __ATOMIC_ACQUIRE);
	if (likely(req == t->snap_done))
		return;
	dp_task_snapshot(t, &t->snap);
	__atomic_store_n(&t->snap_done, req, __ATOMIC_RELEASE);
}

/* After the stop, before the ports stop, on the main lcore: hands on what
 * the task holds that is already due (pending frames to the port or the
 * TX ring; a TX task also empties its ring), trying for a few ms. These
 * frames have left the model, so sending them is the faithful ending. */
void dp_task_send_due_at_shutdown(struct dp_task *t);

/* Then: frees what the task still holds, counting it as a shutdown drop
 * of its direction. */
void dp_task_flush_at_shutdown(struct dp_task *t);

#endif
