/* What the command-line tools of src/tools share: their error message for
 * a bad argument and the number parsers behind it. Header-only (each tool
 * is one file). Define TOOL_PROG ("owdprobe", "ttcp", ...) before including.
 *
 * Exit code convention: usage_error() returns 2, for `return usage_error(..)`
 * from main. */
#ifndef LE_TOOL_ARGS_H
#define LE_TOOL_ARGS_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifndef TOOL_PROG
#error "define TOOL_PROG before including tool_args.h"
#endif

static inline int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int usage_error(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, TOOL_PROG ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n  (" TOOL_PROG " --help for usage)\n");
	return 2;
}

static inline int64_t clock_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* A decimal integer in [min, max], nothing after it; no sign. 0 or -1. */
static inline int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* A number in [min, max] (NaN refused), nothing after it. 0 or -1. */
static inline int parse_double_in(const char *s, double min, double max, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= min && v <= max))
		return -1;
	*out = v;
	return 0;
}

#endif
