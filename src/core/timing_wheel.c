/* The timing wheel (see timing_wheel.h). */
#include "timing_wheel.h"

#include <stdlib.h>
#include <string.h>

#define NIL LE_WHEEL_NIL

/* A bucket of about 2 us: at the 4-15 Mpps a direction one lcore
 * reaches, about 8-30 frames, ranked in a few vector passes. Narrower (1
 * us) left the 8-frame chunks about half empty at the rates this VM
 * reaches (4-5 Mpps a direction), a refill and a cold chunk per 4-5
 * frames: 2 us made the jitter and all-stages rows 9-11 % faster there,
 * and costs the same instructions at 7.44 Mpps (docs/performance.md,
 * "The bucket width"). */
enum { MIN_SHIFT = 11, MIN_ORDER = 8, MAX_ORDER = 18, MAX_SHIFT = 48, INSERTION_SORT_MAX = 32 };

static int before(const struct le_wheel_entry *a, const struct le_wheel_entry *b)
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

/* Chunks in use: at most one part-filled per non-empty bucket plus the
 * full ones, and the run's, of which two at most (its oldest, partly
 * taken, and its newest) are not full: so capacity / CHUNK +
 * min(capacity, buckets) + a few. */
static uint32_t nchunks(uint32_t capacity, uint64_t buckets)
{
	return capacity / LE_WHEEL_CHUNK + (uint32_t)(capacity < buckets ? capacity : buckets) + 4;
}

int le_wheel_init(struct le_timing_wheel *w, uint32_t capacity, le_ns_t horizon_ns)
{
	unsigned shift = MIN_SHIFT, order = MIN_ORDER;
	uint32_t nc;

	memset(w, 0, sizeof(*w));
	while (order < MAX_ORDER && (1ULL << (shift + order)) < horizon_ns)
		order++;
	while (shift < MAX_SHIFT && (1ULL << (shift + order)) < horizon_ns)
		shift++;
	w->shift = shift;
	w->order = order;
	w->mask = (1ULL << order) - 1;
	w->capacity = capacity;
	nc = nchunks(capacity, w->mask + 1);
	w->fr = malloc((capacity ? capacity : 1) * sizeof(*w->fr));
	w->over = malloc((capacity ? capacity : 1) * sizeof(*w->over));
	w->chunk = malloc((size_t)nc * sizeof(*w->chunk));
	w->bucket = malloc((w->mask + 1) * sizeof(*w->bucket));
	w->bits = calloc(nwords(w), sizeof(*w->bits));
	w->summary = calloc(nsummary(w), sizeof(*w->summary));
	if (!w->fr || !w->over || !w->chunk || !w->bucket || !w->bits || !w->summary) {
		le_wheel_free(w);
		return -1;
	}
	memset(w->bucket, 0xff, (w->mask + 1) * sizeof(*w->bucket)); /* all NIL */
	/* Chunks never used are taken in order from `fresh`, so the pool's
	 * pages are touched only as far as the link ever needed. */
	w->free = NIL;
	w->fresh = 0;
	w->nchunks = nc;
	w->run_head = w->run_tail = NIL;
	return 0;
}

void le_wheel_free(struct le_timing_wheel *w)
{
	free(w->fr);
	free(w->over);
	free(w->chunk);
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

/* --- the overflow heap -------------------------------------------------------- */

/* Entries are built and copied field by field: see le_frame_copy. */
static inline void entry_from(struct le_wheel_entry *e, const struct le_frame *f, uint64_t seq)
{
	le_frame_copy(&e->f, f);
	e->seq = seq;
}

/* *dst = *src for an entry just built by entry_from. */
static inline void entry_copy(struct le_wheel_entry *dst, const struct le_wheel_entry *src)
{
	entry_from(dst, &src->f, src->seq);
}

static void heap_push(struct le_timing_wheel *w, const struct le_wheel_entry *e)
{
	uint32_t i = w->nover++;

	while (i > 0) {
		uint32_t parent = (i - 1) / 2;
		if (!before(e, &w->over[parent]))
			break;
		w->over[i] = w->over[parent];
		i = parent;
	}
	entry_copy(&w->over[i], e);
}

static void heap_pop(struct le_timing_wheel *w, struct le_wheel_entry *out)
{
	uint32_t i = 0, n = --w->nover;
	struct le_wheel_entry x;

	*out = w->over[0];
	if (n == 0)
		return;
	x = w->over[n];
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && before(&w->over[c + 1], &w->over[c]))
			c++;
		if (!before(&w->over[c], &x))
			break;
		w->over[i] = w->over[c];
		i = c;
	}
	w->over[i] = x;
}

