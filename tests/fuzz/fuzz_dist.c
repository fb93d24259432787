/* libFuzzer target: .dist delay tables (iproute2's format; dist_table.c),
 * then draws from what parsed.
 *
 * Oracle: a parsed table has 1..LE_DIST_MAX entries; a draw with sigma
 * stays within mu +- sigma * 32768 / 8192 (+1 for rounding). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h" /* LE_ERR_MAX */
#include "dist_table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct le_dist_table t;
	char err[LE_ERR_MAX] = "";
	char *text;

	if (size > (1u << 20))
		return -1;
	text = malloc(size ? size : 1); /* no NUL: the parser takes a length */
	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	if (le_dist_parse(text, size, "fuzz.dist", &t, err, sizeof(err)) == 0) {
		if (t.size == 0 || t.size > LE_DIST_MAX)
			abort();
		static const int64_t sigmas[] = { 1, 8191, 8192, 1000000, 3600000000000LL };
		for (unsigned k = 0; k < sizeof(sigmas) / sizeof(sigmas[0]); k++) {
			uint64_t rnd = (uint64_t)k * 0x9e3779b97f4a7c15ULL;
			int64_t mu = 10000000, x = le_tabledist(mu, sigmas[k], rnd, &t);
			int64_t bound = sigmas[k] * 4 + 1;
			if (x < mu - bound || x > mu + bound)
				abort();
		}
		le_dist_table_free(&t);
	} else if (err[0] == '\0') {
		abort();
	}
	free(text);
	return 0;
}
