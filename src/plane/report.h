/* Per-direction totals gathered from the tasks, the links and the rings,
 * printed for humans or as the JSON object the Python side reads. */
#ifndef DP_REPORT_H
#define DP_REPORT_H

#include <stdio.h>

#include "counters.h"
#include "dp_counters.h"
#include "hist.h"
#include "link.h"
#include "model_slot.h"
#include "path.h"
#include "poll_gaps.h"
#include "port_counters.h"
#include "punt.h"

/* One class of the active model, counted since that model took over. */
struct dp_class_report {
	char name[LE_CLASS_NAME_MAX];
	struct le_counters ctr;   /* rx/tx here are frames into/out of the class's link */
	uint32_t in_flight;
	uint32_t in_flight_base;  /* held when `reset stats` was taken, else 0 */
	uint64_t born;            /* le_path_class_born: which class of this name */
	unsigned nhops;           /* hops of a chain; 1: a plain link */
	unsigned first_hop;       /* its hops in dp_direction_report.hop[] (nhops > 1) */
};

/* One hop of a chained class: its own counts (rx from the previous hop
 * or the class's input, tx to the next hop or out) and what it holds. */
struct dp_hop_report {
	struct le_counters ctr;
	uint32_t in_flight;
	uint32_t in_flight_base;  /* held when `reset stats` was taken, else 0 */
	uint64_t born;            /* le_path_hop_born: which hop of this place */
};

/* A paced source on the direction's input port (--paced-source,
 * paced_source.h): its frames delivered and missed are also in port_in's
 * ipackets and imissed. */
struct dp_paced_report {
	uint64_t pps;
	uint32_t ring;
	uint64_t delivered;
	uint64_t missed;
	struct le_hist wait; /* per frame: the poll that received it - its arrival */
};

struct dp_direction_report {
	struct dp_counters dp;    /* rx, tx, bytes (the ports'), data-plane drops */
	struct le_counters model; /* the models' drops, copies and events (not rx/tx) */
	uint64_t model_held;      /* frames the models hold (part of in_flight) */
	uint64_t model_held_base; /* the same when `reset stats` was taken, else 0 */
	uint64_t in_flight;       /* measured: link + rings + pending buffers */
	uint64_t in_flight_base;  /* in flight when `reset stats` was taken, else 0 */
	struct le_hist error;     /* emulation error, merged over tasks */
	/* Gaps between the polls of the tasks that run the model, and the
	 * time they cover (poll_gaps.h); empty on the kernel plane. */
	struct le_hist poll_gaps;
	uint64_t poll_observed_ns;
	/* Before and after us: what the input port's driver lost before
	 * linkemud could receive (imissed, ierrors, rx_nombuf) and what the
	 * output port failed to send after taking it (oerrors). */
	struct dp_port_counters port_in;
	struct dp_port_counters port_out;
	/* Where the ports' drivers say they dropped (port_counters.h): their
	 * nonzero drop-related xstats; empty on the kernel plane. */
	struct dp_port_xstats xstats_in;
	struct dp_port_xstats xstats_out;
	int has_paced;
	struct dp_paced_report paced;
	char config[LE_PATH_TEXT_MAX];
	uint64_t seed;
	uint64_t changes;         /* live changes applied since start */
	uint64_t changed_at;      /* model time of the last (0: none) */
	uint64_t staged_at;       /* a change waiting for its model time; UINT64_MAX: none */
	unsigned nclasses;        /* default link + named classes */
	struct dp_class_report cls[LE_MAX_CLASSES + 1];
	unsigned nhops;
	struct dp_hop_report hop[LE_PATH_CHAIN_HOPS_MAX];
	/* Punted classes' channels (docs/punt.md): counts since start (not
	 * reset by `reset stats`; the direction's punt_* causes are). */
	unsigned npunt;
	struct dp_punt_status punt[DP_PUNT_MAX];
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
	/* linkemud's compact stores of short held frames (compact_frames.h),
	 * read while the lcores run: each figure exact, together approximate. */
	int has_compact;
	struct dp_compact_report {
		uint64_t slots, in_use, high_water, stored, full, send_waits, bytes;
	} compact[LE_DIRS];
	struct dp_direction_report dir[LE_DIRS];
};

/* Adds what a direction's models counted and hold (their drops, copies,
 * events, depth, classes and text) to out. */
void dp_report_add_models(struct dp_direction_report *out, const struct dp_model_slot_snapshot *m);
int dp_report_conserved(const struct dp_direction_report *d);
/* Classes that a live change removed: the models' counts and held frames
 * less those of the current classes (a removed class serves what it held
 * and its counts stay in the totals, on no current class), so that the
 * classes and this add up to the models' counts, and its own books
 * balance: rx + dup + in_flight_base == tx + drops + in_flight. A removed
 * class is here even when a later change added one of its name again:
 * that one is another class (born later) and counts only its own. */
void dp_report_ended_classes(const struct dp_direction_report *d, struct dp_class_report *out);
/* Drops by every cause, model and data plane, merged by name (a name both
 * count, "shutdown", once). Returns the number of causes (<= max). */
unsigned dp_report_drops(const struct dp_direction_report *d, const char **name, uint64_t *count, unsigned max);
uint64_t dp_report_dropped(const struct dp_direction_report *d);
#define DP_REPORT_CAUSES_MAX (LE_DROP_CAUSES + DP_DROP_CAUSES)
/* r -= base: counters and histograms since base was taken (`reset stats`).
 * in_flight stays as measured; min/max become the edges of the extreme
 * non-empty buckets. A class (hop) is the base's of its name (place) only
 * when born equal: one created since counts whole, from 0. */
void dp_report_subtract(struct dp_report *r, const struct dp_report *base);
void dp_report_print_human(FILE *f, const struct dp_report *r);
void dp_report_print_json(FILE *f, const struct dp_report *r);

#endif
