/* The link grammar: every word, every error naming its word, round trip. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "config.h"
#include "minitest.h"
#include "rate.h"

static char tmpdir[] = "/tmp/le_config_XXXXXX";
static char dist_path[300], trace_path[300], bad_trace[300], bad_dist[300];

static void setup_files(void)
{
	if (mkdtemp(tmpdir) == NULL) {
		CHECK(0, "mkdtemp");
		return;
	}
	snprintf(dist_path, sizeof(dist_path), "%s/my.dist", tmpdir);
	snprintf(trace_path, sizeof(trace_path), "%s/link.trace", tmpdir);
	snprintf(bad_trace, sizeof(bad_trace), "%s/bad.trace", tmpdir);
	snprintf(bad_dist, sizeof(bad_dist), "%s/bad.dist", tmpdir);
	mt_write_file(dist_path, "# a tiny table\n-8192 0 8192\n");
	mt_write_file(trace_path, "0\n1\n1\n3\n");
	mt_write_file(bad_trace, "1\n2\nx3\n");
	mt_write_file(bad_dist, "1 2\n3 40000\n");
}

static void defaults(void)
{
	struct le_link_config c, d;
	char err[LE_ERR_MAX] = "", buf[LE_CONFIG_TEXT_MAX];

	le_config_default(&d);
	CHECK_EQ_U64(d.delay, 0);
	CHECK_EQ_U64(d.limit, 1000);
	CHECK(d.loss.model == LE_LOSS_NONE);
	CHECK(!d.seed_set);
	CHECK_EQ_U64(d.codel.target, 5000000);
	CHECK_EQ_U64(d.codel.interval, 100000000);
	CHECK(!le_config_has_queue(&d) && !le_config_reorders(&d));

	static const char *const empty[] = { "", " ", " \t\n " };
	for (unsigned i = 0; i < 3; i++) {
		c.limit = 7;
		CHECK(le_config_parse(empty[i], &c, err, sizeof(err)) == 0, "%s", err);
		CHECK(le_config_equal(&c, &d));
	}
	CHECK(le_config_parse_words(0, NULL, &c, err, sizeof(err)) == 0);
	CHECK(le_config_equal(&c, &d));
	CHECK_EQ_U64(le_config_format(&d, buf, sizeof(buf)), 0);
	CHECK(strcmp(buf, "") == 0);
}

static struct le_link_config ok(const char *text)
{
	struct le_link_config c;
	char err[LE_ERR_MAX] = "";

	le_config_default(&c);
	CHECK(le_config_parse(text, &c, err, sizeof(err)) == 0, "'%s': %s", text, err);
	return c;
}

static void valid(void)
{
	struct le_link_config c;
	char text[600];

	c = ok("delay 10ms loss 0.1% limit 500 seed 42");
	CHECK_EQ_U64(c.delay, 10000000);
	CHECK(c.loss.model == LE_LOSS_RANDOM && c.loss.percent == 0.1);
	CHECK_EQ_U64(c.loss.p.threshold, le_prob_from_double(0.001).threshold);
	CHECK_EQ_U64(c.limit, 500);
	CHECK(c.seed_set && c.seed == 42);

	c = ok("\tseed 0\n loss  random 1   delay 1.5us ");
	CHECK_EQ_U64(c.delay, 1500);
	CHECK(c.loss.percent == 1.0 && c.loss.random_word);
	CHECK(c.seed_set && c.seed == 0);

	c = ok("loss 100%");
	CHECK(c.loss.p.always);
	c = ok("loss 0.0000001%");
	CHECK_EQ_U64(c.loss.p.threshold, 18446744074ULL); /* round(1e-9 * 2^64) */
	c = ok("delay 3600s limit 100000000 seed 18446744073709551615");
	CHECK_EQ_U64(c.limit, LE_MAX_LIMIT);
	CHECK_EQ_U64(c.seed, UINT64_MAX);

	/* jitter */
	c = ok("delay 10ms 2ms");
	CHECK_EQ_U64(c.jitter, 2000000);
	CHECK(c.dist == LE_DIST_UNIFORM && !c.dist_set && !c.jitter_corr_set);
	CHECK(le_config_reorders(&c));
	c = ok("delay 10ms 2ms 25% distribution normal noreorder");
	CHECK(c.jitter_corr_set && c.jitter_corr_percent == 25.0);
	CHECK_EQ_U64(c.jitter_corr.rho, le_prob_from_double(0.25).threshold);
	CHECK(c.dist == LE_DIST_NORMAL && c.noreorder && !le_config_reorders(&c));
	c = ok("delay 1ms 1ms distribution pareto");
	CHECK(c.dist == LE_DIST_PARETO);
	c = ok("delay 1ms 1ms distribution paretonormal");
	CHECK(c.dist == LE_DIST_PARETONORMAL);
	c = ok("delay 1ms 1ms distribution uniform");
	CHECK(c.dist == LE_DIST_UNIFORM && c.dist_set);
	snprintf(text, sizeof(text), "delay 1ms 100us distribution %s", dist_path);
	c = ok(text);
	CHECK(c.dist == LE_DIST_FILE && strcmp(c.dist_file, dist_path) == 0);

	/* loss models, with netem's defaults */
	c = ok("loss 1% 30%");
	CHECK(c.loss.corr_set && c.loss.corr_percent == 30.0);
	c = ok("loss gemodel 1%");
	CHECK(c.loss.model == LE_LOSS_GEMODEL && c.loss.nparam == 1);
	CHECK(c.loss.param[1] == 99.0 && c.loss.param[2] == 100.0 && c.loss.param[3] == 0.0);
	CHECK(c.loss.prob[2].always);
	c = ok("loss gemodel 1% 10% 70% 0.1%");
	CHECK(c.loss.nparam == 4 && c.loss.param[1] == 10.0 && c.loss.param[2] == 70.0 && c.loss.param[3] == 0.1);
	c = ok("loss state 2%");
	CHECK(c.loss.model == LE_LOSS_STATE && c.loss.param[1] == 98.0 && c.loss.param[2] == 0.0 &&
	      c.loss.param[3] == 100.0 && c.loss.param[4] == 0.0);
	c = ok("loss state 1% 30% 5% 40% 0.5%");
	CHECK(c.loss.nparam == 5 && c.loss.param[4] == 0.5);
	CHECK_EQ_U64(c.loss.cum[0].threshold, le_prob_from_double(0.015).threshold);
	CHECK_EQ_U64(c.loss.cum[1].threshold, le_prob_from_double(0.35).threshold);
	c = ok("loss 1% ecn");
	CHECK(c.ecn);

	/* per-frame */
	c = ok("delay 10ms duplicate 1% 5% corrupt 0.1% reorder 25% 50% gap 5");
	CHECK(c.duplicate_set && c.duplicate.percent == 1.0 && c.duplicate.corr_percent == 5.0);
	CHECK(c.corrupt_set && !c.corrupt.corr_set);
	CHECK(c.reorder_set && c.gap == 5 && c.gap_set);
	c = ok("delay 10ms reorder 25%");
	CHECK(c.gap == 1 && !c.gap_set); /* netem: gap 1 when not given */

	/* rate, units as tc */
	static const struct {
		const char *word;
		uint64_t bps;
	} rates[] = {
		{ "100", 100 }, { "100bit", 100 }, { "1kbit", 1000 }, { "1.5mbit", 1500000 },
		{ "10gbit", 10000000000ULL }, { "1tbit", 1000000000000ULL }, { "1kibit", 1024 },
		{ "1Mibit", 1048576 }, { "1gibit", 1073741824ULL }, { "1bps", 8 }, { "1kbps", 8000 },
		{ "1mbps", 8000000 }, { "1MBps", 8000000 }, { "1gbps", 8000000000ULL }, { "2kibps", 16384 },
		{ "45Mbit", 45000000 }, { "1.25kbit", 1250 },
	};
	for (unsigned i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		snprintf(text, sizeof(text), "rate %s", rates[i].word);
		c = ok(text);
		CHECK(c.rate.bps == rates[i].bps, "%s: %llu", rates[i].word, (unsigned long long)c.rate.bps);
	}
	c = ok("rate 10mbit -4 48 5");
	CHECK(c.rate.packet_overhead == -4 && c.rate.cell_size == 48 && c.rate.cell_overhead == 5 &&
	      c.rate.nparam == 3);
	CHECK(le_config_has_queue(&c));

	/* slot */
	c = ok("slot 1ms");
	CHECK(c.slot.enabled && c.slot.min == 1000000 && c.slot.max == 1000000 && !c.slot.max_set);
	c = ok("slot 1ms 5ms packets 10 bytes 64kb");
	CHECK(c.slot.max == 5000000 && c.slot.packets == 10 && c.slot.bytes == 65536);
	c = ok("slot distribution normal 10ms 2ms bytes 3000 packets 4");
	CHECK(c.slot.use_dist && c.slot.dist == LE_DIST_NORMAL && c.slot.dist_delay == 10000000 &&
	      c.slot.dist_jitter == 2000000 && c.slot.packets == 4 && c.slot.bytes == 3000);
	snprintf(text, sizeof(text), "slot distribution %s 1ms 1ms", dist_path);
	c = ok(text);
	CHECK(c.slot.dist == LE_DIST_FILE);

	/* trace */
	snprintf(text, sizeof(text), "trace %s", trace_path);
	c = ok(text);
	CHECK(c.trace.enabled && !c.trace.us && !c.trace.once && strcmp(c.trace.file, trace_path) == 0);
	snprintf(text, sizeof(text), "trace-us %s once delay 5ms", trace_path);
	c = ok(text);
	CHECK(c.trace.us && c.trace.once && c.delay == 5000000);

	/* queue */
	c = ok("rate 1mbit limit-bytes 64kb limit-queue 100 drop-head");
	CHECK(c.limit_bytes == 65536 && c.limit_queue == 100 && c.drop_head && c.drop_set);
	c = ok("rate 1mbit limit-bytes 1500 drop-tail");
	CHECK(c.limit_bytes == 1500 && !c.drop_head && c.drop_set);
	c = ok("rate 1mbit limit-bytes 1mbit");
	CHECK_EQ_U64(c.limit_bytes, 131072);
	c = ok("rate 1mbit codel");
	CHECK(c.codel.enabled && c.codel.target == 5000000 && c.codel.interval == 100000000 && !c.codel.ecn);
	c = ok("rate 1mbit codel interval 50ms target 2ms ecn loss 1% ecn");
	CHECK(c.codel.interval == 50000000 && c.codel.target == 2000000 && c.codel.ecn && c.ecn);
	c = ok("loss 1% codel ecn ecn slot 1ms");
	CHECK(c.codel.ecn && c.ecn);

	const char *const words[] = { "delay", "5ms", "loss", "2%" };
	CHECK(le_config_parse_words(4, words, &c, NULL, 0) == 0);
	CHECK_EQ_U64(c.delay, 5000000);
}

