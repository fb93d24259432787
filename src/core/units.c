/* Number parsing for the link grammar (see units.h).
 *
 * Times are parsed as decimal integers (integer digits, fraction digits, a
 * power-of-ten unit) so "1.5us" is exactly 1500 ns: a binary float would
 * make some written values unreachable and break format/parse round trips. */
#include "units.h"
#include "err.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* tc's unit spellings (iproute2 get_time64), matched case-insensitively as
 * tc does. `pow10` is the unit in ns as a power of ten. */
static const struct {
	const char *name;
	unsigned pow10;
} time_units[] = {
	{ "ns", 0 }, { "nsec", 0 }, { "nsecs", 0 },
	{ "us", 3 }, { "usec", 3 }, { "usecs", 3 },
	{ "ms", 6 }, { "msec", 6 }, { "msecs", 6 },
	{ "s", 9 },  { "sec", 9 },  { "secs", 9 },
};

static const uint64_t pow10_u64[] = {
	1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL,
	10000000ULL, 100000000ULL, 1000000000ULL,
};

int le_parse_time(const char *s, le_ns_t max_ns, le_ns_t *out, char *err, size_t errlen)
{
	char maxbuf[32];
	const char *p = s, *frac, *frac_end, *unit;
	uint64_t ipart = 0, fpart = 0, v;
	unsigned pow10 = 3; /* no unit = microseconds, as tc */
	unsigned nfrac, i;
	int ndigits = 0, overflow = 0;

	le_format_time(max_ns, maxbuf, sizeof(maxbuf));

	/* Integer digits; keep scanning after overflow so the error is
	 * "out of range" rather than "not a time". */
	for (; isdigit((unsigned char)*p); p++, ndigits++) {
		if (__builtin_mul_overflow(ipart, 10, &ipart) ||
		    __builtin_add_overflow(ipart, (uint64_t)(*p - '0'), &ipart))
			overflow = 1;
	}
	frac = frac_end = p;
	if (*p == '.') {
		frac = ++p;
		while (isdigit((unsigned char)*p))
			p++;
		frac_end = p;
		ndigits += (int)(frac_end - frac);
	}
	unit = p;
	if (ndigits == 0)
		goto not_a_time;
	if (*unit != '\0') {
		for (i = 0; i < sizeof(time_units) / sizeof(time_units[0]); i++)
			if (strcasecmp(unit, time_units[i].name) == 0)
				break;
		if (i == sizeof(time_units) / sizeof(time_units[0]))
			goto not_a_time;
		pow10 = time_units[i].pow10;
	}

	/* Trailing fraction zeros carry no value; what remains must fit in
	 * the unit's power of ten, else the value is finer than 1 ns. */
	while (frac_end > frac && frac_end[-1] == '0')
		frac_end--;
	nfrac = (unsigned)(frac_end - frac);
	if (nfrac > pow10) {
		le_err(err, errlen, "'%s' is finer than 1 ns", s);
		return -1;
	}
	for (const char *q = frac; q < frac_end; q++)
		fpart = fpart * 10 + (uint64_t)(*q - '0'); /* <= 9 digits: no overflow */
	fpart *= pow10_u64[pow10 - nfrac];

	if (overflow || __builtin_mul_overflow(ipart, pow10_u64[pow10], &v) ||
	    __builtin_add_overflow(v, fpart, &v) || v > max_ns) {
		le_err(err, errlen, "'%s' is out of range (max %s)", s, maxbuf);
		return -1;
	}
	*out = v;
	return 0;

not_a_time:
	le_err(err, errlen, "'%s' is not a time (units: ns, us, ms, s)", s);
	return -1;
}

int le_parse_percent(const char *s, double *out, char *err, size_t errlen)
{
	const char *p;
	char *end;
	double v;
	size_t n;

	/* Only a plain decimal (optionally with exponent, as tc's strtod
	 * allows) and an optional '%': this keeps strtod from accepting
	 * hex, "nan", "inf" or leading blanks. */
	n = strlen(s);
	if (n > 0 && s[n - 1] == '%')
		n--;
	for (p = s; p < s + n; p++)
		if (!isdigit((unsigned char)*p) && strchr(".eE+-", *p) == NULL)
			goto not_a_percentage;
	if (n == 0)
		goto not_a_percentage;

	v = strtod(s, &end);
	if (end != s + n)
		goto not_a_percentage;
	if (!isfinite(v) || v < 0.0 || v > 100.0 || signbit(v)) {
		le_err(err, errlen, "'%s' is out of range (0%% .. 100%%)", s);
		return -1;
	}
	*out = v / 100.0;
	return 0;

not_a_percentage:
	le_err(err, errlen, "'%s' is not a percentage", s);
	return -1;
}