/* --- buckets and the front ---------------------------------------------------- */

/* An empty chunk, from the free list or never used. */
static uint32_t chunk_get(struct le_timing_wheel *w)
{
	uint32_t k = w->free;

	if (k != NIL)
		w->free = w->chunk[k].next;
	else
		k = w->fresh++; /* < nchunks: see nchunks() */
	w->chunk[k].next = NIL;
	w->chunk[k].n = 0;
	return k;
}

static void chunk_put(struct le_timing_wheel *w, uint32_t k)
{
	w->chunk[k].next = w->free;
	w->free = k;
}

/* The entry (f, seq) is built in the bucket's chunk itself: a copy
 * through an entry on the stack cost a second 40-byte copy per frame.
 * The arrays are passed in (place_at). */
static inline __attribute__((always_inline)) void bucket_append_in(struct le_timing_wheel *w,
								       struct le_wheel_chunk *chunk,
								       struct le_wheel_bucket *bucket, uint64_t pos,
								       const struct le_frame *f, uint64_t seq)
{
	struct le_wheel_bucket *b = &bucket[pos];
	uint32_t tail = b->tail, used = b->n;

	if (tail == NIL || used == LE_WHEEL_CHUNK) {
		const uint32_t k = chunk_get(w);

		if (tail == NIL) {
			b->head = k;
			set_bit(w, pos);
		} else {
			chunk[tail].next = k;
			chunk[tail].n = LE_WHEEL_CHUNK;
		}
		b->tail = tail = k;
		used = 0;
	}
	b->n = used + 1;
	entry_from(&chunk[tail].e[used], f, seq);
}

/* Into the sorted front array, keeping it sorted. */
static void front_insert(struct le_timing_wheel *w, const struct le_wheel_entry *e)
{
	uint32_t lo = w->fr_head, hi = w->fr_head + w->fr_n;

	if (w->fr_n && before(e, &w->fr[lo]) && lo > 0) {
		entry_copy(&w->fr[--w->fr_head], e); /* a late frame, first to leave */
		w->fr_n++;
		return;
	}
	if (hi == w->capacity) { /* room at the end */
		memmove(w->fr, w->fr + lo, w->fr_n * sizeof(*w->fr));
		w->fr_head = 0;
		lo = 0;
		hi = w->fr_n;
	}
	if (w->fr_n == 0 || !before(e, &w->fr[hi - 1])) {
		entry_copy(&w->fr[hi], e);
		w->fr_n++;
		return;
	}
	{
		uint32_t a = lo, b = hi - 1; /* the first entry after e is in [a, b] */
		while (a < b) {
			uint32_t m = a + (b - a) / 2;
			if (before(e, &w->fr[m]))
				b = m;
			else
				a = m + 1;
		}
		memmove(w->fr + a + 1, w->fr + a, (hi - a) * sizeof(*w->fr));
		entry_copy(&w->fr[a], e);
		w->fr_n++;
	}
}

static int cmp_entry(const void *a, const void *b)
{
	return before(a, b) ? -1 : 1; /* keys are unique */
}

