/* Compiled class rules (see class_set.h). */
#include "class_set.h"

#include <stdlib.h>
#include <string.h>

/* A probe and its key build cost about as much as matching this many
 * simple rules one by one (measured on the forwarding benchmark's rules:
 * a key is 48 bytes to clear, fill and hash). */
enum { GROUP_COST = 4 };

static int hashable(const struct le_match *m)
{
	if (m->fields & LE_M_PORT)
		return 0; /* either port: two keys, not one */
	if ((m->fields & LE_M_SPORT) && m->sport.lo != m->sport.hi)
		return 0;
	if ((m->fields & LE_M_DPORT) && m->dport.lo != m->dport.hi)
		return 0;
	return 1;
}

static int same_shape(const struct le_cs_group *g, const struct le_match *m)
{
	return g->fields == m->fields &&
	       (!(m->fields & LE_M_SRC) || (g->src_family == m->src.family && g->src_len == m->src.len)) &&
	       (!(m->fields & LE_M_DST) || (g->dst_family == m->dst.family && g->dst_len == m->dst.len));
}

/* The first `len` bits of an address, the rest zero (dst is zero). */
static void mask_addr(uint8_t *dst, const uint8_t *src, unsigned len)
{
	unsigned full = len / 8, rest = len % 8;

	memcpy(dst, src, full);
	if (rest)
		dst[full] = src[full] & (uint8_t)(0xff << (8 - rest));
}

static void rule_key(const struct le_match *m, struct le_cs_key *k)
{
	memset(k, 0, sizeof(*k));
	k->ethertype = m->fields & LE_M_ETHER ? m->ethertype : 0;
	k->vlan = m->fields & LE_M_VLAN ? m->vlan : 0;
	k->proto = m->fields & LE_M_PROTO ? m->proto : 0;
	if (m->fields & LE_M_SRC)
		mask_addr(k->src, m->src.addr, m->src.len);
	if (m->fields & LE_M_DST)
		mask_addr(k->dst, m->dst.addr, m->dst.len);
	k->sport = m->fields & LE_M_SPORT ? m->sport.lo : 0;
	k->dport = m->fields & LE_M_DPORT ? m->dport.lo : 0;
	k->dscp = m->fields & LE_M_DSCP ? m->dscp : 0;
}

/* The frame's values of a group's fields; 0 when the frame lacks one
 * (then no rule of the group matches it, as le_match_frame decides). */
static int frame_key(const struct le_cs_group *g, const struct le_pkt *p, struct le_cs_key *k)
{
	const unsigned f = g->fields;

	memset(k, 0, sizeof(*k));
	if (f & LE_M_ETHER)
		k->ethertype = p->ethertype;
	if (f & LE_M_VLAN) {
		if (!p->has_vlan)
			return 0;
		k->vlan = p->vlan;
	}
	if (f & LE_M_PROTO) {
		if (!p->has_proto)
			return 0;
		k->proto = p->proto;
	}
	if (f & LE_M_SRC) {
		if (p->ip != g->src_family)
			return 0;
		mask_addr(k->src, p->src, g->src_len);
	}
	if (f & LE_M_DST) {
		if (p->ip != g->dst_family)
			return 0;
		mask_addr(k->dst, p->dst, g->dst_len);
	}
	if (f & (LE_M_SPORT | LE_M_DPORT)) {
		if (!p->has_ports)
			return 0;
		k->sport = f & LE_M_SPORT ? p->sport : 0;
		k->dport = f & LE_M_DPORT ? p->dport : 0;
	}
	if (f & LE_M_DSCP) {
		if (p->ip == 0)
			return 0;
		k->dscp = p->dscp;
	}
	return 1;
}

static uint64_t hash(const struct le_cs_key *k)
{
	uint64_t w[sizeof(*k) / 8], h = 0;

	memcpy(w, k, sizeof(w));
	for (unsigned i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		h = (h ^ w[i]) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 29;
	}
	return h;
}

/* The entry holding key, or the empty one where it would go. */
static struct le_cs_entry *probe(const struct le_cs_group *g, const struct le_cs_key *k)
{
	uint64_t i = hash(k);

	for (;; i++) {
		struct le_cs_entry *e = &g->table[i & g->mask];
		if (e->rule == 0 || memcmp(&e->key, k, sizeof(*k)) == 0)
			return e;
	}
}

