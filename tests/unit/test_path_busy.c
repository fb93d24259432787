/* A path asks only its busy links (path.h, `busy`): it must give exactly
 * what asking every link on every dequeue gave. Two twins get the same
 * random schedule (bursts of one arrival, some late, in phases where one
 * class or another gets no frame for a long while, dequeues at random
 * times and sizes, a live change in the middle); the reference twin has
 * every link put back into the busy set before each dequeue, which is
 * the loop as it was. After every step they must agree on the frames
 * that leave, every counter, the frames held, and (after
 * what le_path_catch_up would make of it) every link's clock. At the end,
 * le_path_catch_up must set the clocks that. */
#include <string.h>

#include "fake.h"
#include "minitest.h"
#include "path.h"
#include "rng.h"
#include "swap.h"
#include "twin_paths.h"

static void all_busy(struct le_swap *s)
{
	s->active->busy[0] = s->active->busy[1] = ~0ull;
	for (unsigned i = 0; i < s->nretiring; i++)
		s->retiring[i]->busy[0] = s->retiring[i]->busy[1] = ~0ull;
}

/* Link k's clock as le_path_catch_up would set it, without setting it
 * (catching up at every step would hide a link left behind). */
static le_ns_t clock_of(const struct le_path *p, unsigned k)
{
	int busy = (p->busy[k >> 6] >> (k & 63)) & 1;

	return !busy && p->link[k].clock < p->seen ? p->seen : p->link[k].clock;
}

static int same_clocks(const struct le_path *a, const struct le_path *b)
{
	for (unsigned k = 0; k < a->nlinks; k++)
		if (clock_of(a, k) != clock_of(b, k))
			return 0;
	return 1;
}

static void twins(const char *first, const char *second, uint64_t seed)
{
	struct twin_swaps w = { 0 };
	struct le_rng r;
	le_ns_t clock = 1000;
	unsigned idle_steps = 0;
	int ok = 1;

	if (twin_swaps_init(&w, first, second) < 0)
		return;
	le_rng_seed(&r, seed, 0, 0);
	for (unsigned step = 0; step < 20000 && ok; step++) {
		/* Phases of 500 steps: which protocols arrive. */
		static const uint8_t phase[][3] = { { 17, 6, 1 }, { 17, 17, 17 }, { 6, 6, 1 }, { 1, 1, 1 } };
		const uint8_t *protos = phase[(step / 500) % 4];
		struct le_frame oa[40], ob[40];
		le_ns_t t;

		clock += le_rng_below(&r, 20000);
		t = clock;
		if (step == 10000) {
			CHECK_EQ_U64(le_swap_stage(&w.sa, w.pa[1], clock + 50000), 0);
			CHECK_EQ_U64(le_swap_stage(&w.sb, w.pb[1], clock + 50000), 0);
		}
		if (le_rng_below(&r, 3)) {
			/* some late: idle links' clocks included */
			if (!(ok = twin_offer_burst(&w.fa, &w.fb, &w.sa, &w.sb, &r, t, protos, 100)))
				break;
		} else {
			unsigned max = 1 + (unsigned)le_rng_below(&r, 40), na, nb;

			all_busy(&w.sa);
			na = le_swap_dequeue(&w.sa, t, oa, max);
			nb = le_swap_dequeue(&w.sb, t, ob, max);
			if (na != nb) {
				CHECK(0, "'%s': dequeue of step %u: %u frames against %u", first, step, nb, na);
				break;
			}
			for (unsigned i = 0; i < na; i++)
				if (oa[i].handle != ob[i].handle || oa[i].deadline != ob[i].deadline ||
				    oa[i].arrival != ob[i].arrival || oa[i].cls != ob[i].cls) {
					CHECK(0, "'%s': step %u: frame %u of a dequeue differs", first, step, i);
					ok = 0;
					break;
				}
		}
		struct le_counters ca, cb;
		le_path_counters(w.sa.active, &ca);
		le_path_counters(w.sb.active, &cb);
		if (memcmp(&ca, &cb, sizeof(ca)) != 0 || w.sa.swaps != w.sb.swaps ||
		    le_path_depth(w.sa.active) != le_path_depth(w.sb.active) || !same_clocks(w.sa.active, w.sb.active)) {
			CHECK(0, "'%s': the twins differ after step %u", first, step);
			break;
		}
		/* the set was used: some link was left out of a dequeue */
		idle_steps += (w.sb.active->busy[0] & ((1ull << w.sb.active->nlinks) - 1)) !=
			      ((1ull << w.sb.active->nlinks) - 1);
	}
	le_path_catch_up(w.sb.active);
	for (unsigned k = 0; k < w.sb.active->nlinks; k++)
		CHECK_EQ_U64(w.sb.active->link[k].clock, clock_of(w.sa.active, k));
	CHECK_EQ_U64(w.sb.swaps, 1);
	CHECK(idle_steps > 1000, "'%s': links were out of the busy set in %u steps", first, idle_steps);
	twin_swaps_fini(&w);
}

int main(void)
{
	/* classes that go idle for whole phases; late bursts reach them */
	twins("delay 1ms limit 50 ; class t match proto tcp : delay 100us limit 20 ; "
	      "class u match proto udp : delay 0 limit 10",
	      "delay 2ms limit 30 ; class u match proto udp : delay 50us 20us limit 40 ; "
	      "class t match proto tcp : rate 10mbit limit 5", 11);
	/* every stage on a class; a serializer and a queue on another */
	twins("delay 10us ; class u match proto udp : delay 300us 200us loss gemodel 5% 20% duplicate 10% "
	      "corrupt 5% reorder 20% rate 300mbit limit 25 ; class t match proto tcp : rate 50mbit limit 8 "
	      "codel target 100us interval 1ms",
	      "delay 10us ; class t match proto tcp : delay 0 limit 3", 12);
	return mt_summary();
}
