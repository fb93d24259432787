/* Compiled class rules (see class_set.h). */
#include "class_set.h"

#include <stddef.h>
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

/* The key's scalar fields, stored as the two 64-bit words they share
 * (words 4 and 5), so that hashing and comparing read each word back as
 * it was written. A word read over several narrower stores waits for
 * them to reach the cache (no store forwarding): perf showed that wait as
 * most of the lookup's time. */
static void put_scalars(struct le_cs_key *k, uint16_t ethertype, uint16_t vlan, uint16_t sport, uint16_t dport,
			uint8_t proto, uint8_t dscp)
{
	const uint64_t w4 = ethertype | (uint64_t)vlan << 16 | (uint64_t)sport << 32 | (uint64_t)dport << 48;
	const uint64_t w5 = proto | (uint64_t)dscp << 8;

	memcpy((uint8_t *)k + 32, &w4, 8);
	memcpy((uint8_t *)k + 40, &w5, 8);
}

static void rule_key(const struct le_match *m, struct le_cs_key *k)
{
	const unsigned f = m->fields;

	memset(k, 0, sizeof(*k));
	if (f & LE_M_SRC)
		mask_addr(k->src, m->src.addr, m->src.len);
	if (f & LE_M_DST)
		mask_addr(k->dst, m->dst.addr, m->dst.len);
	put_scalars(k, f & LE_M_ETHER ? m->ethertype : 0, f & LE_M_VLAN ? m->vlan : 0, f & LE_M_SPORT ? m->sport.lo : 0,
		    f & LE_M_DPORT ? m->dport.lo : 0, f & LE_M_PROTO ? m->proto : 0, f & LE_M_DSCP ? m->dscp : 0);
}

/* The frame's values of a group's fields; 0 when the frame lacks one
 * (then no rule of the group matches it, as le_match_frame decides). */
static int frame_key(const struct le_cs_group *g, const struct le_pkt *p, struct le_cs_key *k)
{
	const unsigned f = g->fields;

	if (((f & LE_M_VLAN) && !p->has_vlan) || ((f & LE_M_PROTO) && !p->has_proto) ||
	    ((f & LE_M_SRC) && p->ip != g->src_family) || ((f & LE_M_DST) && p->ip != g->dst_family) ||
	    ((f & (LE_M_SPORT | LE_M_DPORT)) && !p->has_ports) || ((f & LE_M_DSCP) && p->ip == 0))
		return 0;
	if (f & (LE_M_SRC | LE_M_DST)) {
		memset(k, 0, 32);
		if (f & LE_M_SRC)
			mask_addr(k->src, p->src, g->src_len);
		if (f & LE_M_DST)
			mask_addr(k->dst, p->dst, g->dst_len);
	}
	put_scalars(k, f & LE_M_ETHER ? p->ethertype : 0, f & LE_M_VLAN ? p->vlan : 0, f & LE_M_SPORT ? p->sport : 0,
		    f & LE_M_DPORT ? p->dport : 0, f & LE_M_PROTO ? p->proto : 0, f & LE_M_DSCP ? p->dscp : 0);
	return 1;
}

_Static_assert(offsetof(struct le_cs_key, dst) == 16 && offsetof(struct le_cs_key, ethertype) == 32 &&
		       offsetof(struct le_cs_key, dport) == 38 && offsetof(struct le_cs_key, proto) == 40 &&
		       offsetof(struct le_cs_key, dscp) == 41 && sizeof(struct le_cs_key) == 48,
	       "key_words() maps fields to these offsets");

/* The key's 64-bit words a group's fields can set: the others are zero
 * in every key of the group, so hashing them adds nothing. */
static unsigned key_words(unsigned fields)
{
	unsigned w = 0;

	if (fields & LE_M_SRC)
		w |= 0x3; /* src[16]: words 0-1 */
	if (fields & LE_M_DST)
		w |= 0xc; /* dst[16]: words 2-3 */
	if (fields & (LE_M_ETHER | LE_M_VLAN | LE_M_SPORT | LE_M_DPORT))
		w |= 0x10; /* ethertype, vlan, sport, dport */
	if (fields & (LE_M_PROTO | LE_M_DSCP))
		w |= 0x20; /* proto, dscp */
	return w;
}

/* Word i of a key (only the words of a group's fields are ever read:
 * frame_key leaves the address words unset when the group has none). */
static uint64_t key_word(const struct le_cs_key *k, unsigned i)
{
	uint64_t x;

	memcpy(&x, (const uint8_t *)k + 8 * i, 8);
	return x;
}

static uint64_t hash(const struct le_cs_group *g, const struct le_cs_key *k)
{
	uint64_t h = 0;

	for (unsigned m = g->words; m; m &= m - 1) {
		h = (h ^ key_word(k, (unsigned)__builtin_ctz(m))) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 29;
	}
	return h;
}

/* Keys of one group are equal when the group's words are. */
static int same_key(const struct le_cs_group *g, const struct le_cs_key *a, const struct le_cs_key *b)
{
	for (unsigned m = g->words; m; m &= m - 1) {
		unsigned i = (unsigned)__builtin_ctz(m);
		if (key_word(a, i) != key_word(b, i))
			return 0;
	}
	return 1;
}

/* The entry holding key, or the empty one where it would go. */
static struct le_cs_entry *probe(const struct le_cs_group *g, const struct le_cs_key *k)
{
	uint64_t i = hash(g, k);

	for (;; i++) {
		struct le_cs_entry *e = &g->table[i & g->mask];
		if (e->rule == 0 || same_key(g, &e->key, k))
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
			ng->words = key_words(m->fields);
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
	if (s->ngroups == 1 && s->nscan == 0) {
		/* One shape (a per-flow set): its probe is the answer. */
		struct le_cs_key k;
		return frame_key(&s->group[0], p, &k) ? probe(&s->group[0], &k)->rule : 0;
	}
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

	le_pkt_parse_fast(b, b ? len : 0, depth, &pkt);
	return le_class_set_lookup(s, &pkt);
}
