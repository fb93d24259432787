/* Paths: the class grammar, classification and the per-class links; see
 * path.h. */
#include "path.h"
#include "err.h"
#include "suggest.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void le_path_config_default(struct le_path_config *c)
{
	memset(c, 0, sizeof(*c));
	le_config_default(&c->dflt);
}

static int valid_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n >= LE_CLASS_NAME_MAX)
		return 0;
	for (const char *p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-')
			return 0;
	return 1;
}

/* Splits a segment into words in place. */
static int split(char *s, char **w, int max)
{
	int n = 0;

	while (*s) {
		while (isspace((unsigned char)*s))
			*s++ = '\0';
		if (*s == '\0')
			break;
		if (n == max)
			return -1;
		w[n++] = s;
		while (*s && !isspace((unsigned char)*s))
			s++;
	}
	return n;
}

/* Parses LINK [>> LINK ...] from words into hop 0 (*first) and the
 * path's pool of further hops. Errors say which hop. */
static int parse_chain(int n, char **w, struct le_link_config *first, struct le_hops *hops,
		       struct le_path_config *out, char *err, size_t errlen)
{
	char sub[LE_ERR_MAX];
	int start = 0;
	unsigned hop = 0;

	hops->more = 0;
	hops->first = (uint8_t)out->nextra;
	for (int k = 0; k <= n; k++) {
		struct le_link_config *dst;

		if (k < n && strcmp(w[k], ">>") != 0)
			continue;
		if (k == n && hop == 0)
			return le_config_parse_words(n, (const char *const *)w, first, err, errlen);
		if (k == start)
			return le_err(err, errlen, "hop %u is empty: '>>' %s (LINK >> LINK, each hop at least one word)",
				      hop + 1, k == 0 ? "at the start" : k == n ? "at the end" : "twice in a row");
		if (hop + 1 > LE_MAX_HOPS)
			return le_err(err, errlen, "more than %d hops in one link (each hop has its own rings)",
				      LE_MAX_HOPS);
		if (hop > 0 && out->nextra == LE_PATH_EXTRA_HOPS)
			return le_err(err, errlen, "more than %d hops after the first ones in a path", LE_PATH_EXTRA_HOPS);
		dst = hop == 0 ? first : &out->extra[out->nextra];
		if (le_config_parse_words(k - start, (const char *const *)w + start, dst, sub, sizeof(sub)) < 0)
			return le_err(err, errlen, "hop %u: %s", hop + 1, sub);
		if (hop > 0) {
			out->nextra++;
			hops->more++;
		}
		hop++;
		start = k + 1;
	}
	return 0;
}

/* Copies text with spaces around each ">>", so "a>>b" is three words. */
static char *space_chains(const char *text)
{
	size_t len = strlen(text);
	char *s = malloc(len * 2 + 1), *o = s;

	if (s == NULL)
		return NULL;
	for (const char *p = text; *p; p++) {
		if (p[0] == '>' && p[1] == '>') {
			o += sprintf(o, " >> ");
			p++;
		} else {
			*o++ = *p;
		}
	}
	*o = '\0';
	return s;
}

unsigned le_path_config_hops(const struct le_path_config *c, unsigned cls)
{
	return 1u + (cls == 0 ? c->dflt_hops.more : c->cls[cls - 1].hops.more);
}

const struct le_link_config *le_path_config_hop(const struct le_path_config *c, unsigned cls, unsigned hop)
{
	const struct le_hops *h = cls == 0 ? &c->dflt_hops : &c->cls[cls - 1].hops;

	if (hop == 0)
		return cls == 0 ? &c->dflt : &c->cls[cls - 1].link;
	return &c->extra[h->first + hop - 1];
}

const char *le_punt_transport_name(enum le_punt_transport t)
{
	return t == LE_PUNT_FIFO ? "fifo" : t == LE_PUNT_SHM ? "shm" : "";
}

/* A shared-memory name: what shm_open takes after its '/', kept to the
 * characters a file name in /dev/shm needs no quoting for. */
