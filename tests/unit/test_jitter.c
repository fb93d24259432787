/* Jitter: netem's draw arithmetic, the distribution tables (generation,
 * the .dist format, the shipped files), sample moments against the exact
 * moments of each distribution, and the two modes: netem's (frames
 * reorder at the rate the distribution predicts) and noreorder. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "dist_table.h"
#include "fake.h"
#include "jitter.h"
#include "link.h"
#include "minitest.h"

static const char *dist_dir = "profiles/dist";

/* The draw that picks entry k of n (floor(rnd n / 2^64) = k). */
static uint64_t rnd_for(uint64_t k, uint64_t n)
{
	unsigned __int128 r = (((unsigned __int128)k << 64) + n - 1) / n;
	return (uint64_t)r;
}

/* tabledist by hand (sch_netem.c): mu + round(sigma * t / 8192). */
static void arithmetic(void)
{
	int16_t v[3] = { -8192, 4096, 1 };
	struct le_dist_table t = { 3, v, NULL };

	CHECK_EQ_U64(le_tabledist(1000, 0, 12345, &t), 1000);             /* no jitter: mu */
	CHECK(le_tabledist(1000000, 100000, rnd_for(0, 3), &t) == 1000000 - 100000); /* entry 0: -1 sigma */
	CHECK(le_tabledist(1000000, 100000, rnd_for(1, 3), &t) == 1000000 + 50000);  /* entry 1: +1/2 */
	/* entry 2: 100000 / 8192 = 12.2 -> 12 */
	CHECK(le_tabledist(1000000, 100000, rnd_for(2, 3), &t) == 1000000 + 12);
	CHECK(le_tabledist(1000000, 100000, UINT64_MAX, &t) == 1000000 + 12);
	CHECK(le_tabledist(1000000, 100000, rnd_for(1, 3) - 1, &t) == 1000000 - 100000);
	/* uniform on [mu - sigma, mu + sigma - 1] */
	CHECK(le_tabledist(50, 10, 0, NULL) == 40);
	CHECK(le_tabledist(50, 10, rnd_for(19, 20), NULL) == 59);
	CHECK(le_tabledist(50, 10, UINT64_MAX, NULL) == 59);
	/* rounding of the remainder half away from zero, for both signs:
	 * sigma 12288 = 8192 + 4096, t = 3: 3 + (4096*3 + 4096)/8192 = 3 + 2 = 5 */
	int16_t w[2] = { 3, -3 };
	struct le_dist_table u = { 2, w, NULL };
	CHECK(le_tabledist(0, 12288, rnd_for(0, 2), &u) == 5);
	CHECK(le_tabledist(0, 12288, rnd_for(1, 2), &u) == -5);
}

static void parser(void)
{
	struct le_dist_table t;
	char err[LE_ERR_MAX] = "";
	const char *ok = "# comment line\n 1 -2 +3\t4\n\n#another\n-32768 32767 # trailing\r\n0\n";

	CHECK(le_dist_parse(ok, strlen(ok), "x.dist", &t, err, sizeof(err)) == 0, "%s", err);
	CHECK_EQ_U64(t.size, 7);
	CHECK(t.v[0] == 1 && t.v[1] == -2 && t.v[2] == 3 && t.v[3] == 4 && t.v[4] == -32768 && t.v[5] == 32767 &&
	      t.v[6] == 0);
	le_dist_table_free(&t);

	static const struct {
		const char *text, *want;
	} bad[] = {
		{ "1 2\n3 x4\n", "x.dist:2: 'x4' is not an integer" },
		{ "1 2\n\n3 32768\n", "x.dist:3: '32768' is out of range (-32768 .. 32767)" },
		{ "-32769", "x.dist:1: '-32769' is out of range" },
		{ "0x10", "x.dist:1: '0x10' is not an integer" },
		{ "1.5", "'1.5' is not an integer" },
		{ "-", "'-' is not an integer" },
		{ "# only a comment\n\n", "x.dist: no values" },
		{ "", "no values" },
	};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		CHECK(le_dist_parse(bad[i].text, strlen(bad[i].text), "x.dist", &t, err, sizeof(err)) == -1,
		      "'%s' accepted", bad[i].text);
		CHECK(strstr(err, bad[i].want) != NULL, "'%s': got '%s'", bad[i].text, err);
	}
	/* bytes that are not text are shown escaped (a NUL cut the quote
	 * short) */
	CHECK(le_dist_parse("1 \0003\n", 5, "x.dist", &t, err, sizeof(err)) == -1);
	CHECK_STR_CONTAINS(err, "x.dist:1: '\\x003' is not an integer");
	CHECK(le_dist_parse("1\n2\xff\n", 5, "x.dist", &t, err, sizeof(err)) == -1);
	CHECK_STR_CONTAINS(err, "x.dist:2: '2\\xff' is not an integer");
	/* more than netem's 16384 values */
	char *big = malloc(16385 * 2 + 1);
	for (int i = 0; i < 16385; i++)
		big[2 * i] = '1', big[2 * i + 1] = ' ';
	big[16385 * 2] = '\0';
	CHECK(le_dist_parse(big, strlen(big), "big.dist", &t, err, sizeof(err)) == -1);
	CHECK_STR_CONTAINS(err, "more than 16384 values");
	free(big);
	CHECK(le_dist_load("/nonexistent.dist", &t, err, sizeof(err)) == -1);
	CHECK_STR_CONTAINS(err, "/nonexistent.dist: cannot open");
}