static void sort_front(struct le_timing_wheel *w)
{
	struct le_wheel_entry *a = w->fr;
	uint32_t n = w->fr_n;

	if (n > INSERTION_SORT_MAX) {
		qsort(a, n, sizeof(*a), cmp_entry);
		return;
	}
	for (uint32_t i = 1; i < n; i++) {
		struct le_wheel_entry x = a[i];
		uint32_t j = i;
		while (j > 0 && before(&x, &a[j - 1])) {
			a[j] = a[j - 1];
			j--;
		}
		a[j] = x;
	}
}

enum { KEYED_CHUNKS = 32, KEYED_MAX = KEYED_CHUNKS * LE_WHEEL_CHUNK, KEY_INSERTION_MAX = 64, KEY_RANK_MAX = 64 };

/* Rank keys are 31 bits: the deadline's low `shift` bits above the
 * frame's 8-bit position in its bucket (< KEYED_MAX), so a bucket up to
 * 2^RANK_SHIFT_MAX ns wide (spans up to 2^41 ns, 36 minutes). */
enum { RANK_SHIFT_MAX = 23 };
_Static_assert(KEYED_MAX <= 256, "a frame's position in its bucket takes 8 bits of a rank key");

/* Four keys compared at once: SSE2 on x86-64 (every x86-64 has it), NEON
 * on arm64, plain code elsewhere; GCC and clang lower the vector type. */
typedef int32_t rank_vec __attribute__((vector_size(16)));

/* rank[i] = how many of the n distinct keys are below key[i], i < n:
 * where key[i] goes in sorted order. Four ranks per pass over the keys,
 * without a branch on the keys: an insertion sort of random keys
 * mispredicts about once per frame, which perf showed as most of
 * keyed_fill's time, and counting one rank at a time cost ~30
 * instructions a frame at the ~6 frames a 1 us bucket held. key[] is
 * read up to the next multiple of 4 (the caller's array has room). */
static void rank_keys(const int32_t *key, uint32_t n, uint32_t *rank)
{
	for (uint32_t i = 0; i < n; i += 4) {
		rank_vec mine, below = { 0, 0, 0, 0 };

		memcpy(&mine, key + i, sizeof(mine));
		for (uint32_t j = 0; j < n; j++) {
			rank_vec other = { key[j], key[j], key[j], key[j] };
			below += other < mine; /* -1 in each lane where key[j] is below */
		}
		for (uint32_t l = 0; l < 4; l++)
			rank[i + l] = (uint32_t)-below[l];
	}
}

static int cmp_key(const void *a, const void *b)
{
	const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : 1; /* keys are unique */
}

/* A bucket's frames are all of one slot (see place: a bucket takes slots
 * in (front, front + 2^order), one per bucket), so their deadlines differ
 * only in the low `shift` bits, and they are in the bucket in insertion
 * order (frames moving in from the overflow heap, in (deadline,
 * insertion) order, come before any frame pushed straight into the slot,
 * which arrives later). So (low bits of the deadline, position in the
 * bucket), one key, orders them as (deadline, insertion number) does:
 * the keys are sorted or ranked, then each entry is copied once to its
 * place in the front. Already in order (a bucket of in-order frames),
 * the chunks are copied as they are. chunks[] are the bucket's chunks,
 * all full but the last; n is the frames they hold. */

/* The bucket's chunks copied to the front as they are. */
static void copy_chunks(struct le_timing_wheel *w, const uint32_t *chunks, uint32_t nch)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < nch; i++) {
		const struct le_wheel_chunk *c = &w->chunk[chunks[i]];
		memcpy(w->fr + n, c->e, c->n * sizeof(*c->e));
		n += c->n;
	}
}

/* Up to KEY_RANK_MAX frames in a bucket at most 2^RANK_SHIFT_MAX ns wide
 * (about 2 us of frames, the common case): 31-bit keys, ranked. */
