/* Bernoulli loss: right rate, reproducible, independent of other settings. */
#include <math.h>
#include <stdlib.h>

#include "fake.h"
#include "link.h"
#include "loss.h"
#include "minitest.h"

#define N 1000000

static struct le_loss_config bernoulli(double percent)
{
	struct le_loss_config c = { .model = LE_LOSS_RANDOM, .percent = percent, .p = le_prob_from_double(percent / 100.0) };
	return c;
}

static void rates(void)
{
	/* 0.3: a draw per frame; the others are rare, drawn as gaps. */
	static const double ps[] = { 3e-1, 1e-1, 1e-2, 1e-3 };

	for (unsigned i = 0; i < 4; i++) {
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
	struct le_loss_config none = { .model = LE_LOSS_NONE };
	struct le_loss_config zero = bernoulli(0), all = bernoulli(100);
	unsigned k = 0;

	/* No model: no draw, so the stream is where it started. */
	le_loss_init(&s, 1, 0);
	ref = s;
	for (int j = 0; j < 1000; j++)
		k += le_loss_decide(&s, &none);
	CHECK_EQ_U64(k, 0);
	CHECK(memcmp(&s, &ref, sizeof(s)) == 0);

	/* Certain (0 % or 100 %): no draw either. */
	for (int j = 0; j < 1000; j++)
		k += le_loss_decide(&s, j % 2 ? &zero : &all);
	CHECK_EQ_U64(k, 500);
	CHECK(memcmp(&s.rng, &ref.rng, sizeof(s.rng)) == 0);

	/* 25 % and more: one draw per frame. */
	struct le_loss_config half = bernoulli(50);
	for (int j = 0; j < 1000; j++) {
		le_loss_decide(&s, &half);
		le_rng_u64(&ref.rng);
	}
	CHECK(memcmp(&s.rng, &ref.rng, sizeof(s.rng)) == 0);

	/* Rare: one draw per loss, plus the gap still running. */
	struct le_loss_config rare = bernoulli(2);
	unsigned lost = 0;
	for (int j = 0; j < 10000; j++)
		lost += (unsigned)le_loss_decide(&s, &rare);
	CHECK(lost > 100, "%u lost", lost);
	for (unsigned j = 0; j < lost + (s.left_p != 0); j++)
		le_rng_u64(&ref.rng);
	CHECK(memcmp(&s.rng, &ref.rng, sizeof(s.rng)) == 0);

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
		struct fakes fk;

		fk_init(&fk, 0);
		CHECK(le_config_parse(texts[t], &c, err, sizeof(err)) == 0, "%s", err);
		CHECK(le_link_init_ops(&l, &c, LE_DIR_A2B, 0, 0, &fk.ops, err, sizeof(err)) == 0, "%s", err);
		for (unsigned j = 0; j < 100000; j++) {
			le_ns_t now = (le_ns_t)j * 100000; /* a frame every 100 us */
			uint64_t lost_before = l.ctr.drop[LE_DROP_LOSS];
			uint64_t full_before = l.ctr.drop[LE_DROP_QUEUE_FULL];

			fk_sent(&fk, out, le_link_dequeue(&l, now, out, 64));
			le_link_offer(&l, fk_new(&fk, 64), 64, now);
			/* The offered frame is the only one that can drop here. */
			if (l.ctr.drop[LE_DROP_LOSS] != lost_before && n[t] < 20000)
				idx[t][n[t]++] = j;
			qf[t] += l.ctr.drop[LE_DROP_QUEUE_FULL] != full_before;
		}
		le_link_free(&l);
		fk_fini(&fk);
	}
	CHECK(n[0] > 4000, "%u loss drops", n[0]);
	CHECK(qf[1] > qf[0], "queue drops %u vs %u: the limit should bite harder", qf[1], qf[0]);
	CHECK_EQ_U64(qf[2], 0);
	for (int t = 1; t < 3; t++) {
		CHECK_EQ_U64(n[t], n[0]);
		CHECK(memcmp(idx[t], idx[0], n[0] * sizeof(idx[0][0])) == 0);
	}
}

static struct le_loss_config parsed(const char *text)
{
	struct le_link_config c;
	char err[LE_ERR_MAX] = "";

	CHECK(le_config_parse(text, &c, err, sizeof(err)) == 0, "%s: %s", text, err);
	return c.loss;
}

/* Deterministic corner cases pin down netem's order of events: the loss
 * of a frame depends on the state the frame meets (gemodel) or enters
 * (4-state). */
