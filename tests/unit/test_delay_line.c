/* The delay line: capacity, FIFO order, due-ness to the nanosecond. */
#include "delay_line.h"
#include "minitest.h"
#include "rng.h"

static struct le_frame frame(uintptr_t id, le_ns_t deadline)
{
	struct le_frame f = { .handle = (void *)id, .len = 100, .deadline = deadline };
	return f;
}

static void capacity(void)
{
	static const uint32_t req[][2] = { { 0, 1 }, { 1, 1 }, { 2, 2 }, { 3, 4 }, { 1000, 1024 },
					   { 1024, 1024 }, { 1025, 2048 } };
	struct le_delay_line d;

	for (unsigned i = 0; i < sizeof(req) / sizeof(req[0]); i++) {
		CHECK(le_delay_line_init(&d, req[i][0]) == 0);
		CHECK_EQ_U64(d.capacity, req[i][1]);
		CHECK_EQ_U64(d.mask, req[i][1] - 1);
		le_delay_line_free(&d);
	}
	CHECK(le_delay_line_init(&d, (1u << 31) + 1) == -1);

	/* Full at capacity, and the ring wraps correctly many times over. */
	CHECK(le_delay_line_init(&d, 3) == 0);
	struct le_frame out[8];
	unsigned order_bad = 0, next_in = 0, next_out = 0;
	for (int round = 0; round < 100; round++) {
		while (le_delay_line_push(&d, &(struct le_frame){ .handle = (void *)(uintptr_t)next_in,
								  .deadline = next_in }) == 0)
			next_in++;
		CHECK_EQ_U64(d.count, 4);
		unsigned n = le_delay_line_pop_due(&d, UINT64_MAX, out, 1 + round % 3);
		for (unsigned k = 0; k < n; k++)
			order_bad += (uintptr_t)out[k].handle != next_out++;
	}
	CHECK_EQ_U64(order_bad, 0);
	CHECK(next_in > 150);
	le_delay_line_free(&d);
	CHECK(d.slot == NULL);
}

static void due(void)
{
	struct le_delay_line d;
	struct le_frame out[8];

	CHECK(le_delay_line_init(&d, 8) == 0);
	CHECK_EQ_U64(le_delay_line_next_deadline(&d), UINT64_MAX);
	CHECK_EQ_U64(le_delay_line_pop_due(&d, UINT64_MAX, out, 8), 0);

	struct le_frame a = frame(1, 100), b = frame(2, 100), c = frame(3, 200);
	le_delay_line_push(&d, &a);
	le_delay_line_push(&d, &b);
	le_delay_line_push(&d, &c);
	CHECK_EQ_U64(le_delay_line_next_deadline(&d), 100);
	CHECK_EQ_U64(le_delay_line_pop_due(&d, 99, out, 8), 0);  /* not 1 ns early */
	CHECK_EQ_U64(le_delay_line_pop_due(&d, 100, out, 1), 1); /* max respected */
	CHECK_EQ_U64((uintptr_t)out[0].handle, 1);
	CHECK_EQ_U64(le_delay_line_pop_due(&d, 100, out, 8), 1);
	CHECK_EQ_U64((uintptr_t)out[0].handle, 2);
	CHECK_EQ_U64(le_delay_line_next_deadline(&d), 200);
	CHECK_EQ_U64(le_delay_line_pop_due(&d, 199, out, 8), 0);
	CHECK_EQ_U64(le_delay_line_pop_due(&d, 200, out, 8), 1);
	CHECK_EQ_U64(out[0].deadline, 200);
	CHECK_EQ_U64(d.count, 0);

	/* FIFO: a later deadline at the head holds back an earlier one
	 * behind it (the line is only for monotonic deadlines). */
	struct le_frame late = frame(4, 500), early = frame(5, 300);
	le_delay_line_push(&d, &late);
	le_delay_line_push(&d, &early);
	CHECK_EQ_U64(le_delay_line_pop_due(&d, 400, out, 8), 0);

	/* pop_any ignores deadlines, keeps order. */
	CHECK_EQ_U64(le_delay_line_pop_any(&d, out, 1), 1);
	CHECK_EQ_U64((uintptr_t)out[0].handle, 4);
	CHECK_EQ_U64(le_delay_line_pop_any(&d, out, 8), 1);
	CHECK_EQ_U64((uintptr_t)out[0].handle, 5);
	CHECK_EQ_U64(le_delay_line_pop_any(&d, out, 8), 0);
	le_delay_line_free(&d);
}