static void table_moments(const int16_t *v, unsigned n, double *mean, double *sd)
{
	double s = 0, s2 = 0;

	for (unsigned k = 0; k < n; k++)
		s += v[k], s2 += (double)v[k] * v[k];
	*mean = s / n / LE_DIST_SCALE;
	*sd = sqrt(s2 / n - (s / n) * (s / n)) / LE_DIST_SCALE;
}

/* Moments of the continuous definitions, cut at the table's range
 * [-32768, 32767] / 8192, by the midpoint rule on 2 x 10^5 quantiles. */
static void definition_moments(double mean[4], double sd[4])
{
	const int n = 200000;
	double s[4] = { 0 }, s2[4] = { 0 }, lo = -32768.0 / 8192, hi = 32767.0 / 8192;

	for (int i = 0; i < n; i++) {
		double p = (i + 0.5) / n, par = (pow(1 - p, -1.0 / 3) - 1.5) * 4 / 3, nor, x[4];
		double a = -40, b = 40;
		for (int k = 0; k < 60; k++) { /* normal quantile by bisection */
			double m = (a + b) / 2;
			if (0.5 * erfc(-m / sqrt(2.0)) < p)
				a = m;
			else
				b = m;
		}
		nor = (a + b) / 2;
		nor = nor < lo ? lo : nor > hi ? hi : nor;
		par = par < lo ? lo : par > hi ? hi : par;
		x[LE_DIST_UNIFORM] = (2 * p - 1) * sqrt(3.0);
		x[LE_DIST_NORMAL] = nor;
		x[LE_DIST_PARETO] = par;
		x[LE_DIST_PARETONORMAL] = (nor + 3 * par) / 4;
		for (int d = 0; d < 4; d++)
			s[d] += x[d], s2[d] += x[d] * x[d];
	}
	for (int d = 0; d < 4; d++) {
		mean[d] = s[d] / n;
		sd[d] = sqrt(s2[d] / n - mean[d] * mean[d]);
	}
}

/* The generated tables are the distributions they name: moments within
 * what 4096 quantiles and integer rounding allow (the tail beyond the
 * outermost midpoint is what a 4096-entry table cannot represent; for
 * the normal it holds 2 * integral_{3.67}^inf x^2 phi(x) dx ~ 0.3 % of
 * the variance). */
static void generated_tables(void)
{
	static const enum le_dist kinds[] = { LE_DIST_UNIFORM, LE_DIST_NORMAL, LE_DIST_PARETO, LE_DIST_PARETONORMAL };
	int16_t v[LE_DIST_BUILTIN_SIZE];
	double dms[4], dss[4];

	definition_moments(dms, dss);
	for (unsigned i = 0; i < 4; i++) {
		double m, s, dm = dms[kinds[i]], ds = dss[kinds[i]];

		le_dist_generate(kinds[i], v);
		table_moments(v, LE_DIST_BUILTIN_SIZE, &m, &s);
		CHECK(fabs(m - dm) < 0.005 && fabs(s - ds) < 0.01, "%s: table mean %.5f sd %.5f, definition %.5f %.5f",
		      le_dist_name(kinds[i]), m, s, dm, ds);
		for (unsigned k = 1; k < LE_DIST_BUILTIN_SIZE; k++)
			if (v[k] < v[k - 1]) {
				CHECK(0, "%s: not a quantile table at %u", le_dist_name(kinds[i]), k);
				break;
			}
	}
	le_dist_generate(LE_DIST_NORMAL, v);
	for (unsigned k = 0; k < LE_DIST_BUILTIN_SIZE / 2; k++)
		if (v[k] != -v[LE_DIST_BUILTIN_SIZE - 1 - k]) {
			CHECK(0, "normal table not symmetric at %u", k);
			break;
		}
	double m, s;
	table_moments(v, LE_DIST_BUILTIN_SIZE, &m, &s);
	CHECK(fabs(s - 1) < 0.005, "normal sd %.5f", s);
}

