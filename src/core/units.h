/* Parsing of the numbers that appear in the link grammar.
 *
 * All parsers are exact (decimal digits are handled as integers, never via
 * a binary float for times) and reject trailing garbage, signs where not
 * allowed, and out-of-range values. On failure they return -1 and write a
 * human message (without the word itself; the caller names the word) into
 * err. */
#ifndef LE_UNITS_H
#define LE_UNITS_H

#include <stddef.h>
#include <stdint.h>

#include "le_time.h"

/* "10ms", "1.5us", "250ns", "2s", "100" (no unit = microseconds, as tc).
 * Accepted units (tc's spellings): ns nsec nsecs, us usec usecs, ms msec
 * msecs, s sec secs. Fractions below 1 ns are an error ("too precise"), not
 * rounded. max_ns bounds the result. */
int le_parse_time(const char *s, le_ns_t max_ns, le_ns_t *out, char *err, size_t errlen);

/* "1%", "0.001%", "1" (no unit = percent, as tc). Result is a probability
 * in [0, 1]. Values above 100 % or negative are errors. */
int le_parse_percent(const char *s, double *out, char *err, size_t errlen);

/* Unsigned decimal integer in [min, max]; no sign, no unit, no garbage. */
int le_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out, char *err, size_t errlen);

/* Formats t as the shortest exact grammar time ("10ms", "1500us", "7ns",
 * "0ns"). Returns buf. */
char *le_format_time(le_ns_t t, char *buf, size_t buflen);

#endif
