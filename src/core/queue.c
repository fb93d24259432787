/* The bottleneck queue; see queue.h. */
#include "queue.h"

#include <stdlib.h>
#include <string.h>

int le_queue_init(struct le_queue *q, uint32_t capacity)
{
	uint32_t cap = 1;

	memset(q, 0, sizeof(*q));
	if (capacity == 0)
		return 0;
	if (capacity > (1u << 31))
		return -1;
	while (cap < capacity)
		cap <<= 1;
	q->slot = calloc(cap, sizeof(*q->slot));
	if (q->slot == NULL)
		return -1;
	q->capacity = cap;
	q->mask = cap - 1;
	return 0;
}

void le_queue_free(struct le_queue *q)
{
	free(q->slot);
	memset(q, 0, sizeof(*q));
}

int le_queue_push(struct le_queue *q, const struct le_frame *f)
{
	if (q->count == q->capacity)
		return -1;
	q->slot[(q->head + q->count) & q->mask] = *f;
	q->count++;
	q->bytes += f->len;
	return 0;
}

int le_queue_pop(struct le_queue *q, struct le_frame *out)
{
	if (q->count == 0)
		return -1;
	*out = q->slot[q->head];
	q->head = (q->head + 1) & q->mask;
	q->count--;
	q->bytes -= out->len;
	return 0;
}
