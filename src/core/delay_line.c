/* The delay line (see delay_line.h): a power-of-two ring, whose mask
 * turns every index computation into an AND, plus a binary min-heap for
 * the ordered form. */
#include "delay_line.h"

#include <stdlib.h>
#include <string.h>

int le_delay_line_init_form(struct le_delay_line *d, uint32_t capacity, int ordered)
{
	uint32_t cap = 1;

	memset(d, 0, sizeof(*d));
	if (capacity > (1u << 31)) /* the next power of two would not fit */
		return -1;
	while (cap < capacity)
		cap <<= 1;
	d->slot = calloc(cap, sizeof(*d->slot));
	if (d->slot == NULL)
		return -1;
	if (ordered) {
		d->heap = calloc(cap, sizeof(*d->heap));
		if (d->heap == NULL) {
			free(d->slot);
			d->slot = NULL;
			return -1;
		}
	}
	d->ordered = ordered;
	d->capacity = cap;
	d->mask = cap - 1;
	return 0;
}

int le_delay_line_init(struct le_delay_line *d, uint32_t capacity)
{
	return le_delay_line_init_form(d, capacity, 0);
}

void le_delay_line_free(struct le_delay_line *d)
{
	free(d->slot);
	free(d->heap);
	memset(d, 0, sizeof(*d));
}

static int before(const struct le_heap_node *a, const struct le_heap_node *b)
{
	return a->deadline < b->deadline || (a->deadline == b->deadline && a->seq < b->seq);
}

static void sift_up(struct le_heap_node *h, uint32_t i)
{
	struct le_heap_node x = h[i];

	while (i > 0) {
		uint32_t parent = (i - 1) / 2;
		if (!before(&x, &h[parent]))
			break;
		h[i] = h[parent];
		i = parent;
	}
	h[i] = x;
}

static void sift_down(struct le_heap_node *h, uint32_t n, uint32_t i)
{
	struct le_heap_node x = h[i];

	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && before(&h[c + 1], &h[c]))
			c++;
		if (!before(&h[c], &x))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
}

static void heap_pop(struct le_delay_line *d, struct le_frame *out)
{
	*out = d->heap[0].f;
	d->hcount--;
	if (d->hcount > 0) {
		d->heap[0] = d->heap[d->hcount];
		sift_down(d->heap, d->hcount, 0);
	}
}

static void ring_push(struct le_delay_line *d, const struct le_frame *f)
{
	d->slot[(d->head + d->count) & d->mask] = *f;
	d->count++;
}

int le_delay_line_push(struct le_delay_line *d, const struct le_frame *f)
{
	if (!d->ordered) {
		if (d->count == d->capacity)
			return -1;
		ring_push(d, f);
		return 0;
	}
	/* The due ring and the heap share the capacity, so moving a frame
	 * from one to the other never needs room that is not there. */
	if (d->count + d->hcount == d->capacity)
		return -1;
	d->heap[d->hcount].deadline = f->deadline;
	d->heap[d->hcount].seq = d->seq++;
	d->heap[d->hcount].f = *f;
	sift_up(d->heap, d->hcount);
	d->hcount++;
	return 0;
}

void le_delay_line_mark_due(struct le_delay_line *d, le_ns_t now)
{
	if (!d->ordered) {
		while (d->due < d->count && d->slot[(d->head + d->due) & d->mask].deadline <= now)
			d->due++;
		return;
	}
	while (d->hcount > 0 && d->heap[0].deadline <= now) {
		struct le_frame f;
		heap_pop(d, &f);
		ring_push(d, &f);
	}
}

static unsigned ring_pop(struct le_delay_line *d, struct le_frame *out, unsigned max, uint32_t avail)
{
	unsigned n = 0;

	while (n < max && n < avail) {
		out[n++] = d->slot[d->head];
		d->head = (d->head + 1) & d->mask;
		d->count--;
	}
	return n;
}

unsigned le_delay_line_pop_due(struct le_delay_line *d, le_ns_t now, struct le_frame *out, unsigned max)
{
	unsigned n = 0;

	le_delay_line_mark_due(d, now);
	/* Frames marked due at a later `now` than this one stay until theirs
	 * comes; in FIFO order the first one not yet due holds back the rest. */
	while (n < max && d->count && (d->ordered || d->due > 0) && d->slot[d->head].deadline <= now) {
		out[n++] = d->slot[d->head];
		d->head = (d->head + 1) & d->mask;
		d->count--;
		if (!d->ordered)
			d->due--;
	}
	return n;
}

unsigned le_delay_line_pop_any(struct le_delay_line *d, struct le_frame *out, unsigned max)
{
	unsigned n = ring_pop(d, out, max, d->count);

	if (!d->ordered) {
		d->due = d->due > n ? d->due - n : 0;
		return n;
	}
	while (n < max && d->hcount > 0)
		heap_pop(d, &out[n++]);
	return n;
}
