/* The ordered delay line (a timing wheel) against a plain reference on
 * random inputs: the same frames leave at the same calls in the same
 * order, and held/count/next-deadline agree after every call. Inputs mix
 * equal deadlines, deadlines already past, deadlines far beyond the
 * wheel's span (its overflow), UINT64_MAX, time jumps and a `now` that
 * goes back, with spans from the smallest wheel to seconds. */
#include <stdlib.h>

#include "delay_line.h"
#include "minitest.h"

/* The reference: what the heap form did, by linear scans. Held frames in
 * an array; mark_due moves the smallest (deadline, insertion number) with
 * deadline <= now to a due list, one at a time, until none is left. */
struct ref {
	struct le_frame *held;
	uint64_t *seq;
	uint32_t nheld;
	struct le_frame *due;
	uint32_t dhead, ndue;
	uint32_t capacity;
	uint64_t next_seq;
};

static void ref_init(struct ref *r, uint32_t capacity)
{
	r->held = calloc(capacity, sizeof(*r->held));
	r->seq = calloc(capacity, sizeof(*r->seq));
	r->due = calloc(capacity, sizeof(*r->due));
	r->nheld = r->dhead = r->ndue = 0;
	r->capacity = capacity;
	r->next_seq = 0;
}

static void ref_free(struct ref *r)
{
	free(r->held);
	free(r->seq);
	free(r->due);
}

static int ref_push(struct ref *r, const struct le_frame *f)
{
	if (r->nheld + r->ndue == r->capacity)
		return -1;
	r->held[r->nheld] = *f;
	r->seq[r->nheld++] = r->next_seq++;
	return 0;
}

/* Index of the smallest held frame, or -1 when none. */
static int ref_min(const struct ref *r)
{
	int best = -1;

	for (uint32_t i = 0; i < r->nheld; i++)
		if (best < 0 || r->held[i].deadline < r->held[best].deadline ||
		    (r->held[i].deadline == r->held[best].deadline && r->seq[i] < r->seq[best]))
			best = (int)i;
	return best;
}

static void ref_take(struct ref *r, int i, struct le_frame *out)
{
	*out = r->held[i];
	r->held[i] = r->held[r->nheld - 1];
	r->seq[i] = r->seq[r->nheld - 1];
	r->nheld--;
}

static void ref_mark_due(struct ref *r, le_ns_t now)
{
	int i;

	while ((i = ref_min(r)) >= 0 && r->held[i].deadline <= now) {
		/* the due list is a queue: compact it when it reaches the end */
		if (r->dhead + r->ndue == r->capacity) {
			memmove(r->due, r->due + r->dhead, r->ndue * sizeof(*r->due));
			r->dhead = 0;
		}
		ref_take(r, i, &r->due[r->dhead + r->ndue++]);
	}
}

static unsigned ref_pop_due(struct ref *r, le_ns_t now, struct le_frame *out, unsigned max)
{
	unsigned n = 0;

	ref_mark_due(r, now);
	while (n < max && r->ndue && r->due[r->dhead].deadline <= now) {
		out[n++] = r->due[r->dhead++];
		r->ndue--;
	}
	return n;
}

static unsigned ref_pop_any(struct ref *r, struct le_frame *out, unsigned max)
{
	unsigned n = 0;
	int i;

	while (n < max && r->ndue) {
		out[n++] = r->due[r->dhead++];
		r->ndue--;
	}
	while (n < max && (i = ref_min(r)) >= 0)
		ref_take(r, i, &out[n++]);
	return n;
}

static le_ns_t ref_next(const struct ref *r)
{
	int i = ref_min(r);

	if (r->ndue)
		return r->due[r->dhead].deadline;
	return i >= 0 ? r->held[i].deadline : UINT64_MAX;
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
	return *x;
}

/* A deadline relative to now: mostly near (within `spread` ns, on a
 * coarse grid so many are equal), some past, some far beyond the span. */
static le_ns_t draw_deadline(uint64_t *x, le_ns_t now, le_ns_t spread)
{
	uint64_t k = rnd(x) % 100;

	if (k < 5)
		return now > 1000 ? now - rnd(x) % 1000 : 0;            /* past */
	if (k < 10)
		return now + LE_NS_PER_S + rnd(x) % (10 * LE_NS_PER_S); /* far */
	if (k < 11)
		return UINT64_MAX;
	return now + (rnd(x) % (spread / 64 + 1)) * 64;                 /* many equal */
}