/* The ordered form: frames leave in deadline order, equal deadlines in
 * the order they came (stable), against a sort of the same input; due
 * frames are told apart from held ones. */
static void ordered(void)
{
	struct le_delay_line d;
	struct le_frame out[64];
	enum { N = 20000 };
	static le_ns_t dl[N];
	uint64_t x = 7;
	unsigned bad = 0, got = 0;
	le_ns_t last = 0;
	uintptr_t last_id = 0;

	CHECK(le_delay_line_init_form(&d, N, 1) == 0);
	CHECK(d.ordered && d.capacity == 32768);
	for (unsigned i = 0; i < N; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		dl[i] = 1000 + x % 500; /* many equal deadlines */
		CHECK(le_delay_line_push(&d, &(struct le_frame){ .handle = (void *)(uintptr_t)(i + 1), .deadline = dl[i] }) == 0);
	}
	CHECK_EQ_U64(le_delay_line_count(&d), N);
	CHECK_EQ_U64(le_delay_line_next_deadline(&d), 1000);
	le_delay_line_mark_due(&d, 1249);
	CHECK(le_delay_line_held(&d) > 0 && le_delay_line_held(&d) < N);
	for (le_ns_t now = 1000; now < 1600; now += 7) {
		unsigned n;
		while ((n = le_delay_line_pop_due(&d, now, out, 1 + (unsigned)(x++ % 64))) > 0) {
			for (unsigned k = 0; k < n; k++, got++) {
				uintptr_t id = (uintptr_t)out[k].handle;
				bad += out[k].deadline > now || out[k].deadline < last ||
				       (out[k].deadline == last && id < last_id) || out[k].deadline != dl[id - 1];
				last = out[k].deadline;
				last_id = id;
			}
		}
	}
	CHECK_EQ_U64(got, N);
	CHECK_EQ_U64(bad, 0);
	/* full: heap and due ring share the capacity */
	for (unsigned i = 0; i < d.capacity; i++)
		le_delay_line_push(&d, &(struct le_frame){ .deadline = i });
	CHECK(le_delay_line_push(&d, &(struct le_frame){ .deadline = 1 }) == -1);
	le_delay_line_mark_due(&d, 100);
	CHECK_EQ_U64(le_delay_line_held(&d), d.capacity - 101);
	CHECK(le_delay_line_push(&d, &(struct le_frame){ .deadline = 1 }) == -1);
	CHECK_EQ_U64(le_delay_line_pop_any(&d, out, 64), 64);
	CHECK_EQ_U64(out[63].deadline, 63);
	le_delay_line_free(&d);
}

/* A due frame whose deadline is later than `now` (marked at a later
 * now) is not handed out early. */
static void marked_later(void)
{
	struct le_delay_line d;
	struct le_frame out[4];

	CHECK(le_delay_line_init(&d, 4) == 0);
	le_delay_line_push(&d, &(struct le_frame){ .deadline = 100 });
	le_delay_line_mark_due(&d, 200);
	CHECK_EQ_U64(le_delay_line_held(&d), 0);
	CHECK_EQ_U64(le_delay_line_pop_due(&d, 50, out, 4), 0);
	CHECK_EQ_U64(le_delay_line_pop_due(&d, 100, out, 4), 1);
	le_delay_line_free(&d);
}

/* The runs form behaves exactly as the FIFO form: a random schedule of
 * pushes (bursts sharing arrival and deadline, fields that change inside
 * a burst, deadlines that go back: late arrivals), marks at times that
 * go forward and back, pops of random sizes due or not, and a full line;
 * after every step the same frames out, counts, held and next deadline. */
