/* Reading a whole text file (traces, .dist tables) for a parser, with a
 * size cap so an absurd file is refused before it is read into memory. */
#ifndef LE_TEXTFILE_H
#define LE_TEXTFILE_H

#include <stddef.h>
#include <stdio.h>

/* On success *text (malloc'd, NUL-terminated, caller frees) holds the file
 * and *size its length. -1 with "PATH: ..." in err when it cannot be opened,
 * is larger than max_bytes (the message says "at most LIMIT_TEXT"), or
 * cannot be read. */
int le_read_text_file(const char *path, long max_bytes, const char *limit_text, char **text, size_t *size,
		      char *err, size_t errlen);

/* The same from a stream already open (the caller closes it), e.g. one
 * whose identity it took with fstat. `path` names it in messages. */
int le_read_text_stream(FILE *f, const char *path, long max_bytes, const char *limit_text, char **text,
			size_t *size, char *err, size_t errlen);

/* For an error message: at most `max` bytes of p[0..n) as text in out
 * (outlen >= 4 * max + 1 holds them all): printable ASCII and valid
 * UTF-8 as they are, every other byte (NUL, CR, a stray 0xff) as \xNN,
 * so a message shows what the file holds and stays one line of text.
 * Returns out. */
char *le_quote_bytes(char *out, size_t outlen, const char *p, size_t n, size_t max);

#endif
