/* Trace-driven serializer: Mahimahi's link traces.
 *
 * Format (Mahimahi mm-link, read exactly): one line per delivery
 * opportunity of LE_TRACE_OPPORTUNITY bytes, the line being a whole
 * number of milliseconds since the trace's start, non-decreasing;
 * repeated lines are several opportunities in the same millisecond. The
 * trace loops with period = its last timestamp (which must be above 0),
 * unless `once`. `trace-us` reads the same format with microsecond
 * timestamps (ours; Mahimahi has none).
 *
 * Errors name the file and line: an empty file, an empty line, a value
 * that is not a whole non-negative decimal number, a negative value, a
 * value above the maximum, a timestamp below the one before it, a last
 * timestamp of 0.
 *
 * Delivery (Mahimahi link_queue.cc rationalize()): at each opportunity
 * the frame being sent takes what it still needs of the 1500 bytes, then
 * the frames queued behind it; a frame leaves at the opportunity that
 * carries its last byte, so small frames share an opportunity and a
 * large one spans several; bytes of an opportunity that no queued frame
 * uses are lost. A frame can only use opportunities after its arrival. */
#ifndef LE_TRACE_H
#define LE_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "filecache.h"
#include "le_time.h"

#define LE_TRACE_OPPORTUNITY 1500u
#define LE_TRACE_MAX_MS 10000000000ULL       /* 10^10 ms, ~115 days */
#define LE_TRACE_MAX_US 10000000000000ULL    /* the same in us */
#define LE_TRACE_MAX_LINES 100000000u

struct le_trace {
	le_ns_t *t;        /* opportunity times from the trace's start, ns */
	uint32_t n;
	le_ns_t period;    /* last timestamp */
	struct le_file_entry *shared; /* loaded from a file: shared, read-only (filecache.h) */
};

/* Where a link is in its trace. */
struct le_trace_pos {
	le_ns_t base;      /* absolute time of the current lap's start */
	uint32_t k;        /* next opportunity: base + t[k] */
	int started;
	int ended;         /* `once` and every opportunity used */
};

/* Loads (or shares, filecache.h) the trace file; le_trace_free releases
 * it. */
int le_trace_load(const char *path, int us, struct le_trace *t, char *err, size_t errlen);
int le_trace_parse(const char *text, size_t len, const char *name, int us, struct le_trace *t,
		   char *err, size_t errlen);
void le_trace_free(struct le_trace *t);

/* Absolute time of the next opportunity (UINT64_MAX when ended). */
static inline le_ns_t le_trace_next(const struct le_trace *t, const struct le_trace_pos *p)
{
	return p->ended ? UINT64_MAX : p->base + t->t[p->k];
}
/* Moves past `count` opportunities. */
void le_trace_step(const struct le_trace *t, struct le_trace_pos *p, int once, uint64_t count);
/* Moves to the first opportunity strictly after `time` (skipping idle
 * laps in O(log n)). */
void le_trace_skip_after(const struct le_trace *t, struct le_trace_pos *p, int once, le_ns_t time);
/* Moves to the first opportunity at or after `time`. */
void le_trace_skip_to(const struct le_trace *t, struct le_trace_pos *p, int once, le_ns_t time);
/* 1 when both are the same table (one file, loaded once: trace files are
 * shared, see textfile.h), so positions mean the same opportunities. */
int le_trace_same(const struct le_trace *a, const struct le_trace *b);
/* Live change of trace `ot` (position *op, already brought to the change)
 * to `nt`: with the same table (same: one file, loaded once) the
 * position carries over exactly, opportunity for opportunity; with
 * another, the new trace keeps the old one's lap start and continues at
 * its first opportunity at or after the old one's next. */
void le_trace_carry(const struct le_trace *nt, struct le_trace_pos *np, int once, const struct le_trace *ot,
		    const struct le_trace_pos *op, int same);

#endif
