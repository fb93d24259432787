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
	/* `proto ah` also takes IPv6 frames whose key holds the protocol
	 * behind their AH (le_match_frame): two keys, not one. */
	if ((m->fields & LE_M_PROTO) && m->proto == LE_PROTO_AH)
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

/* An IPv4 prefix length as a mask over the address's 4 bytes as they lie
 * in memory (so it masks bytes read straight from a frame). */
static uint32_t v4_mask(unsigned len)
{
	static const uint8_t ones[4] = { 0xff, 0xff, 0xff, 0xff };
	uint8_t m[4] = { 0 };
	uint32_t x;

	mask_addr(m, ones, len < 32 ? len : 32);
	memcpy(&x, m, 4);
	return x;
}

/* Keys are built as 64-bit words in registers and stored whole: a word
 * read back over several narrower stores waits for them to reach the
 * cache (no store forwarding), which perf showed as most of the lookup's
 * time when the key was a struct of bytes and halfwords. */
static uint64_t scalar_word(uint16_t ethertype, uint16_t vlan, uint16_t sport, uint16_t dport)
{
	return ethertype | (uint64_t)vlan << 16 | (uint64_t)sport << 32 | (uint64_t)dport << 48;
}

static uint64_t proto_word(uint8_t proto, uint8_t dscp)
{
	return proto | (uint64_t)dscp << 8;
}

/* An address masked to len bits into two key words. */
static void addr_words(uint64_t *w, const uint8_t *addr, unsigned len)
{
	uint8_t a[16] = { 0 };

	mask_addr(a, addr, len);
	memcpy(w, a, 16);
}

static void rule_words(const struct le_match *m, uint64_t *w)
{
	const unsigned f = m->fields;

	memset(w, 0, LE_CS_WORDS * sizeof(*w));
	if (f & LE_M_SRC)
		addr_words(w, m->src.addr, m->src.len);
	if (f & LE_M_DST)
		addr_words(w + 2, m->dst.addr, m->dst.len);
	w[4] = scalar_word(f & LE_M_ETHER ? m->ethertype : 0, f & LE_M_VLAN ? m->vlan : 0,
			   f & LE_M_SPORT ? m->sport.lo : 0, f & LE_M_DPORT ? m->dport.lo : 0);
	w[5] = proto_word(f & LE_M_PROTO ? m->proto : 0, f & LE_M_DSCP ? m->dscp : 0);
}

/* The frame's values of a group's words; 0 when the frame lacks a field
 * (then no rule of the group matches it, as le_match_frame decides). */
static int frame_words(const struct le_cs_group *g, const struct le_pkt *p, uint64_t *w)
{
	const unsigned f = g->fields;

	if (((f & LE_M_VLAN) && !p->has_vlan) || ((f & LE_M_PROTO) && !p->has_proto) ||
	    ((f & LE_M_SRC) && p->ip != g->src_family) || ((f & LE_M_DST) && p->ip != g->dst_family) ||
	    ((f & (LE_M_SPORT | LE_M_DPORT)) && !p->has_ports) || ((f & LE_M_DSCP) && p->ip == 0))
		return 0;
	if (f & LE_M_SRC)
		addr_words(w, p->src, g->src_len);
	if (f & LE_M_DST)
		addr_words(w + 2, p->dst, g->dst_len);
	w[4] = scalar_word(f & LE_M_ETHER ? p->ethertype : 0, f & LE_M_VLAN ? p->vlan : 0,
			   f & LE_M_SPORT ? p->sport : 0, f & LE_M_DPORT ? p->dport : 0);
	w[5] = proto_word(f & LE_M_PROTO ? p->proto : 0, f & LE_M_DSCP ? p->dscp : 0);
	return 1;
}

/* What plain4_words needs of a group, worked out once: which frames it
 * refuses, and the masks that keep its fields of words 4 and 5. */
static void plain4_recipe(struct le_cs_group *g)
{
	const unsigned f = g->fields;

	g->plain4_never = (f & LE_M_VLAN) || ((f & LE_M_SRC) && g->src_family != 4) ||
			  ((f & LE_M_DST) && g->dst_family != 4);
	g->plain4_ports = (f & (LE_M_SPORT | LE_M_DPORT)) != 0;
	g->mask4 = scalar_word(f & LE_M_ETHER ? 0xffff : 0, 0, f & LE_M_SPORT ? 0xffff : 0, f & LE_M_DPORT ? 0xffff : 0);
	g->mask5 = proto_word(f & LE_M_PROTO ? 0xff : 0, f & LE_M_DSCP ? 0xff : 0);
}

/* The same from a plain IPv4 frame's fields (class_fast.h): no parse,
 * and no branch per field (perf: the field-by-field form cost ~39
 * instructions a frame on a 16-rule set). The address words are written
 * whether the group hashes them or not (key_words: only its words are
 * read). */
