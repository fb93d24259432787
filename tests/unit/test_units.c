/* Number parsing of the link grammar: exact times, tc's units, percent. */
#include <math.h>

#include "minitest.h"
#include "units.h"

#define MAX LE_NS_PER_S * 3600

static void valid_times(void)
{
	static const struct {
		const char *s;
		le_ns_t ns;
	} cases[] = {
		{ "0", 0 },
		{ "0ns", 0 },
		{ "1ns", 1 },
		{ "250ns", 250 },
		{ "1.5us", 1500 },
		{ "1.5ms", 1500000 },
		{ "100", 100000 },          /* no unit = microseconds, as tc */
		{ "1.5", 1500 },
		{ "2s", 2000000000ULL },
		{ "10ms", 10000000 },
		{ "0.000000001s", 1 },
		{ "1.000000000000000000000s", 1000000000ULL }, /* trailing zeros are harmless */
		{ "0.001ms", 1000 },
		{ "0.000001ms", 1 },
		{ ".5ms", 500000 },
		{ "7.", 7000 },
		{ "007ms", 7000000 },
		{ "3nsec", 3 }, { "3nsecs", 3 },
		{ "3usec", 3000 }, { "3usecs", 3000 },
		{ "3msec", 3000000 }, { "3msecs", 3000000 },
		{ "3sec", 3000000000ULL }, { "3secs", 3000000000ULL },
		{ "3MS", 3000000 },         /* tc matches units case-insensitively */
		{ "3600s", 3600 * LE_NS_PER_S },
		{ "3599.999999999s", 3600 * LE_NS_PER_S - 1 },
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[256] = "";
		le_ns_t v = 12345;
		int rc = le_parse_time(cases[i].s, MAX, &v, err, sizeof(err));

		CHECK(rc == 0, "'%s': %s", cases[i].s, err);
		CHECK(v == cases[i].ns, "'%s' gave %llu, want %llu", cases[i].s,
		      (unsigned long long)v, (unsigned long long)cases[i].ns);
	}
}

static void invalid_times(void)
{
	static const struct {
		const char *s;
		const char *msg; /* expected fragment of the error */
	} cases[] = {
		{ "", "not a time" },
		{ "ms", "not a time" },
		{ ".", "not a time" },
		{ ".ms", "not a time" },
		{ "10xs", "not a time" },
		{ "10 s", "not a time" },   /* one token never contains a blank */
		{ " 10ms", "not a time" },
		{ "10ms ", "not a time" },
		{ "-1ms", "not a time" },
		{ "+1ms", "not a time" },
		{ "1e3ms", "not a time" },  /* exponents are not part of the time grammar */
		{ "1,5ms", "not a time" },
		{ "1.2.3ms", "not a time" },
		{ "0x10ms", "not a time" },
		{ "10m", "not a time" },
		{ "10mss", "not a time" },
		{ "0.5ns", "finer than 1 ns" },
		{ "1.0001us", "finer than 1 ns" },
		{ "0.0000000001s", "finer than 1 ns" },
		{ "0.0005", "finer than 1 ns" },
		{ "3600.000000001s", "out of range (max 3600s)" },
		{ "5000s", "out of range (max 3600s)" },
		{ "18446744073709551615", "out of range" },          /* us: overflows in ns */
		{ "18446744073709551616ns", "out of range" },        /* overflows u64 itself */
		{ "99999999999999999999999999999s", "out of range" },
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[256] = "";
		le_ns_t v = 0;
		int rc = le_parse_time(cases[i].s, MAX, &v, err, sizeof(err));

		CHECK(rc == -1, "'%s' accepted as %llu", cases[i].s, (unsigned long long)v);
		CHECK(strstr(err, cases[i].msg) != NULL, "'%s': got '%s', want '%s'", cases[i].s, err,
		      cases[i].msg);
		if (cases[i].s[0])
			CHECK(strstr(err, cases[i].s) != NULL, "error '%s' does not quote '%s'", err,
			      cases[i].s);
	}
}

