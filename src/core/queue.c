/* The bottleneck queue; see queue.h. */
#include "queue.h"

#include <stdlib.h>
#include <string.h>

static int ring_init(struct le_ring *r, uint32_t capacity)
{
	uint32_t cap = 1;

	memset(r, 0, sizeof(*r));
	if (capacity == 0)
		return 0;
	if (capacity > (1u << 31))
		return -1;
	while (cap < capacity)
		cap <<= 1;
	r->slot = calloc(cap, sizeof(*r->slot));
	if (r->slot == NULL)
		return -1;
	r->capacity = cap;
	r->mask = cap - 1;
	return 0;
}

int le_queue_init(struct le_queue *q, uint32_t capacity)
{
	memset(q, 0, sizeof(*q));
	q->nrings = 1;
	return ring_init(&q->ring[0], capacity);
}

void le_queue_free(struct le_queue *q)
{
	for (unsigned i = 0; i < q->nrings; i++)
		free(q->ring[i].slot);
	memset(q, 0, sizeof(*q));
	q->nrings = 1;
}

int le_queue_push(struct le_queue *q, const struct le_frame *f)
{
	struct le_ring *r = &q->ring[q->nrings - 1];

	if (r->count == r->capacity)
		return -1;
	le_frame_copy(&r->slot[(r->head + r->count) & r->mask], f);
	r->count++;
	if (q->count++ == 0)
		q->front = q->nrings - 1;
	q->bytes += f->len;
	return 0;
}

int le_queue_pop(struct le_queue *q, struct le_frame *out)
{
	if (q->count == 0)
		return -1;
	le_queue_pop_head(q, out);
	return 0;
}

void le_queue_next_ring(struct le_queue *q)
{
	/* The next frame is in a later ring once this one is empty. */
	while (q->ring[q->front].count == 0 && q->front + 1 < q->nrings)
		q->front++;
}

void le_queue_adopt(struct le_queue *q, struct le_queue *old)
{
	struct le_ring keep[LE_QUEUE_RINGS], own = q->ring[0];
	unsigned nkeep = 0, n = 0;

	if (old->count == 0)
		return; /* nothing to take: each keeps its rings */
	for (unsigned i = 0; i < old->nrings; i++) {
		if (old->ring[i].count > 0)
			q->ring[n++] = old->ring[i];
		else
			keep[nkeep++] = old->ring[i];
	}
	/* Pushes go behind the old frames: to the new link's own ring, or to
	 * the old last ring when it is at least as large (no more rings),
	 * or when no ring is left for the own one. */
	if (old->ring[old->nrings - 1].count > 0 &&
	    (old->ring[old->nrings - 1].capacity >= own.capacity || n == LE_QUEUE_RINGS)) {
		keep[nkeep++] = own;
	} else {
		q->ring[n++] = own;
	}
	q->nrings = n;
	q->front = 0;
	q->count = old->count;
	q->bytes = old->bytes;
	/* The old queue keeps the rings nobody pushes to any more, to free
	 * them with its link; it holds at least one (possibly empty) ring. */
	memset(old, 0, sizeof(*old));
	for (unsigned i = 0; i < nkeep; i++)
		old->ring[i] = keep[i];
	old->nrings = nkeep ? nkeep : 1;
}
