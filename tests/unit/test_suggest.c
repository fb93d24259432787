/* "Did you mean ...?": the edit distance against known values, which words
 * are close enough to suggest, and the grammar's message for a misspelt
 * word. */
#include <stdint.h>
#include <string.h>

#include "config.h"
#include "minitest.h"
#include "suggest.h"

static void distances(void)
{
	/* The textbook pairs, and the swap of two neighbours as one edit
	 * (optimal string alignment: "ca" -> "abc" is 3, not 2 as in the
	 * unrestricted Damerau distance). */
	CHECK_EQ_U64(le_edit_distance("kitten", "sitting"), 3);
	CHECK_EQ_U64(le_edit_distance("flaw", "lawn"), 2);
	CHECK_EQ_U64(le_edit_distance("", "abc"), 3);
	CHECK_EQ_U64(le_edit_distance("abc", ""), 3);
	CHECK_EQ_U64(le_edit_distance("", ""), 0);
	CHECK_EQ_U64(le_edit_distance("dealy", "delay"), 1);
	CHECK_EQ_U64(le_edit_distance("ca", "abc"), 3);
	CHECK_EQ_U64(le_edit_distance("lose", "loss"), 1);
	CHECK_EQ_U64(le_edit_distance("DELAY", "delay"), 0);
	CHECK_EQ_U64(le_edit_distance("limit-queu", "limit-queue"), 1);
	CHECK_EQ_U64(le_edit_distance("abcdefghijklmnopqrstuvwxyzabcdefg", "a"), SIZE_MAX);
	/* symmetric */
	CHECK_EQ_U64(le_edit_distance("sitting", "kitten"), 3);
	CHECK_EQ_U64(le_edit_distance("abc", "ca"), 3);
}

static const char *const words[] = { "delay", "distribution", "noreorder", "loss", "ecn",
				     "duplicate", "corrupt", "reorder", "gap", "rate", "slot",
				     "trace", "trace-us", "limit", "limit-bytes", "limit-queue",
				     "drop-head", "drop-tail", "codel", "seed" };
#define NWORDS (sizeof(words) / sizeof(words[0]))

static void expect(const char *typed, const char *want)
{
	const char *got = le_suggest(typed, words, NWORDS);

	if (want == NULL)
		CHECK(got == NULL, "'%s' suggested '%s', wanted none", typed, got);
	else
		CHECK(got != NULL && strcmp(got, want) == 0, "'%s' suggested '%s', wanted '%s'",
		      typed, got ? got : "(none)", want);
}

static void suggestions(void)
{
	expect("lose", "loss");
	expect("dealy", "delay");
	expect("delya", "delay");
	expect("Delay", NULL);          /* the word itself (any case): nothing to suggest */
	expect("delay", NULL);
	expect("rat", "rate");
	expect("lmit", "limit");
	expect("limit-queu", "limit-queue");
	expect("dupliate", "duplicate");
	expect("corupt", "corrupt");
	expect("distribuiton", "distribution");
	expect("drop_tail", "drop-tail");
	expect("jitter", NULL);         /* nothing near: no guess */
	expect("xyz", NULL);
	expect("l", NULL);              /* one letter is no evidence */
	expect("", NULL);
	/* 2 edits allowed only from 5 letters on: "lost" is 1 from "loss", "lxsx" 2 */
	expect("lost", "loss");
	expect("lxsx", NULL);
	expect("gat", "gap");
	expect("sed", "seed");
}

static void grammar_message(void)
{
	struct le_link_config c;
	char err[LE_ERR_MAX] = "";

	CHECK(le_config_parse("lose 1%", &c, err, sizeof(err)) != 0);
	CHECK_STR_CONTAINS(err, "unknown word 'lose'");
	CHECK_STR_CONTAINS(err, "did you mean 'loss'?");
	/* After delay TIME, 'lose' is read as the optional JITTER: the error
	 * about the value still names the word it looks like. */
	err[0] = '\0';
	CHECK(le_config_parse("delay 10ms lose 1%", &c, err, sizeof(err)) != 0);
	CHECK_STR_CONTAINS(err, "delay: JITTER 'lose' is not a time");
	CHECK_STR_CONTAINS(err, "did you mean the word 'loss'?");
	err[0] = '\0';
	CHECK(le_config_parse("loss 1% dupliate 2%", &c, err, sizeof(err)) != 0);
	CHECK_STR_CONTAINS(err, "did you mean the word 'duplicate'?");
	err[0] = '\0';
	CHECK(le_config_parse("delay 10ms 5ms rat 1mbit", &c, err, sizeof(err)) != 0);
	CHECK_STR_CONTAINS(err, "did you mean the word 'rate'?");
	err[0] = '\0';
	CHECK(le_config_parse("delay 10xs", &c, err, sizeof(err)) != 0);
	CHECK(strstr(err, "did you mean") == NULL, "'%s' guesses", err);
	err[0] = '\0';
	CHECK(le_config_parse("dealy 10ms", &c, err, sizeof(err)) != 0);
	CHECK_STR_CONTAINS(err, "did you mean 'delay'?");
	err[0] = '\0';
	CHECK(le_config_parse("jitter 10ms", &c, err, sizeof(err)) != 0);
	CHECK_STR_CONTAINS(err, "unknown word 'jitter'");
	CHECK(strstr(err, "did you mean") == NULL, "'%s' guesses", err);
	CHECK_STR_CONTAINS(err, "expected delay");
}

int main(void)
{
	distances();
	suggestions();
	grammar_message();
	return mt_summary();
}