static void time_limits(void)
{
	char err[256];
	le_ns_t v = 0;

	/* The full u64 range is reachable with max = UINT64_MAX, and one more is not. */
	CHECK(le_parse_time("18446744073709551615ns", UINT64_MAX, &v, err, sizeof(err)) == 0, "%s", err);
	CHECK_EQ_U64(v, UINT64_MAX);
	CHECK(le_parse_time("18446744073.709551615s", UINT64_MAX, &v, err, sizeof(err)) == 0, "%s", err);
	CHECK_EQ_U64(v, UINT64_MAX);
	CHECK(le_parse_time("18446744073.709551616s", UINT64_MAX, &v, err, sizeof(err)) == -1);
	/* seconds whose product by 10^9 overflows 64 bits */
	CHECK(le_parse_time("18446744074s", UINT64_MAX, &v, err, sizeof(err)) == -1);
	CHECK_STR_CONTAINS(err, "'18446744074s' is out of range");
	CHECK(le_parse_time("18446744074000ms", UINT64_MAX, &v, err, sizeof(err)) == -1);
	/* max is inclusive */
	CHECK(le_parse_time("10ns", 10, &v, err, sizeof(err)) == 0);
	CHECK(le_parse_time("11ns", 10, &v, err, sizeof(err)) == -1);
	CHECK_STR_CONTAINS(err, "max 10ns");
	/* a NULL error buffer is allowed */
	CHECK(le_parse_time("bad", MAX, &v, NULL, 0) == -1);
}

static void format_times(void)
{
	static const struct {
		le_ns_t ns;
		const char *s;
	} cases[] = {
		{ 0, "0ns" }, { 1, "1ns" }, { 999, "999ns" }, { 1000, "1us" }, { 1500, "1500ns" },
		{ 1500000, "1500us" }, { 10000000, "10ms" }, { 1000000000, "1s" },
		{ 1000000001, "1000000001ns" }, { 3600 * LE_NS_PER_S, "3600s" },
		{ UINT64_MAX, "18446744073709551615ns" },
	};
	char buf[64];

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		le_format_time(cases[i].ns, buf, sizeof(buf));
		CHECK(strcmp(buf, cases[i].s) == 0, "%llu formatted as '%s', want '%s'",
		      (unsigned long long)cases[i].ns, buf, cases[i].s);
	}
}

static void time_round_trip(void)
{
	static const le_ns_t base[] = { 0, 1, 7, 10, 999, 1000, 1001, 1500, 25000, 999999,
					1000000, 1234567, 10000000, 999999999, 1000000000,
					1000000007, 60 * LE_NS_PER_S, 3600 * LE_NS_PER_S };
	char buf[64], err[256];
	unsigned bad = 0;

	for (unsigned i = 0; i < sizeof(base) / sizeof(base[0]); i++) {
		le_ns_t v = ~0ULL;

		le_format_time(base[i], buf, sizeof(buf));
		if (le_parse_time(buf, MAX, &v, err, sizeof(err)) != 0 || v != base[i])
			bad++;
	}
	/* and a dense sweep: every multiple of 10^k times small integers */
	for (uint64_t m = 1; m <= 1000000000ULL; m *= 10)
		for (uint64_t k = 0; k < 2000; k += 7) {
			le_ns_t t = k * m, v = ~0ULL;

			le_format_time(t, buf, sizeof(buf));
			if (le_parse_time(buf, UINT64_MAX, &v, err, sizeof(err)) != 0 || v != t)
				bad++;
		}
	CHECK_EQ_U64(bad, 0);
}