/* `reorder`'s pattern: deadlines that mostly do not decrease (now plus a
 * delay, often equal to the last), with some due at once, some past,
 * some far and a few UINT64_MAX, so frames join the wheel's run. */
static le_ns_t draw_in_order(uint64_t *x, le_ns_t now, le_ns_t spread, le_ns_t *last)
{
	uint64_t k = rnd(x) % 1000;
	le_ns_t d = now + spread / 2 + (rnd(x) % 4) * 64;

	if (k < 10)
		return now;                                             /* reordered */
	if (k < 13)
		return now > 1000 ? now - rnd(x) % 1000 : 0;            /* past */
	if (k < 15)
		return now + LE_NS_PER_S + rnd(x) % (10 * LE_NS_PER_S); /* far */
	if (k < 16)
		return UINT64_MAX;
	if (d < *last && k < 900)
		d = *last; /* equal deadlines */
	*last = d;
	return d;
}

/* Most frames the overflow heap held at once in the last run; most in the
 * run, and how often the run was switched on. */
static uint32_t max_over, max_run, run_switches;

/* phase: 0 random deadlines throughout; else the pattern changes every
 * `phase` steps between random deadlines and in-order ones, so the run is
 * switched on and off with frames in it. */
static unsigned run_phased(uint64_t seed, uint32_t capacity, le_ns_t horizon, le_ns_t spread, unsigned steps,
			   unsigned phase)
{
	struct le_delay_line d;
	struct ref r;
	struct le_frame a[64], b[64];
	uint64_t x = seed, id = 1;
	le_ns_t now = 1000000, last = 0;
	unsigned bad = 0;
	uint32_t was_on = 0;

	if (le_delay_line_init_ordered(&d, capacity, horizon) < 0)
		return 1;
	ref_init(&r, d.capacity);
	max_over = max_run = run_switches = 0;
	for (unsigned s = 0; s < steps; s++) {
		int in_order = phase && (s / phase) % 2 == 1;

		uint64_t op = rnd(&x) % 100;

		if (op < 55) {
			struct le_frame f = { .handle = (void *)(uintptr_t)id++, .len = 64 };
			f.deadline = in_order ? draw_in_order(&x, now, spread, &last) : draw_deadline(&x, now, spread);
			bad += le_delay_line_push(&d, &f) != ref_push(&r, &f);
		} else if (op < 90) {
			unsigned max = 1 + (unsigned)(rnd(&x) % 64), n, m;
			uint64_t j = rnd(&x) % 100;
			le_ns_t t = now;

			if (j < 60)
				now += rnd(&x) % (spread / 8 + 1);
			else if (j < 63)
				now += rnd(&x) % (20 * LE_NS_PER_S);  /* a long idle */
			t = j >= 95 && now > 5000 ? now - 5000 : now; /* behind */
			n = le_delay_line_pop_due(&d, t, a, max);
			m = ref_pop_due(&r, t, b, max);
			bad += n != m;
			for (unsigned k = 0; k < n && k < m; k++)
				bad += a[k].handle != b[k].handle || a[k].deadline != b[k].deadline;
		} else if (op < 99) {
			le_delay_line_mark_due(&d, now);
			ref_mark_due(&r, now);
		} else {
			unsigned max = 1 + (unsigned)(rnd(&x) % 64), n = le_delay_line_pop_any(&d, a, max);
			bad += n != ref_pop_any(&r, b, max);
			for (unsigned k = 0; k < n; k++)
				bad += a[k].handle != b[k].handle;
		}
		bad += le_delay_line_count(&d) != r.nheld + r.ndue;
		bad += le_delay_line_held(&d) != r.nheld;
		bad += le_delay_line_next_deadline(&d) != ref_next(&r);
		if (d.wheel.nover > max_over)
			max_over = d.wheel.nover;
		if (d.wheel.run_n > max_run)
			max_run = d.wheel.run_n;
		run_switches += d.wheel.run_on && !was_on;
		was_on = d.wheel.run_on;
	}
	/* and everything left leaves in the same order */
	for (;;) {
		unsigned n = le_delay_line_pop_any(&d, a, 64), m = ref_pop_any(&r, b, 64);
		bad += n != m;
		for (unsigned k = 0; k < n && k < m; k++)
			bad += a[k].handle != b[k].handle;
		if (n == 0 || m == 0)
			break;
	}
	le_delay_line_free(&d);
	ref_free(&r);
	return bad;
}