static inline int plain4_words(const struct le_cs_group *g, const struct le_plain4 *v, uint64_t *w)
{
	const uint32_t src = v->src_raw & g->src4_mask, dst = v->dst_raw & g->dst4_mask;

	if (g->plain4_never || (g->plain4_ports && !v->ports))
		return 0;
	w[0] = w[1] = w[2] = w[3] = 0;
	memcpy(w, &src, 4); /* as addr_words lays the bytes out */
	memcpy(w + 2, &dst, 4);
	w[4] = scalar_word(0x0800, 0, v->sport, v->dport) & g->mask4;
	w[5] = proto_word(v->proto, v->dscp) & g->mask5;
	return 1;
}

/* The key words a group's fields can set: the others are zero in every
 * key of the group, so hashing or comparing them adds nothing. */
static unsigned key_words(unsigned fields)
{
	unsigned w = 0;

	if (fields & LE_M_SRC)
		w |= 0x3;
	if (fields & LE_M_DST)
		w |= 0xc;
	if (fields & (LE_M_ETHER | LE_M_VLAN | LE_M_SPORT | LE_M_DPORT))
		w |= 0x10;
	if (fields & (LE_M_PROTO | LE_M_DSCP))
		w |= 0x20;
	return w;
}

static uint64_t key_hash(const struct le_cs_group *g, const uint64_t *w)
{
	uint64_t h = 0;

	for (unsigned m = g->words; m; m &= m - 1) {
		h = (h ^ w[__builtin_ctz(m)]) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 29;
	}
	return h;
}

/* The entry holding key w, or the empty one where it would go, searched
 * from the slot of its hash h. An entry of another key is passed on its
 * stored hash alone, mostly: the words are compared only when the hashes
 * are equal. */
static struct le_cs_entry *probe_from(const struct le_cs_group *g, const uint64_t *w, uint64_t h)
{
	for (uint64_t i = h;; i++) {
		struct le_cs_entry *e = &g->table[i & g->mask];
		unsigned m;

		if (e->rule == 0)
			return e;
		if (e->hash != h)
			continue;
		for (m = g->words; m && e->key[__builtin_ctz(m)] == w[__builtin_ctz(m)]; m &= m - 1)
			;
		if (m == 0)
			return e;
	}
}

static struct le_cs_entry *probe(const struct le_cs_group *g, const uint64_t *w)
{
	return probe_from(g, w, key_hash(g, w));
}

/* Port value v is in the group's port filter (g->ports set). */
static inline int port_held(const struct le_cs_group *g, uint16_t v)
{
	return (g->ports[v >> 6] >> (v & 63)) & 1;
}

/* 0 when no rule of the group holds key w's port (the port filter): then
 * no rule of the group matches, and the probe is not needed. */
static inline int port_may_match(const struct le_cs_group *g, const uint64_t *w)
{
	return g->ports == NULL || port_held(g, (uint16_t)(w[4] >> g->port_shift));
}

/* A plain IPv4 frame (le_plain4_shape) that no rule of a group with a
 * port filter can match, told from the two bytes of its port (or its
 * lack of ports: every rule of the group tests one) before the frame's
 * other fields are read or a key is built. */
static inline int plain4_refused(const struct le_cs_group *g, const uint8_t *b, uint32_t len)
{
	if (g->ports == NULL)
		return 0;
	if (!le_plain4_has_ports(b, len))
		return 1;
	return !port_held(g, le_pkt_be16(b + g->port_off));
}

/* 1 + the group's rule with key w, or 0. */
static unsigned group_rule(const struct le_cs_group *g, const uint64_t *w)
{
	return port_may_match(g, w) ? probe(g, w)->rule : 0;
}

/* The group's port filter, from its rules' keys (build, after the
 * tables are filled). 0, or -1 when it cannot be allocated. */
static int build_port_filter(struct le_cs_group *g)
{
	if (!(g->fields & (LE_M_DPORT | LE_M_SPORT)))
		return 0;
	g->port_shift = g->fields & LE_M_DPORT ? 48 : 32;
	g->port_off = g->fields & LE_M_DPORT ? 36 : 34;
	g->ports = calloc(65536 / 64, sizeof(uint64_t));
	if (g->ports == NULL)
		return -1;
	for (uint32_t i = 0; i <= g->mask; i++)
		if (g->table[i].rule != 0) {
			const uint16_t v = (uint16_t)(g->table[i].key[4] >> g->port_shift);
			g->ports[v >> 6] |= 1ull << (v & 63);
		}
	return 0;
}