static void errors(void)
{
	char t1[400], t2[400], t3[400], t4[400];
	snprintf(t1, sizeof(t1), "trace %s", bad_trace);
	snprintf(t2, sizeof(t2), "delay 1ms 1ms distribution %s", bad_dist);
	snprintf(t3, sizeof(t3), "trace %s/missing.trace", tmpdir);
	snprintf(t4, sizeof(t4), "trace-us %s rate 1mbit", trace_path);
	const struct {
		const char *text;
		const char *want[3]; /* fragments the message must contain */
	} cases[] = {
		{ "dealy 10ms", { "unknown word 'dealy'", "expected delay" } },
		{ "delay", { "delay", "missing TIME after 'delay'" } },
		{ "delay loss 1%", { "delay", "missing TIME" } },
		{ "delay 10xs", { "delay", "'10xs' is not a time", "units: ns, us, ms, s" } },
		{ "delay 5000s", { "delay", "'5000s' is out of range", "max 3600s" } },
		{ "delay 0.5ns", { "delay", "'0.5ns'", "finer than 1 ns" } },
		{ "delay 10ms bogus", { "delay", "JITTER", "'bogus' is not a time" } },
		{ "delay 10ms 0", { "delay", "JITTER must be above 0" } },
		{ "delay 10ms 1ms 200%", { "delay", "CORRELATION", "out of range" } },
		{ "delay 10ms 1ms 25% x", { "unknown word 'x'" } },
		{ "delay 1ms delay 2ms", { "delay", "twice" } },
		{ "delay 10ms distribution normal", { "distribution", "needs a jitter" } },
		{ "delay 10ms 1ms distribution nromal", { "distribution", "'nromal'", "neither uniform" } },
		{ "delay 10ms 1ms distribution", { "distribution", "missing NAME or FILE" } },
		{ t2, { "distribution", "bad.dist:2", "'40000' is out of range (-32768 .. 32767)" } },
		{ "delay 1ms 1ms distribution /nonexistent/x.dist", { "distribution", "/nonexistent/x.dist", "cannot open" } },
		{ "noreorder", { "noreorder", "needs a jitter" } },
		{ "delay 10ms noreorder", { "noreorder", "needs a jitter" } },
		{ "loss", { "loss", "missing PERCENT after 'loss'" } },
		{ "loss random", { "loss", "missing PERCENT after 'loss random'" } },
		{ "loss 150%", { "loss", "'150%' is out of range (0% .. 100%)" } },
		{ "loss -1%", { "loss", "'-1%'", "out of range" } },
		{ "loss 12x%", { "loss", "'12x%' is not a percentage" } },
		{ "loss nan", { "loss", "'nan' is not a percentage" } },
		{ "loss 1% 25% 3%", { "unknown word '3%'" } },
		{ "loss 1% xx", { "loss", "CORRELATION", "'xx' is not a percentage" } },
		{ "loss gemodel", { "loss gemodel", "missing P" } },
		{ "loss gemodel 1% 10% 200%", { "loss gemodel", "1-H", "out of range" } },
		{ "loss gemodel 1% 1% 1% 1% 1%", { "unknown word '1%'" } },
		{ "loss state", { "loss state", "missing P13" } },
		{ "loss state 60% 30% 5% 40% 50%", { "loss state", "P13 + P14 exceed 100%" } },
		{ "loss state 1% 80% 30%", { "loss state", "P31 + P32 exceed 100%" } },
		{ "loss 1% loss 2%", { "loss", "twice" } },
		{ "ecn", { "ecn", "needs a loss model" } },
		{ "delay 1ms ecn", { "ecn", "needs a loss model" } },
		{ "loss 1% ecn ecn", { "ecn", "twice" } },
		{ "duplicate", { "duplicate", "missing PERCENT" } },
		{ "duplicate 101%", { "duplicate", "out of range" } },
		{ "corrupt 1% x", { "corrupt", "CORRELATION", "'x' is not a percentage" } },
		{ "reorder 25%", { "reorder", "needs a delay", "reordering not possible" } },
		{ "delay 1ms gap 5", { "gap", "needs reorder" } },
		{ "delay 1ms reorder 1% gap 0", { "gap", "'0' is out of range" } },
		{ "delay 1ms 1ms noreorder reorder 1%", { "reorder and noreorder contradict" } },
		{ "rate", { "rate", "missing RATE" } },
		{ "rate 10mbps2", { "rate", "'10mbps2' is not a rate" } },
		{ "rate 0bit", { "rate", "out of range" } },
		{ "rate 0.5bit", { "rate", "'0.5bit' is not a whole number of bit/s" } },
		{ "rate 1000tbit", { "rate", "out of range", "100tbit" } },
		{ "rate 10%", { "rate", "'10%' is not a rate" } },
		{ "rate 1mbit x", { "rate", "PACKETOVERHEAD", "'x' is not an integer" } },
		{ "rate 1mbit 1 -48", { "rate", "CELLSIZE", "'-48'" } },
		{ "rate 1mbit 0 0 5", { "rate", "CELLOVERHEAD needs a CELLSIZE" } },
		{ "rate 1mbit 99999999999", { "rate", "PACKETOVERHEAD", "out of range" } },
		{ "slot", { "slot", "missing MIN" } },
		{ "slot 5ms 1ms", { "slot", "MAX '1ms' is below MIN" } },
		{ "slot 0", { "slot", "MIN and MAX are 0" } },
		{ "slot 1ms packets", { "slot", "missing N after 'packets'" } },
		{ "slot 1ms packets -1", { "slot packets", "'-1'" } },
		{ "slot 1ms bytes 1x", { "slot bytes", "'1x' is not a size" } },
		{ "slot 1ms packets 1 packets 2", { "slot", "packets given twice" } },
		{ "slot distribution normal 1ms", { "slot", "missing JITTER" } },
		{ "slot distribution normal 1ms 0", { "slot", "JITTER must be above 0" } },
		{ "slot distribution bogus 1ms 1ms", { "slot distribution", "'bogus'" } },
		{ "trace", { "trace", "missing FILE" } },
		{ t1, { "trace", "bad.trace:3", "'x3' is not a whole number of milliseconds" } },
		{ t3, { "trace", "missing.trace", "cannot open" } },
		{ t4, { "trace and rate both set the link's serializer" } },
		{ "limit", { "limit", "missing PACKETS" } },
		{ "limit 0", { "limit", "'0' is out of range (1 .. 100000000)" } },
		{ "limit 100000001", { "limit", "'100000001' is out of range" } },
		{ "limit 1k", { "limit", "'1k'" } },
		{ "limit -5", { "limit", "'-5'" } },
		{ "limit 5 limit 5", { "limit", "twice" } },
		{ "limit-bytes 64kb", { "limit-bytes", "needs a queue", "rate, trace or slot" } },
		{ "rate 1mbit limit-bytes 0", { "limit-bytes", "out of range" } },
		{ "rate 1mbit limit-bytes 1.5b", { "limit-bytes", "not a whole number of bytes" } },
		{ "rate 1mbit limit-bytes 65gb", { "limit-bytes", "out of range" } },
		{ "limit-queue 10", { "limit-queue", "needs a queue" } },
		{ "drop-head", { "drop-head", "needs a queue" } },
		{ "rate 1mbit drop-head drop-tail", { "drop-head and drop-tail contradict" } },
		{ "codel", { "codel", "needs a queue" } },
		{ "rate 1mbit codel target", { "codel", "missing TIME after 'target'" } },
		{ "rate 1mbit codel target 0", { "codel", "target must be above 0" } },
		{ "rate 1mbit codel interval 1ms interval 2ms", { "codel", "interval given twice" } },
		{ "rate 1mbit codel target 1x", { "codel", "'1x' is not a time" } },
		{ "seed", { "seed", "missing N" } },
		{ "seed -1", { "seed", "'-1'" } },
		{ "seed 18446744073709551616", { "seed", "out of range" } },
		{ "seed 1 seed 1", { "seed", "twice" } },
		{ "10ms", { "unknown word '10ms'" } },
		{ "Delay 10ms", { "unknown word 'Delay'" } },
		{ "random 1%", { "unknown word 'random'" } },
		{ "latency 10ms", { "unknown word 'latency'" } },
		{ "once", { "unknown word 'once'" } },
		/* A unit parted from its number: not a JITTER or an overhead
		 * that happens to be misspelt, but the number's unit. */
		{ "delay 10 ms", { "delay", "'ms' is a unit on its own", "'10ms'" } },
		{ "delay 10ms 2 ms", { "delay", "'ms' is a unit on its own", "'2ms'" } },
		{ "rate 10 mbit", { "rate", "'mbit' is a unit on its own", "'10mbit'" } },
		{ "rate 1.5 Gbit", { "rate", "'Gbit' is a unit on its own", "'1.5Gbit'" } },
		{ "slot 1ms 5 ms", { "slot", "'ms' is a unit on its own", "'5ms'" } },
		/* A class rule without its ';': not a misspelt 'loss'. */
		{ "class ctl match proto tcp : delay 1ms", { "class", "after a ';'", "LINK ; class NAME" } },
		{ "delay 5ms class ctl match proto tcp :", { "class", "after a ';'" } },
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct le_link_config c;
		char err[LE_ERR_MAX] = "";
		int rc = le_config_parse(cases[i].text, &c, err, sizeof(err));

		CHECK(rc == -1, "'%s' was accepted", cases[i].text);
		for (unsigned k = 0; k < 3 && cases[i].want[k]; k++)
			CHECK(strstr(err, cases[i].want[k]) != NULL, "'%s': got \"%s\", want \"%s\"",
			      cases[i].text, err, cases[i].want[k]);
	}

	/* A NULL or tiny error buffer must not be overrun. */
	struct le_link_config c;
	char tiny[8];
	memset(tiny, 'x', sizeof(tiny));
	CHECK(le_config_parse("dealy 1", &c, NULL, 0) == -1);
	CHECK(le_config_parse("dealy 1", &c, tiny, 4) == -1);
	CHECK(tiny[3] == '\0' && tiny[4] == 'x');
}

