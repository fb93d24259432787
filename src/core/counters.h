/* Per-direction (and per-class) frame accounting.
 *
 * The conservation law every part of linkemu keeps, for the model alone
 * and for a whole direction:
 *
 *     rx + dup == tx + sum(drop[cause]) + in_flight
 *
 *   rx        frames offered (by the port, or to the model)
 *   dup       extra copies the model made (`duplicate`); a copy is a new
 *             frame, so it enters the law like a received one
 *   tx        frames handed on (sent, or returned by dequeue)
 *   drop[c]   frames freed without being sent, each under exactly one
 *             cause
 *   in_flight frames held (for the model: le_link_depth/le_path_depth)
 *
 * Events (event[]) count things that happen to frames without changing
 * how many there are: a corrupted frame is still sent, a marked frame is
 * still sent, a copy that could not be made is not a frame at all.
 *
 * These are the link model's causes and events, counted by the link. A
 * data plane counts its own causes (rings, ports, runts) beside them
 * (src/dataplane/dp_counters.h). Names are part of the JSON and control
 * vocabulary: never rename one. */
#ifndef LE_COUNTERS_H
#define LE_COUNTERS_H

#include <stdint.h>

enum le_drop_cause {
	LE_DROP_LOSS = 0,       /* the loss model chose the frame */
	LE_DROP_QUEUE_FULL,     /* a limit (`limit`, `limit-bytes`, `limit-queue`) refused the arriving frame */
	LE_DROP_SHUTDOWN,       /* still held by the link when it was drained at shutdown */
	LE_DROP_QUEUE_HEAD,     /* `drop-head`: dropped from the head of the queue to make room */
	LE_DROP_CODEL,          /* `codel` dropped it when it reached the head of the queue */
	LE_DROP_STALLED,        /* the model's storage was full of frames already due but not
				 * yet dequeued: the data plane fell behind (never in normal runs) */
	LE_DROP_CAUSES
};

enum le_event {
	LE_EVENT_DUP_FAILED = 0, /* `duplicate` chose a frame but no copy could be made */
	LE_EVENT_CORRUPTED,      /* `corrupt` flipped one bit of the frame */
	LE_EVENT_ECN_MARKED,     /* the loss model marked CE instead of dropping (`ecn`) */
	LE_EVENT_CODEL_MARKED,   /* CoDel marked CE instead of dropping (`codel ... ecn`) */
	LE_EVENT_REORDERED,      /* `reorder` sent the frame ahead, skipping the delay */
	LE_EVENT_LATE_ARRIVAL,   /* enqueued with an arrival before the model's clock (see link.h) */
	LE_EVENTS
};

/* Stable snake_case names used in JSON and the control protocol. */
const char *le_drop_cause_name(enum le_drop_cause c);
const char *le_event_name(enum le_event e);

struct le_counters {
	uint64_t rx;
	uint64_t tx;
	uint64_t rx_bytes;
	uint64_t tx_bytes;
	uint64_t drop[LE_DROP_CAUSES];
	uint64_t dup;                 /* copies made by `duplicate` (JSON "dup") */
	uint64_t event[LE_EVENTS];
};

uint64_t le_counters_dropped(const struct le_counters *c);
/* dst += src */
void le_counters_add(struct le_counters *dst, const struct le_counters *src);
/* dst -= src (a `reset stats` baseline taken from the same counters) */
void le_counters_sub(struct le_counters *dst, const struct le_counters *src);
/* 1 when rx + dup == tx + drops + in_flight. */
int le_counters_conserved(const struct le_counters *c, uint64_t in_flight);

#endif
