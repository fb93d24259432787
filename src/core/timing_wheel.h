/* A time-ordered store of frames whose cost does not grow with the number
 * of frames it holds: a timing wheel (calendar queue) with exact order
 * inside each bucket.
 *
 * Frames leave in (deadline, insertion number) order, to the nanosecond:
 * equal deadlines leave in the order they came. The wheel has 2^order
 * buckets, each 2^shift ns wide, covering the slots [base, base + 2^order)
 * where a slot is deadline >> shift. A frame lands in its slot's bucket by
 * appending (O(1)); the earliest non-empty bucket (the "front") is kept
 * sorted, by a merge sort when it becomes the front (O(k log k) for k
 * frames in it, k set by the rate and the bucket width, not by how many
 * frames are held) and by insertion afterwards (new frames rarely land
 * there). A two-level bitmap finds the next non-empty bucket in a few
 * word reads. Frames beyond the wheel's span wait in an overflow min-heap
 * and move into the wheel as `base` advances; that heap holds only the
 * tail of the deadline distribution when the span is sized from the link
 * (le_wheel_init's horizon).
 *
 * Storage: one pool of nodes (a frame, its insertion number, a link) for
 * `capacity` frames, allocated once; no allocation per frame. */
#ifndef LE_TIMING_WHEEL_H
#define LE_TIMING_WHEEL_H

#include <stdint.h>

#include "frame.h"
#include "le_time.h"

#define LE_WHEEL_NIL UINT32_MAX

struct le_wheel_node {
	struct le_frame f;
	uint64_t seq;
	uint32_t next;
};

struct le_wheel_bucket {
	uint32_t head, tail; /* LE_WHEEL_NIL when empty */
};

struct le_timing_wheel {
	struct le_wheel_node *node;     /* pool of `capacity` nodes */
	struct le_wheel_bucket *bucket; /* 2^order buckets */
	uint64_t *bits;                 /* bit per non-empty bucket */
	uint64_t *summary;              /* bit per non-zero word of bits */
	uint32_t *over;                 /* overflow min-heap of node indices */
	uint32_t capacity;
	uint32_t free;                  /* first free node, chained by next */
	uint32_t count;                 /* frames in buckets */
	uint32_t nover;                 /* frames in the overflow heap */
	unsigned shift;                 /* log2 of a bucket's width in ns */
	unsigned order;                 /* log2 of the number of buckets */
	uint64_t mask;                  /* 2^order - 1 */
	uint64_t base;                  /* first slot the buckets cover */
	uint64_t front;                 /* slot of the earliest non-empty bucket */
	uint64_t seq;                   /* next insertion number */
};

/* Room for `capacity` frames; the span (2^order buckets of 2^shift ns)
 * covers at least `horizon_ns` from the current time when that fits in
 * 2^16 buckets of 1 us or wider. -1 on allocation failure. */
int le_wheel_init(struct le_timing_wheel *w, uint32_t capacity, le_ns_t horizon_ns);
void le_wheel_free(struct le_timing_wheel *w);
/* -1 when `capacity` frames are held already. */
int le_wheel_push(struct le_timing_wheel *w, const struct le_frame *f);
/* Removes the frame with the smallest (deadline, insertion number); -1
 * when empty. */
int le_wheel_pop_min(struct le_timing_wheel *w, struct le_frame *out);
/* Time has reached `now` and every frame with deadline <= now has been
 * popped: the wheel moves on, taking in overflow frames that now fall in
 * its span. */
void le_wheel_advance(struct le_timing_wheel *w, le_ns_t now);

static inline uint32_t le_wheel_count(const struct le_timing_wheel *w)
{
	return w->count + w->nover;
}

/* Smallest deadline held, UINT64_MAX when empty. Overflow frames are all
 * later than every frame in the buckets. */
static inline le_ns_t le_wheel_min(const struct le_timing_wheel *w)
{
	if (w->count)
		return w->node[w->bucket[w->front & w->mask].head].f.deadline;
	return w->nover ? w->node[w->over[0]].f.deadline : UINT64_MAX;
}

#endif
