/* Mahimahi traces: loading and walking; see trace.h. */
#include "trace.h"
#include "err.h"
#include "textfile.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int le_trace_parse(const char *text, size_t len, const char *name, int us, struct le_trace *t,
		   char *err, size_t errlen)
{
	const char *p = text, *end = text + len;
	const uint64_t max = us ? LE_TRACE_MAX_US : LE_TRACE_MAX_MS;
	const uint64_t unit = us ? LE_NS_PER_US : LE_NS_PER_MS;
	const char *uname = us ? "microseconds" : "milliseconds";
	uint32_t line = 0, cap = 0;
	uint64_t prev = 0;

	memset(t, 0, sizeof(*t));
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *q, *stop = eol ? eol : end;
		uint64_t v = 0;
		int big = 0;
		char q40[4 * 40 + 1];

		line++;
		/* A Windows line end is tolerated; nothing else around the
		 * number is (Mahimahi's myatoi takes the whole line). */
		if (stop > p && stop[-1] == '\r')
			stop--;
		if (stop == p) {
			le_err(err, errlen, "%s:%u: empty line (every line is one delivery opportunity)", name,
				line);
			goto fail;
		}
		if (*p == '-') {
			le_err(err, errlen, "%s:%u: '%s' is negative", name, line,
				le_quote_bytes(q40, sizeof(q40), p, (size_t)(stop - p), 40));
			goto fail;
		}
		for (q = p; q < stop; q++) {
			if (!isdigit((unsigned char)*q)) {
				le_err(err, errlen, "%s:%u: '%s' is not a whole number of %s", name, line,
					le_quote_bytes(q40, sizeof(q40), p, (size_t)(stop - p), 40), uname);
				goto fail;
			}
			v = v * 10 + (uint64_t)(*q - '0');
			if (v > max)
				big = 1, v = max + 1;
		}
		if (big) {
			le_err(err, errlen, "%s:%u: '%s' is too large (max %llu %s)", name, line,
				le_quote_bytes(q40, sizeof(q40), p, (size_t)(stop - p), 40), (unsigned long long)max, uname);
			goto fail;
		}
		if (t->n > 0 && v < prev) {
			le_err(err, errlen, "%s:%u: %llu is below the timestamp before it (%llu): timestamps must not decrease",
				name, line, (unsigned long long)v, (unsigned long long)prev);
			goto fail;
		}
		if (t->n == LE_TRACE_MAX_LINES) {
			le_err(err, errlen, "%s:%u: more than %u lines", name, line, LE_TRACE_MAX_LINES);
			goto fail;
		}
		if (t->n == cap) {
			le_ns_t *grown;
			cap = cap ? cap * 2 : 1024;
			grown = realloc(t->t, (size_t)cap * sizeof(*t->t));
			if (grown == NULL) {
				le_err(err, errlen, "%s: out of memory", name);
				goto fail;
			}
			t->t = grown;
		}
		t->t[t->n++] = v * unit;
		prev = v;
		p = eol ? eol + 1 : end;
	}
	if (t->n == 0) {
		le_err(err, errlen, "%s: empty trace (no delivery opportunities)", name);
		goto fail;
	}
	if (t->t[t->n - 1] == 0) {
		le_err(err, errlen, "%s:%u: the last timestamp is 0: a trace must last a nonzero time (it loops with that period)",
			name, line);
		goto fail;
	}
	t->period = t->t[t->n - 1];
	return 0;
fail:
	le_trace_free(t);
	return -1;
}

static int parse_file(const char *text, size_t len, const char *name, int us, void *out, char *err,
		      size_t errlen)
{
	return le_trace_parse(text, len, name, us, out, err, errlen);
}

static void free_parsed(void *obj)
{
	struct le_trace *t = obj;

	free(t->t);
}

static const struct le_file_kind trace_ms = { "trace", 0, 1L << 30, "1 GiB", sizeof(struct le_trace), parse_file,
					      free_parsed };
static const struct le_file_kind trace_us = { "trace-us", 1, 1L << 30, "1 GiB", sizeof(struct le_trace),
					      parse_file, free_parsed };

int le_trace_load(const char *path, int us, struct le_trace *t, char *err, size_t errlen)
{
	struct le_file_entry *ref;
	const struct le_trace *shared = le_filecache_get(us ? &trace_us : &trace_ms, path, &ref, err, errlen);

	memset(t, 0, sizeof(*t));
	if (shared == NULL)
		return -1;
	*t = *shared;
	t->shared = ref;
	return 0;
}

void le_trace_free(struct le_trace *t)
{
	if (t->shared != NULL)
		le_filecache_put(t->shared);
	else
		free(t->t);
	memset(t, 0, sizeof(*t));
}

void le_trace_step(const struct le_trace *t, struct le_trace_pos *p, int once, uint64_t count)
{
	uint64_t total, laps;

	if (p->ended || count == 0)
		return;
	total = (uint64_t)p->k + count;
	laps = total / t->n;
	if (laps > 0 && once) {
		p->ended = 1;
		return;
	}
	/* Mahimahi: after the last line, the next lap starts one period
	 * later (base += last timestamp). */
	p->base += laps * t->period;
	p->k = (uint32_t)(total % t->n);
}

/* First index whose offset is > rel (strict) or >= rel; n when none. */
static uint32_t search(const struct le_trace *t, le_ns_t rel, int strict)
{
	uint32_t lo = 0, hi = t->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (strict ? t->t[mid] <= rel : t->t[mid] < rel)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void skip(const struct le_trace *t, struct le_trace_pos *p, int once, le_ns_t time, int strict)
{
	le_ns_t rel;
	uint32_t k;

	if (p->ended || time < le_trace_next(t, p) || (!strict && time == le_trace_next(t, p)))
		return;
	rel = time - p->base;
	if (rel >= t->period && !once) {
		uint64_t laps = rel / t->period;
		/* At or after a lap's end: the lap's last opportunity is at
		 * its end (offset == period), so it is still the answer. */
		if (!strict && rel % t->period == 0)
			laps--;
		p->base += laps * t->period;
		rel -= laps * t->period;
	}
	k = search(t, rel, strict);
	if (k == t->n) {
		/* Only when the trace does not loop: a looping trace's rel is
		 * below the period, and its last offset is the period. */
		p->ended = 1;
		return;
	}
	p->k = k;
}

void le_trace_skip_after(const struct le_trace *t, struct le_trace_pos *p, int once, le_ns_t time)
{
	skip(t, p, once, time, 1);
}

void le_trace_skip_to(const struct le_trace *t, struct le_trace_pos *p, int once, le_ns_t time)
{
	skip(t, p, once, time, 0);
}

void le_trace_carry(const struct le_trace *nt, struct le_trace_pos *np, int once, const struct le_trace *ot,
		    const struct le_trace_pos *op, int same)
{
	if (!op->started)
		return;
	if (same) {
		*np = *op;
		return;
	}
	if (op->ended)
		return;
	np->started = 1;
	np->base = op->base;
	np->k = 0;
	le_trace_skip_to(nt, np, once, le_trace_next(ot, op));
}

int le_trace_same(const struct le_trace *a, const struct le_trace *b)
{
	/* O(1) on the data plane: the cache makes one file one table. */
	return a->t == b->t && a->n == b->n;
}
