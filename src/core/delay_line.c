/* The delay line (see delay_line.h): a power-of-two ring, whose mask
 * turns every index computation into an AND, plus a timing wheel for the
 * ordered form. */
#include "delay_line.h"

#include <stdlib.h>
#include <string.h>

/* Span of an ordered line's wheel when the caller gives none. */
#define DEFAULT_HORIZON_NS (16 * LE_NS_PER_MS)

enum line_form { FORM_FIFO, FORM_ORDERED, FORM_RUNS };

static int init(struct le_delay_line *d, uint32_t capacity, enum line_form form, le_ns_t horizon_ns)
{
	uint32_t cap = 1;
	int ordered = form == FORM_ORDERED;

	memset(d, 0, sizeof(*d));
	if (capacity > (1u << 31)) /* the next power of two would not fit */
		return -1;
	while (cap < capacity)
		cap <<= 1;
	if (form == FORM_RUNS) {
		d->runs = 1;
		d->handle = malloc((size_t)cap * sizeof(*d->handle));
		d->len = malloc((size_t)cap * sizeof(*d->len));
		d->run = malloc((size_t)cap * sizeof(*d->run));
		d->capacity = cap;
		d->mask = cap - 1;
		if (d->handle == NULL || d->len == NULL || d->run == NULL) {
			le_delay_line_free(d);
			return -1;
		}
		return 0;
	}
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
	return init(d, capacity, ordered ? FORM_ORDERED : FORM_FIFO, DEFAULT_HORIZON_NS);
}

int le_delay_line_init_runs(struct le_delay_line *d, uint32_t capacity)
{
	return init(d, capacity, FORM_RUNS, 0);
}

int le_delay_line_init_ordered(struct le_delay_line *d, uint32_t capacity, le_ns_t horizon_ns)
{
	return init(d, capacity, FORM_ORDERED, horizon_ns);
}

int le_delay_line_init(struct le_delay_line *d, uint32_t capacity)
{
	return init(d, capacity, FORM_FIFO, 0);
}

void le_delay_line_free(struct le_delay_line *d)
{
	free(d->slot);
	free(d->handle);
	free(d->len);
	free(d->run);
	if (d->ordered)
		le_wheel_free(&d->wheel);
	memset(d, 0, sizeof(*d));
}

int le_delay_line_push(struct le_delay_line *d, const struct le_frame *f)
{
	if (!d->ordered) {
		if (d->count == d->capacity)
			return -1;
		le_delay_line_push_fifo(d, f);
		return 0;
	}
	if (d->count + le_wheel_count(&d->wheel) == d->capacity)
		return -1;
	return le_wheel_push(&d->wheel, f);
}

int le_delay_line_push_ordered_burst(struct le_delay_line *d, const struct le_frame *f, unsigned n)
{
	if (d->capacity - le_delay_line_count(d) < n)
		return -1;
	return le_wheel_push_burst(&d->wheel, f, n);
}

void le_delay_line_push_run(struct le_delay_line *d, void *const *handles, const uint32_t *lens, unsigned k,
			    le_ns_t arrival, le_ns_t deadline, uint16_t cls)
{
	/* The frames go into the rings in order, in at most two pieces (the
	 * rings wrap): copied as blocks, as runs_pop_split takes them. */
	const uint32_t size = d->mask + 1;
	uint32_t tail = (d->head + d->count) & d->mask;

	for (unsigned done = 0; done < k;) {
		unsigned piece = k - done;

		if (piece > size - tail)
			piece = size - tail;
		memcpy(&d->handle[tail], &handles[done], piece * sizeof(*handles));
		memcpy(&d->len[tail], &lens[done], piece * sizeof(*lens));
		tail = (tail + piece) & d->mask;
		done += piece;
	}
	d->count += k;
	le_delay_line_join_run(d, arrival, deadline, cls, k);
}

