/* The link grammar: parsing and formatting (see config.h).
 *
 * Every error names the word it concerns and why, because the text usually
 * comes from a user typing a netem-like command line. */
#include "config.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"

enum word { W_DELAY, W_LOSS, W_LIMIT, W_SEED, W_COUNT, W_NONE = -1 };

static const char *const word_names[W_COUNT] = { "delay", "loss", "limit", "seed" };

/* netem words a later version implements: saying so is more useful than
 * "unknown word", and they are never mistaken for a value. */
static const char *const later_words[] = {
	"rate", "duplicate", "corrupt", "reorder", "distribution", "slot", "gap", "ecn",
};

/* netem loss models other than Bernoulli ("loss gemodel ...", "loss state ..."). */
static const char *const later_loss_models[] = { "gemodel", "state" };

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static int in_list(const char *s, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(s, list[i]) == 0)
			return 1;
	return 0;
}

static enum word word_of(const char *s)
{
	for (int i = 0; i < W_COUNT; i++)
		if (strcmp(s, word_names[i]) == 0)
			return (enum word)i;
	return W_NONE;
}

/* A token that starts a clause, so it can never be the value of the
 * previous word ("delay loss 1%" is a missing delay, not a bad time). */
static int is_keyword(const char *s)
{
	return word_of(s) != W_NONE || in_list(s, later_words, NELEM(later_words));
}

void le_config_default(struct le_link_config *c)
{
	memset(c, 0, sizeof(*c));
	c->loss.model = LE_LOSS_NONE;
	c->limit = LE_DEFAULT_LIMIT;
}

/* A token that is not a word. `prev` is the word whose value was the token
 * just before, so netem's positional extras get a precise message. */
static int bad_token(const char *tok, enum word prev, char *err, size_t errlen)
{
	char tmp[LE_ERR_MAX];
	le_ns_t t;
	double p;

	if (prev == W_DELAY && le_parse_time(tok, UINT64_MAX, &t, tmp, sizeof(tmp)) == 0)
		set_err(err, errlen,
			"delay: jitter is not supported in this version ('%s' after the delay)", tok);
	else if (prev == W_LOSS && le_parse_percent(tok, &p, tmp, sizeof(tmp)) == 0)
		set_err(err, errlen,
			"loss: correlation is not supported in this version ('%s' after the loss percentage)",
			tok);
	else if (in_list(tok, later_words, NELEM(later_words)))
		set_err(err, errlen,
			"'%s' is not supported in this version (supported: delay, loss, limit, seed)", tok);
	else
		set_err(err, errlen, "unknown word '%s' (expected delay, loss, limit or seed)", tok);
	return -1;
}

