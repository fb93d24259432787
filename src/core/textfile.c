#include "textfile.h"
#include "json.h"

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

char *le_quote_bytes(char *out, size_t outlen, const char *p, size_t n, size_t max)
{
	const unsigned char *s = (const unsigned char *)p;
	size_t i = 0, o = 0;

	if (outlen == 0)
		return out;
	if (n > max)
		n = max;
	while (i < n) {
		size_t k = 1;
		int esc = 0;

		if (s[i] >= 0x80) {
			/* le_utf8_len reads up to 4 bytes and stops at a NUL; these
			 * bytes have none after them (found by fuzz_trace), so it
			 * reads a NUL-padded copy of what is left. */
			unsigned char seq[5] = { 0 };
			memcpy(seq, s + i, n - i < 4 ? n - i : 4);
			int u = le_utf8_len(seq);
			if (u > 0 && (size_t)u <= n - i)
				k = (size_t)u;
			else
				esc = 1;
		} else if (s[i] < 0x20 || s[i] == 0x7f) {
			esc = 1;
		}
		if (o + (esc ? 4 : k) >= outlen)
			break;
		if (esc)
			o += (size_t)snprintf(out + o, outlen - o, "\\x%02x", s[i]);
		else
			memcpy(out + o, s + i, k), o += k;
		i += k;
	}
	out[o] = '\0';
	return out;
}
