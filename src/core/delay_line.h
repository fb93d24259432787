/* The delay line: frames past the serializer, each with its deadline.
 *
 * Three forms behind one interface, chosen at init:
 *   FIFO     a bounded ring, O(1), for monotonic deadlines (rate, trace,
 *            slot, order-preserving jitter);
 *   runs     the FIFO for a fixed delay (0 too) without serializer,
 *            where a burst arriving together shares its deadline: 12
 *            bytes per frame and the rest once per run (see the struct);
 *   ordered  a timing wheel (timing_wheel.h) ordered by (deadline,
 *            insertion number), so frames leave in deadline order and
 *            frames with equal deadlines in the order they came (stable),
 *            at a cost per frame that does not grow with the frames held;
 *            used only when deadlines can decrease (jitter without
 *            noreorder, reorder).
 * Frames whose deadline has passed are "due". The line tells apart held
 * frames (not yet due: what netem's `limit` counts) from due frames not
 * yet taken, so the model's decisions never depend on when the caller
 * dequeues. In ordered form due frames move to a FIFO ring in deadline
 * order. */
#ifndef LE_DELAY_LINE_H
#define LE_DELAY_LINE_H

#include <stdint.h>

#include "frame.h"
#include "le_time.h"
#include "timing_wheel.h"

/* A run of frames in the runs form: consecutive frames with one arrival,
 * deadline and class. */
struct le_delay_run {
	le_ns_t arrival, deadline;
	uint32_t n;
	uint32_t tag;   /* cls | flags << 16: one compare, built in registers */
};

static inline uint32_t le_delay_run_tag(const struct le_frame *f)
{
	return (uint32_t)f->cls | (uint32_t)f->flags << 16;
}

struct le_delay_line {
	/* FIFO form: every frame; ordered form: the due frames only */
	struct le_frame *slot;
	uint32_t capacity;   /* a power of two >= the requested capacity */
	uint32_t mask;
	uint32_t head;       /* next to leave */
	uint32_t count;
	uint32_t due;        /* FIFO and runs forms: frames at the head known to be due */
	/* ordered form */
	int ordered;
	struct le_timing_wheel wheel; /* the frames not yet due */
	/* Runs form: a FIFO line whose frames come in runs sharing arrival
	 * and deadline (a fixed delay without serializer: a burst that
	 * arrives together leaves together). A frame keeps 12 bytes (handle,
	 * length) instead of a 32-byte le_frame, and due-ness moves a run at
	 * a time: after 1 ms at 10+ Mpps the line no longer fits the cache,
	 * and these bytes are what it misses on. */
	int runs;
	void **handle;               /* rings of capacity, indexed as slot */
	uint32_t *len;
	struct le_delay_run *run;    /* ring of capacity: a run has >= 1 frame */
	uint32_t rhead, rcount, rdue; /* first run, runs held, runs due */
};

/* FIFO line with room for at least `capacity` frames. -1 on allocation
 * failure. */
int le_delay_line_init(struct le_delay_line *d, uint32_t capacity);
/* FIFO or ordered; an ordered line's wheel spans at least `horizon_ns`
 * (deadlines further out cost a little more: see timing_wheel.h). */
int le_delay_line_init_form(struct le_delay_line *d, uint32_t capacity, int ordered);
int le_delay_line_init_ordered(struct le_delay_line *d, uint32_t capacity, le_ns_t horizon_ns);
/* FIFO line in runs form (see the struct). Same behaviour as FIFO. */
int le_delay_line_init_runs(struct le_delay_line *d, uint32_t capacity);
void le_delay_line_free(struct le_delay_line *d);
/* -1 when full. A FIFO line takes deadlines in non-decreasing order. */
int le_delay_line_push(struct le_delay_line *d, const struct le_frame *f);
/* An ordered line: le_delay_line_push of f[0 .. n) in order, or -1 and
 * nothing pushed when fewer than n fit. */
int le_delay_line_push_ordered_burst(struct le_delay_line *d, const struct le_frame *f, unsigned n);
/* Runs form: k frames just stored at the ring's tail, with these fields,
 * into the runs. The last run takes them when it is not due yet (a frame
 * becomes due only at a mark_due after its push) and has the same
 * fields; else they start a new one. */