static void rank_fill(struct le_timing_wheel *w, const uint32_t *chunks, uint32_t nch, uint32_t n)
{
	const uint32_t low = (1u << w->shift) - 1;
	int32_t key[KEY_RANK_MAX + 4];
	uint32_t rank[KEY_RANK_MAX + 4], k = 0, unsorted = 0;

	for (uint32_t i = 0; i < nch; i++) {
		const struct le_wheel_chunk *c = &w->chunk[chunks[i]];
		for (uint32_t j = 0; j < c->n; j++, k++) {
			key[k] = (int32_t)(((uint32_t)c->e[j].f.deadline & low) << 8 | k);
			unsorted |= k && key[k] < key[k - 1];
		}
	}
	if (!unsorted) {
		copy_chunks(w, chunks, nch);
		return;
	}
	memset(key + n, 0, 4 * sizeof(*key)); /* the last four's unused lanes */
	rank_keys(key, n, rank);
	k = 0;
	for (uint32_t i = 0; i < nch; i++) {
		const struct le_wheel_chunk *c = &w->chunk[chunks[i]];
		for (uint32_t j = 0; j < c->n; j++)
			w->fr[rank[k++]] = c->e[j];
	}
}

/* Any bucket of at most KEYED_MAX frames: 64-bit keys, sorted. */
static void sort_fill(struct le_timing_wheel *w, const uint32_t *chunks, uint32_t nch, uint32_t n)
{
	const uint64_t low = (1ULL << w->shift) - 1;
	uint64_t key[KEYED_MAX];
	uint32_t k = 0, unsorted = 0;

	for (uint32_t i = 0; i < nch; i++) {
		const struct le_wheel_chunk *c = &w->chunk[chunks[i]];
		for (uint32_t j = 0; j < c->n; j++, k++) {
			key[k] = ((c->e[j].f.deadline & low) << 32) | k;
			unsorted |= k && key[k] < key[k - 1];
		}
	}
	if (!unsorted) {
		copy_chunks(w, chunks, nch);
		return;
	}
	if (n > KEY_INSERTION_MAX) {
		qsort(key, n, sizeof(*key), cmp_key);
	} else {
		for (uint32_t i = 1; i < n; i++) {
			uint64_t x = key[i];
			uint32_t j = i;
			while (j > 0 && x < key[j - 1]) {
				key[j] = key[j - 1];
				j--;
			}
			key[j] = x;
		}
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t at = (uint32_t)key[i];
		w->fr[i] = w->chunk[chunks[at / LE_WHEEL_CHUNK]].e[at % LE_WHEEL_CHUNK];
	}
}

static void keyed_fill(struct le_timing_wheel *w, const uint32_t *chunks, uint32_t nch)
{
	/* all full but the last */
	const uint32_t n = (nch - 1) * LE_WHEEL_CHUNK + w->chunk[chunks[nch - 1]].n;

	if (n <= KEY_RANK_MAX && w->shift <= RANK_SHIFT_MAX)
		rank_fill(w, chunks, nch, n);
	else
		sort_fill(w, chunks, nch, n);
	for (uint32_t i = 0; i < nch; i++)
		chunk_put(w, chunks[i]);
	w->fr_head = 0;
	w->fr_n = n;
}

/* The front is empty and frames are in the buckets: the next non-empty
 * bucket, in slot order, becomes the front. */
static void refill_front(struct le_timing_wheel *w)
{
	const uint64_t fpos = w->front & w->mask;
	uint64_t p = find_from(w, fpos + 1);
	struct le_wheel_bucket *b;
	uint32_t k, n = 0;

	if (p > w->mask)
		p = find_from(w, 0);
	w->front += (p - fpos) & w->mask;
	b = &w->bucket[p];
	w->chunk[b->tail].n = b->n; /* the others are full and say so */
	if (w->shift <= 32) {
		uint32_t chunks[KEYED_CHUNKS], nch = 0;

		for (k = b->head; k != NIL && nch < KEYED_CHUNKS; k = w->chunk[k].next)
			chunks[nch++] = k;
		if (k == NIL) { /* at most KEYED_MAX frames */
			b->head = b->tail = NIL;
			clear_bit(w, p);
			keyed_fill(w, chunks, nch);
			return;
		}
	}
	for (k = b->head; k != NIL;) {
		struct le_wheel_chunk *c = &w->chunk[k];
		uint32_t next = c->next;
		memcpy(w->fr + n, c->e, c->n * sizeof(*c->e));
		n += c->n;
		c->next = w->free;
		w->free = k;
		k = next;
	}
	b->head = b->tail = NIL;
	clear_bit(w, p);
	w->fr_head = 0;
	w->fr_n = n;
	sort_front(w);
}