void le_delay_line_mark_due(struct le_delay_line *d, le_ns_t now)
{
	if (d->runs) {
		while (d->rdue < d->rcount) {
			const struct le_delay_run *r = &d->run[(d->rhead + d->rdue) & d->mask];
			if (r->deadline > now)
				break;
			d->due += r->n;
			d->rdue++;
		}
		return;
	}
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

/* An empty ring starts again at its first slot. Frames that stay only
 * a moment (the due ring behind a timing wheel, a line behind a rate
 * with no delay) would otherwise walk the whole ring, megabytes at a
 * large limit, and every push would write a line that left the cache
 * since the ring last came round; from the first slot they reuse the
 * same few lines. Positions are only ever taken relative to the head,
 * so moving the head of an empty ring changes nothing else. */
static void rewind_if_empty(struct le_delay_line *d)
{
	if (d->count == 0) {
		d->head = 0;
		if (d->runs && d->rcount == 0)
			d->rhead = 0;
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
	rewind_if_empty(d);
	return n;
}

/* FIFO form: only frames marked due can leave, and of those, in order,
 * those due by `now` (a frame marked at a later `now` waits for it). */
static unsigned fifo_pop_due(struct le_delay_line *d, le_ns_t now, struct le_frame *out, unsigned max)
{
	unsigned n = 0, limit = d->due < max ? d->due : max;
	uint32_t head = d->head;

	while (n < limit && d->slot[head].deadline <= now) {
		out[n++] = d->slot[head];
		head = (head + 1) & d->mask;
	}
	d->head = head;
	d->count -= n;
	d->due -= n;
	rewind_if_empty(d);
	return n;
}

/* After a runs pop of n frames: the next call's, assumed as many, for
 * reading (le_delay_line_prefetch_entries). */
static void prefetch_next_runs(const struct le_delay_line *d, unsigned n)
{
	unsigned ahead = n < d->count ? n : d->count;
	le_delay_line_prefetch_entries(d, d->head, ahead, 0);
}

/* Runs form: up to max frames from the head runs; `now` UINT64_MAX and
 * `only_due` 0 take any frame (pop_any). */
static unsigned runs_pop(struct le_delay_line *d, le_ns_t now, int only_due, struct le_frame *out, unsigned max)
{
	unsigned n = 0;
	uint32_t head = d->head;

	while (n < max && d->rcount > 0) {
		struct le_delay_run *r = &d->run[d->rhead];
		int due = d->rdue > 0;

		if (only_due && (!due || r->deadline > now))
			break;
		unsigned k = r->n < max - n ? r->n : max - n;
		for (unsigned i = 0; i < k; i++) {
			out[n + i] = (struct le_frame){ d->handle[head], d->len[head], (uint16_t)r->tag,
							(uint16_t)(r->tag >> 16), r->arrival, r->deadline };
			head = (head + 1) & d->mask;
		}
		n += k;
		d->count -= k;
		if (due)
			d->due -= k;
		r->n -= k;
		if (r->n == 0) {
			d->rhead = (d->rhead + 1) & d->mask;
			d->rcount--;
			if (due)
				d->rdue--;
		}
	}
	d->head = head;
	rewind_if_empty(d);
	prefetch_next_runs(d, n);
	return n;
}

unsigned le_delay_line_pop_due(struct le_delay_line *d, le_ns_t now, struct le_frame *out, unsigned max)
{
	unsigned n = 0;

	le_delay_line_mark_due(d, now);
	if (d->runs)
		return runs_pop(d, now, 1, out, max);
	if (!d->ordered)
		return fifo_pop_due(d, now, out, max);
	/* Frames marked due at a later `now` than this one stay until theirs
	 * comes. The ring's fields in locals: stores into out[] might alias
	 * them for the compiler, which would reload them per frame. */
	const struct le_frame *slot = d->slot;
	const uint32_t mask = d->mask;
	uint32_t head = d->head, limit = d->count < max ? d->count : max;
	while (n < limit && slot[head].deadline <= now) {
		out[n++] = slot[head];
		head = (head + 1) & mask;
	}
	d->head = head;
	d->count -= n;
	rewind_if_empty(d);
	return n;
}

/* runs_pop(d, now, 1, ...) for a sender: the due runs' handles and
 * lengths are copied from their rings, and each run's deadline written
 * once per frame; no le_frame is built. */
static unsigned runs_pop_split(struct le_delay_line *d, le_ns_t now, const struct le_frame_split *out,
			       unsigned max)
{
	void **restrict handle = out->handle;
	uint32_t *restrict len = out->len;
	le_ns_t *restrict deadline = out->deadline;
	const uint32_t mask = d->mask;
	uint32_t head = d->head;
	unsigned n = 0;

	while (n < max && d->rdue > 0) {
		struct le_delay_run *r = &d->run[d->rhead];

		if (r->deadline > now)
			break;
		unsigned k = r->n < max - n ? r->n : max - n;
		/* The run's frames lie in the rings in order, in at most two
		 * pieces (the rings wrap): copied as blocks. */
		for (unsigned done = 0; done < k;) {
			unsigned piece = k - done;

			if (piece > mask + 1 - head)
				piece = mask + 1 - head;
			memcpy(&handle[n + done], &d->handle[head], piece * sizeof(*handle));
			memcpy(&len[n + done], &d->len[head], piece * sizeof(*len));
			head = (head + piece) & mask;
			done += piece;
		}
		const le_ns_t run_deadline = r->deadline;
		le_ns_t *restrict to = deadline + n;
		for (unsigned i = 0; i < k; i++)
			to[i] = run_deadline;
		n += k;
		d->count -= k;
		d->due -= k;
		r->n -= k;
		if (r->n == 0) {
			d->rhead = (d->rhead + 1) & mask;
			d->rcount--;
			d->rdue--;
		}
	}
	d->head = head;
	rewind_if_empty(d);
	prefetch_next_runs(d, n);
	return n;
}

/* fifo_pop_due (FIFO form: up to `due` frames) or the ordered form's
 * pop from its due ring (no such bound) for a sender: each slot's
 * three fields straight into the arrays. */
static unsigned slots_pop_split(struct le_delay_line *d, le_ns_t now, const struct le_frame_split *out,
				unsigned max)
{
	unsigned n = 0, limit = max;
	uint32_t head = d->head;

	if (!d->ordered && d->due < limit)
		limit = d->due;
	if (limit > d->count)
		limit = d->count;
	while (n < limit && d->slot[head].deadline <= now) {
		const struct le_frame *f = &d->slot[head];

		out->handle[n] = f->handle;
		out->len[n] = f->len;
		out->deadline[n] = f->deadline;
		n++;
		head = (head + 1) & d->mask;
	}
	d->head = head;
	d->count -= n;
	if (!d->ordered)
		d->due -= n;
	rewind_if_empty(d);
	return n;
}

unsigned le_delay_line_pop_due_split(struct le_delay_line *d, le_ns_t now, const struct le_frame_split *out,
				     unsigned max)
{
	le_delay_line_mark_due(d, now);
	return d->runs ? runs_pop_split(d, now, out, max) : slots_pop_split(d, now, out, max);
}

unsigned le_delay_line_pop_any(struct le_delay_line *d, struct le_frame *out, unsigned max)
{
	if (d->runs)
		return runs_pop(d, UINT64_MAX, 0, out, max);
	unsigned n = ring_pop(d, out, max, d->count);

	if (!d->ordered) {
		d->due = d->due > n ? d->due - n : 0;
		return n;
	}
	while (n < max && le_wheel_pop_min(&d->wheel, &out[n]) == 0)
		n++;
	return n;
}
