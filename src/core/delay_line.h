/* The delay line: frames past the serializer, each with its deadline.
 *
 * Two forms behind one interface, chosen at init:
 *   FIFO     a bounded ring, O(1), for monotonic deadlines (constant
 *            delay, rate, trace, slot, order-preserving jitter);
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

struct le_delay_line {
	/* FIFO form: every frame; ordered form: the due frames only */
	struct le_frame *slot;
	uint32_t capacity;   /* a power of two >= the requested capacity */
	uint32_t mask;
	uint32_t head;       /* next to leave */
	uint32_t count;
	uint32_t due;        /* FIFO form: frames at the head known to be due */
	/* ordered form */
	int ordered;
	struct le_timing_wheel wheel; /* the frames not yet due */
};

/* FIFO line with room for at least `capacity` frames. -1 on allocation
 * failure. */
int le_delay_line_init(struct le_delay_line *d, uint32_t capacity);
/* FIFO or ordered; an ordered line's wheel spans at least `horizon_ns`
 * (deadlines further out cost a little more: see timing_wheel.h). */
int le_delay_line_init_form(struct le_delay_line *d, uint32_t capacity, int ordered);
int le_delay_line_init_ordered(struct le_delay_line *d, uint32_t capacity, le_ns_t horizon_ns);
void le_delay_line_free(struct le_delay_line *d);
/* -1 when full. A FIFO line takes deadlines in non-decreasing order. */
int le_delay_line_push(struct le_delay_line *d, const struct le_frame *f);
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
		return d->slot[d->head].deadline;
	return le_wheel_min(&d->wheel);
}
/* Removes up to max frames whose deadline <= now, in deadline order. */
unsigned le_delay_line_pop_due(struct le_delay_line *d, le_ns_t now, struct le_frame *out, unsigned max);
/* Removes up to max frames whatever their deadline (shutdown, flush), in
 * deadline order. */
unsigned le_delay_line_pop_any(struct le_delay_line *d, struct le_frame *out, unsigned max);

#endif
