/* Number parsing for the link grammar (see units.h).
 *
 * Times are parsed as decimal integers (integer digits, fraction digits, a
 * power-of-ten unit) so "1.5us" is exactly 1500 ns: a binary float would
 * make some written values unreachable and break format/parse round trips. */
#include "units.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

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
		set_err(err, errlen, "'%s' is finer than 1 ns", s);
		return -1;
	}
	for (const char *q = frac; q < frac_end; q++)
		fpart = fpart * 10 + (uint64_t)(*q - '0'); /* <= 9 digits: no overflow */
	fpart *= pow10_u64[pow10 - nfrac];

	if (overflow || __builtin_mul_overflow(ipart, pow10_u64[pow10], &v) ||
	    __builtin_add_overflow(v, fpart, &v) || v > max_ns) {
		set_err(err, errlen, "'%s' is out of range (max %s)", s, maxbuf);
		return -1;
	}
	*out = v;
	return 0;

not_a_time:
	set_err(err, errlen, "'%s' is not a time (units: ns, us, ms, s)", s);
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
		set_err(err, errlen, "'%s' is out of range (0%% .. 100%%)", s);
		return -1;
	}
	*out = v / 100.0;
	return 0;

not_a_percentage:
	set_err(err, errlen, "'%s' is not a percentage", s);
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
		set_err(err, errlen, "'%s' is out of range (%llu .. %llu)", s,
			(unsigned long long)min, (unsigned long long)max);
		return -1;
	}
	*out = v;
	return 0;

not_a_number:
	set_err(err, errlen, "'%s' is not an unsigned integer", s);
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