int le_config_parse_words(int nwords, const char *const *words, struct le_link_config *out,
			  char *err, size_t errlen)
{
	char msg[LE_ERR_MAX];
	unsigned seen = 0;
	enum word prev = W_NONE;
	int i = 0;

	le_config_default(out);
	while (i < nwords) {
		const char *w = words[i];
		enum word k = word_of(w);
		const char *after = w; /* for "missing X after '...'" */
		const char *v;
		uint64_t u;

		if (k == W_NONE)
			return bad_token(w, prev, err, errlen);
		if (seen & (1u << k)) {
			set_err(err, errlen, "%s: given twice (each word may appear once)", w);
			return -1;
		}
		seen |= 1u << k;
		i++;
		v = i < nwords && !is_keyword(words[i]) ? words[i] : NULL;

		switch (k) {
		case W_DELAY:
			if (v == NULL)
				goto missing;
			if (le_parse_time(v, LE_MAX_DELAY_NS, &out->delay, msg, sizeof(msg)) < 0)
				goto bad_value;
			break;
		case W_LOSS:
			if (v != NULL && in_list(v, later_loss_models, NELEM(later_loss_models))) {
				set_err(err, errlen, "loss: '%s' is not supported in this version", v);
				return -1;
			}
			if (v != NULL && strcmp(v, "random") == 0) { /* netem's explicit Bernoulli */
				after = "loss random";
				i++;
				v = i < nwords && !is_keyword(words[i]) ? words[i] : NULL;
			}
			if (v == NULL)
				goto missing;
			if (le_parse_percent(v, &out->loss.percent, msg, sizeof(msg)) < 0)
				goto bad_value;
			/* Keep the percentage as written, so formatting reproduces it;
			 * the validated text always re-parses with strtod. */
			out->loss.percent = strtod(v, NULL);
			out->loss.model = LE_LOSS_RANDOM;
			out->loss.p = le_prob_from_double(out->loss.percent / 100.0);
			break;
		case W_LIMIT:
			if (v == NULL)
				goto missing;
			if (le_parse_u64(v, 1, LE_MAX_LIMIT, &u, msg, sizeof(msg)) < 0)
				goto bad_value;
			out->limit = (uint32_t)u;
			break;
		case W_SEED:
			if (v == NULL)
				goto missing;
			if (le_parse_u64(v, 0, UINT64_MAX, &out->seed, msg, sizeof(msg)) < 0)
				goto bad_value;
			out->seed_set = 1;
			break;
		default:
			break;
		}
		i++;
		prev = k;
		continue;

missing:
		set_err(err, errlen, "%s: missing %s after '%s'", w,
			k == W_DELAY ? "TIME" : k == W_LOSS ? "PERCENT" : k == W_LIMIT ? "PACKETS" : "N",
			after);
		return -1;
bad_value:
		set_err(err, errlen, "%s: %s", w, msg);
		return -1;
	}
	return 0;
}

int le_config_parse(const char *text, struct le_link_config *out, char *err, size_t errlen)
{
	char *copy, *p;
	const char **words;
	int n = 0, rc;

	copy = strdup(text);
	/* At most one word per two characters, plus one. */
	words = malloc((strlen(text) / 2 + 1) * sizeof(*words));
	if (copy == NULL || words == NULL) {
		free(copy);
		free(words);
		set_err(err, errlen, "out of memory");
		return -1;
	}
	for (p = copy; *p;) {
		while (isspace((unsigned char)*p))
			*p++ = '\0';
		if (*p == '\0')
			break;
		words[n++] = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
	}
	rc = le_config_parse_words(n, words, out, err, errlen);
	free(words);
	free(copy);
	return rc;
}

/* Shortest text that reads back as the same double, preferring plain
 * decimals ("20", "0.0000001") that people write; exponent form only when
 * no decimal of up to 20 places is exact. */
static void format_double(double v, char *buf, size_t buflen)
{
	for (int places = 0; places <= 20; places++) {
		snprintf(buf, buflen, "%.*f", places, v);
		if (strtod(buf, NULL) == v)
			return;
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, buflen, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

size_t le_config_format(const struct le_link_config *c, char *buf, size_t buflen)
{
	char text[LE_CONFIG_TEXT_MAX], num[64];
	size_t len = 0;

	text[0] = '\0';
#define APPEND(...) \
	len += (size_t)snprintf(text + len, sizeof(text) - len, __VA_ARGS__)
	if (c->delay != 0)
		APPEND("%sdelay %s", len ? " " : "", le_format_time(c->delay, num, sizeof(num)));
	if (c->loss.model == LE_LOSS_RANDOM) {
		format_double(c->loss.percent, num, sizeof(num));
		APPEND("%sloss %s%%", len ? " " : "", num);
	}
	if (c->limit != LE_DEFAULT_LIMIT)
		APPEND("%slimit %u", len ? " " : "", (unsigned)c->limit);
	if (c->seed_set)
		APPEND("%sseed %llu", len ? " " : "", (unsigned long long)c->seed);
#undef APPEND

	if (buflen == 0)
		return 0;
	if (len >= buflen)
		len = buflen - 1;
	memcpy(buf, text, len);
	buf[len] = '\0';
	return len;
}
