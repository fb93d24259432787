/* le_json_string: every byte string becomes a valid JSON string that
 * means the same text (invalid UTF-8 as U+FFFD). */
#define _GNU_SOURCE /* open_memstream */
#include <stdlib.h>

#include "json.h"
#include "minitest.h"

static void expect(const char *in, const char *want)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	le_json_string(f, in);
	fclose(f);
	CHECK(strcmp(buf, want) == 0, "json(%s) = %s, want %s", in, buf, want);
	free(buf);
}

int main(void)
{
	expect("", "\"\"");
	expect("delay 5ms", "\"delay 5ms\"");
	expect("a\"b\\c", "\"a\\\"b\\\\c\"");
	expect("l1\nl2\tx\r", "\"l1\\nl2\\tx\\r\"");
	expect("\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\"");
	/* valid UTF-8 passes through: e-acute (2 bytes), euro (3), emoji (4) */
	expect("caf\xc3\xa9", "\"caf\xc3\xa9\"");
	expect("\xe2\x82\xac", "\"\xe2\x82\xac\"");
	expect("\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"");
	/* a Latin-1 byte is not U+00E9: it is invalid UTF-8 */
	expect("caf\xe9", "\"caf\\ufffd\"");
	expect("\x80", "\"\\ufffd\"");                          /* stray continuation */
	expect("\xc0\xaf", "\"\\ufffd\\ufffd\"");               /* overlong '/' */
	expect("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");    /* surrogate D800 */
	expect("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""); /* > U+10FFFF */
	expect("\xe2\x82", "\"\\ufffd\\ufffd\"");               /* truncated at the end */
	expect("\xe2\x82x", "\"\\ufffd\\ufffdx\"");             /* truncated mid-string */
	expect("\xff", "\"\\ufffd\"");
	return mt_summary();
}