/* Puts frame f, insertion number seq, where it belongs given the wheel's
 * position (passed in, so that a burst loop keeps it in registers:
 * push_placed): the front (its slot is at or before the front's), its
 * slot's bucket, or the overflow heap beyond the span. A deadline already
 * behind `base` (due, not yet popped) counts as base. 1 when the frame
 * went to the front or a bucket (w->count counts those), 0 for the heap. */
static inline __attribute__((always_inline)) int place_at(struct le_timing_wheel *w, struct le_wheel_chunk *chunk,
							      struct le_wheel_bucket *bucket, unsigned shift,
							      uint64_t mask, uint64_t base, uint64_t front,
							      const struct le_frame *f, uint64_t seq)
{
	uint64_t s = f->deadline >> shift;
	struct le_wheel_entry e;

	if (s < base)
		s = base;
	if (s - base > mask) {
		entry_from(&e, f, seq);
		heap_push(w, &e);
		return 0;
	}
	if (s <= front) {
		entry_from(&e, f, seq);
		front_insert(w, &e);
	} else {
		bucket_append_in(w, chunk, bucket, s & mask, f, seq);
	}
	return 1;
}

/* place_at from the wheel's own fields. With nothing in the front or the
 * buckets, the first frame placed there sets the front's slot. */
static inline __attribute__((always_inline)) void place_inline(struct le_timing_wheel *w,
								   const struct le_frame *f, uint64_t seq)
{
	if (w->count == 0) {
		uint64_t s = f->deadline >> w->shift;

		if (s < w->base)
			s = w->base;
		if (s - w->base <= w->mask) {
			w->front = s;
			w->fr_head = 0;
		}
	}
	w->count += (uint32_t)place_at(w, w->chunk, w->bucket, w->shift, w->mask, w->base, w->front, f, seq);
}

/* place() out of line, for the pushes one at a time: inlined there it
 * pushed the run's append out of line, and cost `reorder` more than the
 * call (cachegrind). The burst loop inlines it. */
static void place(struct le_timing_wheel *w, const struct le_frame *f, uint64_t seq)
{
	place_inline(w, f, seq);
}

/* --- the run ------------------------------------------------------------------- */

static inline __attribute__((always_inline)) void run_append(struct le_timing_wheel *w, const struct le_frame *f)
{
	struct le_wheel_chunk *c;

	if (w->run_tail == NIL || w->chunk[w->run_tail].n == LE_WHEEL_CHUNK) {
		uint32_t k = chunk_get(w);

		if (w->run_tail == NIL) {
			w->run_head = k;
			w->run_pos = 0;
		} else {
			w->chunk[w->run_tail].next = k;
		}
		w->run_tail = k;
	}
	c = &w->chunk[w->run_tail];
	c->e[c->n].f = *f;
	c->e[c->n].seq = w->seq++;
	c->n++;
	w->run_n++;
	w->run_last = f->deadline;
}

static const struct le_wheel_entry *run_head(const struct le_timing_wheel *w)
{
	return &w->chunk[w->run_head].e[w->run_pos];
}

/* Removes the run's oldest entry (the run is not empty). */
static void run_drop(struct le_timing_wheel *w)
{
	struct le_wheel_chunk *c = &w->chunk[w->run_head];

	w->run_n--;
	if (++w->run_pos == c->n) { /* a full chunk, or the newest one: then the run is empty */
		uint32_t k = w->run_head;

		w->run_head = c->next;
		w->run_pos = 0;
		if (w->run_n == 0)
			w->run_head = w->run_tail = NIL;
		chunk_put(w, k);
	}
}

