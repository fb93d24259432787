/* A tiny header-only test harness: include once per test executable.
 *
 * CHECK records a failure with file:line and a message and carries on, so
 * one run reports every broken expectation; mt_summary() prints the totals
 * ("N passed, N failed") and yields the exit status for main. */
#ifndef MINITEST_H
#define MINITEST_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static unsigned mt_passed, mt_failed;

static inline int mt_check(int ok, const char *file, int line, const char *what)
{
	if (ok) {
		mt_passed++;
	} else {
		mt_failed++;
		fprintf(stderr, "%s:%d: FAIL: %s\n", file, line, what);
	}
	return ok;
}

/* CHECK(cond) or CHECK(cond, "printf format", args...) */
#define CHECK(cond, ...) mt_check_fmt(!!(cond), __FILE__, __LINE__, #cond, "" __VA_ARGS__)

/* No format attribute: CHECK(cond) passes an empty format, which
 * -Wformat would flag. */
static inline int mt_check_fmt(int ok, const char *file, int line, const char *expr,
			       const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (ok)
		return mt_check(1, file, line, expr);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (msg[0]) {
		char both[1024];
		snprintf(both, sizeof(both), "%s (%s)", expr, msg);
		return mt_check(0, file, line, both);
	}
	return mt_check(0, file, line, expr);
}

#define CHECK_EQ_U64(a, b)                                                                  \
	do {                                                                                \
		uint64_t mt_a_ = (uint64_t)(a), mt_b_ = (uint64_t)(b);                      \
		mt_check_fmt(mt_a_ == mt_b_, __FILE__, __LINE__, #a " == " #b,             \
			     "%" PRIu64 " != %" PRIu64, mt_a_, mt_b_);                          \
	} while (0)

#define CHECK_STR_CONTAINS(hay, needle)                                                     \
	do {                                                                                \
		const char *mt_h_ = (hay), *mt_n_ = (needle);                               \
		mt_check_fmt(strstr(mt_h_, mt_n_) != NULL, __FILE__, __LINE__,              \
			     "strstr(" #hay ", " #needle ")", "'%s' does not contain '%s'", mt_h_,  \
			     mt_n_);                                                                 \
	} while (0)

/* Writes a small test file (a trace, a table); a failure is a CHECK. */
static inline int mt_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!mt_check_fmt(f != NULL, __FILE__, __LINE__, "fopen", "cannot write %s", path))
		return -1;
	fputs(text, f);
	fclose(f);
	return 0;
}

static inline int mt_summary(void)
{
	printf("%u passed, %u failed\n", mt_passed, mt_failed);
	return mt_failed ? 1 : 0;
}

#endif