void le_class_set_free(struct le_class_set *s)
{
	for (unsigned g = 0; g < s->ngroups; g++) {
		free(s->group[g].table);
		free(s->group[g].ports);
	}
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
			ng->src4_mask = v4_mask(m->src.len);
			ng->dst4_mask = v4_mask(m->dst.len);
			plain4_recipe(ng);
		}
		size[g]++;
	}
	/* At most a quarter full: a frame that matches no rule (most, in
	 * a per-flow set) probes ~1.4 slots on average instead of ~2.5 at
	 * half full, and the tables stay small (64 bytes a slot). */
	for (unsigned g = 0; g < s->ngroups; g++) {
		uint32_t cap = 4;
		while (cap < 4 * size[g])
			cap <<= 1;
		s->group[g].mask = cap - 1;
		s->group[g].table = calloc(cap, sizeof(*s->group[g].table));
		if (s->group[g].table == NULL)
			goto fail;
	}
	/* In rule order, so a key given twice keeps its first (lowest) rule. */
	for (unsigned i = 0; i < n; i++) {
		uint64_t w[LE_CS_WORDS];
		struct le_cs_entry *e;
		unsigned g;

		if (!hashable(&s->rules[i]))
			continue;
		for (g = 0; !same_shape(&s->group[g], &s->rules[i]); g++)
			;
		rule_words(&s->rules[i], w);
		e = probe(&s->group[g], w);
		if (e->rule == 0) {
			memcpy(e->key, w, sizeof(w));
			e->hash = key_hash(&s->group[g], w);
			e->rule = i + 1;
		}
	}
	for (unsigned g = 0; g < s->ngroups; g++)
		if (build_port_filter(&s->group[g]) < 0)
			goto fail;
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
		uint64_t w[LE_CS_WORDS];
		return frame_words(&s->group[0], p, w) ? group_rule(&s->group[0], w) : 0;
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
			uint64_t w[LE_CS_WORDS];
			if (frame_words(&s->group[gi], p, w)) {
				const unsigned rule = group_rule(&s->group[gi], w);
				if (rule != 0 && rule - 1 < best)
					best = rule - 1;
			}
			gi++;
		}
	}
	return best == UINT32_MAX ? 0 : best + 1;
}

/* A set of hashed groups only (per-flow rules) on a plain IPv4 frame:
 * each group's key straight from the frame's fields. */
static unsigned lookup_plain4(const struct le_class_set *s, const struct le_plain4 *v)
{
	uint32_t best = UINT32_MAX;

	for (unsigned gi = 0; gi < s->ngroups && s->group[gi].first < best; gi++) {
		uint64_t w[LE_CS_WORDS];
		if (plain4_words(&s->group[gi], v, w)) {
			const unsigned rule = group_rule(&s->group[gi], w);
			if (rule != 0 && rule - 1 < best)
				best = rule - 1;
		}
	}
	return best == UINT32_MAX ? 0 : best + 1;
}

unsigned le_class_set_classify_parsed(const struct le_class_set *s, const uint8_t *b, uint32_t len, int depth)
{
	struct le_pkt pkt;

	if (s->compiled && s->nscan == 0 && le_plain4_shape(b, len)) {
		struct le_plain4 v;
		le_plain4_read(b, len, &v);
		return lookup_plain4(s, &v);
	}

	le_pkt_parse_fast(b, b ? len : 0, depth, &pkt);
	return le_class_set_lookup(s, &pkt);
}

void le_class_set_classify_burst(const struct le_class_set *s, const uint8_t *const *b, const uint32_t *len,
				 unsigned n, int depth, unsigned *cls)
{
	/* One hashed group and nothing else (a per-flow set) with more rules
	 * than the fast set takes: the plain IPv4 frames are keyed and hashed
	 * first and their table slots prefetched, then searched. Frame by
	 * frame, each frame's hash (a chain of multiplies) and slot load
	 * (often out of L1 by then) waited on each other; here they overlap
	 * across the burst. */
	if (s->fast.n == 0 && s->compiled && s->nscan == 0 && s->ngroups == 1 && n <= LE_CS_BURST) {
		const struct le_cs_group *g = &s->group[0];
		uint64_t w[LE_CS_BURST][LE_CS_WORDS], h[LE_CS_BURST];
		uint8_t how[LE_CS_BURST]; /* 0: no match, 1: keyed, 2: parse it */

		for (unsigned i = 0; i < n; i++) {
			struct le_plain4 v;

			if (!le_plain4_shape(b[i], len[i])) {
				how[i] = 2;
				continue;
			}
			if (plain4_refused(g, b[i], len[i])) {
				how[i] = 0;
				continue;
			}
			le_plain4_read(b[i], len[i], &v);
			how[i] = (uint8_t)plain4_words(g, &v, w[i]);
			if (how[i]) {
				h[i] = key_hash(g, w[i]);
				__builtin_prefetch(&g->table[h[i] & g->mask]);
			}
		}
		for (unsigned i = 0; i < n; i++)
			cls[i] = how[i] == 1   ? probe_from(g, w[i], h[i])->rule
				 : how[i] == 0 ? 0
					       : le_class_set_classify_parsed(s, b[i], len[i], depth);
		return;
	}
	for (unsigned i = 0; i < n; i++)
		cls[i] = le_class_set_classify(s, b[i], len[i], depth);
}