static uint64_t xs = 0x9E3779B97F4A7C15ULL;
static uint64_t next(void)
{
	xs ^= xs << 13, xs ^= xs >> 7, xs ^= xs << 17; /* xorshift64: test data only */
	return xs;
}

static const char *pick(const char *const *a, unsigned n)
{
	return a[next() % n];
}

/* A random valid configuration text, word by word. */
static void random_text(char *t, size_t n)
{
	static const char *const times[] = { "0", "1ns", "999ns", "1us", "1.5us", "10ms", "123456789ns", "3600s", "250" };
	static const char *const jit[] = { "1ns", "7us", "2ms", "0.5ms", "1s" };
	static const char *const pcts[] = { "0%", "0.0000001%", "0.001%", "0.1%", "1%", "2.5%", "33.3%", "100%", "1e-5%", "5" };
	static const char *const dists[] = { "uniform", "normal", "pareto", "paretonormal" };
	static const char *const rts[] = { "1bit", "9600", "56kbit", "1.5mbit", "45mbit", "1gbit", "10gbit", "1kibit", "3mbps" };
	static const char *const sizes[] = { "1b", "1500", "64kb", "1mb", "2kbit", "3m" };
	size_t len = 0;
	int jitter = 0, queue = 0, loss = 0, delay = 0;
#define ADD(...) len += (size_t)snprintf(t + len, n - len, __VA_ARGS__)
	t[0] = '\0';
	if (next() & 1) {
		delay = 1;
		ADD(" delay %s", pick(times + 1, 8));
		if (next() & 1) {
			jitter = 1;
			ADD(" %s", pick(jit, 5));
			if (next() & 1)
				ADD(" %s", pick(pcts, 10));
			if (next() & 1)
				ADD(" distribution %s", next() % 5 ? pick(dists, 4) : dist_path);
		}
	}
	switch (next() % 4) {
	case 1:
		ADD(" loss %s%s", next() & 1 ? "random " : "", pick(pcts, 10));
		if (next() & 1)
			ADD(" %s", pick(pcts, 10));
		loss = 1;
		break;
	case 2: {
		unsigned k = 1 + next() % 4;
		ADD(" loss gemodel");
		for (unsigned i = 0; i < k; i++)
			ADD(" %s", pick(pcts, 10));
		loss = 1;
		break;
	}
	case 3:
		ADD(" loss state 1%% 30%% 5%% 40%% 0.5%%");
		loss = 1;
		break;
	}
	if (loss && next() % 3 == 0)
		ADD(" ecn");
	if (next() % 3 == 0)
		ADD(" duplicate %s%s", pick(pcts, 10), next() & 1 ? " 10%" : "");
	if (next() % 3 == 0)
		ADD(" corrupt %s%s", pick(pcts, 10), next() & 1 ? " 0.5%" : "");
	if (delay && !(jitter && next() % 2 == 0) && next() % 3 == 0) {
		ADD(" reorder %s%s", pick(pcts, 10), next() & 1 ? " 3%" : "");
		if (next() & 1)
			ADD(" gap %u", 1 + (unsigned)(next() % 100));
	} else if (jitter && next() % 3 == 0) {
		ADD(" noreorder");
	}
	switch (next() % 5) {
	case 1:
		ADD(" rate %s", pick(rts, 9));
		if (next() & 1) {
			ADD(" %d", (int)(next() % 100) - 50);
			if (next() & 1)
				ADD(" %u %d", (unsigned)(1 + next() % 100), (int)(next() % 20) - 10);
		}
		queue = 1;
		if (next() & 1) {
			if (next() & 1)
				ADD(" slot 1ms%s", next() & 1 ? " 2ms" : "");
			else
				ADD(" slot distribution %s 1ms 100us", pick(dists, 4));
			if (next() & 1)
				ADD(" packets %u", (unsigned)(next() % 50));
			if (next() & 1)
				ADD(" bytes %s", pick(sizes, 6));
		}
		break;
	case 2:
		ADD(" %s %s%s", next() & 1 ? "trace" : "trace-us", trace_path, next() & 1 ? " once" : "");
		queue = 1;
		break;
	case 3:
		ADD(" slot %s 5ms", pick(times + 1, 4));
		queue = 1;
		break;
	}
	if (next() & 1)
		ADD(" limit %u", 1 + (unsigned)(next() % LE_MAX_LIMIT));
	if (queue) {
		if (next() & 1)
			ADD(" limit-bytes %s", pick(sizes, 6));
		if (next() & 1)
			ADD(" limit-queue %u", 1 + (unsigned)(next() % 1000));
		if (next() % 3 == 0)
			ADD(" %s", next() & 1 ? "drop-head" : "drop-tail");
		if (next() & 1) {
			ADD(" codel");
			if (next() & 1)
				ADD(" target %s", pick(jit, 5));
			if (next() & 1)
				ADD(" interval %s", pick(jit, 5));
			if (next() & 1)
				ADD(" ecn");
		}
	}
	if (next() & 1)
		ADD(" seed %llu", (unsigned long long)(next() & 1 ? next() : next() % 3));
#undef ADD
}

