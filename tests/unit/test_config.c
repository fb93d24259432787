/* The link grammar: errors that name the word, valid texts, round trip. */
#include "config.h"
#include "minitest.h"

static int cfg_equal(const struct le_link_config *a, const struct le_link_config *b)
{
	return a->delay == b->delay && a->loss.model == b->loss.model &&
	       (a->loss.model == LE_LOSS_NONE ||
		(a->loss.percent == b->loss.percent && a->loss.p.threshold == b->loss.p.threshold &&
		 a->loss.p.always == b->loss.p.always)) &&
	       a->limit == b->limit && a->seed_set == b->seed_set &&
	       (!a->seed_set || a->seed == b->seed);
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

	static const char *const empty[] = { "", " ", " \t\n " };
	for (unsigned i = 0; i < 3; i++) {
		c.limit = 7;
		CHECK(le_config_parse(empty[i], &c, err, sizeof(err)) == 0, "%s", err);
		CHECK(cfg_equal(&c, &d));
	}
	CHECK(le_config_parse_words(0, NULL, &c, err, sizeof(err)) == 0);
	CHECK(cfg_equal(&c, &d));
	CHECK_EQ_U64(le_config_format(&d, buf, sizeof(buf)), 0);
	CHECK(strcmp(buf, "") == 0);
}

static void valid(void)
{
	struct le_link_config c;
	char err[LE_ERR_MAX] = "";

	CHECK(le_config_parse("delay 10ms loss 0.1% limit 500 seed 42", &c, err, sizeof(err)) == 0,
	      "%s", err);
	CHECK_EQ_U64(c.delay, 10000000);
	CHECK(c.loss.model == LE_LOSS_RANDOM);
	CHECK(c.loss.percent == 0.1);
	CHECK_EQ_U64(c.loss.p.threshold, le_prob_from_double(0.001).threshold);
	CHECK_EQ_U64(c.limit, 500);
	CHECK(c.seed_set);
	CHECK_EQ_U64(c.seed, 42);

	/* Any order, any whitespace, netem's optional "random". */
	CHECK(le_config_parse("\tseed 0\n loss  random 1   delay 1.5us ", &c, err, sizeof(err)) == 0,
	      "%s", err);
	CHECK_EQ_U64(c.delay, 1500);
	CHECK(c.loss.percent == 1.0);
	CHECK(c.seed_set);
	CHECK_EQ_U64(c.seed, 0);
	CHECK_EQ_U64(c.limit, LE_DEFAULT_LIMIT);

	CHECK(le_config_parse("loss 100%", &c, err, sizeof(err)) == 0);
	CHECK(c.loss.p.always);
	CHECK(le_config_parse("loss 0%", &c, err, sizeof(err)) == 0);
	CHECK(c.loss.model == LE_LOSS_RANDOM && c.loss.p.threshold == 0 && !c.loss.p.always);
	CHECK(le_config_parse("loss 0.0000001%", &c, err, sizeof(err)) == 0);
	CHECK_EQ_U64(c.loss.p.threshold, 18446744074ULL); /* round(1e-9 * 2^64) */
	CHECK(le_config_parse("delay 3600s limit 100000000 seed 18446744073709551615", &c, err,
			      sizeof(err)) == 0, "%s", err);
	CHECK_EQ_U64(c.delay, 3600 * LE_NS_PER_S);
	CHECK_EQ_U64(c.limit, LE_MAX_LIMIT);
	CHECK_EQ_U64(c.seed, UINT64_MAX);
	CHECK(le_config_parse("limit 1", &c, err, sizeof(err)) == 0);
	CHECK_EQ_U64(c.limit, 1);

	const char *const words[] = { "delay", "5ms", "loss", "2%" };
	CHECK(le_config_parse_words(4, words, &c, err, sizeof(err)) == 0, "%s", err);
	CHECK_EQ_U64(c.delay, 5000000);
	CHECK(c.loss.percent == 2.0);
}

