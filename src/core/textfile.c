#include "textfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int le_read_text_stream(FILE *f, const char *path, long max_bytes, const char *limit_text, char **text,
			size_t *size, char *err, size_t errlen)
{
	long n;
	char *buf;

	*text = NULL;
	*size = 0;
	if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || n > max_bytes || fseek(f, 0, SEEK_SET) != 0) {
		snprintf(err, errlen, "%s: not a readable file of at most %s", path, limit_text);
		return -1;
	}
	buf = malloc((size_t)n + 1);
	if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		snprintf(err, errlen, "%s: read error", path);
		return -1;
	}
	buf[n] = '\0';
	*text = buf;
	*size = (size_t)n;
	return 0;
}

int le_read_text_file(const char *path, long max_bytes, const char *limit_text, char **text, size_t *size,
		      char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	int rc;

	*text = NULL;
	*size = 0;
	if (f == NULL) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	rc = le_read_text_stream(f, path, max_bytes, limit_text, text, size, err, errlen);
	fclose(f);
	return rc;
}