static void round_trip(void)
{
	unsigned failures = 0, n = 0;
	char text[1500], buf[LE_CONFIG_TEXT_MAX], buf2[LE_CONFIG_TEXT_MAX], err[LE_ERR_MAX];

	for (int i = 0; i < 5000; i++) {
		struct le_link_config c, back;

		random_text(text, sizeof(text));
		if (le_config_parse(text, &c, err, sizeof(err)) != 0) {
			if (failures++ < 5)
				CHECK(0, "'%s' did not parse: %s", text, err);
			continue;
		}
		size_t len = le_config_format(&c, buf, sizeof(buf));
		n++;
		if (len != strlen(buf) || le_config_parse(buf, &back, err, sizeof(err)) != 0 ||
		    !le_config_equal(&c, &back)) {
			if (failures++ < 5)
				CHECK(0, "round trip of '%s' -> '%s' failed: %s", text, buf, err);
			continue;
		}
		le_config_format(&back, buf2, sizeof(buf2));
		if (strcmp(buf, buf2) != 0 && failures++ < 5)
			CHECK(0, "format not stable: '%s' then '%s'", buf, buf2);
	}
	CHECK_EQ_U64(failures, 0);
	CHECK(n > 4900);

	/* Formatting is readable, in a fixed order, defaults omitted. */
	struct le_link_config c;
	static const struct {
		const char *in, *out;
	} plain[] = {
		{ "seed 42 limit 500 loss random 0.1% delay 10ms", "delay 10ms loss random 0.1% limit 500 seed 42" },
		{ "loss 20%", "loss 20%" }, { "loss 0.0000001%", "loss 0.0000001%" },
		{ "loss 1e-5%", "loss 0.00001%" }, { "loss 1 25", "loss 1% 25%" },
		{ "noreorder delay 10ms 2ms 25% distribution normal", "delay 10ms 2ms 25% distribution normal noreorder" },
		{ "rate 45000kbit limit 1000", "rate 45mbit" }, { "rate 1536bit", "rate 1536bit" },
		{ "rate 1kibit", "rate 1024bit" }, { "rate 1mbps", "rate 8mbit" },
		{ "slot 1ms 1ms bytes 65536", "slot 1ms 1ms bytes 64kb" },
		{ "rate 1gbit codel ecn target 5ms", "rate 1gbit codel target 5ms ecn" },
		{ "delay 5ms reorder 10% gap 3", "delay 5ms reorder 10% gap 3" },
		{ "loss gemodel 1% 10%", "loss gemodel 1% 10%" },
	};
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		CHECK(le_config_parse(plain[i].in, &c, err, sizeof(err)) == 0, "%s: %s", plain[i].in, err);
		le_config_format(&c, buf, sizeof(buf));
		CHECK(strcmp(buf, plain[i].out) == 0, "'%s' formats as '%s'", plain[i].in, buf);
	}

	/* Truncation keeps a NUL and reports what was written. */
	CHECK(le_config_parse("delay 10ms loss 0.1%", &c, err, sizeof(err)) == 0);
	CHECK_EQ_U64(le_config_format(&c, buf, 6), 5);
	CHECK(strcmp(buf, "delay") == 0, "got '%s'", buf);
}

