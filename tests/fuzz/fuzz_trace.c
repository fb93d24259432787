/* libFuzzer target: Mahimahi trace files (`trace` in ms, `trace-us` in us;
 * trace.c), then a walk over what parsed.
 *
 * The first byte picks ms or us; the rest is the file. Oracle: a parsed
 * trace has n > 0 non-decreasing times and a period equal to its last
 * time, above 0; walking it never goes backwards in time. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h" /* LE_ERR_MAX */
#include "trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct le_trace t;
	struct le_trace_pos pos = { 0 };
	char err[LE_ERR_MAX] = "";
	char *text;
	int us, once;

	if (size < 1 || size > (1u << 20))
		return -1;
	us = data[0] & 1;
	once = (data[0] >> 1) & 1;
	/* Exactly the file's bytes, with no NUL after them: the parser takes
	 * a length and must not read past it. */
	text = malloc(size - 1 ? size - 1 : 1);
	if (text == NULL)
		return 0;
	memcpy(text, data + 1, size - 1);
	if (le_trace_parse(text, size - 1, "fuzz", us, &t, err, sizeof(err)) == 0) {
		if (t.n == 0 || t.period == 0 || t.period != t.t[t.n - 1])
			abort();
		for (uint32_t i = 1; i < t.n; i++)
			if (t.t[i] < t.t[i - 1])
				abort();
		le_ns_t prev = 0;
		for (int k = 0; k < 64; k++) {
			le_ns_t next = le_trace_next(&t, &pos);
			if (next == UINT64_MAX)
				break;
			if (next < prev)
				abort();
			prev = next;
			if (k % 3 == 0)
				le_trace_skip_after(&t, &pos, once, next + t.period / 3);
			else
				le_trace_step(&t, &pos, once, (uint64_t)k);
		}
		le_trace_free(&t);
	} else if (err[0] == '\0') {
		abort();
	}
	free(text);
	return 0;
}