void le_class_set_free(struct le_class_set *s)
{
	for (unsigned g = 0; g < s->ngroups; g++)
		free(s->group[g].table);
	free(s->group);
	free(s->scan);
	free(s->rules);
	memset(s, 0, sizeof(*s));
}

int le_class_set_build(struct le_class_set *s, const struct le_match *const *rules, unsigned n)
{
	unsigned *size;

	memset(s, 0, sizeof(*s));
	s->nrules = n;
	s->rules = calloc(n ? n : 1, sizeof(*s->rules));
	s->group = calloc(n ? n : 1, sizeof(*s->group));
	s->scan = calloc(n ? n : 1, sizeof(*s->scan));
	size = calloc(n ? n : 1, sizeof(*size));
	if (!s->rules || !s->group || !s->scan || !size)
		goto fail;
	for (unsigned i = 0; i < n; i++) {
		const struct le_match *m = rules[i];
		unsigned g;

		s->rules[i] = *m;
		if (!hashable(m)) {
			s->scan[s->nscan++] = i;
			continue;
		}
		for (g = 0; g < s->ngroups && !same_shape(&s->group[g], m); g++)
			;
		if (g == s->ngroups) {
			struct le_cs_group *ng = &s->group[s->ngroups++];
			ng->fields = m->fields;
			ng->src_family = m->src.family;
			ng->src_len = m->src.len;
			ng->dst_family = m->dst.family;
			ng->dst_len = m->dst.len;
			ng->first = i;
		}
		size[g]++;
	}
	for (unsigned g = 0; g < s->ngroups; g++) {
		uint32_t cap = 4;
		while (cap < 2 * size[g])
			cap <<= 1;
		s->group[g].mask = cap - 1;
		s->group[g].table = calloc(cap, sizeof(*s->group[g].table));
		if (s->group[g].table == NULL)
			goto fail;
	}
	/* In rule order, so a key given twice keeps its first (lowest) rule. */
	for (unsigned i = 0; i < n; i++) {
		struct le_cs_key k;
		struct le_cs_entry *e;
		unsigned g;

		if (!hashable(&s->rules[i]))
			continue;
		for (g = 0; !same_shape(&s->group[g], &s->rules[i]); g++)
			;
		rule_key(&s->rules[i], &k);
		e = probe(&s->group[g], &k);
		if (e->rule == 0) {
			e->key = k;
			e->rule = i + 1;
		}
	}
	s->compiled = n > 0 && GROUP_COST * s->ngroups + s->nscan < n;
	le_class_fast_build(&s->fast, s->rules, n);
	free(size);
	return 0;
fail:
	free(size);
	le_class_set_free(s);
	return -1;
}

unsigned le_class_set_scan(const struct le_match *rules, unsigned n, const struct le_pkt *p)
{
	for (unsigned k = 0; k < n; k++)
		if (le_match_frame(&rules[k], p))
			return k + 1;
	return 0;
}

unsigned le_class_set_lookup(const struct le_class_set *s, const struct le_pkt *p)
{
	uint32_t best = UINT32_MAX;
	unsigned gi = 0, si = 0;

	if (!s->compiled)
		return le_class_set_scan(s->rules, s->nrules, p);
	/* Groups and one-by-one rules in order of their lowest rule, until
	 * none can beat the best match so far. */
	for (;;) {
		uint32_t g_first = gi < s->ngroups ? s->group[gi].first : UINT32_MAX;
		uint32_t s_first = si < s->nscan ? s->scan[si] : UINT32_MAX;

		if ((g_first < s_first ? g_first : s_first) >= best)
			break;
		if (s_first < g_first) {
			if (le_match_frame(&s->rules[s_first], p))
				best = s_first;
			si++;
		} else {
			struct le_cs_key k;
			if (frame_key(&s->group[gi], p, &k)) {
				const struct le_cs_entry *e = probe(&s->group[gi], &k);
				if (e->rule != 0 && e->rule - 1 < best)
					best = e->rule - 1;
			}
			gi++;
		}
	}
	return best == UINT32_MAX ? 0 : best + 1;
}

unsigned le_class_set_classify_parsed(const struct le_class_set *s, const uint8_t *b, uint32_t len, int depth)
{
	struct le_pkt pkt;

	le_pkt_parse(b, b ? len : 0, depth, &pkt);
	return le_class_set_lookup(s, &pkt);
}