/* netem's packet_time_ns arithmetic, worked by hand. */
static void rate_arithmetic(void)
{
	struct le_link_config c;
	char err[LE_ERR_MAX];

	CHECK(le_config_parse("rate 12mbit", &c, err, sizeof(err)) == 0);
	CHECK_EQ_U64(le_rate_packet_time(&c.rate, 1500), 1000000);  /* 12000 bit / 12 Mbit/s */
	CHECK_EQ_U64(le_rate_packet_time(&c.rate, 1), 666);         /* 8000/12 = 666.67 -> 666 */
	CHECK(le_config_parse("rate 1mbit 20 48 5", &c, err, sizeof(err)) == 0);
	/* 100 + 20 = 120 B -> 3 cells of 48 -> 3 x 53 = 159 B = 1272 bit = 1.272 ms */
	CHECK_EQ_U64(le_rate_packet_time(&c.rate, 100), 1272000);
	/* 124 + 20 = 144 = exactly 3 cells */
	CHECK_EQ_U64(le_rate_packet_time(&c.rate, 124), 1272000);
	CHECK_EQ_U64(le_rate_packet_time(&c.rate, 125), 1696000);   /* 4 cells */
	CHECK(le_config_parse("rate 1mbit -200", &c, err, sizeof(err)) == 0);
	CHECK_EQ_U64(le_rate_packet_time(&c.rate, 100), 0);         /* negative counts as 0 */
	CHECK(le_config_parse("rate 1bit", &c, err, sizeof(err)) == 0);
	CHECK_EQ_U64(le_rate_packet_time(&c.rate, 1500), 12000ULL * LE_NS_PER_S);
	CHECK(le_config_parse("rate 100tbit", &c, err, sizeof(err)) == 0);
	CHECK_EQ_U64(le_rate_packet_time(&c.rate, 64), 0);          /* 512 bit / 1e14 = 5.12 ps */
	CHECK(le_config_parse("rate 7mbit", &c, err, sizeof(err)) == 0);
	CHECK_EQ_U64(le_rate_packet_time(&c.rate, 1500), 1714285);  /* 12e12 / 7e6 = 1714285.7 */
}

int main(void)
{
	setup_files();
	defaults();
	valid();
	errors();
	round_trip();
	rate_arithmetic();
	unlink(dist_path);
	unlink(trace_path);
	unlink(bad_trace);
	unlink(bad_dist);
	rmdir(tmpdir);
	return mt_summary();
}
