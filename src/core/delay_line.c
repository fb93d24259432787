/* The delay line as a power-of-two ring (see delay_line.h): the mask turns
 * every index computation into an AND, and head/count never wrap unsafely
 * because count <= capacity. */
#include "delay_line.h"

#include <stdlib.h>
#include <string.h>

int le_delay_line_init(struct le_delay_line *d, uint32_t capacity)
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
	d->capacity = cap;
	d->mask = cap - 1;
	return 0;
}

void le_delay_line_free(struct le_delay_line *d)
{
	free(d->slot);
	memset(d, 0, sizeof(*d));
}

int le_delay_line_push(struct le_delay_line *d, const struct le_frame *f)
{
	if (d->count == d->capacity)
		return -1;
	d->slot[(d->head + d->count) & d->mask] = *f;
	d->count++;
	return 0;
}

le_ns_t le_delay_line_next_deadline(const struct le_delay_line *d)
{
	return d->count ? d->slot[d->head].deadline : UINT64_MAX;
}

unsigned le_delay_line_pop_due(struct le_delay_line *d, le_ns_t now, struct le_frame *out, unsigned max)
{
	unsigned n = 0;

	/* FIFO order: the first frame not yet due holds back the rest. */
	while (n < max && d->count && d->slot[d->head].deadline <= now) {
		out[n++] = d->slot[d->head];
		d->head = (d->head + 1) & d->mask;
		d->count--;
	}
	return n;
}

unsigned le_delay_line_pop_any(struct le_delay_line *d, struct le_frame *out, unsigned max)
{
	unsigned n = 0;

	while (n < max && d->count) {
		out[n++] = d->slot[d->head];
		d->head = (d->head + 1) & d->mask;
		d->count--;
	}
	return n;
}