static int valid_shm_name(const char *s)
{
	if (s[0] == '\0' || s[0] == '.')
		return 0;
	for (const char *p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-' && *p != '.')
			return 0;
	return 1;
}

/* `punt fifo PATH` or `punt shm NAME` at w[0..]: the words it took (3),
 * or -1 with the reason. The link's words follow. */
static int parse_punt(int n, char **w, struct le_punt_config *pc, char *err, size_t errlen)
{
	static const char *const transports[] = {"fifo", "shm"};
	const char *near;

	if (n < 2)
		return le_err(err, errlen, "punt: missing the transport after 'punt' (punt fifo PATH or punt shm NAME)");
	if (strcmp(w[1], "fifo") == 0)
		pc->transport = LE_PUNT_FIFO;
	else if (strcmp(w[1], "shm") == 0)
		pc->transport = LE_PUNT_SHM;
	else {
		near = le_suggest(w[1], transports, 2);
		return le_err(err, errlen, "punt: '%s' is not a transport (fifo or shm)%s%s%s", w[1],
			      near ? ": did you mean '" : "", near ? near : "", near ? "'?" : "");
	}
	if (n < 3 || strcmp(w[2], ">>") == 0)
		return le_err(err, errlen, "punt %s: missing %s after '%s'", w[1],
			      pc->transport == LE_PUNT_FIFO ? "PATH" : "NAME", w[1]);
	if (strlen(w[2]) >= LE_PUNT_NAME_MAX)
		return le_err(err, errlen, "punt %s: '%.20s...' is longer than %d characters", w[1], w[2],
			      LE_PUNT_NAME_MAX - 1);
	if (pc->transport == LE_PUNT_SHM && !valid_shm_name(w[2]))
		return le_err(err, errlen,
			      "punt shm: '%s' is not a shared-memory name (letters, digits, '_', '-', '.'; no '/', not starting with '.')",
			      w[2]);
	if (pc->transport == LE_PUNT_FIFO && w[2][strlen(w[2]) - 1] == '/')
		return le_err(err, errlen, "punt fifo: '%s' ends in '/': give a path prefix (PATH.out and PATH.in are made)",
			      w[2]);
	strcpy(pc->name, w[2]);
	return 3;
}

static int parse_rule(char *seg, unsigned idx, struct le_path_config *out, char *err, size_t errlen)
{
	struct le_class_config *c = &out->cls[out->nclasses];
	char sub[LE_ERR_MAX];
	int max = (int)strlen(seg) / 2 + 2, n, colon = -1;
	char **w = malloc((size_t)max * sizeof(*w));
	int rc = -1;

	if (w == NULL)
		return le_err(err, errlen, "out of memory");
	n = split(seg, w, max);
	if (n == 0) {
		le_err(err, errlen, "rule %u: nothing after ';' (expected 'class NAME match ... : ...')", idx);
		goto out;
	}
	if (strcmp(w[0], "class") != 0) {
		le_err(err, errlen, "rule %u: '%s' where 'class' was expected (class NAME match FILTER-WORDS : LINK)", idx,
		     w[0]);
		goto out;
	}
	if (n < 2) {
		le_err(err, errlen, "class: missing NAME");
		goto out;
	}
	if (strcmp(w[1], "match") == 0 && (n < 3 || strcmp(w[2], "match") != 0)) {
		/* The name left out: 'match' taken for it gave "class match:
		 * expected 'match' after the name". */
		le_err(err, errlen, "class: missing NAME before 'match' (class NAME match FILTER-WORDS : LINK)");
		goto out;
	}
	if (!valid_name(w[1]) || strcmp(w[1], "default") == 0) {
		le_err(err, errlen, "class: '%s' is not a class name (1 to %d letters, digits, '_' or '-'; not 'default')",
		     w[1], LE_CLASS_NAME_MAX - 1);
		goto out;
	}
	for (unsigned k = 0; k < out->nclasses; k++)
		if (strcmp(out->cls[k].name, w[1]) == 0) {
			le_err(err, errlen, "class %s: the name is used twice", w[1]);
			goto out;
		}
	if (out->nclasses == LE_MAX_CLASSES) {
		le_err(err, errlen, "class %s: more than %d classes", w[1], LE_MAX_CLASSES);
		goto out;
	}
	if (n < 3 || strcmp(w[2], "match") != 0) {
		le_err(err, errlen, "class %s: expected 'match' after the name", w[1]);
		goto out;
	}
	for (int k = 3; k < n; k++)
		if (strcmp(w[k], ":") == 0) {
			colon = k;
			break;
		}
	if (colon < 0) {
		le_err(err, errlen, "class %s: missing ':' between the filter words and the link (a ':' on its own)", w[1]);
		goto out;
	}
	strcpy(c->name, w[1]);
	if (le_match_parse_words(colon - 3, (const char *const *)w + 3, &c->match, sub, sizeof(sub)) < 0) {
		le_err(err, errlen, "class %s: %s", c->name, sub);
		goto out;
	}
	memset(&c->punt, 0, sizeof(c->punt));
	if (colon + 1 < n && strcmp(w[colon + 1], "punt") == 0) {
		int took = parse_punt(n - colon - 1, w + colon + 1, &c->punt, sub, sizeof(sub));

		if (took < 0) {
			le_err(err, errlen, "class %s: %s", c->name, sub);
			goto out;
		}
		for (unsigned k = 0; k < out->nclasses; k++)
			if (out->cls[k].punt.transport == c->punt.transport && strcmp(out->cls[k].punt.name, c->punt.name) == 0) {
				le_err(err, errlen, "class %s: punt %s %s: already used by class %s (one channel per class)",
				       c->name, le_punt_transport_name(c->punt.transport), c->punt.name, out->cls[k].name);
				goto out;
			}
		colon += took;
	}
	for (int k = colon + 1; k < n; k++)
		if (strcmp(w[k], "punt") == 0) {
			le_err(err, errlen, "class %s: punt: must come right after ':' (class NAME match ... : punt fifo PATH [LINK])",
			       c->name);
			goto out;
		}
	if (parse_chain(n - colon - 1, w + colon + 1, &c->link, &c->hops, out, sub, sizeof(sub)) < 0) {
		le_err(err, errlen, "class %s: %s", c->name, sub);
		goto out;
	}
	out->nclasses++;
	rc = 0;
out:
	free(w);
	return rc;
}

int le_path_config_parse(const char *text, struct le_path_config *out, char *err, size_t errlen)
{
	char *copy = space_chains(text), *seg, *semi;
	char sub[LE_ERR_MAX];
	unsigned idx = 0;
	int rc = 0, n;
	char **w = NULL;

	le_path_config_default(out);
	if (copy == NULL)
		return le_err(err, errlen, "out of memory");
	seg = copy;
	semi = strchr(seg, ';');
	if (semi)
		*semi = '\0';
	n = (int)strlen(seg) / 2 + 2;
	w = malloc((size_t)n * sizeof(*w));
	if (w == NULL) {
		rc = le_err(err, errlen, "out of memory");
		goto out;
	}
	n = split(seg, w, n);
	for (int k = 0; k < n; k++)
		if (strcmp(w[k], "punt") == 0) {
			rc = le_err(err, errlen, "punt: only a class can be punted (DEFAULT-LINK ; class NAME match ... : punt fifo PATH [LINK])");
			goto out;
		}
	if (parse_chain(n, w, &out->dflt, &out->dflt_hops, out, sub, sizeof(sub)) < 0) {
		rc = le_err(err, errlen, "%s", sub);
		goto out;
	}
	while (semi) {
		seg = semi + 1;
		semi = strchr(seg, ';');
		if (semi)
			*semi = '\0';
		if (parse_rule(seg, ++idx, out, err, errlen) < 0) {
			rc = -1;
			goto out;
		}
	}
out:
	free(w);
	free(copy);
	return rc;
}

/* Class cls's link: its hops joined by " >> " (a hop that formats as
 * nothing is written "delay 0ms", since an empty hop does not parse). */
static void format_chain(const struct le_path_config *c, unsigned cls, char *buf, size_t buflen)
{
	char hop[LE_CONFIG_TEXT_MAX];
	unsigned n = le_path_config_hops(c, cls);
	size_t len = 0;

	buf[0] = '\0';
	for (unsigned h = 0; h < n; h++) {
		le_config_format(le_path_config_hop(c, cls, h), hop, sizeof(hop));
		if (n > 1 && hop[0] == '\0')
			snprintf(hop, sizeof(hop), "delay 0ms");
		len += (size_t)snprintf(buf + len, len < buflen ? buflen - len : 0, "%s%s", h ? " >> " : "", hop);
	}
}

size_t le_path_config_format(const struct le_path_config *c, char *buf, size_t buflen)
{
	char link[LE_CONFIG_TEXT_MAX * LE_MAX_HOPS], match[512], punt[LE_PUNT_NAME_MAX + 16];
	size_t len = 0;

#define PUT(...) len += (size_t)snprintf(buf + len, len < buflen ? buflen - len : 0, __VA_ARGS__)
	if (buflen)
		buf[0] = '\0';
	format_chain(c, 0, link, sizeof(link));
	PUT("%s", link);
	for (unsigned k = 0; k < c->nclasses; k++) {
		le_match_format(&c->cls[k].match, match, sizeof(match));
		format_chain(c, k + 1, link, sizeof(link));
		punt[0] = '\0';
		if (c->cls[k].punt.transport != LE_PUNT_NONE)
			snprintf(punt, sizeof(punt), " punt %s %s", le_punt_transport_name(c->cls[k].punt.transport),
				 c->cls[k].punt.name);
		PUT("%s; class %s match %s :%s%s%s", len ? " " : "", c->cls[k].name, match, punt, link[0] ? " " : "", link);
	}
#undef PUT
	if (len >= buflen && buflen)
		len = buflen - 1;
	return len;
}

int le_path_config_equal(const struct le_path_config *a, const struct le_path_config *b)
{
	if (a->nclasses != b->nclasses)
		return 0;
	for (unsigned k = 0; k < a->nclasses; k++)
		if (strcmp(a->cls[k].name, b->cls[k].name) != 0 ||
		    !le_match_equal(&a->cls[k].match, &b->cls[k].match) ||
		    a->cls[k].punt.transport != b->cls[k].punt.transport ||
		    strcmp(a->cls[k].punt.name, b->cls[k].punt.name) != 0)
			return 0;
	for (unsigned k = 0; k <= a->nclasses; k++) {
		if (le_path_config_hops(a, k) != le_path_config_hops(b, k))
			return 0;
		for (unsigned h = 0; h < le_path_config_hops(a, k); h++)
			if (!le_config_equal(le_path_config_hop(a, k, h), le_path_config_hop(b, k, h)))
				return 0;
	}
	return 1;
}

/* --- runtime ------------------------------------------------------------- */

/* Class k's earlier hops (0 .. n-2), allocated in up[k]; the last hop
 * is link[k], set up already, so a plain link needs nothing more. */
static int init_hops(struct le_path *p, unsigned k, enum le_direction dir, uint64_t default_seed, char *err,
		     size_t errlen)
{
	unsigned n = le_path_config_hops(&p->cfg, k);
	struct le_chain *c = &p->chain[k];
	char sub[LE_ERR_MAX];

	c->n = 1;
	c->hop[0] = &p->link[k];
	if (n == 1)
		return 0;
	p->up[k] = calloc(n - 1, sizeof(*p->up[k]));
	if (p->up[k] == NULL)
		return le_err(err, errlen, "out of memory");
	for (unsigned h = 0; h + 1 < n; h++) {
		if (le_link_init_ops(&p->up[k][h], le_path_config_hop(&p->cfg, k, h), dir, le_chain_stream(k, h),
				     default_seed, &p->ops, sub, sizeof(sub)) < 0) {
			for (unsigned j = 0; j < h; j++)
				le_link_free(&p->up[k][j]);
			free(p->up[k]);
			p->up[k] = NULL;
			return le_err(err, errlen, "hop %u: %s", h + 1, sub);
		}
		p->up[k][h].cls = k;   /* frames carry their class, whatever the hop */
		c->hop[h] = &p->up[k][h];
	}
	c->hop[n - 1] = &p->link[k];
	for (unsigned h = 0; h + 1 < n; h++)
		c->hop[h]->next = c->hop[h + 1];
	c->n = n;
	p->chained = 1;
	return 0;
}

int le_path_init(struct le_path *p, const struct le_path_config *cfg, enum le_direction dir,
		 uint64_t default_seed, const struct le_frame_ops *ops, char *err, size_t errlen)
{
	char sub[LE_ERR_MAX];

	memset(p, 0, sizeof(*p));
	if (cfg->nclasses > LE_MAX_CLASSES)
		return le_err(err, errlen, "more than %d classes", LE_MAX_CLASSES);
	if (ops == NULL)
		return le_err(err, errlen, "no frame operations");
	if (cfg->nclasses > 0 && ops->bytes == NULL)
		return le_err(err, errlen, "the frame operations lack bytes (class rules read frames)");
	p->cfg = *cfg;
	p->ops = *ops;
	p->dir = dir;
	p->depth = LE_PKT_L2;
	for (unsigned k = 0; k < cfg->nclasses; k++)
		if (cfg->cls[k].punt.transport != LE_PUNT_NONE) {
			if (ops->punt == NULL)
				return le_err(err, errlen, "class %s: punt: this data plane cannot hand frames to a process",
					      cfg->cls[k].name);
			p->punted |= 1ull << k;
		}
	for (unsigned k = 0; k <= cfg->nclasses; k++) {
		/* link[k] is the class's last hop, where its frames leave. */
		unsigned last = le_path_config_hops(cfg, k) - 1;
		const char *cname = k ? cfg->cls[k - 1].name : "";

		if (le_link_init_ops(&p->link[k], le_path_config_hop(cfg, k, last), dir, le_chain_stream(k, last),
				     default_seed, ops, sub, sizeof(sub)) < 0) {
			if (last > 0)
				le_err(err, errlen, "%s%s%shop %u: %s", k ? "class " : "", cname, k ? ": " : "", last + 1,
				       sub);
			else
				le_err(err, errlen, "%s%s%s%s", k ? "class " : "", cname, k ? ": " : "", sub);
			le_path_free(p);
			return -1;
		}
		p->link[k].cls = k;
		p->nlinks = k + 1;
		if (init_hops(p, k, dir, default_seed, sub, sizeof(sub)) < 0) {
			le_err(err, errlen, "%s%s%s%s", k ? "class " : "", cname, k ? ": " : "", sub);
			le_path_free(p);
			return -1;
		}
		if (k > 0 && le_match_depth(&cfg->cls[k - 1].match) > p->depth)
			p->depth = le_match_depth(&cfg->cls[k - 1].match);
	}
	{
		const struct le_match *rules[LE_MAX_CLASSES];

		for (unsigned k = 0; k < cfg->nclasses; k++)
			rules[k] = &cfg->cls[k].match;
		if (le_class_set_build(&p->rules, rules, cfg->nclasses) < 0) {
			le_path_free(p);
			return le_err(err, errlen, "cannot allocate the class rules' tables");
		}
	}
	p->busy[0] = p->busy[1] = ~0ull;
	return 0;
}

/* --- the busy set (path.h) ------------------------------------------------------ */

static int is_busy(const struct le_path *p, unsigned k)
{
	return (p->busy[k >> 6] >> (k & 63)) & 1;
}

/* Frames are about to reach class k: back into the set, its clock first
 * brought to where the dequeues it missed would have brought it. */
static inline void wake(struct le_path *p, unsigned k)
{
	if (!is_busy(p, k)) {
		struct le_link *l = &p->link[k];

		if (l->clock < p->seen)
			l->clock = p->seen;
		p->busy[k >> 6] |= 1ull << (k & 63);
	}
}

/* Out of the set when it holds nothing and nothing moves it while idle:
 * then le_link_dequeue would only move its clock, which wake() does. */
static void maybe_idle(struct le_path *p, unsigned k)
{
	const struct le_link *l = &p->link[k];

	if (!p->chained && le_link_depth(l) == 0 && !l->cfg.trace.enabled && l->elder == NULL && l->heir == NULL)
		p->busy[k >> 6] &= ~(1ull << (k & 63));
}

void le_path_catch_up(struct le_path *p)
{
	for (unsigned k = 0; k < p->nlinks; k++)
		if (!is_busy(p, k) && p->link[k].clock < p->seen)
			p->link[k].clock = p->seen;
}

void le_path_free(struct le_path *p)
{
	for (unsigned k = 0; k < p->nlinks; k++) {
		if (p->up[k] != NULL) {
			for (unsigned h = 0; h + 1 < p->chain[k].n; h++)
				le_link_free(&p->up[k][h]);
			free(p->up[k]);
			p->up[k] = NULL;
		}
		le_link_free(&p->link[k]);
	}
	p->nlinks = 0;
	le_class_set_free(&p->rules);
}

unsigned le_path_classify(const struct le_path *p, void *handle, uint32_t len)
{
	uint32_t n = 0;
	const uint8_t *b;

	if (p->nlinks <= 1)
		return 0;
	b = p->ops.bytes(p->ops.ctx, handle, &n);
	if (n > len)
		n = len;
	return le_class_set_classify(&p->rules, b, n, p->depth);
}

/* Class k's frames go to a process first; they come back by
 * le_path_offer_class. */
static int punted(const struct le_path *p, unsigned k)
{
	return p->punted && k > 0 && (p->punted >> (k - 1)) & 1;
}

void le_path_enqueue(struct le_path *p, void *handle, uint32_t len, le_ns_t arrival)
{
	unsigned k = le_path_classify(p, handle, len);

	if (punted(p, k)) {
		p->ops.punt(p->ops.punt_ctx, p, k, handle, len, arrival);
		return;
	}
	wake(p, k);
	le_chain_offer(&p->chain[k], handle, len, arrival);
}

void le_path_enqueue_burst(struct le_path *p, void *const *handles, const uint32_t *lens, unsigned n,
			   le_ns_t arrival)
{
	if (p->nlinks == 1) { /* no rule to classify by, nothing punted */
		wake(p, 0);
		le_chain_offer_burst(&p->chain[0], handles, lens, n, arrival);
		return;
	}
	/* Consecutive frames of one class go to its link in one call; each
	 * link still gets its own frames in arrival order, and links do not
	 * share state. Punted frames go one by one, in order. */
	while (n > 0) {
		unsigned cls[LE_CS_BURST], c = n < LE_CS_BURST ? n : LE_CS_BURST;
		const uint8_t *bytes[LE_CS_BURST];
		uint32_t blen[LE_CS_BURST];
		for (unsigned i = 0; i < c; i++) {
			uint32_t got = 0;
			bytes[i] = p->ops.bytes(p->ops.ctx, handles[i], &got);
			blen[i] = got < lens[i] ? got : lens[i];
		}
		le_class_set_classify_burst(&p->rules, bytes, blen, c, p->depth, cls);
		for (unsigned i = 0, j; i < c; i = j) {
			unsigned k = cls[i];
			for (j = i + 1; j < c && cls[j] == k; j++)
				;
			if (punted(p, k)) {
				for (unsigned m = i; m < j; m++)
					p->ops.punt(p->ops.punt_ctx, p, k, handles[m], lens[m], arrival);
				continue;
			}
			wake(p, k);
			le_chain_offer_burst(&p->chain[k], &handles[i], &lens[i], j - i, arrival);
		}
		handles += c;
		lens += c;
		n -= c;
	}
}

void le_path_offer_class(struct le_path *p, unsigned cls, void *handle, uint32_t len, le_ns_t arrival)
{
	unsigned k = cls < p->nlinks ? cls : 0;

	wake(p, k);
	le_chain_offer(&p->chain[k], handle, len, arrival);
}

void le_path_move(struct le_path *p, le_ns_t now)
{
	if (p->chained)
		for (unsigned k = 0; k < p->nlinks; k++)
			le_chain_move(&p->chain[k], now);
}

/* A path with classes, at `now`: every busy class brought to now; due[]
 * gets those with due frames. Returns their number. */
static unsigned due_classes(struct le_path *p, le_ns_t now, unsigned *due)
{
	unsigned ndue = 0;
	struct le_frame none;

	for (unsigned w = 0; w < 2; w++)
		for (uint64_t bits = p->busy[w]; bits; bits &= bits - 1) {
			unsigned k = w * 64 + (unsigned)__builtin_ctzll(bits);
			const struct le_delay_line *d = &p->link[k].line;

			if (k >= p->nlinks)
				break;
			le_link_dequeue(&p->link[k], now, &none, 0);
			if (le_delay_line_count(d) > le_delay_line_held(d))
				due[ndue++] = k;
			else
				maybe_idle(p, k);
		}
	return ndue;
}

/* The deadline of the frame link k hands out next at `now`, or
 * UINT64_MAX when it has none due. */
static le_ns_t head_due(const struct le_path *p, unsigned k, le_ns_t now)
{
	const struct le_delay_line *d = &p->link[k].line;
	le_ns_t dl = le_delay_line_next_deadline(d);

	return dl <= now && le_delay_line_count(d) > le_delay_line_held(d) ? dl : UINT64_MAX;
}

/* Two or more classes with due frames: merged by deadline, the lower
 * class first on ties. Each link's due frames leave in deadline order,
 * so the best class hands out, in one call, every frame that precedes
 * the head of the next best: those with a deadline before it, or equal
 * to it when the best is the lower class (le_link_dequeue at that bound
 * takes exactly them: its line's pops stop at the first frame due
 * later). Only the best's head moves, so the others' are read once.
 * Before, a frame at a time with every due link asked for each cost
 * ~400 instructions a frame with 17 classes taking turns. */
static unsigned merge_due(struct le_path *p, le_ns_t now, const unsigned *due, unsigned ndue,
			  struct le_frame *out, unsigned max)
{
	le_ns_t head[LE_MAX_CLASSES + 1];
	unsigned n = 0;

	for (unsigned i = 0; i < ndue; i++)
		head[i] = head_due(p, due[i], now);
	while (n < max) {
		le_ns_t best_d = UINT64_MAX, next_d = UINT64_MAX, bound;
		unsigned best = ndue, next = ndue, k;

		/* due[] is in class order: on a tie the lower class wins */
		for (unsigned i = 0; i < ndue; i++) {
			if (head[i] < best_d) {
				next_d = best_d;
				next = best;
				best_d = head[i];
				best = i;
			} else if (head[i] < next_d) {
				next_d = head[i];
				next = i;
			}
		}
		if (best == ndue)
			break;
		/* heads are due, so next_d <= now */
		bound = next == ndue ? now : best < next ? next_d : next_d - 1;
		k = le_link_dequeue(&p->link[due[best]], bound, &out[n], max - n);
		if (k == 0)
			break;
		n += k;
		head[best] = head_due(p, due[best], now);
	}
	return n;
}

/* What a dequeue does first: the clocks' high mark, frames handed on
 * from hop to hop. */
static void reach_now(struct le_path *p, le_ns_t now)
{
	if (now > p->seen)
		p->seen = now;
	le_path_move(p, now);
}

unsigned le_path_dequeue(struct le_path *p, le_ns_t now, struct le_frame *out, unsigned max)
{
	unsigned due[LE_MAX_CLASSES + 1], ndue;

	reach_now(p, now);
	if (p->nlinks == 1)
		return le_link_dequeue(&p->link[0], now, out, max);
	ndue = due_classes(p, now, due);
	/* Mostly one class has frames due: take them in one call. */
	if (ndue == 1)
		return le_link_dequeue(&p->link[due[0]], now, out, max);
	return merge_due(p, now, due, ndue, out, max);
}

unsigned le_path_dequeue_split(struct le_path *p, le_ns_t now, const struct le_frame_split *out, unsigned max)
{
	unsigned due[LE_MAX_CLASSES + 1], ndue, n;
	struct le_frame f[LE_SPLIT_MAX];

	if (max > LE_SPLIT_MAX)
		max = LE_SPLIT_MAX;
	reach_now(p, now);
	if (p->nlinks == 1)
		return le_link_dequeue_split(&p->link[0], now, out, max);
	ndue = due_classes(p, now, due);
	if (ndue == 1)
		return le_link_dequeue_split(&p->link[due[0]], now, out, max);
	n = merge_due(p, now, due, ndue, f, max);
	le_frame_split_put(out, f, n);
	return n;
}

uint64_t le_path_drain(struct le_path *p)
{
	uint64_t n = 0;

	for (unsigned k = 0; k < p->nlinks; k++)
		n += le_chain_drain(&p->chain[k]);
	return n;
}

le_ns_t le_path_next_deadline(const struct le_path *p)
{
	le_ns_t d = UINT64_MAX;

	for (unsigned k = 0; k < p->nlinks; k++) {
		le_ns_t x = le_chain_next_deadline(&p->chain[k]);
		if (x < d)
			d = x;
	}
	return d;
}

uint32_t le_path_depth(const struct le_path *p)
{
	uint32_t n = 0;

	for (unsigned k = 0; k < p->nlinks; k++)
		n += le_chain_depth(&p->chain[k]);
	return n;
}

unsigned le_path_classes(const struct le_path *p)
{
	return p->nlinks;
}

const char *le_path_class_name(const struct le_path *p, unsigned cls)
{
	if (cls == 0)
		return "default";
	return cls < p->nlinks ? p->cfg.cls[cls - 1].name : "unknown";
}

struct le_counters le_path_class_counters(const struct le_path *p, unsigned cls)
{
	struct le_counters c;

	memset(&c, 0, sizeof(c));
	if (cls < p->nlinks)
		le_chain_counters(&p->chain[cls], &c);
	return c;
}

uint32_t le_path_class_depth(const struct le_path *p, unsigned cls)
{
	return cls < p->nlinks ? le_chain_depth(&p->chain[cls]) : 0;
}

unsigned le_path_class_hops(const struct le_path *p, unsigned cls)
{
	return cls < p->nlinks ? p->chain[cls].n : 0;
}

const struct le_counters *le_path_hop_counters(const struct le_path *p, unsigned cls, unsigned hop)
{
	return cls < p->nlinks && hop < p->chain[cls].n ? &p->chain[cls].hop[hop]->ctr : NULL;
}

uint32_t le_path_hop_depth(const struct le_path *p, unsigned cls, unsigned hop)
{
	return cls < p->nlinks && hop < p->chain[cls].n ? le_link_depth(p->chain[cls].hop[hop]) : 0;
}

uint64_t le_path_class_born(const struct le_path *p, unsigned cls)
{
	return le_path_hop_born(p, cls, 0);
}

uint64_t le_path_hop_born(const struct le_path *p, unsigned cls, unsigned hop)
{
	return cls < p->nlinks && hop < p->chain[cls].n ? p->chain[cls].hop[hop]->born : 0;
}

void le_path_counters(const struct le_path *p, struct le_counters *total)
{
	memset(total, 0, sizeof(*total));
	for (unsigned k = 0; k < p->nlinks; k++)
		for (unsigned h = 0; h < p->chain[k].n; h++)
			le_counters_add(total, &p->chain[k].hop[h]->ctr);
	le_counters_fold_hops(total);
}

int le_path_class_index(const struct le_path *p, const char *name)
{
	for (unsigned k = 0; k < p->nlinks; k++)
		if (strcmp(le_path_class_name(p, k), name) == 0)
			return (int)k;
	return -1;
}

/* The links of a path that takes over from `old`: born now, unless one
 * continues a link of old (le_link_inherit carries that one's). A class
 * removed by one change and added again by a later one is thus never
 * taken for its namesake, whose counts it does not have. */
static void born_after(struct le_path *newp, const struct le_path *old)
{
	newp->generation = old->generation + 1;
	for (unsigned k = 0; k < newp->nlinks; k++)
		for (unsigned h = 0; h < newp->chain[k].n; h++)
			newp->chain[k].hop[h]->born = newp->generation;
}

void le_path_inherit_at(struct le_path *newp, struct le_path *old, le_ns_t at)
{
	born_after(newp, old);
	le_path_catch_up(old);
	le_path_catch_up(newp);
	newp->busy[0] = newp->busy[1] = ~0ull; /* frames may come over to any */
	/* By name: reordered or renamed rules never hand one class's backlog
	 * or loss state to another. */
	for (unsigned k = 0; k < newp->nlinks; k++) {
		int j = le_path_class_index(old, le_path_class_name(newp, k));
		if (j >= 0)
			le_chain_inherit(&newp->chain[k], &old->chain[j], at);
	}
}

void le_path_inherit(struct le_path *newp, struct le_path *old)
{
	struct le_counters none;
	le_ns_t at = 0;

	le_path_catch_up(old);
	for (unsigned k = 0; k < old->nlinks; k++)
		for (unsigned h = 0; h < old->chain[k].n; h++)
			if (old->chain[k].hop[h]->clock > at)
				at = old->chain[k].hop[h]->clock;
	le_path_inherit_at(newp, old, at);
	for (unsigned k = 0; k < newp->nlinks; k++)
		for (unsigned h = 0; h < newp->chain[k].n; h++) {
			struct le_link *l = newp->chain[k].hop[h];

			if (l->elder != NULL)
				l->elder->heir = NULL;
			l->elder = NULL;
		}
	memset(&none, 0, sizeof(none));
	le_path_detach(old, &none);
}

void le_path_detach(struct le_path *old, struct le_counters *gone)
{
	for (unsigned k = 0; k < old->nlinks; k++)
		for (unsigned h = 0; h < old->chain[k].n; h++)
			le_link_detach(old->chain[k].hop[h], gone);
}

void le_path_reset_counters(struct le_path *p)
{
	for (unsigned k = 0; k < p->nlinks; k++)
		for (unsigned h = 0; h < p->chain[k].n; h++)
			memset(&p->chain[k].hop[h]->ctr, 0, sizeof(p->chain[k].hop[h]->ctr));
}
