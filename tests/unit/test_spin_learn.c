/* The learned spin (src/plane/spin_learn.h), in virtual time: lateness
 * sequences fed in a fixed order, so every expected spin is exact. */
#include "minitest.h"
#include "spin_learn.h"

#define US LE_NS_PER_US

/* The spin a learner reaches from n observations of one lateness. */
static le_ns_t after_constant(le_ns_t lateness, unsigned n)
{
	struct dp_spin_learner s;

	dp_spin_init(&s, DP_SPIN_INITIAL_NS);
	for (unsigned i = 0; i < n; i++)
		dp_spin_observe(&s, lateness);
	return s.spin_ns;
}

static void warm_up_keeps_the_initial_spin(void)
{
	struct dp_spin_learner s;

	dp_spin_init(&s, 123 * US);
	for (unsigned i = 0; i + 1 < DP_SPIN_WARMUP; i++)
		dp_spin_observe(&s, 3 * US);
	CHECK_EQ_U64(s.spin_ns, 123 * US);
	dp_spin_observe(&s, 3 * US);
	/* 3 us is in the bucket [2, 4) us: its upper edge plus the margin. */
	CHECK_EQ_U64(s.spin_ns, 4 * US + DP_SPIN_MARGIN_NS);
	/* An initial spin beyond what can be learned is capped. */
	dp_spin_init(&s, 10 * LE_NS_PER_S);
	CHECK_EQ_U64(s.spin_ns, DP_SPIN_MAX_NS);
}

static void the_spin_covers_the_bucket_of_each_lateness(void)
{
	CHECK_EQ_U64(after_constant(0, 1024), 2 * US + DP_SPIN_MARGIN_NS);
	CHECK_EQ_U64(after_constant(1999, 1024), 2 * US + DP_SPIN_MARGIN_NS);
	CHECK_EQ_U64(after_constant(2000, 1024), 4 * US + DP_SPIN_MARGIN_NS);
	CHECK_EQ_U64(after_constant(57 * US, 1024), 58 * US + DP_SPIN_MARGIN_NS);
	CHECK_EQ_U64(after_constant(DP_SPIN_MAX_NS - 1, 1024), DP_SPIN_MAX_NS + DP_SPIN_MARGIN_NS);
}

/* k of every 1000 wake-ups at `late`, the rest at 20 us, for n rounds of
 * 1000: the spin after them. */
static le_ns_t after_mix(unsigned k, le_ns_t late, unsigned rounds)
{
	struct dp_spin_learner s;

	dp_spin_init(&s, DP_SPIN_INITIAL_NS);
	for (unsigned r = 0; r < rounds; r++)
		for (unsigned i = 0; i < 1000; i++)
			dp_spin_observe(&s, i < k ? late : 20 * US);
	return s.spin_ns;
}

static void one_in_a_thousand_may_be_late(void)
{
	/* Exactly at the quantile's complement (1 in 1000 later): the late
	 * ones are not covered. The window's halvings keep the proportion
	 * (each count halves, rounding down), so any number of rounds. */
	CHECK_EQ_U64(after_mix(0, 300 * US, 8), 22 * US + DP_SPIN_MARGIN_NS);
	/* 2 in 1000: more than the quantile allows above the spin. */
	CHECK_EQ_U64(after_mix(2, 300 * US, 8), 302 * US + DP_SPIN_MARGIN_NS);
	CHECK_EQ_U64(after_mix(10, 150 * US, 8), 152 * US + DP_SPIN_MARGIN_NS);
}

static void stalls_beyond_the_largest_spin_are_counted_not_learned(void)
{
	struct dp_spin_learner s;

	dp_spin_init(&s, DP_SPIN_INITIAL_NS);
	for (unsigned i = 0; i < 10000; i++)
		dp_spin_observe(&s, i % 10 == 0 ? 4 * LE_NS_PER_MS : 40 * US);
	CHECK_EQ_U64(s.beyond, 1000);
	CHECK_EQ_U64(s.learned, 9000);
	CHECK_EQ_U64(s.spin_ns, 42 * US + DP_SPIN_MARGIN_NS);
}

/* The machine quietens: after a spell of slow wake-ups, the spin comes
 * down once the old ones have halved below the quantile's share. Each
 * DP_SPIN_WINDOW observations halve what came before, so 300 us
 * wake-ups that were all of a window fall under 1 in 1000 of the
 * histogram within about log2(1000) ~ 10 windows, whatever came first. */
static void the_spin_follows_the_machine_down_and_up(void)
{
	struct dp_spin_learner s;
	unsigned i;

	dp_spin_init(&s, DP_SPIN_INITIAL_NS);
	for (i = 0; i < 4 * DP_SPIN_WINDOW; i++)
		dp_spin_observe(&s, 300 * US);
	CHECK_EQ_U64(s.spin_ns, 302 * US + DP_SPIN_MARGIN_NS);
	for (i = 0; i < 12 * DP_SPIN_WINDOW && s.spin_ns > 22 * US + DP_SPIN_MARGIN_NS; i++)
		dp_spin_observe(&s, 20 * US);
	CHECK_EQ_U64(s.spin_ns, 22 * US + DP_SPIN_MARGIN_NS);
	CHECK(i > DP_SPIN_WINDOW, "came down after %u observations: too soon to be a quantile", i);
	/* Up again: late wake-ups over the quantile's share raise it within
	 * the recomputation period once they are more than 1 in 1000. */
	for (i = 0; i < DP_SPIN_WINDOW && s.spin_ns < 302 * US + DP_SPIN_MARGIN_NS; i++)
		dp_spin_observe(&s, 300 * US);
	CHECK_EQ_U64(s.spin_ns, 302 * US + DP_SPIN_MARGIN_NS);
	CHECK(i <= 64, "went up only after %u late wake-ups", i);
}

int main(void)
{
	warm_up_keeps_the_initial_spin();
	the_spin_covers_the_bucket_of_each_lateness();
	one_in_a_thousand_may_be_late();
	stalls_beyond_the_largest_spin_are_counted_not_learned();
	the_spin_follows_the_machine_down_and_up();
	return mt_summary();
}
