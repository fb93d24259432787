/* The delay line (see delay_line.h): a power-of-two ring, whose mask
 * turns every index computation into an AND, plus a timing wheel for the
 * ordered form. */
#include "delay_line.h"

#include <stdlib.h>
#include <string.h>

/* Span of an ordered line's wheel when the caller gives none. */
#define DEFAULT_HORIZON_NS (16 * LE_NS_PER_MS)

static int init(struct le_delay_line *d, uint32_t capacity, int ordered, le_ns_t horizon_ns)
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
	/* The due ring and the wheel share the capacity, so moving a frame
	 * from one to the other never needs room that is not there. */
	if (ordered && le_wheel_init(&d->wheel, cap, horizon_ns) < 0) {
		free(d->slot);
		d->slot = NULL;
		return -1;
	}
	d->ordered = ordered;
	d->capacity = cap;
	d->mask = cap - 1;
	return 0;
}

int le_delay_line_init_form(struct le_delay_line *d, uint32_t capacity, int ordered)
{
	return init(d, capacity, ordered, DEFAULT_HORIZON_NS);
}

int le_delay_line_init_ordered(struct le_delay_line *d, uint32_t capacity, le_ns_t horizon_ns)
{
	return init(d, capacity, 1, horizon_ns);
}

int le_delay_line_init(struct le_delay_line *d, uint32_t capacity)
{
	return init(d, capacity, 0, 0);
}

void le_delay_line_free(struct le_delay_line *d)
{
	free(d->slot);
	if (d->ordered)
		le_wheel_free(&d->wheel);
	memset(d, 0, sizeof(*d));
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
	if (d->count + le_wheel_count(&d->wheel) == d->capacity)
		return -1;
	return le_wheel_push(&d->wheel, f);
}

void le_delay_line_mark_due(struct le_delay_line *d, le_ns_t now)
{
	if (!d->ordered) {
		while (d->due < d->count && d->slot[(d->head + d->due) & d->mask].deadline <= now)
			d->due++;
		return;
	}
	/* Nothing due (the common case on a frame's arrival): only the
	 * wheel's time moves. */
	if (le_wheel_min(&d->wheel) > now) {
		le_wheel_advance(&d->wheel, now);
		return;
	}
	/* Straight into the due ring, up to where it wraps; it has room for
	 * every frame the wheel holds (they share the capacity). */
	for (;;) {
		uint32_t tail = (d->head + d->count) & d->mask;
		uint32_t room = d->capacity - tail < d->capacity - d->count ? d->capacity - tail
									  : d->capacity - d->count;
		unsigned n = room ? le_wheel_take_due(&d->wheel, now, &d->slot[tail], room) : 0;

		d->count += n;
		if (n < room || n == 0)
			break;
	}
	le_wheel_advance(&d->wheel, now);
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
	while (n < max && le_wheel_pop_min(&d->wheel, &out[n]) == 0)
		n++;
	return n;
}
