/* The waiting policy both data planes share (src/plane/wait.h): when a
 * thread with nothing to do may sleep, and for how long. */
#include "minitest.h"
#include "wait.h"

#define US LE_NS_PER_US

static const struct dp_wait_policy pol = {.spin_ns = 50 * US, .idle_ns = 200 * US, .max_nap_ns = 1000 * US};

static void naps(void)
{
	le_ns_t now = 10 * LE_NS_PER_S;
	/* Idle long enough, nothing due: the longest nap. */
	CHECK(dp_wait_nap(&pol, now, UINT64_MAX, now - 200 * US) == 1000 * US);
	/* A frame moved within idle_ns: poll on. */
	CHECK(dp_wait_nap(&pol, now, UINT64_MAX, now - 199 * US) == 0);
	/* A deadline 300 us away: wake spin_ns before it. */
	CHECK(dp_wait_nap(&pol, now, now + 300 * US, 0) == 250 * US);
	/* Far away: capped at max_nap_ns. */
	CHECK(dp_wait_nap(&pol, now, now + 5000 * US, 0) == 1000 * US);
	/* Within the spin window, or past due: poll until it. */
	CHECK(dp_wait_nap(&pol, now, now + 50 * US, 0) == 0);
	CHECK(dp_wait_nap(&pol, now, now - 1, 0) == 0);
	/* A nap shorter than DP_WAIT_MIN_NAP_NS is not worth its wake-up. */
	CHECK(dp_wait_nap(&pol, now, now + 50 * US + DP_WAIT_MIN_NAP_NS - 1, 0) == 0);
	CHECK(dp_wait_nap(&pol, now, now + 50 * US + DP_WAIT_MIN_NAP_NS, 0) == DP_WAIT_MIN_NAP_NS);
	/* Never negative or wrapped near the clock's end. */
	CHECK(dp_wait_nap(&pol, UINT64_MAX - 10, UINT64_MAX - 1, 0) == 0);
}

static void modes(void)
{
	enum dp_wait_mode m = DP_WAIT_ADAPTIVE;
	CHECK(dp_wait_mode_parse("busy", &m) == 0 && m == DP_WAIT_BUSY);
	CHECK(dp_wait_mode_parse("adaptive", &m) == 0 && m == DP_WAIT_ADAPTIVE);
	CHECK(dp_wait_mode_parse("Busy", &m) == -1 && m == DP_WAIT_ADAPTIVE);
	CHECK(dp_wait_mode_parse("", &m) == -1);
	CHECK(strcmp(dp_wait_mode_name(DP_WAIT_ADAPTIVE), "adaptive") == 0);
}

int main(void)
{
	naps();
	modes();
	return mt_summary();
}