int le_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out, char *err, size_t errlen)
{
	const char *p = s;
	uint64_t v = 0;
	int overflow = 0;

	if (*p == '\0')
		goto not_a_number;
	for (; *p; p++) {
		if (!isdigit((unsigned char)*p))
			goto not_a_number;
		if (__builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(*p - '0'), &v))
			overflow = 1;
	}
	if (overflow || v < min || v > max) {
		le_err(err, errlen, "'%s' is out of range (%llu .. %llu)", s,
			(unsigned long long)min, (unsigned long long)max);
		return -1;
	}
	*out = v;
	return 0;

not_a_number:
	le_err(err, errlen, "'%s' is not an unsigned integer", s);
	return -1;
}

char *le_format_time(le_ns_t t, char *buf, size_t buflen)
{
	static const struct {
		uint64_t ns;
		const char *name;
	} u[] = { { LE_NS_PER_S, "s" }, { LE_NS_PER_MS, "ms" }, { LE_NS_PER_US, "us" } };
	unsigned i;

	/* Largest unit that divides exactly: shortest text, still exact. */
	for (i = 0; i < 3; i++)
		if (t != 0 && t % u[i].ns == 0)
			break;
	if (i < 3)
		snprintf(buf, buflen, "%llu%s", (unsigned long long)(t / u[i].ns), u[i].name);
	else
		snprintf(buf, buflen, "%lluns", (unsigned long long)t);
	return buf;
}

int le_parse_s64(const char *s, int64_t min, int64_t max, int64_t *out, char *err, size_t errlen)
{
	char tmp[8];
	uint64_t mag;
	int neg = s[0] == '-';

	if (le_parse_u64(s + neg, 0, (uint64_t)INT64_MAX + 1, &mag, tmp, sizeof(tmp)) < 0 ||
	    (!neg && mag > (uint64_t)INT64_MAX)) {
		if (s[neg] != '\0' && strspn(s + neg, "0123456789") == strlen(s + neg))
			goto range;
		le_err(err, errlen, "'%s' is not an integer", s);
		return -1;
	}
	if (neg) {
		int64_t v = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
		if (v < min || v > max)
			goto range;
		*out = v;
	} else {
		if ((int64_t)mag < min || (int64_t)mag > max)
			goto range;
		*out = (int64_t)mag;
	}
	return 0;
range:
	le_err(err, errlen, "'%s' is out of range (%lld .. %lld)", s, (long long)min, (long long)max);
	return -1;
}

/* A decimal number with a unit suffix, as an exact rational
 * (digits / 10^nfrac) times the unit's scale; the result must be whole.
 * Returns 0 and *out, -1 when not a number/unit (unit index -1 or no
 * digits), -2 when fractional, -3 when out of u64 range.
 *
 * The integer and fraction parts are scaled apart, each within 128 bits:
 * an integer part beyond u64 is out of range whatever follows, and
 * trailing fraction zeros carry no value (as in le_parse_time), so
 * "1.000...0mbit" is 1 mbit however many zeros it has, where one number
 * of all the digits overflowed or was called fractional. */
struct unit {
	const char *name;
	uint64_t scale;
};

static int parse_scaled(const char *s, const struct unit *units, size_t nunits, int unit_required,
			uint64_t *out)
{
	const char *p = s, *int_end, *frac = NULL, *frac_end = NULL;
	unsigned __int128 ipart = 0, fpart = 0, den = 1, v;
	uint64_t scale = 1;
	size_t i;
	int big = 0;

	for (; isdigit((unsigned char)*p); p++)
		if (!big && (ipart = ipart * 10 + (unsigned)(*p - '0')) > UINT64_MAX)
			big = 1;
	int_end = p;
	frac = frac_end = p;
	if (*p == '.') {
		frac = ++p;
		while (isdigit((unsigned char)*p))
			p++;
		frac_end = p;
	}
	if (int_end == s && frac_end == frac)
		return -1; /* no digits */
	if (*p == '\0') {
		if (unit_required)
			return -1;
	} else {
		for (i = 0; i < nunits; i++)
			if (strcasecmp(p, units[i].name) == 0)
				break;
		if (i == nunits)
			return -1;
		scale = units[i].scale;
	}
	if (big)
		return -3;
	while (frac_end > frac && frac_end[-1] == '0')
		frac_end--;
	/* 24 places: the fraction (< 10^24 < 2^80) times a scale (< 2^47)
	 * stays below 2^128. A whole value needs far fewer. */
	if (frac_end - frac > 24)
		return -2;
	for (const char *q = frac; q < frac_end; q++) {
		fpart = fpart * 10 + (unsigned)(*q - '0');
		den *= 10;
	}
	fpart *= scale;
	if (fpart % den != 0)
		return -2;
	v = ipart * scale + fpart / den; /* < 2^64 * 2^47 + 2^47: fits */
	if (v > UINT64_MAX)
		return -3;
	*out = (uint64_t)v;
	return 0;
}

