/* The bottleneck queue: frames waiting for the serializer, in arrival
 * order. A bounded ring (sized at init from the link's limit) that also
 * keeps the bytes it holds, for `limit-bytes` and CoDel. */
#ifndef LE_QUEUE_H
#define LE_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "frame.h"

struct le_queue {
	struct le_frame *slot;
	uint32_t capacity;   /* a power of two */
	uint32_t mask;
	uint32_t head;
	uint32_t count;
	uint64_t bytes;
};

/* capacity 0 is a queue that holds nothing (links without a serializer). */
int le_queue_init(struct le_queue *q, uint32_t capacity);
void le_queue_free(struct le_queue *q);
int le_queue_push(struct le_queue *q, const struct le_frame *f);
int le_queue_pop(struct le_queue *q, struct le_frame *out);
static inline const struct le_frame *le_queue_head(const struct le_queue *q)
{
	return q->count ? &q->slot[q->head] : NULL;
}
/* The i-th frame from the head (i < count). */
static inline const struct le_frame *le_queue_at(const struct le_queue *q, uint32_t i)
{
	return &q->slot[(q->head + i) & q->mask];
}

#endif
