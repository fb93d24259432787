/* The timing wheel (see timing_wheel.h). */
#include "timing_wheel.h"

#include <stdlib.h>
#include <string.h>

#define NIL LE_WHEEL_NIL

/* A bucket of about 1 us: at the 7-15 Mpps one lcore reaches, a few to a
 * dozen frames per bucket, so sorting one is a handful of comparisons. */
enum { MIN_SHIFT = 10, MIN_ORDER = 8, MAX_ORDER = 16, MAX_SHIFT = 48 };

static int before(const struct le_wheel_node *a, const struct le_wheel_node *b)
{
	return a->f.deadline < b->f.deadline || (a->f.deadline == b->f.deadline && a->seq < b->seq);
}

static uint64_t nwords(const struct le_timing_wheel *w)
{
	return (w->mask + 1) >> 6;
}

static uint64_t nsummary(const struct le_timing_wheel *w)
{
	return (nwords(w) + 63) >> 6;
}

int le_wheel_init(struct le_timing_wheel *w, uint32_t capacity, le_ns_t horizon_ns)
{
	unsigned shift = MIN_SHIFT, order = MIN_ORDER;

	memset(w, 0, sizeof(*w));
	while (order < MAX_ORDER && (1ULL << (shift + order)) < horizon_ns)
		order++;
	while (shift < MAX_SHIFT && (1ULL << (shift + order)) < horizon_ns)
		shift++;
	w->shift = shift;
	w->order = order;
	w->mask = (1ULL << order) - 1;
	w->capacity = capacity;
	w->node = calloc(capacity ? capacity : 1, sizeof(*w->node));
	w->over = calloc(capacity ? capacity : 1, sizeof(*w->over));
	w->bucket = malloc((w->mask + 1) * sizeof(*w->bucket));
	w->bits = calloc(nwords(w), sizeof(*w->bits));
	w->summary = calloc(nsummary(w), sizeof(*w->summary));
	if (!w->node || !w->over || !w->bucket || !w->bits || !w->summary) {
		le_wheel_free(w);
		return -1;
	}
	memset(w->bucket, 0xff, (w->mask + 1) * sizeof(*w->bucket)); /* all NIL */
	for (uint32_t i = 0; i < capacity; i++)
		w->node[i].next = i + 1 < capacity ? i + 1 : NIL;
	w->free = capacity ? 0 : NIL;
	return 0;
}

void le_wheel_free(struct le_timing_wheel *w)
{
	free(w->node);
	free(w->over);
	free(w->bucket);
	free(w->bits);
	free(w->summary);
	memset(w, 0, sizeof(*w));
}

/* --- the bitmap of non-empty buckets ---------------------------------------- */

static void set_bit(struct le_timing_wheel *w, uint64_t pos)
{
	w->bits[pos >> 6] |= 1ULL << (pos & 63);
	w->summary[pos >> 12] |= 1ULL << ((pos >> 6) & 63);
}

static void clear_bit(struct le_timing_wheel *w, uint64_t pos)
{
	uint64_t *word = &w->bits[pos >> 6];

	*word &= ~(1ULL << (pos & 63));
	if (*word == 0)
		w->summary[pos >> 12] &= ~(1ULL << ((pos >> 6) & 63));
}

/* First non-empty bucket at or after pos (no wrap); 2^order when none. */
static uint64_t find_from(const struct le_timing_wheel *w, uint64_t pos)
{
	const uint64_t n = w->mask + 1, nw = nwords(w);
	uint64_t wi, word, si, sword;

	if (pos >= n)
		return n;
	wi = pos >> 6;
	word = w->bits[wi] & (~0ULL << (pos & 63));
	if (word)
		return (wi << 6) | (uint64_t)__builtin_ctzll(word);
	if (++wi >= nw)
		return n;
	si = wi >> 6;
	sword = w->summary[si] & (~0ULL << (wi & 63));
	for (;;) {
		if (sword) {
			wi = (si << 6) | (uint64_t)__builtin_ctzll(sword);
			return (wi << 6) | (uint64_t)__builtin_ctzll(w->bits[wi]);
		}
		if (++si >= nsummary(w))
			return n;
		sword = w->summary[si];
	}
}

/* --- the overflow heap (node indices) --------------------------------------- */

static void heap_push(struct le_timing_wheel *w, uint32_t idx)
{
	uint32_t i = w->nover++;

	while (i > 0) {
		uint32_t parent = (i - 1) / 2;
		if (!before(&w->node[idx], &w->node[w->over[parent]]))
			break;
		w->over[i] = w->over[parent];
		i = parent;
	}
	w->over[i] = idx;
}

static uint32_t heap_pop(struct le_timing_wheel *w)
{
	uint32_t top = w->over[0], x, i = 0, n = --w->nover;

	if (n == 0)
		return top;
	x = w->over[n];
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && before(&w->node[w->over[c + 1]], &w->node[w->over[c]]))
			c++;
		if (!before(&w->node[w->over[c]], &w->node[x]))
			break;
		w->over[i] = w->over[c];
		i = c;
	}
	w->over[i] = x;
	return top;
}

/* --- buckets ---------------------------------------------------------------- */