/* profiles/dist/ holds exactly what the code generates. */
static void shipped_files(void)
{
	static const enum le_dist kinds[] = { LE_DIST_UNIFORM, LE_DIST_NORMAL, LE_DIST_PARETO, LE_DIST_PARETONORMAL };
	int16_t v[LE_DIST_BUILTIN_SIZE];

	for (unsigned i = 0; i < 4; i++) {
		char path[512], err[LE_ERR_MAX];
		struct le_dist_table t;

		snprintf(path, sizeof(path), "%s/%s.dist", dist_dir, le_dist_name(kinds[i]));
		if (le_dist_load(path, &t, err, sizeof(err)) < 0) {
			CHECK(0, "%s (regenerate with: ninja -C build dist-tables)", err);
			continue;
		}
		le_dist_generate(kinds[i], v);
		CHECK(t.size == LE_DIST_BUILTIN_SIZE && memcmp(t.v, v, sizeof(v)) == 0,
		      "%s differs from the generator (ninja -C build dist-tables)", path);
		le_dist_table_free(&t);
	}
}

/* Sample mean and variance of the jitter against the exact moments of the
 * discrete distribution it draws from (every table entry equally likely):
 *   mean within 5 sd/sqrt(n)                 (CLT)
 *   variance within 5 sqrt((mu4 - sd^4)/n)  (sd of the sample variance)
 * so a correct implementation fails with probability below 1e-6. */
static void sample_moments(void)
{
	static const char *const texts[] = {
		"delay 100ms 1ms", "delay 100ms 1ms distribution uniform", "delay 100ms 1ms distribution normal",
		"delay 100ms 1ms distribution pareto", "delay 100ms 1ms distribution paretonormal",
		"delay 100ms 333us distribution normal",
	};
	const int n = 400000;

	for (unsigned t = 0; t < sizeof(texts) / sizeof(texts[0]); t++) {
		struct le_link_config c;
		struct le_jitter_state js;
		char err[LE_ERR_MAX];
		double mu = 0, m2 = 0, m4 = 0, s = 0, s2 = 0;

		CHECK(le_config_parse(texts[t], &c, err, sizeof(err)) == 0, "%s", err);
		CHECK(le_jitter_init(&js, &c, 31 + t, 0, 0, err, sizeof(err)) == 0, "%s", err);
		/* exact moments of J = delay(draw) - delay */
		if (js.table.size == 0) {
			double N = 2.0 * c.jitter;
			mu = -0.5;
			m2 = (N * N - 1) / 12;
			m4 = (3 * N * N - 7) * (N * N - 1) / 240;
		} else {
			for (uint32_t k = 0; k < js.table.size; k++)
				mu += (double)le_tabledist(0, (int64_t)c.jitter, rnd_for(k, js.table.size), &js.table);
			mu /= js.table.size;
			for (uint32_t k = 0; k < js.table.size; k++) {
				double d = (double)le_tabledist(0, (int64_t)c.jitter, rnd_for(k, js.table.size), &js.table) - mu;
				m2 += d * d, m4 += d * d * d * d;
			}
			m2 /= js.table.size, m4 /= js.table.size;
		}
		for (int i = 0; i < n; i++) {
			double j = (double)le_jitter_delay(&js, &c) - (double)c.delay;
			s += j, s2 += j * j;
		}
		double mean = s / n, var = s2 / n - mean * mean;
		CHECK(fabs(mean - mu) <= 5 * sqrt(m2 / n), "%s: mean %.1f, expected %.1f +- %.1f", texts[t], mean, mu,
		      5 * sqrt(m2 / n));
		CHECK(fabs(var - m2) <= 5 * sqrt((m4 - m2 * m2) / n), "%s: sd %.1f, expected %.1f", texts[t], sqrt(var),
		      sqrt(m2));
		/* JITTER is the standard deviation for tables (~1 sd per 8192). */
		if (js.table.size && strstr(texts[t], "normal") && !strstr(texts[t], "pareto"))
			CHECK(fabs(sqrt(m2) / c.jitter - 1) < 0.005);
		le_jitter_free(&js);
	}
}