static void errors(void)
{
	static const struct {
		const char *text;
		const char *want[3]; /* fragments the message must contain */
	} cases[] = {
		{ "dealy 10ms", { "unknown word 'dealy'", "expected delay, loss, limit or seed" } },
		{ "delay", { "delay", "missing TIME after 'delay'" } },
		{ "delay loss 1%", { "delay", "missing TIME" } },
		{ "delay 10xs", { "delay", "'10xs' is not a time", "units: ns, us, ms, s" } },
		{ "delay 5000s", { "delay", "'5000s' is out of range", "max 3600s" } },
		{ "delay 0.5ns", { "delay", "'0.5ns'", "finer than 1 ns" } },
		{ "delay 10ms 1ms", { "delay", "jitter is not supported", "'1ms'" } },
		{ "delay 10ms 1ms 25%", { "delay", "jitter is not supported", "'1ms'" } },
		{ "delay 10ms bogus", { "unknown word 'bogus'" } },
		{ "delay 1ms delay 2ms", { "delay", "twice" } },
		{ "loss", { "loss", "missing PERCENT after 'loss'" } },
		{ "loss random", { "loss", "missing PERCENT after 'loss random'" } },
		{ "loss 150%", { "loss", "'150%' is out of range (0% .. 100%)" } },
		{ "loss -1%", { "loss", "'-1%'", "out of range" } },
		{ "loss 12x%", { "loss", "'12x%' is not a percentage" } },
		{ "loss nan", { "loss", "'nan' is not a percentage" } },
		{ "loss gemodel 1% 10%", { "loss", "'gemodel' is not supported in this version" } },
		{ "loss state 1%", { "loss", "'state' is not supported in this version" } },
		{ "loss 1% 25%", { "loss", "correlation is not supported", "'25%'" } },
		{ "loss 1% loss 2%", { "loss", "twice" } },
		{ "limit", { "limit", "missing PACKETS" } },
		{ "limit 0", { "limit", "'0' is out of range (1 .. 100000000)" } },
		{ "limit 100000001", { "limit", "'100000001' is out of range" } },
		{ "limit 1k", { "limit", "'1k'" } },
		{ "limit -5", { "limit", "'-5'" } },
		{ "limit 5 limit 5", { "limit", "twice" } },
		{ "seed", { "seed", "missing N" } },
		{ "seed -1", { "seed", "'-1'" } },
		{ "seed 18446744073709551616", { "seed", "out of range" } },
		{ "seed 1 seed 1", { "seed", "twice" } },
		{ "rate 1mbit", { "'rate' is not supported in this version" } },
		{ "delay 1ms duplicate 1%", { "'duplicate' is not supported" } },
		{ "10ms", { "unknown word '10ms'" } },
		{ "Delay 10ms", { "unknown word 'Delay'" } },
		{ "random 1%", { "unknown word 'random'" } },
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

static void round_trip(void)
{
	static const le_ns_t delays[] = { 0, 1, 999, 1000, 1500, 10000000, 123456789,
					  LE_MAX_DELAY_NS };
	static const double percents[] = { 0, 1e-7, 0.0000001, 0.001, 0.1, 1, 2.5, 33.333333333333336,
					   99.99999999999999, 100 };
	unsigned failures = 0, n = 0;
	char buf[LE_CONFIG_TEXT_MAX], err[LE_ERR_MAX];

	for (int i = 0; i < 5000; i++) {
		struct le_link_config c, back;

		le_config_default(&c);
		uint64_t r = next();
		c.delay = r & 1 ? delays[next() % 8] : next() % (LE_MAX_DELAY_NS + 1);
		if (r & 2) {
			c.loss.model = LE_LOSS_RANDOM;
			/* Fixed table or an arbitrary double in [0, 100]. */
			c.loss.percent = r & 4 ? percents[next() % 10]
					       : (double)(next() >> 11) * 0x1p-53 * 100.0;
			c.loss.p = le_prob_from_double(c.loss.percent / 100.0);
		}
		if (r & 8)
			c.limit = 1 + (uint32_t)(next() % LE_MAX_LIMIT);
		if (r & 16) {
			c.seed_set = 1;
			c.seed = r & 32 ? next() : next() % 3;
		}
		size_t len = le_config_format(&c, buf, sizeof(buf));
		n++;
		if (len != strlen(buf) || le_config_parse(buf, &back, err, sizeof(err)) != 0 ||
		    !cfg_equal(&c, &back)) {
			if (failures++ < 5)
				CHECK(0, "round trip of '%s' failed: %s", buf, err);
		}
	}
	CHECK_EQ_U64(failures, 0);
	CHECK_EQ_U64(n, 5000);

	/* Formatting is readable, not just parseable. */
	struct le_link_config c;
	CHECK(le_config_parse("seed 42 limit 500 loss random 0.1% delay 10ms", &c, err, sizeof(err)) == 0);
	le_config_format(&c, buf, sizeof(buf));
	CHECK(strcmp(buf, "delay 10ms loss 0.1% limit 500 seed 42") == 0, "got '%s'", buf);

	/* Percentages read as written: plain decimals, no exponent form. */
	static const struct { const char *in, *out; } plain[] = {
		{"loss 20%", "loss 20%"}, {"loss 100%", "loss 100%"},
		{"loss 0.0000001%", "loss 0.0000001%"}, {"loss 1e-5%", "loss 0.00001%"},
		{"loss 33.3%", "loss 33.3%"},
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

int main(void)
{
	defaults();
	valid();
	errors();
	round_trip();
	return mt_summary();
}