static uint32_t merge(struct le_timing_wheel *w, uint32_t a, uint32_t b)
{
	uint32_t head = NIL, *link = &head;

	while (a != NIL && b != NIL) {
		uint32_t *take = before(&w->node[b], &w->node[a]) ? &b : &a;
		*link = *take;
		link = &w->node[*take].next;
		*take = w->node[*take].next;
	}
	*link = a != NIL ? a : b;
	return head;
}

/* Sorts the n nodes from `head`; *rest gets the node after them. */
static uint32_t merge_sort(struct le_timing_wheel *w, uint32_t head, uint32_t n, uint32_t *rest)
{
	uint32_t a, b, mid;

	if (n == 1) {
		*rest = w->node[head].next;
		w->node[head].next = NIL;
		return head;
	}
	a = merge_sort(w, head, n / 2, &mid);
	b = merge_sort(w, mid, n - n / 2, rest);
	return merge(w, a, b);
}

/* A bucket becoming the front is sorted; most are already (constant
 * delay, or deadlines spread over more than a bucket), which one pass
 * finds. */
static void sort_bucket(struct le_timing_wheel *w, struct le_wheel_bucket *b)
{
	uint32_t n = 1, p, rest;
	int sorted = 1;

	for (p = b->head; w->node[p].next != NIL; p = w->node[p].next, n++)
		if (before(&w->node[w->node[p].next], &w->node[p]))
			sorted = 0;
	if (sorted)
		return;
	b->head = merge_sort(w, b->head, n, &rest);
	for (p = b->head; w->node[p].next != NIL; p = w->node[p].next)
		;
	b->tail = p;
}

static void append(struct le_timing_wheel *w, struct le_wheel_bucket *b, uint32_t idx)
{
	if (b->tail == NIL)
		b->head = idx;
	else
		w->node[b->tail].next = idx;
	b->tail = idx;
}

/* Into the sorted front bucket, keeping it sorted. New frames mostly go
 * after the tail (equal or later deadlines) or before the head (late
 * frames, due already); the scan is for the rest. */
static void insert_sorted(struct le_timing_wheel *w, struct le_wheel_bucket *b, uint32_t idx)
{
	struct le_wheel_node *x = &w->node[idx];
	uint32_t p;

	if (!before(x, &w->node[b->tail])) {
		append(w, b, idx);
	} else if (before(x, &w->node[b->head])) {
		x->next = b->head;
		b->head = idx;
	} else {
		for (p = b->head; !before(x, &w->node[w->node[p].next]); p = w->node[p].next)
			;
		x->next = w->node[p].next;
		w->node[p].next = idx;
	}
}

/* Puts a filled node where it belongs: its slot's bucket, or the overflow
 * heap beyond the span. A deadline already behind `base` (due, not yet
 * popped) goes to the first bucket, in order within it. */
static void place(struct le_timing_wheel *w, uint32_t idx)
{
	uint64_t s = w->node[idx].f.deadline >> w->shift;
	struct le_wheel_bucket *b;

	if (s < w->base)
		s = w->base;
	if (s - w->base > w->mask) {
		heap_push(w, idx);
		return;
	}
	b = &w->bucket[s & w->mask];
	w->node[idx].next = NIL;
	if (w->count == 0 || s < w->front) {
		/* the bucket is empty: the front was the earliest non-empty */
		b->head = b->tail = idx;
		set_bit(w, s & w->mask);
		w->front = s;
	} else if (s == w->front) {
		insert_sorted(w, b, idx);
	} else {
		if (b->head == NIL)
			set_bit(w, s & w->mask);
		append(w, b, idx);
	}
	w->count++;
}

int le_wheel_push(struct le_timing_wheel *w, const struct le_frame *f)
{
	uint32_t idx = w->free;

	if (idx == NIL)
		return -1;
	w->free = w->node[idx].next;
	w->node[idx].f = *f;
	w->node[idx].seq = w->seq++;
	place(w, idx);
	return 0;
}

int le_wheel_pop_min(struct le_timing_wheel *w, struct le_frame *out)
{
	uint32_t idx;

	if (w->count) {
		const uint64_t pos = w->front & w->mask;
		struct le_wheel_bucket *b = &w->bucket[pos];

		idx = b->head;
		b->head = w->node[idx].next;
		w->count--;
		if (b->head == NIL) {
			b->tail = NIL;
			clear_bit(w, pos);
			if (w->count) {
				/* the next non-empty bucket, in slot order from pos */
				uint64_t p = find_from(w, pos + 1);
				if (p > w->mask)
					p = find_from(w, 0);
				w->front += (p - pos) & w->mask;
				sort_bucket(w, &w->bucket[p]);
			}
		}
	} else if (w->nover) {
		idx = heap_pop(w);
	} else {
		return -1;
	}
	*out = w->node[idx].f;
	w->node[idx].next = w->free;
	w->free = idx;
	return 0;
}

void le_wheel_advance(struct le_timing_wheel *w, le_ns_t now)
{
	uint64_t s = now >> w->shift;

	/* Never past a frame still held (callers pop what is due first). */
	if (w->count && w->front < s)
		s = w->front;
	if (s > w->base)
		w->base = s;
	while (w->nover) {
		uint64_t slot = w->node[w->over[0]].f.deadline >> w->shift;
		if (slot >= w->base && slot - w->base > w->mask)
			break;
		place(w, heap_pop(w));
	}
}