static unsigned run(uint64_t seed, uint32_t capacity, le_ns_t horizon, le_ns_t spread, unsigned steps)
{
	return run_phased(seed, capacity, horizon, spread, steps, 0);
}

static void random_against_reference(void)
{
	/* smallest wheel (256 us span) with deadlines over ms: much overflow */
	CHECK_EQ_U64(run(1, 512, 0, 2 * LE_NS_PER_MS, 200000), 0);
	CHECK(max_over > 10, "the overflow was exercised: %u", max_over);
	/* span sized for the spread: the usual case */
	CHECK_EQ_U64(run(2, 4096, 2 * LE_NS_PER_MS, 2 * LE_NS_PER_MS, 200000), 0);
	/* dense: deadlines within a few buckets, many per bucket */
	CHECK_EQ_U64(run(3, 2048, LE_NS_PER_MS, 4 * LE_NS_PER_US, 200000), 0);
	/* a span of seconds: wide buckets (the shift grows past 1 us) */
	CHECK_EQ_U64(run(4, 1024, 100 * LE_NS_PER_S, LE_NS_PER_S, 100000), 0);
	/* a span of an hour: buckets wider than a rank key's 23 bits of ns
	 * (timing_wheel.c, RANK_SHIFT_MAX), sorted on 64-bit keys */
	CHECK_EQ_U64(run(11, 1024, 3600 * LE_NS_PER_S, 20 * LE_NS_PER_MS, 100000), 0);
	/* a tiny line, full most of the time */
	CHECK_EQ_U64(run(5, 8, LE_NS_PER_MS, LE_NS_PER_MS, 100000), 0);
	/* in-order phases (the run on, merged with the wheel) and random ones
	 * (the run off while it still holds frames), in turn */
	CHECK_EQ_U64(run_phased(6, 4096, 2 * LE_NS_PER_MS, 2 * LE_NS_PER_MS, 400000, 20000), 0);
	CHECK(run_switches >= 5 && max_run > 30, "the run was exercised: on %u times, %u frames at most",
	      run_switches, max_run);
	CHECK_EQ_U64(run_phased(7, 512, 0, 2 * LE_NS_PER_MS, 300000, 9000), 0);
	CHECK(run_switches >= 5, "the run was switched on %u times", run_switches);
	CHECK_EQ_U64(run_phased(8, 2048, LE_NS_PER_MS, 4 * LE_NS_PER_US, 300000, 7000), 0);
	CHECK_EQ_U64(run_phased(9, 1024, 100 * LE_NS_PER_S, LE_NS_PER_S, 200000, 11000), 0);
	CHECK_EQ_U64(run_phased(10, 8, LE_NS_PER_MS, LE_NS_PER_MS, 200000, 5000), 0);
}

/* The same wheel state after each call: what is held where, and the
 * run's decision so far. */
static unsigned wheel_differs(const struct le_timing_wheel *a, const struct le_timing_wheel *b)
{
	return (a->count != b->count) + (a->nover != b->nover) + (a->run_n != b->run_n) + (a->seq != b->seq) +
	       (a->run_on != b->run_on) + (a->win != b->win) + (a->hits != b->hits) +
	       (a->last_push != b->last_push) + (a->front != b->front) + (a->base != b->base);
}

/* le_delay_line_push_ordered_burst (the burst loop, with its own path
 * while the run is off) against le_delay_line_push of the same frames one
 * at a time: bursts of 1-64 frames, every field of every frame popped
 * the same, and the wheels' state the same after every call, including
 * the run's switching (the burst loop counts the deadlines that did not
 * decrease in a pass of its own). Phases of random deadlines and of
 * in-order ones switch the run on and off, mid-burst too. */