/* The wheel's own minimum (front, else overflow heap), NULL when empty. */
static const struct le_wheel_entry *wheel_head(const struct le_timing_wheel *w)
{
	if (w->count)
		return &w->fr[w->fr_head];
	return w->nover ? &w->over[0] : NULL;
}

/* Removes the wheel's minimum (the wheel is not empty). */
static void wheel_drop(struct le_timing_wheel *w, struct le_frame *out)
{
	if (w->count) {
		*out = w->fr[w->fr_head].f;
		w->fr_head++;
		w->fr_n--;
		w->count--;
		if (w->fr_n == 0 && w->count)
			refill_front(w);
	} else {
		struct le_wheel_entry e;
		heap_pop(w, &e);
		*out = e.f;
	}
}

/* Every LE_WHEEL_WINDOW pushes: is the run worth its merge? */
static void run_decide(struct le_timing_wheel *w)
{
	if (w->run_on)
		w->run_on = w->hits >= LE_WHEEL_WINDOW / 4 * 3;
	else
		w->run_on = w->hits >= LE_WHEEL_WINDOW / 8 * 7;
	w->win = w->hits = 0;
}

/* le_wheel_push once the room is known; place() inlined when `inline_place`
 * (a constant at each call). */
static inline __attribute__((always_inline)) void push_one(struct le_timing_wheel *w, const struct le_frame *f,
							 int inline_place)
{
	int join = w->run_on && (w->run_n == 0 || f->deadline >= w->run_last);

	w->hits += w->run_on ? (uint32_t)join : f->deadline >= w->last_push;
	w->last_push = f->deadline;
	if (++w->win == LE_WHEEL_WINDOW)
		run_decide(w);
	if (join)
		run_append(w, f);
	else if (inline_place)
		place_inline(w, f, w->seq++);
	else
		place(w, f, w->seq++);
}

int le_wheel_push(struct le_timing_wheel *w, const struct le_frame *f)
{
	if (le_wheel_count(w) == w->capacity)
		return -1;
	push_one(w, f, 0);
	return 0;
}

/* Frames pushed while the run is off, place_inline's work with the
 * wheel's position (base, front, the insertion number) and its arrays in
 * locals: every entry stored holds a pointer and integers, which the
 * compiler must assume may overwrite any field of *w, so place_inline
 * reloaded them all for each frame. The loop keeps as few values live as
 * it can (the count and the insertion numbers follow from the frame's
 * index), so that the frame's six fields stay in registers on their way
 * to the bucket. Returns how many deadlines did not decrease from one
 * push to the next (the run's decision counts them). */
static unsigned push_placed(struct le_timing_wheel *w, const struct le_frame *f, unsigned n)
{
	unsigned i = 0, rising = 0;
	le_ns_t last = w->last_push;

	for (unsigned k = 0; k < n; k++) {
		rising += f[k].deadline >= last;
		last = f[k].deadline;
	}
	w->last_push = last;
	/* One at a time while the front and buckets are empty: the first
	 * frame placed sets the front's slot. */
	for (; i < n && w->count == 0; i++)
		place_inline(w, &f[i], w->seq++);
	if (i == n)
		return rising;
	{
		struct le_wheel_chunk *const chunk = w->chunk;
		struct le_wheel_bucket *const bucket = w->bucket;
		const unsigned shift = w->shift;
		const uint64_t mask = w->mask, base = w->base, front = w->front, seq0 = w->seq - i;
		const uint32_t nover0 = w->nover, count0 = w->count, first = i;

		for (; i < n; i++)
			place_at(w, chunk, bucket, shift, mask, base, front, &f[i], seq0 + i);
		w->seq = seq0 + n;
		w->count = count0 + (n - first) - (w->nover - nover0);
	}
	return rising;
}

