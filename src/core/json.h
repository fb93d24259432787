/* The one JSON string writer of the C programs (linkemud's reports and
 * control replies, the lab's instruments).
 *
 * Input is bytes, output a JSON string literal with its quotes: `"` and
 * `\` escaped, control characters (< 0x20) and DEL as \u00XX (\n, \t, \r
 * in their short forms), valid UTF-8 passed through unchanged (JSON text
 * is UTF-8), and every byte that is not part of a valid UTF-8 sequence
 * (stray continuation, overlong form, surrogate, > U+10FFFF, truncated)
 * replaced by U+FFFD, so a reader always gets valid JSON and never a
 * different character than was meant. */
#ifndef LE_JSON_H
#define LE_JSON_H

#include <stdio.h>

void le_json_string(FILE *f, const char *s);

/* The length (2 .. 4) of the well-formed UTF-8 sequence of a non-ASCII
 * character at s, or 0 when s does not start one (the same test the
 * writer above applies). Reads no further than a NUL. */
int le_utf8_len(const unsigned char *s);

#endif