static unsigned burst_twin(uint64_t seed, uint32_t capacity, le_ns_t horizon, le_ns_t spread, unsigned steps,
			   unsigned phase)
{
	struct le_delay_line db, ds;
	struct le_frame f[64], a[64], b[64];
	uint64_t x = seed, id = 1;
	le_ns_t now = 1000000, last = 0;
	unsigned bad = 0, refused = 0;
	uint32_t was_on = 0;

	if (le_delay_line_init_ordered(&db, capacity, horizon) < 0 || le_delay_line_init_ordered(&ds, capacity, horizon) < 0)
		return 1;
	run_switches = 0;
	for (unsigned s = 0; s < steps; s++) {
		const int in_order = phase && (s / phase) % 2 == 1;

		if (rnd(&x) % 100 < 50) {
			const unsigned n = 1 + (unsigned)(rnd(&x) % 64);
			const le_ns_t arrival = now;

			for (unsigned i = 0; i < n; i++) {
				f[i] = (struct le_frame){ .handle = (void *)(uintptr_t)id++, .len = 64 + i,
							  .cls = (uint16_t)(i % 3), .arrival = arrival };
				f[i].deadline = in_order ? draw_in_order(&x, now, spread, &last) : draw_deadline(&x, now, spread);
			}
			if (le_delay_line_count(&ds) + n > ds.capacity) {
				refused++;
				bad += le_delay_line_push_ordered_burst(&db, f, n) != -1;
			} else {
				bad += le_delay_line_push_ordered_burst(&db, f, n) != 0;
				for (unsigned i = 0; i < n; i++)
					bad += le_delay_line_push(&ds, &f[i]) != 0;
			}
		} else {
			const unsigned max = 1 + (unsigned)(rnd(&x) % 64);
			unsigned n, m;

			now += rnd(&x) % (spread / 8 + 1);
			n = le_delay_line_pop_due(&db, now, a, max);
			m = le_delay_line_pop_due(&ds, now, b, max);
			bad += n != m;
			for (unsigned k = 0; k < n && k < m; k++)
				bad += a[k].handle != b[k].handle || a[k].deadline != b[k].deadline ||
				       a[k].arrival != b[k].arrival || a[k].len != b[k].len || a[k].cls != b[k].cls;
		}
		bad += wheel_differs(&db.wheel, &ds.wheel);
		bad += le_delay_line_count(&db) != le_delay_line_count(&ds);
		run_switches += db.wheel.run_on && !was_on;
		was_on = db.wheel.run_on;
	}
	CHECK(refused > 0 || capacity > 4096, "a burst was refused for room (%u times)", refused);
	le_delay_line_free(&db);
	le_delay_line_free(&ds);
	return bad;
}

static void burst_against_single(void)
{
	/* the span sized for the spread; then the smallest wheel (overflow),
	 * dense buckets, wide buckets, and a line full most of the time */
	CHECK_EQ_U64(burst_twin(21, 4096, 2 * LE_NS_PER_MS, 2 * LE_NS_PER_MS, 200000, 9000), 0);
	CHECK(run_switches >= 5, "the run was switched on %u times", run_switches);
	CHECK_EQ_U64(burst_twin(22, 512, 0, 2 * LE_NS_PER_MS, 100000, 5000), 0);
	CHECK_EQ_U64(burst_twin(23, 2048, LE_NS_PER_MS, 4 * LE_NS_PER_US, 100000, 7000), 0);
	CHECK_EQ_U64(burst_twin(24, 1024, 100 * LE_NS_PER_S, LE_NS_PER_S, 100000, 3000), 0);
	CHECK_EQ_U64(burst_twin(25, 96, LE_NS_PER_MS, LE_NS_PER_MS, 100000, 2000), 0);
}

/* A bucket of more frames than the rank takes (a burst into one slot)
 * still leaves in (deadline, insertion) order: `frames` frames into one
 * 1.024 us slot, deadlines at random in it. 200 are sorted on keys
 * (timing_wheel.c, sort_fill); 3000, more than a keyed sort takes, as
 * whole entries (sort_front). */
