/* The control socket's line handler (src/plane/control.c,
 * dp_control_handle_line) on lines refused before any model is built, so
 * a zeroed dp_state serves: which lines are text, and what the reply
 * says when one is not. */
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "minitest.h"

/* The reply to one line, as the client gets it. */
static char *reply(const char *line)
{
	static struct dp_state st; /* never touched by the lines below */
	char *buf = NULL, *copy = strdup(line);
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	dp_control_handle_line(&st, copy, strlen(copy), f);
	fclose(f);
	free(copy);
	return buf;
}

int main(void)
{
	char *r;

	/* UTF-8 is text: a trace file in a directory named in French is
	 * reached (and found missing), as on linkemud's command line; and
	 * `show`'s output, which passes UTF-8 through, can be fed back. */
	r = reply("set a2b trace /nonexistent/caf\xc3\xa9/t.up");
	CHECK(strstr(r, "not text") == NULL, "%s", r);
	CHECK_STR_CONTAINS(r, "/nonexistent/caf\xc3\xa9/t.up: cannot open");
	free(r);
	r = reply("set a2b dealy 5ms # \xe2\x82\xac");
	CHECK_STR_CONTAINS(r, "unknown word 'dealy'");
	free(r);

	/* Bytes that are not UTF-8, and control characters, are refused, and
	 * the reply says which byte and where. */
	r = reply("set a2b delay 5ms\xff");
	CHECK_STR_CONTAINS(r, "line is not text");
	CHECK_STR_CONTAINS(r, "0xff at byte 18");
	free(r);
	r = reply("set a2b delay\x01 5ms");
	CHECK_STR_CONTAINS(r, "0x01 at byte 14");
	free(r);
	r = reply("set a2b trace /t/caf\xc3");     /* a sequence cut short */
	CHECK_STR_CONTAINS(r, "0xc3 at byte 21");
	free(r);
	r = reply("set a2b trace /t/\xc0\xaf");    /* an overlong '/' */
	CHECK_STR_CONTAINS(r, "0xc0 at byte 18");
	free(r);
	r = reply("show\x7f");
	CHECK_STR_CONTAINS(r, "0x7f at byte 5");
	free(r);

	return mt_summary();
}