#define KI 1024ULL
static const struct unit rate_units[] = {
	{ "bit", 1 }, { "kbit", 1000ULL }, { "mbit", 1000000ULL }, { "gbit", 1000000000ULL },
	{ "tbit", 1000000000000ULL }, { "kibit", KI }, { "mibit", KI * KI }, { "gibit", KI * KI * KI },
	{ "tibit", KI * KI * KI * KI }, { "bps", 8 }, { "kbps", 8000ULL }, { "mbps", 8000000ULL },
	{ "gbps", 8000000000ULL }, { "tbps", 8000000000000ULL }, { "kibps", 8 * KI },
	{ "mibps", 8 * KI * KI }, { "gibps", 8 * KI * KI * KI }, { "tibps", 8 * KI * KI * KI * KI },
};

static const struct unit size_units[] = {
	{ "b", 1 }, { "k", KI }, { "kb", KI }, { "m", KI * KI }, { "mb", KI * KI },
	{ "g", KI * KI * KI }, { "gb", KI * KI * KI }, { "kbit", KI / 8 }, { "mbit", KI * KI / 8 },
	{ "gbit", KI * KI * KI / 8 },
};

/* The largest unit of `u` (listed largest first) that divides v whole,
 * else v in the base unit: 1000000 -> "1mbit", 1536 -> "1536b". */
static char *format_scaled(uint64_t v, const struct unit *u, size_t n, const char *base, char *buf,
			   size_t buflen)
{
	for (size_t i = 0; i < n; i++)
		if (v != 0 && v % u[i].scale == 0) {
			snprintf(buf, buflen, "%llu%s", (unsigned long long)(v / u[i].scale), u[i].name);
			return buf;
		}
	snprintf(buf, buflen, "%llu%s", (unsigned long long)v, base);
	return buf;
}

char *le_format_rate(uint64_t bps, char *buf, size_t buflen)
{
	static const struct unit u[] = {
		{ "tbit", 1000000000000ULL }, { "gbit", 1000000000ULL }, { "mbit", 1000000ULL },
		{ "kbit", 1000ULL },
	};
	return format_scaled(bps, u, sizeof(u) / sizeof(u[0]), "bit", buf, buflen);
}

char *le_format_size(uint64_t bytes, char *buf, size_t buflen)
{
	static const struct unit u[] = { { "gb", KI * KI * KI }, { "mb", KI * KI }, { "kb", KI } };
	return format_scaled(bytes, u, sizeof(u) / sizeof(u[0]), "b", buf, buflen);
}

/* What a rate or a size is, for parsing one and naming what is wrong. */
struct quantity {
	const char *noun;      /* "a rate" */
	const char *unit_list; /* the units the message offers */
	const char *whole_of;  /* "bit/s": the smallest step */
	const struct unit *units;
	size_t nunits;
	char *(*format)(uint64_t v, char *buf, size_t buflen);
};

static int parse_quantity(const struct quantity *q, const char *s, uint64_t min, uint64_t max,
			  uint64_t *out, char *err, size_t errlen)
{
	char a[32], b[32];
	uint64_t v;
	int rc = parse_scaled(s, q->units, q->nunits, 0, &v);

	if (rc == -1) {
		le_err(err, errlen, "'%s' is not %s (units: %s)", s, q->noun, q->unit_list);
		return -1;
	}
	if (rc == -2) {
		le_err(err, errlen, "'%s' is not a whole number of %s", s, q->whole_of);
		return -1;
	}
	if (rc == -3 || v < min || v > max) {
		le_err(err, errlen, "'%s' is out of range (%s .. %s)", s, q->format(min, a, sizeof(a)),
		       q->format(max, b, sizeof(b)));
		return -1;
	}
	*out = v;
	return 0;
}

static const struct quantity rate_quantity = {
	"a rate", "bit, kbit, mbit, gbit, tbit, bps, kbps, mbps, gbps, kibit, mibit, ...", "bit/s",
	rate_units, sizeof(rate_units) / sizeof(rate_units[0]), le_format_rate,
};

static const struct quantity size_quantity = {
	"a size", "b, kb, mb, gb, kbit, mbit, gbit", "bytes",
	size_units, sizeof(size_units) / sizeof(size_units[0]), le_format_size,
};

int le_parse_rate(const char *s, uint64_t max_bps, uint64_t *out, char *err, size_t errlen)
{
	return parse_quantity(&rate_quantity, s, 1, max_bps, out, err, errlen); /* 0 is no rate */
}

int le_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out, char *err, size_t errlen)
{
	return parse_quantity(&size_quantity, s, min, max, out, err, errlen);
}

void le_format_double(double v, char *buf, size_t buflen)
{
	for (int places = 0; places <= 20; places++) {
		snprintf(buf, buflen, "%.*f", places, v);
		if (strtod(buf, NULL) == v)
			return;
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, buflen, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}
