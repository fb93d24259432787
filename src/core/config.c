/* The link grammar: parsing, validation and formatting (see config.h and
 * docs/grammar.md).
 *
 * Every error names the word it concerns and why, because the text usually
 * comes from a user typing a netem-like command line. */
#include "config.h"
#include "err.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suggest.h"
#include "trace.h"
#include "units.h"

enum word {
	W_DELAY, W_DISTRIBUTION, W_NOREORDER, W_LOSS, W_ECN, W_DUPLICATE, W_CORRUPT, W_REORDER, W_GAP,
	W_RATE, W_SLOT, W_TRACE, W_TRACE_US, W_LIMIT, W_LIMIT_BYTES, W_LIMIT_QUEUE, W_DROP_HEAD,
	W_DROP_TAIL, W_CODEL, W_SEED, W_COUNT, W_NONE = -1
};

static const char *const word_names[W_COUNT] = {
	"delay", "distribution", "noreorder", "loss", "ecn", "duplicate", "corrupt", "reorder", "gap",
	"rate", "slot", "trace", "trace-us", "limit", "limit-bytes", "limit-queue", "drop-head",
	"drop-tail", "codel", "seed",
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static enum word word_of(const char *s)
{
	for (int i = 0; i < W_COUNT; i++)
		if (strcmp(s, word_names[i]) == 0)
			return (enum word)i;
	return W_NONE;
}

void le_config_default(struct le_link_config *c)
{
	memset(c, 0, sizeof(*c));
	c->loss.model = LE_LOSS_NONE;
	c->limit = LE_DEFAULT_LIMIT;
	c->dist = LE_DIST_UNIFORM;
	c->codel.target = LE_CODEL_TARGET_NS;
	c->codel.interval = LE_CODEL_INTERVAL_NS;
}

int le_config_has_queue(const struct le_link_config *c)
{
	return c->rate.bps != 0 || c->trace.enabled || c->slot.enabled;
}

int le_config_reorders(const struct le_link_config *c)
{
	return (c->jitter != 0 && !c->noreorder) || c->reorder_set;
}

/* --- parsing ------------------------------------------------------------- */

struct pctx {
	int n;
	const char *const *w;
	int i;            /* next token */
	char *err;
	size_t errlen;
	char msg[LE_ERR_MAX];
};

/* The next token when it can be a value: present and not a word (so
 * "delay loss 1%" is a missing delay, not a bad time). Not consumed. */
static const char *peek(const struct pctx *p)
{
	/* 'class' is the path grammar's word: a rule missing its ';' ends
	 * the link here and is named as such (le_config_parse_words). */
	return p->i < p->n && word_of(p->w[p->i]) == W_NONE && strcmp(p->w[p->i], "class") != 0 ? p->w[p->i]
													: NULL;
}

/* A unit standing alone ("ms", "mbit", "kb"): letters that make a value
 * of the kinds the word takes (UK_* bits) after a number. */
enum { UK_TIME = 1, UK_RATE = 2, UK_SIZE = 4 };

static unsigned unit_kinds(enum word w)
{
	switch (w) {
	case W_DELAY:
	case W_CODEL:
		return UK_TIME;
	case W_SLOT:
		return UK_TIME | UK_SIZE;
	case W_RATE:
		return UK_RATE;
	case W_LIMIT_BYTES:
		return UK_SIZE;
	default:
		return 0;
	}
}

static int is_unit_word(const char *w, unsigned kinds)
{
	char buf[24], m[LE_ERR_MAX];
	uint64_t u;
	le_ns_t t;

	if (*w == '\0' || strlen(w) > 8)
		return 0;
	for (const char *c = w; *c; c++)
		if (!isalpha((unsigned char)*c))
			return 0;
	snprintf(buf, sizeof(buf), "1%s", w);
	return ((kinds & UK_TIME) && le_parse_time(buf, UINT64_MAX, &t, m, sizeof(m)) == 0) ||
	       ((kinds & UK_RATE) && le_parse_rate(buf, UINT64_MAX, &u, m, sizeof(m)) == 0) ||
	       ((kinds & UK_SIZE) && le_parse_size(buf, 0, UINT64_MAX, &u, m, sizeof(m)) == 0);
}

/* Digits with at most one '.': a number without its unit. */
static int is_bare_number(const char *w)
{
	int digits = 0, dots = 0;

	for (const char *c = w; *c; c++) {
		if (isdigit((unsigned char)*c))
			digits++;
		else if (*c == '.' && dots++ == 0)
			continue;
		else
			return 0;
	}
	return digits > 0;
}

static int fail(struct pctx *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct pctx *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	le_verr(p->err, p->errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* Takes a required value: "W: missing WHAT after 'AFTER'". */
static const char *need(struct pctx *p, const char *word, const char *what, const char *after)
{
	const char *v = peek(p);

	if (v == NULL) {
		fail(p, "%s: missing %s after '%s'", word, what, after);
		return NULL;
	}
	p->i++;
	return v;
}

/* A value that did not parse (the reason is in p->msg). A value that looks
 * like a misspelt word ("delay 10ms lose 1%" reads 'lose' as the JITTER)
 * says which word it probably was. */
static int bad_value(struct pctx *p, const char *word, const char *what, const char *v)
{
	const char *near = le_suggest(v, word_names, W_COUNT);

	return fail(p, "%s: %s%s%s%s%s%s", word, what ? what : "", what ? " " : "", p->msg,
		    near ? " (did you mean the word '" : "", near ? near : "", near ? "'?)" : "");
}

static int time_value(struct pctx *p, const char *word, const char *what, const char *v, le_ns_t max,
		      le_ns_t *out)
{
	if (le_parse_time(v, max, out, p->msg, sizeof(p->msg)) < 0)
		return bad_value(p, word, what, v);
	return 0;
}

/* A percentage, kept as written (for formatting) and as a probability. */
static int percent_value(struct pctx *p, const char *word, const char *what, const char *v,
			 double *percent, struct le_prob *prob)
{
	double f;

	if (le_parse_percent(v, &f, p->msg, sizeof(p->msg)) < 0)
		return bad_value(p, word, what, v);
	/* Keep the percentage as written; the validated text re-parses with
	 * strtod. */
	*percent = strtod(v, NULL);
	*prob = le_prob_from_double(*percent / 100.0);
	return 0;
}

static int corr_value(struct pctx *p, const char *word, const char *v, double *percent, int *set,
		      struct le_corr *corr)
{
	struct le_prob unused;

	if (percent_value(p, word, "CORRELATION", v, percent, &unused) < 0)
		return -1;
	*set = 1;
	*corr = le_corr_from_double(*percent / 100.0);
	return 0;
}

/* PERCENT [CORRELATION] */
static int chance_value(struct pctx *p, const char *word, struct le_chance *c)
{
	const char *v = need(p, word, "PERCENT", word);

	if (v == NULL || percent_value(p, word, NULL, v, &c->percent, &c->p) < 0)
		return -1;
	if ((v = peek(p)) != NULL) {
		p->i++;
		return corr_value(p, word, v, &c->corr_percent, &c->corr_set, &c->corr);
	}
	return 0;
}

static int u64_value(struct pctx *p, const char *word, const char *what, const char *v, uint64_t min,
		     uint64_t max, uint64_t *out)
{
	if (le_parse_u64(v, min, max, out, p->msg, sizeof(p->msg)) < 0)
		return bad_value(p, word, what, v);
	return 0;
}

static int file_value(struct pctx *p, const char *word, const char *v, char *out)
{
	if (strlen(v) >= LE_FILE_MAX)
		return fail(p, "%s: file name longer than %d characters", word, LE_FILE_MAX - 1);
	strcpy(out, v);
	return 0;
}

/* A distribution: a built-in name, or a .dist file (read now so that its
 * errors come with the configuration's). */
static int dist_value(struct pctx *p, const char *word, const char *v, enum le_dist *d, char *file)
{
	struct le_dist_table t;
	size_t n = strlen(v);

	if (le_dist_from_name(v, d) == 0)
		return 0;
	if (strchr(v, '/') == NULL && !(n > 5 && strcmp(v + n - 5, ".dist") == 0))
		return fail(p,
			    "%s: '%s' is neither uniform, normal, pareto, paretonormal nor a .dist file (a path with '/' or ending in .dist)",
			    word, v);
	if (file_value(p, word, v, file) < 0)
		return -1;
	if (le_dist_load(file, &t, p->msg, sizeof(p->msg)) < 0)
		return fail(p, "%s: %s", word, p->msg);
	le_dist_table_free(&t);
	*d = LE_DIST_FILE;
	return 0;
}

static int parse_delay(struct pctx *p, struct le_link_config *c)
{
	const char *v = need(p, "delay", "TIME", "delay");

	if (v == NULL || time_value(p, "delay", NULL, v, LE_MAX_DELAY_NS, &c->delay) < 0)
		return -1;
	if ((v = peek(p)) == NULL)
		return 0;
	p->i++;
	if (time_value(p, "delay", "JITTER", v, LE_MAX_DELAY_NS, &c->jitter) < 0)
		return -1;
	if (c->jitter == 0)
		return fail(p, "delay: JITTER must be above 0 (omit it for a constant delay)");
	if ((v = peek(p)) == NULL)
		return 0;
	p->i++;
	return corr_value(p, "delay", v, &c->jitter_corr_percent, &c->jitter_corr_set, &c->jitter_corr);
}

static const char *const ge_names[4] = { "P", "R", "1-H", "1-K" };
static const char *const state_names[5] = { "P13", "P31", "P32", "P23", "P14" };

static int parse_loss(struct pctx *p, struct le_link_config *c)
{
	struct le_loss_config *l = &c->loss;
	const char *v = peek(p), *after = "loss";
	int ge;

	if (v != NULL && (strcmp(v, "gemodel") == 0 || strcmp(v, "state") == 0)) {
		const char *const *names;
		unsigned max;
		char word[16];

		p->i++;
		ge = v[0] == 'g';
		names = ge ? ge_names : state_names;
		max = ge ? 4 : 5;
		snprintf(word, sizeof(word), "loss %s", ge ? "gemodel" : "state");
		l->model = ge ? LE_LOSS_GEMODEL : LE_LOSS_STATE;
		for (l->nparam = 0; l->nparam < max; l->nparam++) {
			char what[16];

			if ((v = peek(p)) == NULL) {
				if (l->nparam == 0)
					return fail(p, "%s: missing %s after '%s'", word, names[0], word);
				break;
			}
			p->i++;
			snprintf(what, sizeof(what), "%s", names[l->nparam]);
			if (percent_value(p, word, what, v, &l->param[l->nparam], &l->prob[l->nparam]) < 0)
				return -1;
		}
		/* netem's defaults (iproute2 q_netem.c): gemodel r = 1 - p,
		 * 1-h = 100 %, 1-k = 0; state p31 = 1 - p13, p32 = 0,
		 * p23 = 100 %, p14 = 0. */
		static const double ge_default[4] = { 0, -1, 100, 0 };
		static const double state_default[5] = { 0, -1, 0, 100, 0 };
		for (unsigned k = l->nparam; k < max; k++) {
			double d = ge ? ge_default[k] : state_default[k];
			l->param[k] = d < 0 ? 100.0 - l->param[0] : d;
			l->prob[k] = le_prob_from_double(l->param[k] / 100.0);
		}
		if (!ge) {
			if (l->param[0] + l->param[4] > 100.0 + 1e-9)
				return fail(p, "loss state: P13 + P14 exceed 100%% (they leave state 1 together)");
			if (l->param[1] + l->param[2] > 100.0 + 1e-9)
				return fail(p, "loss state: P31 + P32 exceed 100%% (they leave state 3 together)");
			l->cum[0] = le_prob_from_double((l->param[0] + l->param[4]) / 100.0);
			l->cum[1] = le_prob_from_double((l->param[1] + l->param[2]) / 100.0);
		}
		return 0;
	}
	if (v != NULL && strcmp(v, "random") == 0) { /* netem's explicit Bernoulli */
		p->i++;
		l->random_word = 1;
		after = "loss random";
	}
	if ((v = need(p, "loss", "PERCENT", after)) == NULL)
		return -1;
	if (percent_value(p, "loss", NULL, v, &l->percent, &l->p) < 0)
		return -1;
	l->model = LE_LOSS_RANDOM;
	if ((v = peek(p)) != NULL) {
		p->i++;
		return corr_value(p, "loss", v, &l->corr_percent, &l->corr_set, &l->corr);
	}
	return 0;
}

static int parse_rate(struct pctx *p, struct le_link_config *c)
{
	struct le_rate_config *r = &c->rate;
	const char *v = need(p, "rate", "RATE", "rate");
	int64_t s;
	uint64_t u;

	if (v == NULL)
		return -1;
	if (le_parse_rate(v, LE_MAX_RATE_BPS, &r->bps, p->msg, sizeof(p->msg)) < 0)
		return fail(p, "rate: %s", p->msg);
	if ((v = peek(p)) == NULL)
		return 0;
	p->i++;
	r->nparam = 1;
	if (le_parse_s64(v, INT32_MIN, INT32_MAX, &s, p->msg, sizeof(p->msg)) < 0)
		return fail(p, "rate: PACKETOVERHEAD %s", p->msg);
	r->packet_overhead = s;
	if ((v = peek(p)) == NULL)
		return 0;
	p->i++;
	r->nparam = 2;
	if (u64_value(p, "rate", "CELLSIZE", v, 0, UINT32_MAX, &u) < 0)
		return -1;
	r->cell_size = (uint32_t)u;
	if ((v = peek(p)) == NULL)
		return 0;
	p->i++;
	r->nparam = 3;
	if (le_parse_s64(v, INT32_MIN, INT32_MAX, &s, p->msg, sizeof(p->msg)) < 0)
		return fail(p, "rate: CELLOVERHEAD %s", p->msg);
	r->cell_overhead = s;
	if (r->cell_size == 0 && s != 0)
		return fail(p, "rate: CELLOVERHEAD needs a CELLSIZE above 0");
	return 0;
}

static int parse_slot(struct pctx *p, struct le_link_config *c)
{
	struct le_slot_config *s = &c->slot;
	const char *v;
	int got_packets = 0, got_bytes = 0;
	uint64_t u;

	s->enabled = 1;
	/* "distribution" is also a word of its own; right after slot it is
	 * slot's. */
	if (p->i < p->n && strcmp(p->w[p->i], "distribution") == 0) {
		p->i++;
		s->use_dist = 1;
		if ((v = need(p, "slot", "DIST", "slot distribution")) == NULL ||
		    dist_value(p, "slot distribution", v, &s->dist, s->dist_file) < 0)
			return -1;
		if ((v = need(p, "slot", "DELAY", "slot distribution DIST")) == NULL ||
		    time_value(p, "slot", "DELAY", v, LE_MAX_DELAY_NS, &s->dist_delay) < 0)
			return -1;
		if ((v = need(p, "slot", "JITTER", "slot distribution DIST DELAY")) == NULL ||
		    time_value(p, "slot", "JITTER", v, LE_MAX_DELAY_NS, &s->dist_jitter) < 0)
			return -1;
		if (s->dist_jitter == 0)
			return fail(p, "slot: JITTER must be above 0 (netem: non-positive jitter)");
	} else {
		if ((v = need(p, "slot", "MIN or 'distribution'", "slot")) == NULL ||
		    time_value(p, "slot", "MIN", v, LE_MAX_DELAY_NS, &s->min) < 0)
			return -1;
		s->max = s->min;
		if ((v = peek(p)) != NULL && strcmp(v, "packets") != 0 && strcmp(v, "bytes") != 0) {
			p->i++;
			s->max_set = 1;
			if (time_value(p, "slot", "MAX", v, LE_MAX_DELAY_NS, &s->max) < 0)
				return -1;
			if (s->max < s->min)
				return fail(p, "slot: MAX '%s' is below MIN", v);
		}
		if (s->max == 0)
			return fail(p, "slot: MIN and MAX are 0, which disables slots (netem ignores them)");
	}
	while ((v = peek(p)) != NULL && (strcmp(v, "packets") == 0 || strcmp(v, "bytes") == 0)) {
		int packets = v[0] == 'p';
		const char *name = packets ? "packets" : "bytes";

		if (packets ? got_packets++ : got_bytes++)
			return fail(p, "slot: %s given twice", name);
		p->i++;
		if ((v = need(p, "slot", packets ? "N" : "SIZE", name)) == NULL)
			return -1;
		if (packets) {
			if (u64_value(p, "slot packets", NULL, v, 0, INT32_MAX, &u) < 0)
				return -1;
			s->packets = (uint32_t)u;
		} else {
			if (le_parse_size(v, 0, INT32_MAX, &u, p->msg, sizeof(p->msg)) < 0)
				return fail(p, "slot bytes: %s", p->msg);
			s->bytes = (uint32_t)u;
		}
	}
	return 0;
}

static int parse_trace(struct pctx *p, struct le_link_config *c, int us)
{
	const char *word = us ? "trace-us" : "trace";
	const char *v = need(p, word, "FILE", word);
	struct le_trace t;

	if (v == NULL || file_value(p, word, v, c->trace.file) < 0)
		return -1;
	c->trace.enabled = 1;
	c->trace.us = us;
	if ((v = peek(p)) != NULL && strcmp(v, "once") == 0) {
		p->i++;
		c->trace.once = 1;
	}
	if (le_trace_load(c->trace.file, us, &t, p->msg, sizeof(p->msg)) < 0)
		return fail(p, "%s: %s", word, p->msg);
	le_trace_free(&t);
	return 0;
}

static int parse_codel(struct pctx *p, struct le_link_config *c)
{
	struct le_codel_config *q = &c->codel;
	const char *v;

	q->enabled = 1;
	for (;;) {
		int *set;
		le_ns_t *t;

		if (p->i < p->n && strcmp(p->w[p->i], "ecn") == 0) {
			/* `ecn` right after codel's options is codel's own */
			if (q->ecn)
				return -2; /* a second ecn: the link's word, handled by the caller */
			p->i++;
			q->ecn = 1;
			continue;
		}
		if ((v = peek(p)) == NULL || (strcmp(v, "target") != 0 && strcmp(v, "interval") != 0))
			return 0;
		p->i++;
		set = v[0] == 't' ? &q->target_set : &q->interval_set;
		t = v[0] == 't' ? &q->target : &q->interval;
		if (*set)
			return fail(p, "codel: %s given twice", v);
		*set = 1;
		{
			const char *what = v[0] == 't' ? "target" : "interval";
			if ((v = need(p, "codel", "TIME", what)) == NULL ||
			    time_value(p, "codel", what, v, LE_MAX_DELAY_NS, t) < 0)
				return -1;
			if (*t == 0)
				return fail(p, "codel: %s must be above 0", what);
		}
	}
}

/* Checks across words, once all are read. */
static int validate(struct pctx *p, struct le_link_config *c, unsigned seen)
{
#define SEEN(w) (seen & (1u << (w)))
	if (SEEN(W_DISTRIBUTION) && c->jitter == 0)
		return fail(p, "distribution: needs a jitter (delay TIME JITTER); netem: distribution specified but no latency and jitter values");
	if (c->noreorder && c->jitter == 0)
		return fail(p, "noreorder: needs a jitter (delay TIME JITTER): without one frames never reorder");
	if (c->ecn && c->loss.model == LE_LOSS_NONE)
		return fail(p, "ecn: needs a loss model (netem: ecn requested without loss model)");
	if (c->reorder_set && c->delay == 0)
		return fail(p, "reorder: needs a delay (netem: reordering not possible without specifying some delay)");
	if (c->gap_set && !c->reorder_set)
		return fail(p, "gap: needs reorder (netem: gap specified without reorder probability)");
	if (c->reorder_set && c->noreorder)
		return fail(p, "reorder and noreorder contradict each other");
	if (c->reorder_set && !c->gap_set)
		c->gap = 1; /* netem: reorder without gap means gap 1 */
	if (c->trace.enabled && c->rate.bps)
		return fail(p, "trace and rate both set the link's serializer: give one");
	if (c->trace.enabled && c->slot.enabled)
		return fail(p, "trace and slot both set when frames leave: give one");
	if (SEEN(W_TRACE) && SEEN(W_TRACE_US))
		return fail(p, "trace and trace-us: give one");
	if (SEEN(W_DROP_HEAD) && SEEN(W_DROP_TAIL))
		return fail(p, "drop-head and drop-tail contradict each other");
	if (!le_config_has_queue(c)) {
		static const enum word qwords[] = { W_LIMIT_BYTES, W_LIMIT_QUEUE, W_DROP_HEAD, W_CODEL };
		for (unsigned k = 0; k < NELEM(qwords); k++)
			if (SEEN(qwords[k]))
				return fail(p, "%s: needs a queue, which only a serializer has: give rate, trace or slot",
					    word_names[qwords[k]]);
	}
#undef SEEN
	return 0;
}

int le_config_parse_words(int nwords, const char *const *words, struct le_link_config *out,
			  char *err, size_t errlen)
{
	struct pctx p = { nwords, words, 0, err, errlen, "" };
	unsigned seen = 0;

	le_config_default(out);
	/* A unit parted from its number ("delay 10 ms", "rate 10 mbit") would
	 * be read as the next value and blamed as that ("JITTER 'ms' is not a
	 * time", "PACKETOVERHEAD 'mbit' is not an integer"), or the number
	 * taken in the default unit first. No value of the grammar is a bare
	 * unit after a bare number, so say what it is, under its word (when
	 * the word takes values in that unit). */
	for (int k = 1; k < nwords; k++) {
		enum word kw = W_NONE;

		if (!is_bare_number(words[k - 1]))
			continue;
		for (int j = k - 1; j >= 0 && kw == W_NONE; j--)
			kw = word_of(words[j]);
		if (kw != W_NONE && is_unit_word(words[k], unit_kinds(kw)))
			return fail(&p, "%s: '%s' is a unit on its own: write it with its number, '%s%s'",
				    word_names[kw], words[k], words[k - 1], words[k]);
	}
	while (p.i < p.n) {
		const char *w = words[p.i];
		enum word k = word_of(w);
		const char *v;
		uint64_t u;
		int rc = 0;

		if (k == W_NONE && strcmp(w, "class") == 0)
			return fail(&p,
				    "class: a class rule comes after a ';', behind the link it splits (LINK ; class NAME match ... : LINK; "
				    "with no link for the rest: '; class ...')");
		if (k == W_NONE) {
			const char *near = le_suggest(w, word_names, W_COUNT);
			return fail(&p,
				    "unknown word '%s'%s%s%s (expected delay, distribution, noreorder, loss, ecn, duplicate, corrupt, reorder, gap, rate, slot, trace, trace-us, limit, limit-bytes, limit-queue, drop-head, drop-tail, codel or seed)",
				    w, near ? ": did you mean '" : "", near ? near : "", near ? "'?" : "");
		}
		if (seen & (1u << k))
			return fail(&p, "%s: given twice (each word may appear once)", w);
		seen |= 1u << k;
		p.i++;

		switch (k) {
		case W_DELAY:
			rc = parse_delay(&p, out);
			break;
		case W_DISTRIBUTION:
			if ((v = need(&p, w, "NAME or FILE", w)) == NULL)
				return -1;
			rc = dist_value(&p, w, v, &out->dist, out->dist_file);
			out->dist_set = 1;
			break;
		case W_NOREORDER:
			out->noreorder = 1;
			break;
		case W_LOSS:
			rc = parse_loss(&p, out);
			break;
		case W_ECN:
			out->ecn = 1;
			break;
		case W_DUPLICATE:
			rc = chance_value(&p, w, &out->duplicate);
			out->duplicate_set = 1;
			break;
		case W_CORRUPT:
			rc = chance_value(&p, w, &out->corrupt);
			out->corrupt_set = 1;
			break;
		case W_REORDER:
			rc = chance_value(&p, w, &out->reorder);
			out->reorder_set = 1;
			break;
		case W_GAP:
			if ((v = need(&p, w, "N", w)) == NULL || u64_value(&p, w, NULL, v, 1, UINT32_MAX, &u) < 0)
				return -1;
			out->gap = (uint32_t)u;
			out->gap_set = 1;
			break;
		case W_RATE:
			rc = parse_rate(&p, out);
			break;
		case W_SLOT:
			rc = parse_slot(&p, out);
			break;
		case W_TRACE:
		case W_TRACE_US:
			rc = parse_trace(&p, out, k == W_TRACE_US);
			break;
		case W_LIMIT:
		case W_LIMIT_QUEUE:
			if ((v = need(&p, w, "PACKETS", w)) == NULL ||
			    u64_value(&p, w, NULL, v, 1, LE_MAX_LIMIT, &u) < 0)
				return -1;
			*(k == W_LIMIT ? &out->limit : &out->limit_queue) = (uint32_t)u;
			break;
		case W_LIMIT_BYTES:
			if ((v = need(&p, w, "SIZE", w)) == NULL)
				return -1;
			if (le_parse_size(v, 1, LE_MAX_LIMIT_BYTES, &out->limit_bytes, p.msg, sizeof(p.msg)) < 0)
				return fail(&p, "%s: %s", w, p.msg);
			break;
		case W_DROP_HEAD:
		case W_DROP_TAIL:
			out->drop_head = k == W_DROP_HEAD;
			out->drop_set = 1;
			break;
		case W_CODEL:
			rc = parse_codel(&p, out);
			if (rc == -2) /* "codel ecn ecn": the second is the link's word, next */
				rc = 0;
			break;
		case W_SEED:
			if ((v = need(&p, w, "N", w)) == NULL || u64_value(&p, w, NULL, v, 0, UINT64_MAX, &out->seed) < 0)
				return -1;
			out->seed_set = 1;
			break;
		default:
			break;
		}
		if (rc < 0)
			return -1;
	}
	return validate(&p, out, seen);
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
		le_err(err, errlen, "out of memory");
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

/* --- formatting ---------------------------------------------------------- */

struct out {
	char text[LE_CONFIG_TEXT_MAX];
	size_t len;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->len >= sizeof(o->text) - 1)
		return;
	if (o->len)
		o->text[o->len++] = ' ';
	va_start(ap, fmt);
	n = vsnprintf(o->text + o->len, sizeof(o->text) - o->len, fmt, ap);
	va_end(ap);
	o->len += (size_t)n;
	if (o->len >= sizeof(o->text))
		o->len = sizeof(o->text) - 1;
}

static const char *pct(double v, char *buf, size_t n)
{
	le_format_double(v, buf, n - 1);
	strcat(buf, "%");
	return buf;
}

static void put_chance(struct out *o, const char *word, const struct le_chance *c)
{
	char a[64], b[64];

	if (c->corr_set)
		put(o, "%s %s %s", word, pct(c->percent, a, sizeof(a)), pct(c->corr_percent, b, sizeof(b)));
	else
		put(o, "%s %s", word, pct(c->percent, a, sizeof(a)));
}

static const char *dist_text(enum le_dist d, const char *file)
{
	return d == LE_DIST_FILE ? file : le_dist_name(d);
}

size_t le_config_format(const struct le_link_config *c, char *buf, size_t buflen)
{
	struct out o;
	char a[64], b[64], d[64];

	o.len = 0;
	o.text[0] = '\0';
	if (c->delay != 0 || c->jitter != 0) {
		le_format_time(c->delay, a, sizeof(a));
		if (c->jitter == 0)
			put(&o, "delay %s", a);
		else if (!c->jitter_corr_set)
			put(&o, "delay %s %s", a, le_format_time(c->jitter, b, sizeof(b)));
		else
			put(&o, "delay %s %s %s", a, le_format_time(c->jitter, b, sizeof(b)),
			    pct(c->jitter_corr_percent, d, sizeof(d)));
	}
	if (c->dist_set)
		put(&o, "distribution %s", dist_text(c->dist, c->dist_file));
	if (c->noreorder)
		put(&o, "noreorder");
	switch (c->loss.model) {
	case LE_LOSS_RANDOM:
		put(&o, "loss %s%s", c->loss.random_word ? "random " : "",
		    pct(c->loss.percent, a, sizeof(a)));
		if (c->loss.corr_set) {
			o.len += (size_t)snprintf(o.text + o.len, sizeof(o.text) - o.len, " %s",
						  pct(c->loss.corr_percent, a, sizeof(a)));
		}
		break;
	case LE_LOSS_GEMODEL:
	case LE_LOSS_STATE:
		put(&o, "loss %s", c->loss.model == LE_LOSS_GEMODEL ? "gemodel" : "state");
		for (unsigned k = 0; k < c->loss.nparam; k++)
			put(&o, "%s", pct(c->loss.param[k], a, sizeof(a)));
		break;
	default:
		break;
	}
	if (c->ecn)
		put(&o, "ecn");
	if (c->duplicate_set)
		put_chance(&o, "duplicate", &c->duplicate);
	if (c->corrupt_set)
		put_chance(&o, "corrupt", &c->corrupt);
	if (c->reorder_set)
		put_chance(&o, "reorder", &c->reorder);
	if (c->gap_set)
		put(&o, "gap %u", (unsigned)c->gap);
	if (c->rate.bps) {
		put(&o, "rate %s", le_format_rate(c->rate.bps, a, sizeof(a)));
		if (c->rate.nparam >= 1)
			put(&o, "%lld", (long long)c->rate.packet_overhead);
		if (c->rate.nparam >= 2)
			put(&o, "%u", (unsigned)c->rate.cell_size);
		if (c->rate.nparam >= 3)
			put(&o, "%lld", (long long)c->rate.cell_overhead);
	}
	if (c->slot.enabled) {
		if (c->slot.use_dist)
			put(&o, "slot distribution %s %s %s", dist_text(c->slot.dist, c->slot.dist_file),
			    le_format_time(c->slot.dist_delay, a, sizeof(a)),
			    le_format_time(c->slot.dist_jitter, b, sizeof(b)));
		else if (c->slot.max_set)
			put(&o, "slot %s %s", le_format_time(c->slot.min, a, sizeof(a)),
			    le_format_time(c->slot.max, b, sizeof(b)));
		else
			put(&o, "slot %s", le_format_time(c->slot.min, a, sizeof(a)));
		if (c->slot.packets)
			put(&o, "packets %u", (unsigned)c->slot.packets);
		if (c->slot.bytes)
			put(&o, "bytes %s", le_format_size(c->slot.bytes, a, sizeof(a)));
	}
	if (c->trace.enabled)
		put(&o, "%s %s%s", c->trace.us ? "trace-us" : "trace", c->trace.file,
		    c->trace.once ? " once" : "");
	if (c->limit != LE_DEFAULT_LIMIT)
		put(&o, "limit %u", (unsigned)c->limit);
	if (c->limit_bytes)
		put(&o, "limit-bytes %s", le_format_size(c->limit_bytes, a, sizeof(a)));
	if (c->limit_queue)
		put(&o, "limit-queue %u", (unsigned)c->limit_queue);
	if (c->drop_set)
		put(&o, "%s", c->drop_head ? "drop-head" : "drop-tail");
	if (c->codel.enabled) {
		put(&o, "codel");
		if (c->codel.target_set)
			put(&o, "target %s", le_format_time(c->codel.target, a, sizeof(a)));
		if (c->codel.interval_set)
			put(&o, "interval %s", le_format_time(c->codel.interval, a, sizeof(a)));
		if (c->codel.ecn)
			put(&o, "ecn");
	}
	if (c->seed_set)
		put(&o, "seed %llu", (unsigned long long)c->seed);

	if (buflen == 0)
		return 0;
	if (o.len >= buflen)
		o.len = buflen - 1;
	memcpy(buf, o.text, o.len);
	buf[o.len] = '\0';
	return o.len;
}

/* --- equality ------------------------------------------------------------ */

static int corr_eq(struct le_corr a, struct le_corr b)
{
	return a.rho == b.rho && a.full == b.full;
}

static int chance_eq(int set, const struct le_chance *a, const struct le_chance *b)
{
	return !set || (a->percent == b->percent && le_prob_same(a->p, b->p) && a->corr_set == b->corr_set &&
			(!a->corr_set || (a->corr_percent == b->corr_percent && corr_eq(a->corr, b->corr))));
}

int le_config_equal(const struct le_link_config *a, const struct le_link_config *b)
{
	const struct le_loss_config *la = &a->loss, *lb = &b->loss;

	if (a->delay != b->delay || a->limit != b->limit || a->seed_set != b->seed_set ||
	    (a->seed_set && a->seed != b->seed))
		return 0;
	if (a->jitter != b->jitter || a->jitter_corr_set != b->jitter_corr_set ||
	    (a->jitter_corr_set && (a->jitter_corr_percent != b->jitter_corr_percent ||
				    !corr_eq(a->jitter_corr, b->jitter_corr))))
		return 0;
	if (a->dist_set != b->dist_set || a->dist != b->dist ||
	    (a->dist == LE_DIST_FILE && strcmp(a->dist_file, b->dist_file) != 0) || a->noreorder != b->noreorder)
		return 0;
	if (la->model != lb->model)
		return 0;
	if (la->model == LE_LOSS_RANDOM &&
	    (la->percent != lb->percent || !le_prob_same(la->p, lb->p) || la->corr_set != lb->corr_set ||
	     la->random_word != lb->random_word ||
	     (la->corr_set && (la->corr_percent != lb->corr_percent || !corr_eq(la->corr, lb->corr)))))
		return 0;
	if (la->model == LE_LOSS_GEMODEL || la->model == LE_LOSS_STATE) {
		if (la->nparam != lb->nparam)
			return 0;
		for (unsigned k = 0; k < (la->model == LE_LOSS_GEMODEL ? 4u : 5u); k++)
			if (la->param[k] != lb->param[k] || !le_prob_same(la->prob[k], lb->prob[k]))
				return 0;
		if (la->model == LE_LOSS_STATE && (!le_prob_same(la->cum[0], lb->cum[0]) || !le_prob_same(la->cum[1], lb->cum[1])))
			return 0;
	}
	if (a->ecn != b->ecn || a->duplicate_set != b->duplicate_set || a->corrupt_set != b->corrupt_set ||
	    a->reorder_set != b->reorder_set || !chance_eq(a->duplicate_set, &a->duplicate, &b->duplicate) ||
	    !chance_eq(a->corrupt_set, &a->corrupt, &b->corrupt) ||
	    !chance_eq(a->reorder_set, &a->reorder, &b->reorder) || a->gap != b->gap || a->gap_set != b->gap_set)
		return 0;
	if (a->rate.bps != b->rate.bps || a->rate.packet_overhead != b->rate.packet_overhead ||
	    a->rate.cell_size != b->rate.cell_size || a->rate.cell_overhead != b->rate.cell_overhead ||
	    a->rate.nparam != b->rate.nparam)
		return 0;
	if (a->slot.enabled != b->slot.enabled)
		return 0;
	if (a->slot.enabled &&
	    (a->slot.use_dist != b->slot.use_dist || a->slot.min != b->slot.min || a->slot.max != b->slot.max ||
	     a->slot.max_set != b->slot.max_set || a->slot.dist != b->slot.dist ||
	     (a->slot.dist == LE_DIST_FILE && strcmp(a->slot.dist_file, b->slot.dist_file) != 0) ||
	     a->slot.dist_delay != b->slot.dist_delay || a->slot.dist_jitter != b->slot.dist_jitter ||
	     a->slot.packets != b->slot.packets || a->slot.bytes != b->slot.bytes))
		return 0;
	if (a->trace.enabled != b->trace.enabled ||
	    (a->trace.enabled && (a->trace.us != b->trace.us || a->trace.once != b->trace.once ||
				  strcmp(a->trace.file, b->trace.file) != 0)))
		return 0;
	if (a->limit_bytes != b->limit_bytes || a->limit_queue != b->limit_queue || a->drop_head != b->drop_head ||
	    a->drop_set != b->drop_set)
		return 0;
	if (a->codel.enabled != b->codel.enabled ||
	    (a->codel.enabled && (a->codel.target != b->codel.target || a->codel.interval != b->codel.interval ||
				  a->codel.target_set != b->codel.target_set ||
				  a->codel.interval_set != b->codel.interval_set || a->codel.ecn != b->codel.ecn)))
		return 0;
	return 1;
}