/* Departure order of n frames arriving every `gap` ns. */
static unsigned inversions(const char *text, le_ns_t gap, unsigned n, le_ns_t *min_dl_step, unsigned *lost_order)
{
	struct fakes fk;
	struct le_link l;
	struct le_link_config c;
	struct le_frame out[256];
	char err[LE_ERR_MAX];
	uint32_t *pos = calloc(n, sizeof(*pos)), next = 0;
	unsigned inv = 0;
	le_ns_t last = 0;

	fk_init(&fk, 0);
	*min_dl_step = UINT64_MAX;
	*lost_order = 0;
	if (le_config_parse(text, &c, err, sizeof(err)) < 0 ||
	    le_link_init_ops(&l, &c, LE_DIR_A2B, 0, 11, &fk.ops, err, sizeof(err)) < 0) {
		CHECK(0, "%s: %s", text, err);
		free(pos);
		return 0;
	}
	for (unsigned i = 0; i <= n + 20000; i++) {
		le_ns_t t = (le_ns_t)i * gap;
		unsigned k = le_link_dequeue(&l, t, out, 256);
		for (unsigned j = 0; j < k; j++) {
			pos[fk_idx(out[j].handle)] = next++;
			if (out[j].deadline < last)
				(*lost_order)++;
			else if (out[j].deadline - last < *min_dl_step && next > 1)
				*min_dl_step = out[j].deadline - last;
			last = out[j].deadline;
		}
		if (i < n)
			le_link_offer(&l, fk_new(&fk, 100), 100, t);
	}
	CHECK_EQ_U64(next, n);
	for (unsigned i = 0; i + 1 < n; i++)
		inv += pos[i + 1] < pos[i];
	le_link_free(&l);
	fk_fini(&fk);
	free(pos);
	return inv;
}

/* netem mode: frames i and i+1, arriving g apart, swap when their jitters
 * J_i - J_{i+1} > g. For netem's uniform, J is uniform on W = 2 sigma
 * integers, and the pairs with a - b > g number (W-g)(W-g-1)/2 of W^2:
 *     P = (W - g)(W - g - 1) / (2 W^2)
 * The m = n - 1 adjacent-pair indicators share draws with their
 * neighbours only, so Var(sum) <= m p(1-p) + 2(m-1) p(1-p) <= 3 m p(1-p)
 * (|cov| <= the product of the sds); the bound is 5 sqrt of that. */
static void netem_mode_reorders(void)
{
	const unsigned n = 200000;
	const le_ns_t sigma = 500000, g = 200000;
	double W = 2.0 * sigma, p = (W - g) * (W - g - 1) / (2 * W * W);
	le_ns_t step;
	unsigned disorder;
	unsigned inv = inversions("delay 10ms 500us", g, n, &step, &disorder);
	double bound = 5 * sqrt(3.0 * (n - 1) * p * (1 - p));

	CHECK(fabs(inv - (n - 1) * p) <= bound, "%u inversions, expected %.0f +- %.0f", inv, (n - 1) * p, bound);
	CHECK_EQ_U64(disorder, 0); /* frames still leave in deadline order */
	/* Beyond the jitter's reach (g >= W) nothing reorders. */
	inv = inversions("delay 10ms 100us", g, 20000, &step, &disorder);
	CHECK_EQ_U64(inv, 0);
}

/* noreorder: a frame never leaves before the one ahead of it. */
static void noreorder_mode(void)
{
	le_ns_t step;
	unsigned disorder;
	unsigned inv = inversions("delay 10ms 500us noreorder", 200000, 100000, &step, &disorder);

	CHECK_EQ_U64(inv, 0);
	CHECK_EQ_U64(disorder, 0);
	inv = inversions("delay 10ms 5ms distribution pareto noreorder limit 100000", 10000, 50000, &step, &disorder);
	CHECK_EQ_U64(inv, 0);
	CHECK_EQ_U64(disorder, 0);
}

/* Jitter correlation (netem's get_crandom on the jitter draw): consecutive
 * delays are positively correlated. */
static void correlated_jitter(void)
{
	struct le_link_config c;
	struct le_jitter_state js;
	char err[LE_ERR_MAX];
	double prev = 0, sxy = 0, sx = 0, sxx = 0;
	const int n = 100000;

	CHECK(le_config_parse("delay 100ms 10ms 75%", &c, err, sizeof(err)) == 0);
	CHECK(le_jitter_init(&js, &c, 3, 0, 0, err, sizeof(err)) == 0);
	for (int i = 0; i < n; i++) {
		double j = (double)le_jitter_delay(&js, &c) - 1e8;
		if (i)
			sxy += j * prev;
		sx += j, sxx += j * j;
		prev = j;
	}
	double m = sx / n, r = (sxy / (n - 1) - m * m) / (sxx / n - m * m);
	CHECK(r > 0.5, "lag-1 correlation %.3f", r);
	le_jitter_free(&js);
}

