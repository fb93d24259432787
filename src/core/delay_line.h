/* The delay line: frames the link holds, each with its deadline.
 *
 * A bounded FIFO: O(1) and exact while deadlines are monotonic (constant
 * delay, rate, order-preserving jitter). Frames leave in order once their
 * deadline has passed. A time-ordered variant for reordering jitter will
 * sit behind the same interface. */
#ifndef LE_DELAY_LINE_H
#define LE_DELAY_LINE_H

#include <stdint.h>

#include "le_time.h"

struct le_frame {
	void *handle;        /* opaque to the model: an mbuf for the data plane */
	uint32_t len;        /* frame length in bytes */
	le_ns_t arrival;     /* when the link received it */
	le_ns_t deadline;    /* when the model says it must leave */
};

struct le_delay_line {
	struct le_frame *slot;
	uint32_t capacity;   /* a power of two >= the requested capacity */
	uint32_t mask;
	uint32_t head;       /* next to leave */
	uint32_t count;
};

/* Allocates room for at least `capacity` frames. -1 on allocation failure. */
int le_delay_line_init(struct le_delay_line *d, uint32_t capacity);
void le_delay_line_free(struct le_delay_line *d);
/* -1 when full. */
int le_delay_line_push(struct le_delay_line *d, const struct le_frame *f);
/* Earliest deadline held, or UINT64_MAX when empty. */
le_ns_t le_delay_line_next_deadline(const struct le_delay_line *d);
/* Removes up to max frames whose deadline <= now, in order. */
unsigned le_delay_line_pop_due(struct le_delay_line *d, le_ns_t now, struct le_frame *out, unsigned max);
/* Removes up to max frames whatever their deadline (shutdown, flush). */
unsigned le_delay_line_pop_any(struct le_delay_line *d, struct le_frame *out, unsigned max);

#endif