static void percents(void)
{
	static const struct {
		const char *s;
		double p;
	} ok[] = {
		{ "0", 0.0 }, { "0%", 0.0 }, { "1", 0.01 }, { "1%", 0.01 }, { "100%", 1.0 },
		{ "100", 1.0 }, { "0.1%", 0.001 }, { "50.5%", 0.505 }, { "1e-3%", 1e-5 },
		{ "0.0000001%", 1e-9 },
	};
	static const struct {
		const char *s, *msg;
	} bad[] = {
		{ "", "not a percentage" }, { "%", "not a percentage" },
		{ "12x%", "not a percentage" }, { "1%%", "not a percentage" },
		{ "1 %", "not a percentage" }, { " 1%", "not a percentage" },
		{ "nan", "not a percentage" }, { "inf%", "not a percentage" },
		{ "0x10", "not a percentage" }, { "1%x", "not a percentage" },
		{ "150%", "out of range (0% .. 100%)" }, { "100.0000001", "out of range" },
		{ "-1%", "out of range" }, { "-0", "out of range" }, { "1e999%", "out of range" },
	};
	char err[256];

	for (unsigned i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		double p = -1;

		CHECK(le_parse_percent(ok[i].s, &p, err, sizeof(err)) == 0, "'%s': %s", ok[i].s, err);
		/* Relative 1e-15: p is percent/100 in binary, not the decimal itself. */
		CHECK(fabs(p - ok[i].p) <= 1e-15 * ok[i].p, "'%s' gave %.17g, want %.17g", ok[i].s, p,
		      ok[i].p);
	}
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		double p = -1;

		err[0] = '\0';
		CHECK(le_parse_percent(bad[i].s, &p, err, sizeof(err)) == -1, "'%s' accepted as %g",
		      bad[i].s, p);
		CHECK(strstr(err, bad[i].msg) != NULL, "'%s': got '%s', want '%s'", bad[i].s, err,
		      bad[i].msg);
	}
}

static void integers(void)
{
	char err[256];
	uint64_t v = 0;

	CHECK(le_parse_u64("0", 0, 10, &v, err, sizeof(err)) == 0);
	CHECK_EQ_U64(v, 0);
	CHECK(le_parse_u64("18446744073709551615", 0, UINT64_MAX, &v, err, sizeof(err)) == 0);
	CHECK_EQ_U64(v, UINT64_MAX);
	CHECK(le_parse_u64("18446744073709551616", 0, UINT64_MAX, &v, err, sizeof(err)) == -1);
	CHECK_STR_CONTAINS(err, "out of range");
	CHECK(le_parse_u64("0", 1, 10, &v, err, sizeof(err)) == -1);
	CHECK_STR_CONTAINS(err, "'0' is out of range (1 .. 10)");
	CHECK(le_parse_u64("11", 1, 10, &v, err, sizeof(err)) == -1);
	CHECK(le_parse_u64("10", 1, 10, &v, err, sizeof(err)) == 0);
	CHECK_EQ_U64(v, 10);
	static const char *const bad[] = { "", "-1", "+1", "1k", " 1", "1 ", "1.0", "0x1" };
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(le_parse_u64(bad[i], 0, UINT64_MAX, &v, err, sizeof(err)) == -1, "'%s'", bad[i]);
		CHECK_STR_CONTAINS(err, "not an unsigned integer");
	}
}

