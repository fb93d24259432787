/* The bottleneck queue: frames waiting for the serializer, in arrival
 * order. Bounded rings (sized at init from the link's limit) that also
 * keep the bytes they hold, for `limit-bytes` and CoDel.
 *
 * At a live change the new link takes the old link's queue over
 * (le_queue_adopt) in O(1): the old rings that still hold frames come
 * first, the new link's own ring behind them, so FIFO order holds and no
 * frame is copied. A ring is owned (freed) by exactly one queue. */
#ifndef LE_QUEUE_H
#define LE_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "frame.h"

/* Rings a queue may chain: its own and those it took over. More are
 * needed only when more than LE_QUEUE_RINGS - 1 changes, each raising
 * the limit, follow while the oldest frame still waits. */
#define LE_QUEUE_RINGS 10

struct le_ring {
	struct le_frame *slot;
	uint32_t capacity;   /* a power of two (0: holds nothing) */
	uint32_t mask;
	uint32_t head;
	uint32_t count;
};

struct le_queue {
	struct le_ring ring[LE_QUEUE_RINGS]; /* oldest first; pushes go to the last */
	unsigned nrings;     /* >= 1 */
	unsigned front;      /* the ring of the head frame, when count > 0 */
	uint32_t count;
	uint64_t bytes;
};

/* capacity 0 is a queue that holds nothing (links without a serializer). */
int le_queue_init(struct le_queue *q, uint32_t capacity);
void le_queue_free(struct le_queue *q);
/* What the ring pushes go to can hold. */
static inline uint32_t le_queue_capacity(const struct le_queue *q)
{
	return q->ring[q->nrings - 1].capacity;
}
int le_queue_push(struct le_queue *q, const struct le_frame *f);
int le_queue_pop(struct le_queue *q, struct le_frame *out);
/* The next ring with frames, once the front one is empty. */
void le_queue_next_ring(struct le_queue *q);

/* le_queue_pop of a queue that is not empty, inline: a rate serializer
 * takes its frames one by one in a loop (link_stages.c, serve_rate_blocks). */
static inline void le_queue_pop_head(struct le_queue *q, struct le_frame *out)
{
	struct le_ring *r = &q->ring[q->front];

	le_frame_copy(out, &r->slot[r->head]);
	r->head = (r->head + 1) & r->mask;
	/* An empty ring starts again at its first slot, so an idle
	 * serializer's frames reuse one cached line instead of walking the
	 * whole ring (delay_line.c, rewind_if_empty). */
	if (--r->count == 0) {
		r->head = 0;
		if (q->front + 1 < q->nrings)
			le_queue_next_ring(q);
	}
	q->count--;
	q->bytes -= out->len;
}
static inline const struct le_frame *le_queue_head(const struct le_queue *q)
{
	const struct le_ring *r = &q->ring[q->front];

	return q->count ? &r->slot[r->head] : NULL;
}
/* `q` (empty, never used) takes over every frame of `old`, which is left
 * empty with the rings it no longer needs. O(LE_QUEUE_RINGS). When `old`
 * already chains LE_QUEUE_RINGS rings with frames, q pushes to old's
 * last ring even if it is smaller than q's own (pushes beyond it fail:
 * the link drops those frames as queue_full). */
void le_queue_adopt(struct le_queue *q, struct le_queue *old);

#endif
