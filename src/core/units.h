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

/* Signed decimal integer in [min, max] ("-4", "20"). */
int le_parse_s64(const char *s, int64_t min, int64_t max, int64_t *out, char *err, size_t errlen);

/* A rate in bits per second, with tc's units (tc(8) "RATES"; iproute2
 * get_rate): bit (or none), kbit, mbit, gbit, tbit (powers of 1000),
 * kibit, mibit, gibit, tibit (powers of 1024), bps, kbps, mbps, gbps, tbps
 * (BYTES per second, x8), kibps, mibps, gibps, tibps; any case, as tc.
 * Decimals are exact: "1.5mbit" is 1,500,000 bit/s; a value that is not a
 * whole number of bit/s is an error. Range 1 bit/s .. max_bps. */
int le_parse_rate(const char *s, uint64_t max_bps, uint64_t *out, char *err, size_t errlen);

/* A size in bytes, with tc's units (tc(8) "SIZES"; iproute2 get_size):
 * b (or none) bytes, k or kb (1024), m or mb (1024^2), g or gb (1024^3),
 * kbit (128), mbit (1024^2/8), gbit (1024^3/8); any case. Must be a whole
 * number of bytes in [min, max]. */
int le_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out, char *err, size_t errlen);

/* Shortest exact grammar text for a rate ("45mbit", "1536bit") and a size
 * ("64kb", "1500b"). Return buf. */
char *le_format_rate(uint64_t bps, char *buf, size_t buflen);
char *le_format_size(uint64_t bytes, char *buf, size_t buflen);

/* Shortest text that reads back as the same double, as a plain decimal
 * where one of up to 20 places is exact ("20", "0.0000001"). */
void le_format_double(double v, char *buf, size_t buflen);

/* Formats t as the shortest exact grammar time ("10ms", "1500us", "7ns",
 * "0ns"). Returns buf. */
char *le_format_time(le_ns_t t, char *buf, size_t buflen);

#endif
