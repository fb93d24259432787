/* A time-ordered store of frames whose cost does not grow with the number
 * of frames it holds: a timing wheel (calendar queue) with exact order
 * inside each bucket.
 *
 * Frames leave in (deadline, insertion number) order, to the nanosecond:
 * equal deadlines leave in the order they came. The wheel has 2^order
 * buckets, each 2^shift ns wide, covering the slots [base, base + 2^order)
 * where a slot is deadline >> shift. A frame is appended to its slot's
 * bucket (O(1)); a bucket is a chain of chunks of consecutive entries, so
 * appending and draining it touch memory in order (a linked node per frame
 * cost a cache miss per frame once a million were held). The frames of
 * the earliest slots are kept apart in a sorted array, the "front": when
 * it empties, the next non-empty bucket (found in a two-level bitmap in a
 * few word reads) is copied into it and sorted, O(k log k) for its k
 * frames, k set by the rate and the bucket width, not by the frames held.
 * A frame for a slot at or before the front's goes into the front array
 * in order (binary search; mostly at either end). Frames beyond the
 * wheel's span wait in an overflow min-heap and move into the wheel as
 * `base` advances; that heap holds only the tail of the deadline
 * distribution when the span is sized from the link (le_wheel_init's
 * horizon).
 *
 * Frames whose deadlines do not decrease from one push to the next (with
 * `reorder`, the 99 % not chosen) can skip the buckets: they go to the
 * "run", a FIFO chain of chunks from the same pool (so it costs no memory
 * of its own), whose entries are in (deadline, insertion number) order by
 * construction: a frame joins it only when its deadline is at or after
 * the run's newest. Frames leave by a merge of the run's head with the
 * wheel's minimum. The run is switched on and off per wheel from what the
 * frames do: every LE_WHEEL_WINDOW pushes, on when at least 7/8 of them
 * had a deadline at or after the previous push's, off when fewer than 3/4
 * joined it (with jitter few frames would, and the merge's comparison
 * would be paid for nothing). Switching never changes the order: a frame
 * that does not join goes to the wheel, and the merge sorts it out.
 *
 * Storage is allocated once at init for `capacity` frames; nothing is
 * allocated per frame. */
#ifndef LE_TIMING_WHEEL_H
#define LE_TIMING_WHEEL_H

#include <stdint.h>

#include "frame.h"
#include "le_time.h"

#define LE_WHEEL_NIL UINT32_MAX
#define LE_WHEEL_CHUNK 8 /* entries per chunk */
#define LE_WHEEL_WINDOW 1024 /* pushes between decisions on the run */

struct le_wheel_entry {
	struct le_frame f;
	uint64_t seq;
};

struct le_wheel_chunk {
	uint32_t next; /* next chunk of the bucket, or of the free list */
	uint32_t n;    /* entries used */
	struct le_wheel_entry e[LE_WHEEL_CHUNK];
};

struct le_wheel_bucket {
	uint32_t head, tail; /* chunk indices, LE_WHEEL_NIL when empty */
	uint32_t n;          /* entries in the tail chunk (its own `n` is set
			      * when it fills or the bucket is taken): an
			      * append reads no chunk header, only writes
			      * its entry */
};

struct le_timing_wheel {
	struct le_wheel_entry *fr;      /* the front: sorted, fr[fr_head ..] */
	uint32_t fr_head, fr_n;
	struct le_wheel_chunk *chunk;   /* pool of chunks */
	uint32_t free;                  /* first free chunk, NIL when none */
	uint32_t fresh;                 /* chunks [fresh, nchunks) never used */
	uint32_t nchunks;
	struct le_wheel_bucket *bucket; /* 2^order buckets */
	uint64_t *bits;                 /* bit per non-empty bucket */
	uint64_t *summary;              /* bit per non-zero word of bits */
	struct le_wheel_entry *over;    /* overflow min-heap */
	uint32_t capacity;
	uint32_t count;                 /* frames in the front and buckets */
	uint32_t nover;                 /* frames in the overflow heap */
	unsigned shift;                 /* log2 of a bucket's width in ns */
	unsigned order;                 /* log2 of the number of buckets */
	uint64_t mask;                  /* 2^order - 1 */
	uint64_t base;                  /* first slot the buckets cover */
	uint64_t front;                 /* last slot in the front array */
	uint64_t seq;                   /* next insertion number */
	/* the run: chunks run_head .. run_tail, oldest entry at run_pos of
	 * run_head (NIL when empty) */
	uint32_t run_head, run_tail, run_pos, run_n;
	le_ns_t run_last;               /* deadline of the run's newest entry */
	le_ns_t last_push;              /* deadline of the last frame pushed */
	uint32_t run_on;                /* frames may join the run */
	uint32_t win, hits;             /* pushes in this window, and those that joined
					 * (run on) or did not decrease (run off) */
};

/* Room for `capacity` frames; the span (2^order buckets of 2^shift ns)
 * covers at least `horizon_ns` from the current time when that fits in
 * 2^18 buckets of 2 us (537 ms), else with wider buckets. -1 on allocation
 * failure. */
int le_wheel_init(struct le_timing_wheel *w, uint32_t capacity, le_ns_t horizon_ns);
void le_wheel_free(struct le_timing_wheel *w);
/* -1 when `capacity` frames are held already. */
int le_wheel_push(struct le_timing_wheel *w, const struct le_frame *f);
/* le_wheel_push of f[0 .. n), in order, without a call per frame; -1,
 * and nothing pushed, when fewer than n fit. */
int le_wheel_push_burst(struct le_timing_wheel *w, const struct le_frame *f, unsigned n);
/* Removes the frame with the smallest (deadline, insertion number); -1
 * when empty. */
int le_wheel_pop_min(struct le_timing_wheel *w, struct le_frame *out);
/* Removes up to max frames with deadline <= now, in order, into out:
 * le_wheel_pop_min in a loop, without a call per frame. */
unsigned le_wheel_take_due(struct le_timing_wheel *w, le_ns_t now, struct le_frame *out, unsigned max);
/* Time has reached `now` and every frame with deadline <= now has been
 * popped: the wheel moves on, taking in overflow frames that now fall in
 * its span. */
void le_wheel_advance(struct le_timing_wheel *w, le_ns_t now);

static inline uint32_t le_wheel_count(const struct le_timing_wheel *w)
{
	return w->count + w->nover + w->run_n;
}

/* Smallest deadline held, UINT64_MAX when empty. Overflow frames are all
 * later than every frame in the buckets. */
static inline le_ns_t le_wheel_min(const struct le_timing_wheel *w)
{
	le_ns_t m = w->count ? w->fr[w->fr_head].f.deadline /* the front is never empty then */
		  : w->nover ? w->over[0].f.deadline
			     : UINT64_MAX;

	if (w->run_n && w->chunk[w->run_head].e[w->run_pos].f.deadline < m)
		m = w->chunk[w->run_head].e[w->run_pos].f.deadline;
	return m;
}

#endif
