/* le_swap_dequeue_split (frame.h, le_frame_split): the data plane takes
 * due frames as three arrays (handle, length, deadline), and for the
 * common case (one path, one class, a fixed delay's runs) the model
 * copies them out of its rings without building an le_frame. It must
 * hand out exactly what le_swap_dequeue hands out and leave the model in
 * exactly the same state. Two twins get the same random schedule
 * (bursts of one arrival, some late, dequeues of random sizes at random
 * times, some before the last dequeue's, a live change half-way, so the merge of a retiring path
 * runs too); one is dequeued with le_swap_dequeue, the other split.
 * After every step they must agree on every frame that left, every
 * counter and the frames held; at the end, on every frame freed. */
#include <string.h>

#include "fake.h"
#include "minitest.h"
#include "path.h"
#include "rng.h"
#include "swap.h"
#include "twin_paths.h"

static int same_counters(const struct le_swap *a, const struct le_swap *b)
{
	struct le_counters ca, cb;

	le_path_counters(a->active, &ca);
	le_path_counters(b->active, &cb);
	return memcmp(&ca, &cb, sizeof(ca)) == 0 && le_path_depth(a->active) == le_path_depth(b->active) &&
	       a->swaps == b->swaps && a->nretiring == b->nretiring;
}

static void twins(const char *first, const char *second, uint64_t seed)
{
	struct twin_swaps w = { 0 };
	struct le_rng r;
	le_ns_t clock = 1000;
	uint64_t sent = 0, merged_steps = 0;
	int ok = 1;

	if (twin_swaps_init(&w, first, second) < 0)
		return;
	le_rng_seed(&r, seed, 0, 0);
	for (unsigned step = 0; step < 20000 && ok; step++) {
		static const uint8_t protos[] = { 17, 6, 1 };
		le_ns_t t;

		clock += le_rng_below(&r, 30000);
		t = clock;
		if (step == 10000) {
			CHECK_EQ_U64(le_swap_stage(&w.sa, w.pa[1], clock + 50000), 0);
			CHECK_EQ_U64(le_swap_stage(&w.sb, w.pb[1], clock + 50000), 0);
		}
		if (le_rng_below(&r, 2)) {
			if (!(ok = twin_offer_burst(&w.fa, &w.fb, &w.sa, &w.sb, &r, t, protos, 1400)))
				break;
		} else {
			/* sizes from none to more than a line holds due */
			unsigned max = (unsigned)le_rng_below(&r, 5) == 0 ? LE_SPLIT_MAX : (unsigned)le_rng_below(&r, 48);
			struct le_frame oa[LE_SPLIT_MAX];
			void *hb[LE_SPLIT_MAX];
			uint32_t lb[LE_SPLIT_MAX];
			le_ns_t db[LE_SPLIT_MAX];
			const struct le_frame_split ob = { hb, lb, db };
			unsigned na, nb;

			/* a dequeue at a time before the last one's: frames marked
			 * due then, but not due yet now, must stay */
			if (le_rng_below(&r, 8) == 0 && t > 30000)
				t -= le_rng_below(&r, 30000);
			merged_steps += w.sa.nretiring > 0;
			na = le_swap_dequeue(&w.sa, t, oa, max);
			nb = le_swap_dequeue_split(&w.sb, t, &ob, max);
			if (na != nb) {
				CHECK(0, "'%s': dequeue of step %u (max %u): %u frames split against %u", first, step, max,
				      nb, na);
				break;
			}
			for (unsigned i = 0; i < na; i++)
				if (oa[i].handle != hb[i] || oa[i].len != lb[i] || oa[i].deadline != db[i]) {
					CHECK(0, "'%s': step %u: frame %u of %u differs", first, step, i, na);
					ok = 0;
					break;
				}
			/* the same handles (checked above): each sent once, live */
			if (ok && fk_sent(&w.fa, oa, na) + fk_sent(&w.fb, oa, na) != 0) {
				CHECK(0, "'%s': step %u: a frame left twice or after it was freed", first, step);
				break;
			}
			sent += na;
		}
		if (ok && !same_counters(&w.sa, &w.sb)) {
			CHECK(0, "'%s': the twins differ after step %u", first, step);
			break;
		}
	}
	CHECK(sent > 20000, "'%s': only %llu frames left the twins", first, (unsigned long long)sent);
	CHECK(merged_steps > 0, "'%s': no dequeue merged a retiring path", first);
	twin_swaps_fini(&w);
}

int main(void)
{
	/* a fixed delay: the runs form, copied from its rings */
	twins("delay 1ms limit 300", "delay 2ms limit 100", 21);
	/* the runs form with a limit that drops, then a per-frame stage */
	twins("delay 50us limit 20", "delay 1ms loss 10% duplicate 5% limit 200", 22);
	/* the timing wheel (jitter, reorder), then a rate's FIFO line */
	twins("delay 200us 150us reorder 10% limit 500", "rate 100mbit delay 20us limit 50", 23);
	/* the wheel without a run (jitter alone), limits tight enough that
	 * which frames are held decides drops; then reorder's run with them */
	twins("delay 500us 400us limit 40", "delay 300us 300us reorder 20% limit 25", 26);
	/* classes (a path merges them), then one class again */
	twins("delay 300us limit 100 ; class u match proto udp : delay 100us 50us limit 40 ; "
	      "class t match proto tcp : rate 20mbit limit 10",
	      "delay 100us limit 400", 24);
	/* hops */
	twins("delay 100us limit 100 >> delay 200us limit 50", "delay 1ms limit 1000", 25);
	return mt_summary();
}
