/* The daemon's shared state as the control thread and telemetry see it. */
#ifndef DP_STATE_H
#define DP_STATE_H

#include <pthread.h>
#include <stdint.h>

#include <rte_mempool.h>

#include "fastpath.h"
#include "layout.h"
#include "report.h"
#include "tsc_clock.h"

struct dp_state {
	struct dp_direction *dir;          /* [LE_DIRS] */
	const struct dp_plan *plan;
	const struct tsc_clock *clock;
	struct rte_mempool *pool;
	uint64_t seed;
	le_ns_t started_ns;
	/* Serialises readers of counters against freeing retired models
	 * (control thread vs telemetry thread). Never taken by an lcore. */
	pthread_mutex_t lock;
	struct dp_report *baseline;        /* set by `reset stats`, else NULL */
	uint32_t max_limit;                /* frames per direction memory was sized for */
	const struct le_frame_ops *ops;    /* for models built by `set` */
	/* 1 while the lcores run their loops (readers must ask them, see
	 * snapshot.h); changed by the main thread under `lock`. */
	int lcores_running;
	const volatile int *stop;          /* set when the daemon stops */
};

/* Fills r with the counters as they are now, one consistent snapshot
 * (caller holds st->lock). since_reset subtracts the `reset stats`
 * baseline. -1 when the lcores did not answer (the daemon is stopping). */
int dp_state_report(struct dp_state *st, struct dp_report *r, int since_reset);
/* Folds the counters of drained models and frees them (holds the lock). */
void dp_state_collect(struct dp_state *st);

#endif