static void one_bucket(uintptr_t frames)
{
	struct le_delay_line d;
	struct le_frame a[64];
	uint64_t x = 99;
	uintptr_t expect_n = 0;
	unsigned bad = 0;

	CHECK(le_delay_line_init_ordered(&d, 4096, LE_NS_PER_MS) == 0);
	/* A frame due earlier holds the front, so the burst fills a bucket,
	 * sorted as a whole when the front moves to it. */
	{
		struct le_frame early = { .handle = (void *)1, .len = 64, .deadline = 400000 };
		CHECK(le_delay_line_push(&d, &early) == 0);
	}
	for (uintptr_t i = 0; i < frames; i++) {
		struct le_frame f = { .handle = (void *)(i + 2), .len = 64 };
		f.deadline = 500000 + rnd(&x) % 1000;
		CHECK(le_delay_line_push(&d, &f) == 0);
	}
	{
		le_ns_t prev = 0;
		uintptr_t prev_h = 0;
		unsigned n;
		while ((n = le_delay_line_pop_due(&d, 600000, a, 64)) > 0) {
			for (unsigned k = 0; k < n; k++) {
				bad += a[k].deadline < prev ||
				       (a[k].deadline == prev && (uintptr_t)a[k].handle < prev_h);
				prev = a[k].deadline;
				prev_h = (uintptr_t)a[k].handle;
				expect_n++;
			}
		}
	}
	CHECK_EQ_U64(bad, 0);
	CHECK_EQ_U64(expect_n, frames + 1);
	le_delay_line_free(&d);
}

static void big_bucket(void)
{
	one_bucket(200);
	one_bucket(3000);
}

/* Deadlines on the edges of the 2.048 us slots (a slot's first and last
 * ns and their neighbours), taken at times on the same edges: a bucket
 * goes out whole, straight from the wheel, only once its last ns is due,
 * and a frame due 1 ns later stays. */
static void slot_edges(void)
{
	static const int64_t at[] = { -2, -1, 0, 1, 2046, 2047, 2048 };
	struct le_delay_line d;
	struct ref r;
	struct le_frame a[64], b[64];
	uint64_t x = 11, id = 1;
	le_ns_t now = 1 << 20;
	unsigned bad = 0, taken = 0;

	CHECK(le_delay_line_init_ordered(&d, 4096, LE_NS_PER_MS) == 0);
	CHECK_EQ_U64(d.wheel.shift, 11);
	ref_init(&r, d.capacity);
	for (unsigned s = 0; s < 200000; s++) {
		uint64_t slot = (now >> 11) + rnd(&x) % 8;
		le_ns_t edge = (le_ns_t)((int64_t)(slot << 11) + at[rnd(&x) % 7]);

		if (rnd(&x) % 3 && r.nheld + r.ndue < d.capacity) {
			struct le_frame f = { .handle = (void *)(uintptr_t)id++, .len = 64, .deadline = edge };
			bad += le_delay_line_push(&d, &f) != ref_push(&r, &f);
		} else {
			unsigned max = 1 + (unsigned)(rnd(&x) % 64), n, m;

			if (edge > now)
				now = edge;
			n = le_delay_line_pop_due(&d, now, a, max);
			m = ref_pop_due(&r, now, b, max);
			bad += n != m;
			for (unsigned k = 0; k < n && k < m; k++)
				bad += a[k].handle != b[k].handle || a[k].deadline != b[k].deadline;
			taken += n;
		}
		bad += le_delay_line_held(&d) != r.nheld;
	}
	CHECK_EQ_U64(bad, 0);
	CHECK(taken > 50000, "frames taken: %u", taken);
	le_delay_line_free(&d);
	ref_free(&r);
}

/* The span follows the horizon: 2^8 .. 2^18 buckets of 2.048 us, then
 * wider buckets. */
static void span(void)
{
	static const struct {
		le_ns_t horizon;
		unsigned order, shift;
	} c[] = { { 0, 8, 11 }, { 524288, 8, 11 }, { 524289, 9, 11 }, { 1400000, 10, 11 },
		  { 67108864, 15, 11 }, { 536870912, 18, 11 }, { 536870913, 18, 12 },
		  { LE_NS_PER_S, 18, 12 } };
	struct le_delay_line d;

	for (unsigned i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		CHECK(le_delay_line_init_ordered(&d, 16, c[i].horizon) == 0);
		CHECK_EQ_U64(d.wheel.order, c[i].order);
		CHECK_EQ_U64(d.wheel.shift, c[i].shift);
		le_delay_line_free(&d);
	}
}

int main(void)
{
	span();
	random_against_reference();
	burst_against_single();
	slot_edges();
	big_bucket();
	return mt_summary();
}
