/* Per-direction totals gathered from the tasks, the links and the rings,
 * printed for humans or as the JSON object the Python side reads. */
#ifndef DP_REPORT_H
#define DP_REPORT_H

#include <stdio.h>

#include "counters.h"
#include "hist.h"
#include "layout.h"
#include "path.h"

/* One class of the active model, counted since that model took over. */
struct dp_class_report {
	char name[LE_CLASS_NAME_MAX];
	struct le_counters ctr;   /* rx/tx here are frames into/out of the class's link */
	uint32_t in_flight;
};

struct dp_direction_report {
	struct le_counters ctr;   /* rx, tx, bytes, drops by every cause */
	uint64_t in_flight;       /* measured: link + rings + pending buffers */
	uint64_t in_flight_base;  /* in flight when `reset stats` was taken, else 0 */
	struct le_hist error;     /* emulation error, merged over tasks */
	char config[LE_PATH_TEXT_MAX];
	uint64_t seed;
	unsigned nclasses;        /* default link + named classes */
	struct dp_class_report cls[LE_MAX_CLASSES + 1];
};

struct dp_report {
	const char *layout;
	unsigned lcores;
	uint64_t seed;
	double tsc_hz;
	double tsc_nominal_hz;
	double uptime_s;
	uint64_t time_ns;          /* model time of the snapshot */
	uint64_t mempool_size;
	uint64_t mempool_in_use;   /* mbufs out of the pool (held, in rings, in drivers) */
	struct dp_direction_report dir[LE_DIRS];
};

/* Reads counters; call when the lcores are stopped (final) or accept a
 * snapshot that may be a burst apart between counters. */
void dp_report_collect(struct dp_report *r, const struct dp_plan *plan, const struct dp_direction dirs[LE_DIRS]);
int dp_report_conserved(const struct dp_direction_report *d);
/* r -= base: counters and histograms since base was taken (`reset stats`).
 * in_flight stays as measured; min/max become the edges of the extreme
 * non-empty buckets. */
void dp_report_subtract(struct dp_report *r, const struct dp_report *base);
void dp_report_print_human(FILE *f, const struct dp_report *r);
void dp_report_print_json(FILE *f, const struct dp_report *r);

#endif