static void chains_by_hand(void)
{
	struct le_loss_state s;
	struct le_loss_config ge = parsed("loss gemodel 100% 100%"), st = parsed("loss state 100% 100%");
	int seq[6];

	/* gemodel: Good (no loss), then Bad (always lost), flipping each frame. */
	le_loss_init(&s, 1, 0);
	for (int i = 0; i < 6; i++)
		seq[i] = le_loss_decide(&s, &ge);
	CHECK(seq[0] == 0 && seq[1] == 1 && seq[2] == 0 && seq[3] == 1 && seq[4] == 0 && seq[5] == 1);
	/* 4-state: 1 -> 3 (lost) -> 1 (received) -> 3 ... */
	le_loss_init(&s, 1, 0);
	for (int i = 0; i < 6; i++)
		seq[i] = le_loss_decide(&s, &st);
	CHECK(seq[0] == 1 && seq[1] == 0 && seq[2] == 1 && seq[3] == 0 && seq[4] == 1 && seq[5] == 0);
	/* isolated losses: p14 = 100% from state 1, then back to 1 */
	struct le_loss_config iso = parsed("loss state 0% 100% 0% 100% 100%");
	le_loss_init(&s, 1, 0);
	for (int i = 0; i < 6; i++)
		seq[i] = le_loss_decide(&s, &iso);
	CHECK(seq[0] == 1 && seq[1] == 0 && seq[2] == 1 && seq[3] == 0, "%d %d %d %d", seq[0], seq[1], seq[2], seq[3]);
	/* gemodel draws two numbers per frame when none of its chances is
	 * rare or certain (those take gaps, or nothing), state one. */
	struct le_loss_config ge_even = parsed("loss gemodel 30% 40% 70% 30%");
	struct le_rng a, b;
	le_loss_init(&s, 9, 1);
	le_rng_seed(&a, 9, 1, LE_STREAM_LOSS);
	le_loss_decide(&s, &ge_even);
	le_rng_u64(&a), le_rng_u64(&a);
	b = s.rng;
	CHECK(memcmp(&a, &b, sizeof(a)) == 0);
}

/* Asymptotic variance of the mean of f over a stationary Markov chain
 * (sigma^2 / n is the variance of the sample mean of n steps):
 *     sigma^2 = gamma_0 + 2 sum_{k>=1} gamma_k,
 *     gamma_k = sum_i pi_i f_i (P^k f)_i - (pi f)^2
 * summed until the terms vanish (the chains here mix in tens of steps). */
static double markov_variance(int n, const double P[4][4], const double *pi, const double *f)
{
	double g[4], mean = 0, var = 0;

	for (int i = 0; i < n; i++)
		mean += pi[i] * f[i], g[i] = f[i];
	for (int i = 0; i < n; i++)
		var += pi[i] * f[i] * f[i];
	var -= mean * mean;
	for (int k = 1; k < 100000; k++) {
		double h[4] = { 0 }, gk = 0;
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++)
				h[i] += P[i][j] * g[j];
		memcpy(g, h, sizeof(h));
		for (int i = 0; i < n; i++)
			gk += pi[i] * f[i] * g[i];
		gk -= mean * mean;
		var += 2 * gk;
		if (fabs(gk) < 1e-16)
			break;
	}
	return var;
}

/* Stationary distribution: power iteration (the chains are ergodic and
 * aperiodic), to double precision. */
static void stationary(int n, const double P[4][4], double *pi)
{
	for (int i = 0; i < n; i++)
		pi[i] = 1.0 / n;
	for (int it = 0; it < 200000; it++) {
		double q[4] = { 0 }, d = 0;
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++)
				q[j] += pi[i] * P[i][j];
		for (int j = 0; j < n; j++)
			d += fabs(q[j] - pi[j]), pi[j] = q[j];
		if (d < 1e-17)
			break;
	}
}

#define NCHAIN 2000000

/* Gilbert-Elliott: the long-run loss rate is the chain's stationary loss
 * probability, L = pi_G (1-k) + pi_B (1-h) with pi_B = p / (p + r).
 * Variance of the sample loss rate: the loss indicator is f(S) plus
 * Bernoulli noise e with Var(e | S) = q_S (1 - q_S), independent of
 * everything else (its own draw), so
 *     sigma^2 = (q_B - q_G)^2 sigma^2_chain(1{B}) + pi_G q_G(1-q_G) + pi_B q_B(1-q_B)
 * and for the two-state chain sigma^2_chain(1{B}) = pi_B pi_G (1+l)/(1-l)
 * with l = 1 - p - r its second eigenvalue. The bound is 5 sigma/sqrt(n)
 * (a false alarm below 1e-6 by the Markov chain CLT). */
