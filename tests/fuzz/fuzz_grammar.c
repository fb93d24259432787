/* libFuzzer target: the path grammar (links, classes, filter words) as a
 * user or a control client writes it (config.c, classify.c, path.c,
 * units.c).
 *
 * Oracle, beyond "no crash, no leak, no UB": a text that parses formats
 * back to grammar that parses again, to an equal configuration
 * (le_path_config_equal), and formatting that again gives the same text. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "path.h"

#define MAX_INPUT 16384  /* a control line is at most 4096 bytes; be generous */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Large (17 links each): static, as the daemon's control thread does. */
	static struct le_path_config a, b;
	static char text[LE_PATH_TEXT_MAX], again[LE_PATH_TEXT_MAX];
	char err[LE_ERR_MAX], *in;

	if (size > MAX_INPUT)
		return -1;
	in = malloc(size + 1);
	if (in == NULL)
		return 0;
	memcpy(in, data, size);
	in[size] = '\0'; /* the grammar is a C string: bytes after a NUL are not seen */
	err[0] = '\0';
	if (le_path_config_parse(in, &a, err, sizeof(err)) == 0) {
		le_path_config_format(&a, text, sizeof(text));
		if (le_path_config_parse(text, &b, err, sizeof(err)) != 0) {
			fprintf(stderr, "round trip: '%s' formats as '%s', which does not parse: %s\n", in, text, err);
			abort();
		}
		if (!le_path_config_equal(&a, &b)) {
			fprintf(stderr, "round trip: '%s' formats as '%s', which parses to another config\n", in, text);
			abort();
		}
		le_path_config_format(&b, again, sizeof(again));
		if (strcmp(text, again) != 0) {
			fprintf(stderr, "format is not stable: '%s' then '%s'\n", text, again);
			abort();
		}
	} else if (err[0] == '\0') {
		fprintf(stderr, "'%s' was refused without a message\n", in);
		abort();
	}
	free(in);
	return 0;
}