static void runs_as_fifo(void)
{
	struct le_delay_line f, r;
	struct le_rng g;
	uint64_t id = 1, mismatch = 0, runs_shared = 0, refused = 0;
	le_ns_t t = 1000;

	CHECK(le_delay_line_init(&f, 200) == 0);
	CHECK(le_delay_line_init_runs(&r, 200) == 0);
	CHECK_EQ_U64(r.capacity, f.capacity);
	le_rng_seed(&g, 42, 0, 0);
	for (unsigned step = 0; step < 200000 && !mismatch; step++) {
		struct le_frame of[64], orr[64];
		unsigned nf = 0, nr = 0, op = (unsigned)le_rng_below(&g, 8);

		t += le_rng_below(&g, 3000);
		if (op < 4) {
			unsigned k = 1 + (unsigned)le_rng_below(&g, 40);
			le_ns_t arrival = t - (le_rng_below(&g, 8) == 0 ? le_rng_below(&g, 5000) : 0);
			le_ns_t dl = arrival + (le_rng_below(&g, 4) ? 20000 : le_rng_below(&g, 30000));
			for (unsigned i = 0; i < k; i++) {
				struct le_frame x = { (void *)(uintptr_t)id++, 60 + (uint32_t)le_rng_below(&g, 1000),
						      (uint16_t)(le_rng_below(&g, 16) == 0), 0, arrival, dl };
				/* a mark inside a burst: what a late burst does */
				if (le_rng_below(&g, 16) == 0) {
					le_ns_t at = dl + le_rng_below(&g, 3) - 1;
					le_delay_line_mark_due(&f, at);
					le_delay_line_mark_due(&r, at);
				}
				int a = le_delay_line_push(&f, &x), b = le_delay_line_push(&r, &x);
				mismatch += a != b;
				refused += a < 0;
			}
		} else if (op < 5) {
			le_ns_t at = t + 30000 - le_rng_below(&g, 60000);
			le_delay_line_mark_due(&f, at);
			le_delay_line_mark_due(&r, at);
		} else if (op < 7) {
			unsigned max = 1 + (unsigned)le_rng_below(&g, 64);
			le_ns_t now = t + 30000 - le_rng_below(&g, 60000);
			nf = le_delay_line_pop_due(&f, now, of, max);
			nr = le_delay_line_pop_due(&r, now, orr, max);
		} else if (le_rng_below(&g, 20) == 0) {
			unsigned max = 1 + (unsigned)le_rng_below(&g, 64);
			nf = le_delay_line_pop_any(&f, of, max);
			nr = le_delay_line_pop_any(&r, orr, max);
		}
		mismatch += nf != nr;
		for (unsigned i = 0; i < nf && i < nr; i++)
			mismatch += of[i].handle != orr[i].handle || of[i].len != orr[i].len ||
				    of[i].deadline != orr[i].deadline || of[i].arrival != orr[i].arrival ||
				    of[i].cls != orr[i].cls;
		mismatch += le_delay_line_count(&f) != le_delay_line_count(&r) ||
			    le_delay_line_held(&f) != le_delay_line_held(&r) ||
			    le_delay_line_next_deadline(&f) != le_delay_line_next_deadline(&r);
		if (mismatch)
			CHECK(0, "the forms differ at step %u", step);
		runs_shared += r.rcount < r.count;
	}
	CHECK_EQ_U64(mismatch, 0);
	/* The schedule must have made runs of several frames, and filled
	 * the line (pushes refused). */
	CHECK(runs_shared > 1000);
	CHECK(refused > 0);
	le_delay_line_free(&f);
	le_delay_line_free(&r);
	CHECK(r.handle == NULL && r.run == NULL);
}

int main(void)
{
	runs_as_fifo();
	capacity();
	due();
	ordered();
	marked_later();
	return mt_summary();
}
