/* A data plane's shared state as the control thread (and DPDK's
 * telemetry) see it. No DPDK: the plane-specific parts (how counters are
 * gathered from the forwarding threads, which clock the model runs on, how
 * a control thread is started) are callbacks the data plane supplies. */
#ifndef DP_STATE_H
#define DP_STATE_H

#include <pthread.h>
#include <stdint.h>

#include "frame.h"
#include "model_slot.h"
#include "report.h"

struct dp_state {
	struct dp_model_slot *slot[LE_DIRS];   /* each direction's model */
	/* The model's clock (ns), as the forwarding threads read it. */
	le_ns_t (*now)(const struct dp_state *st);
	/* Fills r: counters as one consistent snapshot and the plane's own
	 * fields (layout, clock, memory). live: the forwarding threads run
	 * (ask them); else read directly. -1 when they did not answer. */
	int (*collect)(struct dp_state *st, struct dp_report *r, int live);
	/* Starts a control thread; NULL: pthread_create. */
	int (*thread_create)(pthread_t *t, const char *name, void *(*fn)(void *), void *arg);
	void *plane;                       /* the data plane's own, for the callbacks */
	uint64_t seed;
	le_ns_t started_ns;
	/* Serialises readers of counters against freeing retired models
	 * (control thread vs telemetry thread). Never taken by a forwarding
	 * thread. */
	pthread_mutex_t lock;
	struct dp_report *baseline;        /* set by `reset stats`, else NULL */
	uint32_t max_limit;                /* frames per direction memory was sized for */
	const struct le_frame_ops *ops;    /* for models built by `set` */
	/* 1 while the forwarding threads run (readers must ask them); changed
	 * by the main thread under `lock`. */
	int lcores_running;
	const volatile int *stop;          /* set when the daemon stops */
};

/* Fills r with the counters as they are now, one consistent snapshot
 * (caller holds st->lock). since_reset subtracts the `reset stats`
 * baseline. -1 when the forwarding threads did not answer (stopping). */
int dp_state_report(struct dp_state *st, struct dp_report *r, int since_reset);
/* Folds the counters of drained models and frees them (holds the lock). */
void dp_state_collect(struct dp_state *st);

#endif