int le_wheel_push_burst(struct le_timing_wheel *w, const struct le_frame *f, unsigned n)
{
	if (w->capacity - le_wheel_count(w) < n)
		return -1;
	while (n) {
		unsigned m;

		if (w->run_on) {
			push_one(w, f++, 1);
			n--;
			continue;
		}
		/* up to the run's next decision, which may switch it on */
		m = LE_WHEEL_WINDOW - w->win < n ? LE_WHEEL_WINDOW - w->win : n;
		w->hits += push_placed(w, f, m);
		w->win += m;
		if (w->win == LE_WHEEL_WINDOW)
			run_decide(w);
		f += m;
		n -= m;
	}
	return 0;
}

int le_wheel_pop_min(struct le_timing_wheel *w, struct le_frame *out)
{
	if (w->run_n) {
		const struct le_wheel_entry *h = wheel_head(w), *r = run_head(w);

		if (h == NULL || before(r, h)) {
			*out = r->f;
			run_drop(w);
		} else {
			wheel_drop(w, out);
		}
		return 0;
	}
	if (w->count == 0 && w->nover == 0)
		return -1;
	wheel_drop(w, out);
	return 0;
}

/* The wheel alone (no run): the frames it holds with deadline <= now. */
static inline __attribute__((always_inline)) unsigned wheel_take_due(struct le_timing_wheel *w, le_ns_t now,
									  struct le_frame *out, unsigned max)
{
	unsigned n = 0;

	while (n < max && w->count) {
		/* The front's position in locals: stores into out[] might alias
		 * the wheel's fields for the compiler, which would reload and
		 * store them per frame. */
		const struct le_wheel_entry *fr = w->fr;
		uint32_t head = w->fr_head, k = 0, lim = w->fr_n < max - n ? w->fr_n : max - n;

		while (k < lim && fr[head + k].f.deadline <= now) {
			out[n + k] = fr[head + k].f;
			k++;
		}
		n += k;
		w->fr_head = head + k;
		w->fr_n -= k;
		w->count -= k;
		if (w->fr_n)
			break; /* its head is not due (or out is full) */
		if (w->count)
			refill_front(w);
	}
	while (n < max && !w->count && w->nover && w->over[0].f.deadline <= now) {
		struct le_wheel_entry e;
		heap_pop(w, &e);
		out[n++] = e.f;
	}
	return n;
}

unsigned le_wheel_take_due(struct le_timing_wheel *w, le_ns_t now, struct le_frame *out, unsigned max)
{
	unsigned n = 0;

	if (!w->run_n)
		return wheel_take_due(w, now, out, max);
	while (n < max) {
		const struct le_wheel_entry *h = wheel_head(w);

		/* The run's frames that are due and leave before the wheel's
		 * head, in one go. */
		if (h == NULL) {
			while (n < max && w->run_n && run_head(w)->f.deadline <= now) {
				out[n++] = run_head(w)->f;
				run_drop(w);
			}
			break;
		}
		while (n < max && w->run_n) {
			const struct le_wheel_entry *r = run_head(w);
			if (r->f.deadline > now || before(h, r))
				break;
			out[n++] = r->f;
			run_drop(w);
		}
		if (n == max || h->f.deadline > now)
			break;
		/* Then the wheel's head, which leaves before the run's. */
		wheel_drop(w, &out[n++]);
		if (!w->run_n)
			return n + wheel_take_due(w, now, out + n, max - n);
	}
	return n;
}

void le_wheel_advance(struct le_timing_wheel *w, le_ns_t now)
{
	uint64_t s = now >> w->shift;

	/* Never past a frame still held (callers pop what is due first). */
	if (w->count && (w->fr[w->fr_head].f.deadline >> w->shift) < s)
		s = w->fr[w->fr_head].f.deadline >> w->shift;
	if (s > w->base)
		w->base = s;
	while (w->nover) {
		uint64_t slot = w->over[0].f.deadline >> w->shift;
		struct le_wheel_entry e;

		if (slot >= w->base && slot - w->base > w->mask)
			break;
		heap_pop(w, &e);
		place(w, &e.f, e.seq);
	}
}
