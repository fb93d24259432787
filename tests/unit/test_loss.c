/* Bernoulli loss: right rate, reproducible, independent of other settings. */
#include <math.h>
#include <stdlib.h>

#include "link.h"
#include "loss.h"
#include "minitest.h"

#define N 1000000

static struct le_loss_config bernoulli(double percent)
{
	struct le_loss_config c = { LE_LOSS_RANDOM, percent, le_prob_from_double(percent / 100.0) };
	return c;
}

static void rates(void)
{
	static const double ps[] = { 1e-1, 1e-2, 1e-3 };

	for (unsigned i = 0; i < 3; i++) {
		struct le_loss_state s;
		struct le_loss_config c = bernoulli(ps[i] * 100.0);
		double p = ps[i], k = 0;

		le_loss_init(&s, 12345, LE_DIR_A2B);
		for (int j = 0; j < N; j++)
			k += le_loss_decide(&s, &c);
		/* Two-sided 99.9 % bound, normal approximation to the binomial:
		 * valid here because n p >= 1000 for every p tested (and
		 * n (1 - p) is larger still), far above the usual n p >= 10. */
		double bound = 3.2905 * sqrt(N * p * (1 - p));
		CHECK(fabs(k - N * p) <= bound, "p = %g: %g drops, expected %g +- %g", p, k, N * p,
		      bound);
	}
}

/* Indices of the frames a fresh loss stage drops among n frames. */
static unsigned drops(uint64_t seed, uint32_t dir, double percent, unsigned n, unsigned *idx,
		      unsigned maxidx)
{
	struct le_loss_state s;
	struct le_loss_config c = bernoulli(percent);
	unsigned k = 0;

	le_loss_init(&s, seed, dir);
	for (unsigned j = 0; j < n; j++)
		if (le_loss_decide(&s, &c) && k < maxidx)
			idx[k++] = j;
	return k;
}

static void reproducible(void)
{
	static unsigned a[20000], b[20000];
	unsigned na = drops(7, LE_DIR_A2B, 1.0, N, a, 20000);
	unsigned nb = drops(7, LE_DIR_A2B, 1.0, N, b, 20000);

	CHECK(na > 9000 && na < 11000, "%u drops", na);
	CHECK_EQ_U64(na, nb);
	CHECK(memcmp(a, b, na * sizeof(a[0])) == 0);

	/* Another seed or the other direction: a different sequence. */
	nb = drops(8, LE_DIR_A2B, 1.0, N, b, 20000);
	CHECK(na != nb || memcmp(a, b, na * sizeof(a[0])) != 0);
	nb = drops(7, LE_DIR_B2A, 1.0, N, b, 20000);
	CHECK(na != nb || memcmp(a, b, na * sizeof(a[0])) != 0);
}

static void draws(void)
{
	struct le_loss_state s, ref;
	struct le_loss_config none = { LE_LOSS_NONE, 0, { 0, 0 } };
	struct le_loss_config zero = bernoulli(0), all = bernoulli(100);
	unsigned k = 0;

	/* No model: no draw, so the stream is where it started. */
	le_loss_init(&s, 1, 0);
	ref = s;
	for (int j = 0; j < 1000; j++)
		k += le_loss_decide(&s, &none);
	CHECK_EQ_U64(k, 0);
	CHECK(memcmp(&s, &ref, sizeof(s)) == 0);

	/* Any active model: exactly one draw per frame, even at 0 % and 100 %. */
	for (int j = 0; j < 1000; j++) {
		k += le_loss_decide(&s, j % 2 ? &zero : &all);
		le_rng_u64(&ref.rng);
	}
	CHECK_EQ_U64(k, 500);
	CHECK(memcmp(&s, &ref, sizeof(s)) == 0);

	/* 1e-9 is exact: the threshold is round(1e-9 * 2^64), not a rounded
	 * float's neighbour (the daemon's users count nines). */
	struct le_loss_config tiny = bernoulli(1e-7);
	CHECK(tiny.p.threshold == 18446744074ULL, "threshold %llu",
	      (unsigned long long)tiny.p.threshold);
}

/* The loss stream must not depend on anything but seed and direction:
 * links with different delays and a tiny limit (so queue_full drops
 * differ too) lose exactly the same frames. */
static void independent_of_delay(void)
{
	static const char *const texts[] = { "delay 1ms loss 5% limit 4 seed 99",
					     "delay 50ms loss 5% limit 4 seed 99",
					     "delay 0 loss 5% limit 100000 seed 99" };
	static unsigned idx[3][20000];
	unsigned n[3] = { 0 }, qf[3] = { 0 };
	char err[LE_ERR_MAX];

	for (int t = 0; t < 3; t++) {
		struct le_link_config c;
		struct le_link l;
		struct le_frame out[64];

		CHECK(le_config_parse(texts[t], &c, err, sizeof(err)) == 0, "%s", err);
		CHECK(le_link_init(&l, &c, LE_DIR_A2B, 0, 100000, err, sizeof(err)) == 0, "%s", err);
		for (unsigned j = 0; j < 100000; j++) {
			enum le_drop_cause cause;
			le_ns_t now = (le_ns_t)j * 100000; /* a frame every 100 us */

			le_link_dequeue(&l, now, out, 64);
			if (le_link_enqueue(&l, NULL, 64, now, &cause) < 0) {
				if (cause == LE_DROP_LOSS && n[t] < 20000)
					idx[t][n[t]++] = j;
				qf[t] += cause == LE_DROP_QUEUE_FULL;
			}
		}
		le_link_free(&l);
	}
	CHECK(n[0] > 4000, "%u loss drops", n[0]);
	CHECK(qf[1] > qf[0], "queue drops %u vs %u: the limit should bite harder", qf[1], qf[0]);
	CHECK_EQ_U64(qf[2], 0);
	for (int t = 1; t < 3; t++) {
		CHECK_EQ_U64(n[t], n[0]);
		CHECK(memcmp(idx[t], idx[0], n[0] * sizeof(idx[0][0])) == 0);
	}
}

int main(void)
{
	rates();
	reproducible();
	draws();
	independent_of_delay();
	return mt_summary();
}
