/* Paths: the class grammar, classification and the per-class links; see
 * path.h. */
#include "path.h"
#include "err.h"

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
	if (le_config_parse_words(n - colon - 1, (const char *const *)w + colon + 1, &c->link, sub,
				  sizeof(sub)) < 0) {
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
	char *copy = strdup(text), *seg, *semi;
	char sub[LE_ERR_MAX];
	unsigned idx = 0;
	int rc = 0;

	le_path_config_default(out);
	if (copy == NULL)
		return le_err(err, errlen, "out of memory");
	seg = copy;
	semi = strchr(seg, ';');
	if (semi)
		*semi = '\0';
	if (le_config_parse(seg, &out->dflt, sub, sizeof(sub)) < 0) {
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
	free(copy);
	return rc;
}

size_t le_path_config_format(const struct le_path_config *c, char *buf, size_t buflen)
{
	char link[LE_CONFIG_TEXT_MAX], match[512];
	size_t len = 0;

#define PUT(...) len += (size_t)snprintf(buf + len, len < buflen ? buflen - len : 0, __VA_ARGS__)
	if (buflen)
		buf[0] = '\0';
	le_config_format(&c->dflt, link, sizeof(link));
	PUT("%s", link);
	for (unsigned k = 0; k < c->nclasses; k++) {
		le_match_format(&c->cls[k].match, match, sizeof(match));
		le_config_format(&c->cls[k].link, link, sizeof(link));
		PUT("%s; class %s match %s :%s%s", len ? " " : "", c->cls[k].name, match, link[0] ? " " : "", link);
	}
#undef PUT
	if (len >= buflen && buflen)
		len = buflen - 1;
	return len;
}

int le_path_config_equal(const struct le_path_config *a, const struct le_path_config *b)
{
	if (!le_config_equal(&a->dflt, &b->dflt) || a->nclasses != b->nclasses)
		return 0;
	for (unsigned k = 0; k < a->nclasses; k++)
		if (strcmp(a->cls[k].name, b->cls[k].name) != 0 ||
		    !le_match_equal(&a->cls[k].match, &b->cls[k].match) ||
		    !le_config_equal(&a->cls[k].link, &b->cls[k].link))
			return 0;
	return 1;
}

/* --- runtime ------------------------------------------------------------- */

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
	p->depth = LE_PKT_L2;
	for (unsigned k = 0; k <= cfg->nclasses; k++) {
		const struct le_link_config *lc = k ? &cfg->cls[k - 1].link : &cfg->dflt;

		if (le_link_init_ops(&p->link[k], lc, dir, k, default_seed, ops, sub, sizeof(sub)) < 0) {
			le_err(err, errlen, "%s%s%s", k ? "class " : "", k ? cfg->cls[k - 1].name : "", k ? ": " : "");
			if (err != NULL && errlen > 0) {
				size_t used = strlen(err);
				snprintf(err + used, errlen > used ? errlen - used : 0, "%s", sub);
			}
			for (unsigned j = 0; j < k; j++)
				le_link_free(&p->link[j]);
			return -1;
		}
		p->nlinks = k + 1;
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
	return 0;
}

void le_path_free(struct le_path *p)
{
	for (unsigned k = 0; k < p->nlinks; k++)
		le_link_free(&p->link[k]);
	p->nlinks = 0;
	le_class_set_free(&p->rules);
}

unsigned le_path_classify(const struct le_path *p, void *handle, uint32_t len)
{
	struct le_pkt pkt;
	uint32_t n = 0;
	const uint8_t *b;

	if (p->nlinks <= 1)
		return 0;
	b = p->ops.bytes(p->ops.ctx, handle, &n);
	if (n > len)
		n = len;
	le_pkt_parse(b, b ? n : 0, p->depth, &pkt);
	return le_class_set_lookup(&p->rules, &pkt);
}

void le_path_enqueue(struct le_path *p, void *handle, uint32_t len, le_ns_t arrival)
{
	le_link_offer(&p->link[le_path_classify(p, handle, len)], handle, len, arrival);
}

unsigned le_path_dequeue(struct le_path *p, le_ns_t now, struct le_frame *out, unsigned max)
{
	unsigned n = 0;

	if (p->nlinks == 1)
		return le_link_dequeue(&p->link[0], now, out, max);
	unsigned due[LE_MAX_CLASSES + 1], ndue = 0;

	/* Bring every class to now, and note those with due frames. */
	for (unsigned k = 0; k < p->nlinks; k++) {
		const struct le_delay_line *d = &p->link[k].line;

		le_link_dequeue(&p->link[k], now, out, 0);
		if (le_delay_line_count(d) > le_delay_line_held(d))
			due[ndue++] = k;
	}
	/* Mostly one class has frames due: take them in one call. */
	if (ndue == 1)
		return le_link_dequeue(&p->link[due[0]], now, out, max);
	/* Otherwise merge the due frames by deadline. */
	while (n < max) {
		le_ns_t best_d = UINT64_MAX;
		unsigned best = p->nlinks;

		for (unsigned i = 0; i < ndue; i++) {
			const struct le_delay_line *d = &p->link[due[i]].line;
			le_ns_t dl = le_delay_line_next_deadline(d);
			if (dl <= now && dl < best_d && le_delay_line_count(d) > le_delay_line_held(d)) {
				best_d = dl;
				best = due[i];
			}
		}
		if (best == p->nlinks || le_link_dequeue(&p->link[best], now, &out[n], 1) == 0)
			break;
		n++;
	}
	return n;
}

uint64_t le_path_drain(struct le_path *p)
{
	uint64_t n = 0;

	for (unsigned k = 0; k < p->nlinks; k++)
		n += le_link_drain(&p->link[k]);
	return n;
}

le_ns_t le_path_next_deadline(const struct le_path *p)
{
	le_ns_t d = UINT64_MAX;

	for (unsigned k = 0; k < p->nlinks; k++) {
		le_ns_t x = le_link_next_deadline(&p->link[k]);
		if (x < d)
			d = x;
	}
	return d;
}

uint32_t le_path_depth(const struct le_path *p)
{
	uint32_t n = 0;

	for (unsigned k = 0; k < p->nlinks; k++)
		n += le_link_depth(&p->link[k]);
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

const struct le_counters *le_path_class_counters(const struct le_path *p, unsigned cls)
{
	return cls < p->nlinks ? &p->link[cls].ctr : NULL;
}

uint32_t le_path_class_depth(const struct le_path *p, unsigned cls)
{
	return cls < p->nlinks ? le_link_depth(&p->link[cls]) : 0;
}

void le_path_counters(const struct le_path *p, struct le_counters *total)
{
	memset(total, 0, sizeof(*total));
	for (unsigned k = 0; k < p->nlinks; k++)
		le_counters_add(total, &p->link[k].ctr);
}

int le_path_class_index(const struct le_path *p, const char *name)
{
	for (unsigned k = 0; k < p->nlinks; k++)
		if (strcmp(le_path_class_name(p, k), name) == 0)
			return (int)k;
	return -1;
}

void le_path_inherit_at(struct le_path *newp, struct le_path *old, le_ns_t at)
{
	/* By name: reordered or renamed rules never hand one class's backlog
	 * or loss state to another. */
	for (unsigned k = 0; k < newp->nlinks; k++) {
		int j = le_path_class_index(old, le_path_class_name(newp, k));
		if (j >= 0)
			le_link_inherit(&newp->link[k], &old->link[j], at);
	}
}

void le_path_inherit(struct le_path *newp, struct le_path *old)
{
	struct le_counters none;
	le_ns_t at = 0;

	for (unsigned k = 0; k < old->nlinks; k++)
		if (old->link[k].clock > at)
			at = old->link[k].clock;
	le_path_inherit_at(newp, old, at);
	for (unsigned k = 0; k < newp->nlinks; k++) {
		if (newp->link[k].elder != NULL)
			newp->link[k].elder->heir = NULL;
		newp->link[k].elder = NULL;
	}
	memset(&none, 0, sizeof(none));
	le_path_detach(old, &none);
}

void le_path_detach(struct le_path *old, struct le_counters *gone)
{
	for (unsigned k = 0; k < old->nlinks; k++)
		le_link_detach(&old->link[k], gone);
}

void le_path_reset_counters(struct le_path *p)
{
	for (unsigned k = 0; k < p->nlinks; k++)
		memset(&p->link[k].ctr, 0, sizeof(p->link[k].ctr));
}