static void rates_sizes(void)
{
	char err[256], buf[64];
	uint64_t v;
	int64_t sv;

	CHECK(le_parse_rate("1.5mbit", UINT64_MAX, &v, err, sizeof(err)) == 0 && v == 1500000);
	CHECK(le_parse_rate("1KBPS", UINT64_MAX, &v, err, sizeof(err)) == 0 && v == 8000);
	CHECK(le_parse_rate("0.125kbit", UINT64_MAX, &v, err, sizeof(err)) == 0 && v == 125);
	CHECK(le_parse_rate("2Tibit", UINT64_MAX, &v, err, sizeof(err)) == 0 && v == 2ULL << 40);
	CHECK(le_parse_rate("1.0001bit", UINT64_MAX, &v, err, sizeof(err)) == -1);
	CHECK_STR_CONTAINS(err, "not a whole number of bit/s");
	/* Trailing fraction zeros carry no value, however many: they were
	 * called "not a whole number of bit/s" past 27 places. */
	CHECK(le_parse_rate("1.0000000000000000000000000000000000mbit", UINT64_MAX, &v, err, sizeof(err)) == 0 &&
	      v == 1000000, "%s", err);
	CHECK(le_parse_size("1.00000000000000000000000000000kb", 1, UINT64_MAX, &v, err, sizeof(err)) == 0 &&
	      v == 1024, "%s", err);
	/* Out of range is out of range, with or without a fraction. */
	CHECK(le_parse_rate("100000000000000000000.0000000000000000000000000000bit", UINT64_MAX, &v, err,
			    sizeof(err)) == -1);
	CHECK_STR_CONTAINS(err, "out of range");
	CHECK(le_parse_rate("1000000000000000000000000000000.0000000000000000000000000001bit", UINT64_MAX, &v,
			    err, sizeof(err)) == -1);
	CHECK_STR_CONTAINS(err, "out of range");
	/* The range names both ends in the quantity's own units; 0 is no rate. */
	CHECK(le_parse_rate("0", 10000000, &v, err, sizeof(err)) == -1);
	CHECK_STR_CONTAINS(err, "'0' is out of range (1bit .. 10mbit)");
	CHECK(le_parse_size("2mb", 64, 1024 * 1024, &v, err, sizeof(err)) == -1);
	CHECK_STR_CONTAINS(err, "'2mb' is out of range (64b .. 1mb)");
	CHECK(le_parse_size("1x", 1, 2, &v, err, sizeof(err)) == -1);
	CHECK_STR_CONTAINS(err, "'1x' is not a size (units: b, kb, mb, gb, kbit, mbit, gbit)");
	CHECK(le_parse_rate("mbit", UINT64_MAX, &v, err, sizeof(err)) == -1);
	CHECK(le_parse_rate("1e6bit", UINT64_MAX, &v, err, sizeof(err)) == -1);
	CHECK(le_parse_rate("-1bit", UINT64_MAX, &v, err, sizeof(err)) == -1);
	CHECK(le_parse_rate("99999999999999999999999bit", UINT64_MAX, &v, err, sizeof(err)) == -1);
	CHECK_STR_CONTAINS(err, "out of range");
	CHECK(strcmp(le_format_rate(45000000, buf, sizeof(buf)), "45mbit") == 0);
	CHECK(strcmp(le_format_rate(1536, buf, sizeof(buf)), "1536bit") == 0);
	CHECK(strcmp(le_format_rate(3000000000000ULL, buf, sizeof(buf)), "3tbit") == 0);

	CHECK(le_parse_size("64kb", 0, UINT64_MAX, &v, err, sizeof(err)) == 0 && v == 65536);
	CHECK(le_parse_size("1.5k", 0, UINT64_MAX, &v, err, sizeof(err)) == 0 && v == 1536);
	CHECK(le_parse_size("1M", 0, UINT64_MAX, &v, err, sizeof(err)) == 0 && v == 1048576);
	CHECK(le_parse_size("8kbit", 0, UINT64_MAX, &v, err, sizeof(err)) == 0 && v == 1024);
	CHECK(le_parse_size("1500", 0, UINT64_MAX, &v, err, sizeof(err)) == 0 && v == 1500);
	CHECK(le_parse_size("1500B", 0, UINT64_MAX, &v, err, sizeof(err)) == 0 && v == 1500);
	CHECK(le_parse_size("0.3b", 0, UINT64_MAX, &v, err, sizeof(err)) == -1);
	CHECK(le_parse_size("10", 11, 20, &v, err, sizeof(err)) == -1);
	CHECK_STR_CONTAINS(err, "out of range (11b .. 20b)");
	CHECK(strcmp(le_format_size(65536, buf, sizeof(buf)), "64kb") == 0);
	CHECK(strcmp(le_format_size(1500, buf, sizeof(buf)), "1500b") == 0);
	CHECK(strcmp(le_format_size(3u << 30, buf, sizeof(buf)), "3gb") == 0);

	CHECK(le_parse_s64("-4", -10, 10, &sv, err, sizeof(err)) == 0 && sv == -4);
	CHECK(le_parse_s64("10", -10, 10, &sv, err, sizeof(err)) == 0 && sv == 10);
	CHECK(le_parse_s64("11", -10, 10, &sv, err, sizeof(err)) == -1);
	CHECK_STR_CONTAINS(err, "out of range (-10 .. 10)");
	CHECK(le_parse_s64("-9223372036854775808", INT64_MIN, INT64_MAX, &sv, err, sizeof(err)) == 0 && sv == INT64_MIN);
	CHECK(le_parse_s64("--1", -10, 10, &sv, err, sizeof(err)) == -1);
	CHECK_STR_CONTAINS(err, "not an integer");
	CHECK(le_parse_s64("", -10, 10, &sv, err, sizeof(err)) == -1);
}

int main(void)
{
	rates_sizes();
	valid_times();
	invalid_times();
	time_limits();
	format_times();
	time_round_trip();
	percents();
	integers();
	return mt_summary();
}