static void gilbert_elliott(void)
{
	static const struct {
		const char *text;
		double p, r, qb, qg;
	} cases[] = {
		{ "loss gemodel 2% 25%", 0.02, 0.25, 1.0, 0.0 },           /* simple Gilbert */
		{ "loss gemodel 5% 30% 80% 1%", 0.05, 0.30, 0.80, 0.01 },  /* Gilbert-Elliott */
		{ "loss gemodel 0.5%", 0.005, 0.995, 1.0, 0.0 },          /* r = 1 - p: Bernoulli */
	};
	for (unsigned c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct le_loss_state s;
		struct le_loss_config cfg = parsed(cases[c].text);
		double p = cases[c].p, r = cases[c].r, pb = p / (p + r), pg = 1 - pb, l = 1 - p - r;
		double L = pg * cases[c].qg + pb * cases[c].qb;
		double d = cases[c].qb - cases[c].qg;
		double var = d * d * pb * pg * (1 + l) / (1 - l) + pg * cases[c].qg * (1 - cases[c].qg) +
			     pb * cases[c].qb * (1 - cases[c].qb);
		double lost = 0, bursts = 0, burst_frames = 0;
		int prev = 0;

		le_loss_init(&s, 2024 + c, 0);
		for (int i = 0; i < NCHAIN; i++) {
			int x = le_loss_decide(&s, &cfg);
			lost += x;
			if (x && !prev)
				bursts++;
			burst_frames += x;
			prev = x;
		}
		double rate = lost / NCHAIN, bound = 5 * sqrt(var / NCHAIN);
		CHECK(fabs(rate - L) <= bound, "%s: loss %.6f, stationary %.6f +- %.6f", cases[c].text, rate, L, bound);
		if (cases[c].qb == 1.0 && cases[c].qg == 0.0) {
			/* Simple Gilbert: a burst of losses is a stay in Bad, geometric
			 * with mean 1/r and variance (1-r)/r^2; about n pi_B r bursts. */
			double mean = burst_frames / bursts, nb = NCHAIN * pb * r;
			double b = 5 * sqrt((1 - r) / (r * r) / nb);
			CHECK(fabs(mean - 1 / r) <= b, "%s: mean burst %.4f, expected %.4f +- %.4f", cases[c].text,
			      mean, 1 / r, b);
		}
	}
}

/* 4-state model (netem's loss_4state): states 1 gap-receive, 2
 * burst-receive, 3 burst-loss, 4 isolated loss; a frame is lost when the
 * chain enters 3 or 4. Transition matrix from the parameters, stationary
 * loss pi_3 + pi_4, variance from the chain's autocovariances. */
static void four_state(void)
{
	static const struct {
		const char *text;
		double p13, p31, p32, p23, p14;
	} cases[] = {
		{ "loss state 1% 30% 5% 40% 0.5%", 0.01, 0.30, 0.05, 0.40, 0.005 },
		{ "loss state 3%", 0.03, 0.97, 0, 1, 0 },                  /* defaults: Bernoulli 3% */
		{ "loss state 2% 20% 10% 30%", 0.02, 0.20, 0.10, 0.30, 0 },
	};
	for (unsigned c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct le_loss_state s;
		struct le_loss_config cfg = parsed(cases[c].text);
		double p13 = cases[c].p13, p31 = cases[c].p31, p32 = cases[c].p32, p23 = cases[c].p23, p14 = cases[c].p14;
		const double P[4][4] = {
			{ 1 - p13 - p14, 0, p13, p14 },
			{ 0, 1 - p23, p23, 0 },
			{ p31, p32, 1 - p31 - p32, 0 },
			{ 1, 0, 0, 0 },
		};
		const double f[4] = { 0, 0, 1, 1 };
		double pi[4], lost = 0;

		stationary(4, P, pi);
		double L = pi[2] + pi[3], var = markov_variance(4, P, pi, f), bound = 5 * sqrt(var / NCHAIN);
		le_loss_init(&s, 77 + c, 1);
		for (int i = 0; i < NCHAIN; i++)
			lost += le_loss_decide(&s, &cfg);
		CHECK(fabs(lost / NCHAIN - L) <= bound, "%s: loss %.6f, stationary %.6f +- %.6f", cases[c].text,
		      lost / NCHAIN, L, bound);
	}
}

/* Correlated Bernoulli (netem's get_crandom): with rho = 0 exactly the
 * uncorrelated stream; with rho > 0 losses cluster: P(loss | previous
 * lost) rises above P(loss | previous received). netem's formula does not
 * keep the rate at P (the mixed value concentrates around 1/2, so the
 * rate falls as rho grows; docs/grammar.md says so): asserted too. */
static void correlated(void)
{
	struct le_loss_state a, b;
	struct le_loss_config plain = parsed("loss 10%"), zero = parsed("loss 10% 0%"), corr = parsed("loss 10% 25%");
	unsigned same = 0, after_loss = 0, lost_after_loss = 0, after_rx = 0, lost_after_rx = 0, lost = 0;
	int prev = 0;

	le_loss_init(&a, 5, 0);
	le_loss_init(&b, 5, 0);
	for (int i = 0; i < 100000; i++)
		same += le_loss_decide(&a, &plain) == le_loss_decide(&b, &zero);
	CHECK_EQ_U64(same, 100000);
	le_loss_init(&a, 5, 0);
	for (int i = 0; i < 200000; i++) {
		int x = le_loss_decide(&a, &corr);
		if (prev)
			after_loss++, lost_after_loss += x;
		else
			after_rx++, lost_after_rx += x;
		lost += x;
		prev = x;
	}
	CHECK(after_loss > 1000, "%u", after_loss);
	CHECK((double)lost_after_loss / after_loss > 1.5 * lost_after_rx / after_rx, "%u/%u vs %u/%u", lost_after_loss,
	      after_loss, lost_after_rx, after_rx);
	CHECK(lost < 0.1 * 200000, "netem's correlated rate is below P: %u", lost);
}

int main(void)
{
	chains_by_hand();
	gilbert_elliott();
	four_state();
	correlated();
	rates();
	reproducible();
	draws();
	independent_of_delay();
	return mt_summary();
}