/* The jittered deadline, exactly, for a fixed seed: the link draws the
 * jitter stream of (seed, direction, class 0) once per frame and applies
 * netem's uniform formula mu - sigma + floor(u * 2 sigma / 2^64); checked
 * against a stream seeded here, and the first deadlines pinned as numbers
 * (a change of generator, stream identity or formula shows). */
static void exact_deadlines(void)
{
	struct le_link_config c;
	struct le_link l;
	struct fakes fk;
	struct le_rng r;
	struct le_frame out[64];
	char err[LE_ERR_MAX];
	le_ns_t dl[50] = { 0 };
	const le_ns_t mu = 10 * LE_NS_PER_MS, sigma = 4 * LE_NS_PER_MS;
	static const le_ns_t pinned[3] = { 8042505, 10964833, 6306454 };

	fk_init(&fk, 0);
	CHECK(le_config_parse("delay 10ms 4ms seed 42", &c, err, sizeof(err)) == 0, "%s", err);
	if (le_link_init_ops(&l, &c, LE_DIR_B2A, 0, 1, &fk.ops, err, sizeof(err)) < 0) {
		CHECK(0, "%s", err);
		return;
	}
	for (int i = 0; i < 50; i++)
		le_link_offer(&l, fk_new(&fk, 100), 100, (le_ns_t)i * 1000);
	for (unsigned n; (n = le_link_dequeue(&l, LE_NS_PER_S, out, 64)) > 0;)
		for (unsigned j = 0; j < n; j++)
			dl[fk_idx(out[j].handle)] = out[j].deadline;
	le_rng_seed(&r, 42, LE_DIR_B2A, LE_STREAM_JITTER);
	for (int i = 0; i < 50; i++) {
		uint64_t u = le_rng_u64(&r);
		le_ns_t want = (le_ns_t)i * 1000 + mu - sigma +
			       (le_ns_t)(((unsigned __int128)u * (2 * sigma)) >> 64);
		CHECK_EQ_U64(dl[i], want);
	}
	for (int i = 0; i < 3; i++)
		CHECK(dl[i] == pinned[i], "frame %d: %llu", i, (unsigned long long)dl[i]);
	le_link_free(&l);
	fk_fini(&fk);
}

/* le_jitter_delay draws the uniform jitter inline: the same delays, one
 * for one, as the general draw from a stream seeded alike, including the
 * clamp at 0 when the jitter exceeds the delay; a correlated or tabled
 * jitter takes the general path. */
static void inline_uniform_twin(void)
{
	static const char *const links[] = { "delay 1ms 100us", "delay 10us 30us", "delay 0 1ns",
					     "delay 10ms 4ms 25%", "delay 1ms 100us distribution normal" };

	for (size_t k = 0; k < sizeof(links) / sizeof(links[0]); k++) {
		struct le_link_config c;
		struct le_jitter_state a, b;
		char err[LE_ERR_MAX];
		uint64_t zeros = 0;

		CHECK(le_config_parse(links[k], &c, err, sizeof(err)) == 0, "%s", err);
		CHECK(le_jitter_init(&a, &c, 7, 1, 2, err, sizeof(err)) == 0, "%s", err);
		CHECK(le_jitter_init(&b, &c, 7, 1, 2, err, sizeof(err)) == 0, "%s", err);
		for (int i = 0; i < 20000; i++) {
			const le_ns_t x = le_jitter_delay(&a, &c), y = le_jitter_draw(&b, &c);

			if (x != y) {
				CHECK(0, "%s, draw %d: inline %llu, general %llu", links[k], i,
				      (unsigned long long)x, (unsigned long long)y);
				break;
			}
			zeros += x == 0;
		}
		if (k == 1) /* 10us +- 30us: a third of the draws fall below 0 */
			CHECK(zeros > 5000 && zeros < 8000, "%llu clamped", (unsigned long long)zeros);
		le_jitter_free(&a);
		le_jitter_free(&b);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1)
		dist_dir = argv[1];
	arithmetic();
	parser();
	generated_tables();
	shipped_files();
	sample_moments();
	netem_mode_reorders();
	noreorder_mode();
	correlated_jitter();
	exact_deadlines();
	inline_uniform_twin();
	return mt_summary();
}