static inline void le_delay_line_join_run(struct le_delay_line *d, le_ns_t arrival, le_ns_t deadline, uint32_t tag,
					  uint32_t k)
{
	if (d->rcount > d->rdue) {
		struct le_delay_run *r = &d->run[(d->rhead + d->rcount - 1) & d->mask];
		if (r->deadline == deadline && r->arrival == arrival && r->tag == tag) {
			r->n += k;
			return;
		}
	}
	d->run[(d->rhead + d->rcount) & d->mask] = (struct le_delay_run){ arrival, deadline, k, tag };
	d->rcount++;
}
/* A FIFO line's push (either form), for a caller that checked the room
 * (count < capacity): inline, it costs a store or two. */
static inline void le_delay_line_push_fifo(struct le_delay_line *d, const struct le_frame *f)
{
	uint32_t tail = (d->head + d->count) & d->mask;

	d->count++;
	if (!d->runs) {
		le_frame_copy(&d->slot[tail], f);
		return;
	}
	d->handle[tail] = f->handle;
	d->len[tail] = f->len;
	le_delay_line_join_run(d, f->arrival, f->deadline, le_delay_run_tag(f), 1);
}
/* Runs form: k frames (k <= capacity - count) with one arrival, deadline
 * and class, as k pushes would (they join the last run when it is not due
 * and has the same fields). */
void le_delay_line_push_run(struct le_delay_line *d, void *const *handles, const uint32_t *lens, unsigned k,
			    le_ns_t arrival, le_ns_t deadline, uint16_t cls);
/* __builtin_prefetch wants its read/write hint as a constant: callers
 * pass one, and inlined the branch folds away. */
static inline __attribute__((always_inline)) void le_prefetch_line(const void *p, int write)
{
	if (write)
		__builtin_prefetch(p, 1);
	else
		__builtin_prefetch(p, 0);
}
/* The ring lines of the n entries from `from` (handles 8 to a line,
 * lengths 16), for reading or, with `write`, for writing. Each entry
 * was last touched a whole delay ago, and the held mbufs have pushed it
 * out of the cache since. */
static inline void le_delay_line_prefetch_entries(const struct le_delay_line *d, uint32_t from, unsigned n,
						  int write)
{
	if (n == 0)
		return;
	for (unsigned i = 0; i < n; i += 8) {
		le_prefetch_line(&d->handle[(from + i) & d->mask], write);
		if ((i & 15) == 0)
			le_prefetch_line(&d->len[(from + i) & d->mask], write);
	}
	/* `from` need not start a line: the last entry's lines too. */
	le_prefetch_line(&d->handle[(from + n - 1) & d->mask], write);
	le_prefetch_line(&d->len[(from + n - 1) & d->mask], write);
}
/* Before a FIFO push of n frames (runs form only): the ring's lines for
 * the next push, assumed to be of n frames too, for writing. Asked for a
 * burst ahead, they come while this burst is stored instead of each
 * store waiting for its line. */
static inline void le_delay_line_prefetch_tail(const struct le_delay_line *d, unsigned n)
{
	if (d->runs)
		le_delay_line_prefetch_entries(d, d->head + d->count + n, n, 1);
}
/* Marks frames with deadline <= now as due. */
void le_delay_line_mark_due(struct le_delay_line *d, le_ns_t now);
/* Frames not yet known due (after mark_due(now): deadline > now).
 * (Inline: the link asks on every frame.) */
static inline uint32_t le_delay_line_held(const struct le_delay_line *d)
{
	return d->ordered ? le_wheel_count(&d->wheel) : d->count - d->due;
}
/* Every frame the line holds. */
static inline uint32_t le_delay_line_count(const struct le_delay_line *d)
{
	return d->count + le_wheel_count(&d->wheel);
}
/* Earliest deadline held, or UINT64_MAX when empty. */
static inline le_ns_t le_delay_line_next_deadline(const struct le_delay_line *d)
{
	if (d->count)
		return d->runs ? d->run[d->rhead].deadline : d->slot[d->head].deadline;
	return le_wheel_min(&d->wheel);
}
/* Removes up to max frames whose deadline <= now, in deadline order. */
unsigned le_delay_line_pop_due(struct le_delay_line *d, le_ns_t now, struct le_frame *out, unsigned max);
/* le_delay_line_pop_due into the three arrays of `out`: the runs form
 * copies its handle and length rings as they are. */
unsigned le_delay_line_pop_due_split(struct le_delay_line *d, le_ns_t now, const struct le_frame_split *out,
				     unsigned max);
/* Removes up to max frames whatever their deadline (shutdown, flush), in
 * deadline order. */
unsigned le_delay_line_pop_any(struct le_delay_line *d, struct le_frame *out, unsigned max);

#endif
