/* Compiled class rules against the linear scan: random rule sets (parsed
 * from random filter words, so every shape the grammar allows) and random
 * parsed frames drawn from the same small pools of values, so that many
 * frames match several rules and first-match order is what decides. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "class_set.h"
#include "minitest.h"

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
	return *x;
}

#define PICK(x, a) (a)[rnd(x) % (sizeof(a) / sizeof((a)[0]))]

static const char *const v4[] = { "198.18.0.0/15", "198.18.0.0/16", "198.18.1.0/24", "198.18.1.7",
				   "198.19.0.0/16", "198.19.2.3", "0.0.0.0/0", "198.18.1.6/31" };
static const char *const v6[] = { "2001:db8::/32", "2001:db8::1", "2001:db8:1::/48", "::/0" };
static const char *const ports[] = { "80", "443", "5000", "5001", "5000-5003", "0-1023", "5002", "0" };
static const char *const protos[] = { "tcp", "udp", "icmp", "6", "17", "ah" };
static const char *const ethers[] = { "ipv4", "ipv6", "arp" };
static const char *const dscps[] = { "0", "ef", "af11", "cs1" };
static const char *const vlans[] = { "1", "2", "3", "0" };

/* A random rule of 1 .. 4 filter words; -1 when the grammar refuses the
 * combination (e.g. an IPv6 prefix with ether ipv4). */
static int random_rule(uint64_t *xw, uint64_t *x, struct le_match *m)
{
	static const char *const words[] = { "ether", "vlan", "proto", "src", "dst", "sport", "dport", "port", "dscp" };
	const char *w[8];
	int n = 0, k = 1 + (int)(rnd(xw) % 4), v6fam = rnd(xw) % 4 == 0;
	char err[256];

	for (int i = 0; i < k; i++) {
		const char *word = PICK(xw, words);
		w[n++] = word;
		if (word[0] == 'e')
			w[n++] = PICK(x, ethers);
		else if (word[0] == 'v')
			w[n++] = PICK(x, vlans);
		else if (word[0] == 'p' && word[1] == 'r')
			w[n++] = PICK(x, protos);
		else if (word[1] == 'r' || (word[0] == 'd' && word[1] == 's' && word[2] == 't'))
			w[n++] = v6fam ? PICK(x, v6) : PICK(x, v4);
		else if (word[0] == 'd' && word[1] == 's')
			w[n++] = PICK(x, dscps);
		else
			w[n++] = PICK(x, ports);
	}
	return le_match_parse_words(n, w, m, err, sizeof(err));
}

static void random_frame(uint64_t *x, struct le_pkt *p)
{
	static const uint16_t pp[] = { 80, 443, 5000, 5001, 5002, 5003, 9 };
	static const uint8_t a4[][4] = { { 198, 18, 1, 7 }, { 198, 18, 1, 6 }, { 198, 18, 0, 1 }, { 198, 19, 2, 3 } };
	static const uint8_t a6[][16] = { { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 }, { 0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 2 } };
	static const uint8_t dscp[] = { 0, 46, 10, 8 };
	static const uint8_t proto[] = { 6, 17, 1 };

	memset(p, 0, sizeof(*p));
	p->ethertype = PICK(x, ((const uint16_t[]){ 0x0800, 0x86dd, 0x0806 }));
	if (rnd(x) % 3 == 0) {
		p->has_vlan = 1;
		p->vlan = (uint16_t)(1 + rnd(x) % 3);
	}
	if (p->ethertype == 0x0806 || rnd(x) % 10 == 0)
		return; /* not IP, or truncated */
	p->ip = p->ethertype == 0x0800 ? 4 : 6;
	if (p->ip == 4) {
		memcpy(p->src, PICK(x, a4), 4);
		memcpy(p->dst, PICK(x, a4), 4);
	} else {
		memcpy(p->src, PICK(x, a6), 16);
		memcpy(p->dst, PICK(x, a6), 16);
	}
	p->dscp = PICK(x, dscp);
	p->has_proto = 1;
	p->proto = PICK(x, proto);
	/* AH: IPv4's protocol; in IPv6, walked past to the protocol behind */
	if (p->ip == 4 && rnd(x) % 8 == 0)
		p->proto = LE_PROTO_AH;
	if (p->ip == 6 && rnd(x) % 4 == 0)
		p->has_ah = 1;
	if (p->proto != 1 && p->proto != LE_PROTO_AH && rnd(x) % 8) {
		p->has_ports = 1;
		p->sport = PICK(x, pp);
		p->dport = PICK(x, pp);
	}
}

static void random_against_scan(void)
{
	static struct le_match rules[64];
	const struct le_match *ptr[64];
	uint64_t x = 11;
	unsigned bad = 0, compiled = 0, matched = 0, frames = 0;

	for (unsigned set = 0; set < 400; set++) {
		unsigned n = 1 + (unsigned)(rnd(&x) % 64), k = 0;
		struct le_class_set s;
		/* A few shapes repeated (as a real rule set is), or all kinds. */
		/* Even sets: a few shapes (words) repeated with varying
		 * values, as real rule sets are; odd sets: any shapes. */
		uint64_t shape_seed = rnd(&x) | 1;

		for (unsigned tries = 0; k < n; tries++) {
			/* a shape the grammar refuses throughout: take a new one */
			uint64_t w = shape_seed + 2 * (rnd(&x) % 3) + (tries / 64) * 8;
			if (random_rule(set % 2 == 0 ? &w : &x, &x, &rules[k]) == 0) {
				ptr[k] = &rules[k];
				k++;
			}
		}
		CHECK(le_class_set_build(&s, ptr, n) == 0);
		compiled += s.compiled;
		for (unsigned f = 0; f < 2000; f++, frames++) {
			struct le_pkt p;
			unsigned a, b;
			random_frame(&x, &p);
			a = le_class_set_lookup(&s, &p);
			b = le_class_set_scan(rules, n, &p);
			bad += a != b;
			matched += b != 0;
		}
		le_class_set_free(&s);
	}
	CHECK_EQ_U64(bad, 0);
	/* the inputs exercise both forms and both outcomes */
	CHECK(compiled > 50, "%u sets compiled", compiled);
	CHECK(matched > frames / 10 && matched < frames, "%u of %u frames matched", matched, frames);
}

/* A random frame as bytes: mostly the plain shapes class_fast.h reads
 * (IPv4 with a 20-byte header, frames that are not IP), with fragments,
 * every port-carrying protocol and lengths cut at each field's edge, and
 * the shapes it hands to the parser (VLAN tags, IPv6, IPv4 options or a
 * wrong version, short frames). Returns the length. */
/* Takes rules[*k] into the set being drawn (ptr[]), and the header depth
 * the set's frames must be parsed to. */
static void keep_rule(struct le_match *rules, const struct le_match **ptr, unsigned *k, int *depth)
{
	ptr[*k] = &rules[*k];
	if (le_match_depth(&rules[*k]) > *depth)
		*depth = le_match_depth(&rules[*k]);
	(*k)++;
}

static uint32_t random_bytes(uint64_t *x, uint8_t *b)
{
	static const uint16_t pp[] = { 80, 443, 5000, 5001, 5002, 5003, 9 };
	static const uint8_t a4[][4] = { { 198, 18, 1, 7 }, { 198, 18, 1, 6 }, { 198, 18, 0, 1 }, { 198, 19, 2, 3 } };
	static const uint8_t proto[] = { 6, 17, 1, 33, 132, 136, 50, 51 };
	static const uint8_t dscp[] = { 0, 46, 10, 8 };
	static const uint16_t other[] = { 0x0806, 0x88cc, 0x0000, 0x86dd, 0x8100, 0x88a8 };
	static const uint32_t cut[] = { 0, 13, 14, 33, 34, 35, 37, 38, 64 };
	uint32_t off = 12, len = 64, kind = (uint32_t)(rnd(x) % 8);

	memset(b, 0, 64);
	if (kind == 7) { /* a VLAN tag first */
		b[12] = 0x81, b[14] = 0, b[15] = (uint8_t)(1 + rnd(x) % 3);
		off = 16;
		kind = (uint32_t)(rnd(x) % 6);
	}
	if (kind >= 5) { /* not IPv4 */
		uint16_t t = PICK(x, other);
		b[off] = (uint8_t)(t >> 8), b[off + 1] = (uint8_t)t;
		if (t == 0x86dd)
			b[off + 2] = 0x60, b[off + 8] = PICK(x, proto);
	} else {
		uint8_t *ip = b + off + 2;
		b[off] = 0x08, b[off + 1] = 0x00;
		ip[0] = rnd(x) % 8 ? 0x45 : PICK(x, ((const uint8_t[]){ 0x46, 0x55, 0x44 }));
		ip[1] = (uint8_t)(PICK(x, dscp) << 2 | rnd(x) % 4);
		if (rnd(x) % 6 == 0) /* a fragment: offset set, or only more-fragments */
			ip[6] = rnd(x) % 2 ? 0x20 : 0x01, ip[7] = (uint8_t)rnd(x);
		ip[9] = PICK(x, proto);
		memcpy(ip + 12, PICK(x, a4), 4);
		memcpy(ip + 16, PICK(x, a4), 4);
		uint16_t sp = PICK(x, pp), dp = PICK(x, pp);
		ip[20] = (uint8_t)(sp >> 8), ip[21] = (uint8_t)sp, ip[22] = (uint8_t)(dp >> 8), ip[23] = (uint8_t)dp;
	}
	if (rnd(x) % 4 == 0)
		len = PICK(x, cut);
	return len;
}

/* le_class_set_classify, which reads the plain shapes itself when the set
 * is small, against le_pkt_parse and the linear scan, on byte frames; and
 * le_class_set_classify_burst on the same frames in bursts. */
#define FRAMES_PER_SET 500
static void bytes_against_scan(void)
{
	static struct le_match rules[24];
	const struct le_match *ptr[24];
	uint64_t x = 29;
	static uint8_t fb[FRAMES_PER_SET][64];
	static uint32_t flen[FRAMES_PER_SET];
	static unsigned fwant[FRAMES_PER_SET];
	unsigned bad = 0, bad_burst = 0, bad_parse = 0, fast = 0, keyed = 0, matched = 0, frames = 0, compiled = 0;

	for (unsigned set = 0; set < 2000; set++) {
		/* one-shape sets up to 24 rules: past LE_CLASS_FAST_MAX they
		 * are hashed, and plain frames are keyed from their bytes */
		unsigned n = 1 + (unsigned)(rnd(&x) % (set % 3 == 0 ? 24 : 12)), k = 0, tries = 0;
		int depth = LE_PKT_L2;
		struct le_class_set s;
		/* every third set: one shape (the same words, other values), so
		 * that the hashed groups see byte frames too */
		uint64_t shape = rnd(&x) | 1;

		while (k < n) {
			uint64_t w = shape + (tries++ / 64) * 2;
			if (random_rule(set % 3 == 0 ? &w : &x, &x, &rules[k]) == 0)
				keep_rule(rules, ptr, &k, &depth);
		}
		CHECK(le_class_set_build(&s, ptr, n) == 0);
		compiled += s.compiled;
		for (unsigned f = 0; f < FRAMES_PER_SET; f++, frames++) {
			uint8_t *b = fb[f];
			uint32_t len = flen[f] = random_bytes(&x, b);
			struct le_pkt p;
			unsigned got = le_class_set_classify(&s, b, len, depth), want;

			le_pkt_parse(b, len, depth, &p);
			want = le_class_set_scan(rules, n, &p);
			for (int d = LE_PKT_L2; d <= LE_PKT_L4; d++) {
				struct le_pkt slow, quick;
				le_pkt_parse(b, len, d, &slow);
				le_pkt_parse_fast(b, len, d, &quick);
				if (memcmp(&slow, &quick, sizeof(slow)) != 0 && bad_parse++ < 5)
					fprintf(stderr, "set %u frame %u (len %u) depth %d: le_pkt_parse_fast differs\n",
						set, f, len, d);
			}
			if (got != want && bad++ < 5)
				fprintf(stderr, "set %u frame %u (len %u): class %u, the scan says %u\n", set, f, len, got,
					want);
			fwant[f] = want;
			fast += le_class_fast_lookup(&s.fast, b, len) >= 0;
			keyed += s.fast.n == 0 && s.compiled && s.nscan == 0 && le_plain4_shape(b, len);
			matched += want != 0;
		}
		/* the same frames in bursts of 1 .. LE_CS_BURST */
		for (unsigned f = 0, c; f < FRAMES_PER_SET; f += c) {
			const uint8_t *bp[LE_CS_BURST];
			unsigned cls[LE_CS_BURST];
			c = 1 + (unsigned)(rnd(&x) % LE_CS_BURST);
			if (c > FRAMES_PER_SET - f)
				c = FRAMES_PER_SET - f;
			for (unsigned i = 0; i < c; i++)
				bp[i] = fb[f + i];
			le_class_set_classify_burst(&s, bp, flen + f, c, depth, cls);
			for (unsigned i = 0; i < c; i++)
				if (cls[i] != fwant[f + i] && bad_burst++ < 5)
					fprintf(stderr, "set %u frame %u in a burst of %u: class %u, the scan says %u\n", set,
						f + i, c, cls[i], fwant[f + i]);
		}
		le_class_set_free(&s);
	}
	CHECK_EQ_U64(bad, 0);
	CHECK_EQ_U64(bad_burst, 0);
	CHECK_EQ_U64(bad_parse, 0);
	CHECK(compiled > 100, "%u sets compiled", compiled);
	/* (~2% with this seed: a one-shape set with a `proto ah` rule
	 * scans that rule, and is not keyed from the bytes) */
	CHECK(keyed > frames / 100, "%u of %u frames keyed from their bytes", keyed, frames);
	/* both paths and both outcomes are exercised */
	CHECK(fast > frames / 4 && fast < frames, "%u of %u frames read without a parse", fast, frames);
	CHECK(matched > frames / 20 && matched < frames, "%u of %u frames matched", matched, frames);
}

/* The benchmark's shape: many rules of one shape compile to one group. */
static void one_shape(void)
{
	static struct le_match rules[64];
	const struct le_match *ptr[64];
	struct le_class_set s;
	struct le_pkt p = { .ethertype = 0x0800, .ip = 4, .has_proto = 1, .proto = 17, .has_ports = 1 };

	for (unsigned k = 0; k < 64; k++) {
		char port[8];
		const char *w[] = { "proto", "udp", "dport", port };
		snprintf(port, sizeof(port), "%u", 5000 + k % 32); /* each key twice */
		CHECK(le_match_parse_words(4, w, &rules[k], NULL, 0) == 0);
		ptr[k] = &rules[k];
	}
	CHECK(le_class_set_build(&s, ptr, 64) == 0);
	CHECK(s.compiled && s.ngroups == 1 && s.nscan == 0);
	p.dport = 5031;
	CHECK_EQ_U64(le_class_set_lookup(&s, &p), 32); /* the first of the two */
	p.dport = 5032;
	CHECK_EQ_U64(le_class_set_lookup(&s, &p), 0);
	le_class_set_free(&s);
	/* one rule: the scan is cheaper and kept */
	CHECK(le_class_set_build(&s, ptr, 1) == 0);
	CHECK(!s.compiled);
	le_class_set_free(&s);
}

/* A per-flow set of /32 sources past the fast set's size: plain IPv4
 * frames are keyed from their bytes with the whole address masked in, so
 * a neighbour differing in the last bit matches nothing. */
static void host_prefixes_from_bytes(void)
{
	static struct le_match rules[9];
	const struct le_match *ptr[9];
	struct le_class_set s;
	uint8_t b[64] = { [12] = 0x08, [13] = 0x00, [14] = 0x45, [23] = 17, [26] = 198, [27] = 18, [28] = 1 };

	for (unsigned k = 0; k < 9; k++) {
		char addr[32];
		const char *w[] = { "src", addr };
		snprintf(addr, sizeof(addr), "198.18.1.%u", 2 * k + 1);
		CHECK(le_match_parse_words(2, w, &rules[k], NULL, 0) == 0);
		ptr[k] = &rules[k];
	}
	CHECK(le_class_set_build(&s, ptr, 9) == 0);
	CHECK(s.compiled && s.ngroups == 1 && s.nscan == 0 && s.fast.n == 0);
	for (unsigned k = 0; k < 9; k++) {
		b[29] = (uint8_t)(2 * k + 1);
		CHECK_EQ_U64(le_class_set_classify(&s, b, 64, LE_PKT_L3), k + 1);
		b[29] = (uint8_t)(2 * k);
		CHECK_EQ_U64(le_class_set_classify(&s, b, 64, LE_PKT_L3), 0);
	}
	le_class_set_free(&s);
}

/* An IPv6 fragment other than the first carries the rest of the
 * fragmentable part, not its headers: the bytes behind its fragment
 * header are payload, so neither the protocol nor the ports can be read
 * from them. When the fragment header names an extension header (a
 * destination-options header in the fragmentable part, say), the final
 * protocol is unknown and a rule testing `proto` does not match; when it
 * names the transport (UDP), that is the protocol, without ports, as for
 * an IPv4 fragment. The first fragment is read through as before. */
static uint32_t v6_fragment(uint8_t *b, uint8_t frag_next, uint16_t offset, const uint8_t *payload, uint32_t n)
{
	memset(b, 0, 128);
	b[12] = 0x86, b[13] = 0xdd;
	b[14] = 0x60;
	b[20] = 44;                              /* -> fragment header */
	b[54] = frag_next;                       /* its next header */
	b[56] = (uint8_t)(offset >> 5), b[57] = (uint8_t)(offset << 3 | 1); /* offset, M */
	memcpy(b + 62, payload, n);
	return 62 + n;
}

static void ipv6_later_fragments(void)
{
	/* payload that reads as a destination-options header naming TCP,
	 * then as ports 80 -> 80 */
	static const uint8_t payload[16] = { 6, 0, 0, 0, 0, 0, 0, 0, 0, 80, 0, 80 };
	static const char *const sets[][2] = { { "proto", "tcp" }, { "proto", "60" } };
	uint8_t b[128];

	for (unsigned k = 0; k < 2; k++) {
		struct le_match m;
		const struct le_match *ptr = &m;
		struct le_class_set s;
		struct le_pkt p;
		uint32_t len;

		CHECK(le_match_parse_words(2, sets[k], &m, NULL, 0) == 0);
		CHECK(le_class_set_build(&s, &ptr, 1) == 0);
		/* offset 185 (a later fragment) behind which the payload
		 * happens to look like headers: no protocol */
		len = v6_fragment(b, 60, 185, payload, sizeof(payload));
		le_pkt_parse(b, len, LE_PKT_L4, &p);
		CHECK(!p.has_proto && !p.has_ports, "later fragment: has_proto %d proto %u has_ports %d", p.has_proto,
		      p.proto, p.has_ports);
		CHECK_EQ_U64(le_class_set_classify(&s, b, len, LE_PKT_L4), 0);
		le_class_set_free(&s);
	}
	/* a later fragment of UDP: proto udp, no ports */
	{
		struct le_pkt p;
		uint32_t len = v6_fragment(b, 17, 185, payload, sizeof(payload));
		le_pkt_parse(b, len, LE_PKT_L4, &p);
		CHECK(p.has_proto && p.proto == 17 && !p.has_ports);
		/* the first fragment (offset 0) is read through its
		 * destination options to TCP and its ports */
		len = v6_fragment(b, 60, 0, payload, sizeof(payload));
		le_pkt_parse(b, len, LE_PKT_L4, &p);
		CHECK(p.has_proto && p.proto == 6 && p.has_ports && p.sport == 80 && p.dport == 80);
	}
}

/* `ether` takes EtherTypes, 0x0600 .. 0xffff. Smaller values are 802.3
 * lengths, and 0 is also what a frame too short for its EtherType reads
 * as (le_pkt_parse leaves the field zero): `ether 0` took runt frames,
 * against "a frame too short for a field does not match". */
static void ethertype_range(void)
{
	static const char *const bad[] = { "0", "0x0", "0x0000", "1500", "0x05dc", "0x05ff", "1535" };
	static const char *const good[] = { "0x0600", "1536", "0x88cc", "0xffff", "65535", "arp" };
	char err[256];
	struct le_match m;

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *w[] = { "ether", bad[i] };
		err[0] = '\0';
		CHECK(le_match_parse_words(2, w, &m, err, sizeof(err)) < 0, "ether %s accepted", bad[i]);
		CHECK(strstr(err, "802.3 length") != NULL, "ether %s: '%s'", bad[i], err);
	}
	for (unsigned i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		const char *w[] = { "ether", good[i] };
		CHECK(le_match_parse_words(2, w, &m, err, sizeof(err)) == 0, "ether %s: %s", good[i], err);
	}
	/* a runt frame (no EtherType) matches no `ether` rule, whichever path */
	{
		const char *w[] = { "ether", "0x0600" };
		const struct le_match *ptr = &m;
		struct le_class_set s;
		uint8_t b[18] = { [12] = 0x81, [13] = 0x00 };
		CHECK(le_match_parse_words(2, w, &m, NULL, 0) == 0);
		CHECK(le_class_set_build(&s, &ptr, 1) == 0);
		for (uint32_t len = 0; len < 18; len++)
			CHECK_EQ_U64(le_class_set_classify(&s, b, len, LE_PKT_L2), 0);
		le_class_set_free(&s);
	}
}

/* The shapes the other tests draw rarely, every reader against the scan:
 * rules with prefixes of every length (/0 .. /32, /0 .. /128) and port
 * ranges reaching 0 and 65535; frames with zero to three tags (0x8100,
 * 0x88a8, 0x9100), IPv4 options, wrong versions and fragments, IPv6
 * chains of hop-by-hop, routing, destination options, AH and fragment
 * headers (first and later), every DSCP and ECN, ICMP and protocols
 * without ports, cut at any length. Each frame is classified alone, by
 * le_class_set_classify_parsed and le_class_set_lookup, and in a burst. */
static const uint8_t wide_protos[] = { 6, 17, 1, 58, 33, 132, 136, 50, 51, 0, 43, 60, 44, 47 };
static const uint16_t wide_ports[] = { 0, 1, 80, 443, 1023, 1024, 65534, 65535 };

static void wide_addr(uint64_t *x, uint8_t *a, int fam)
{
	static const uint8_t p4[][4] = { { 198, 18, 1, 7 }, { 10, 0, 0, 1 }, { 255, 255, 255, 255 }, { 0, 0, 0, 0 } };
	static const uint8_t p6[][16] = { { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 }, { [0 ... 15] = 0xff }, { 0 } };
	const unsigned n = fam == 4 ? 4 : 16;

	memcpy(a, fam == 4 ? p4[rnd(x) % 4] : p6[rnd(x) % 3], n);
	if (rnd(x) % 2) /* a neighbour: one bit flipped anywhere */
		a[rnd(x) % n] ^= (uint8_t)(1u << rnd(x) % 8);
}

/* shape_len: the prefix length of every src and dst, or -1 for any; and
 * single ports only (hashable rules), so a one-shape set compiles. */
static int wide_rule(uint64_t *x, struct le_match *m, int shape_len)
{
	static const char *const words[] = { "ether", "vlan", "proto", "src", "dst", "sport", "dport", "port", "dscp" };
	static const char *const ethers[] = { "ipv4", "ipv6", "arp", "0x88cc", "0x8100" };
	char vals[4][64];
	const char *w[8];
	int n = 0, k = 1 + (int)(rnd(x) % 4), fam = rnd(x) % 3 ? 4 : 6;

	for (int i = 0; i < k; i++) {
		const char *word = words[rnd(x) % 9];
		char *v = vals[i];
		w[n++] = word;
		if (word[0] == 'e') {
			snprintf(v, 64, "%s", ethers[rnd(x) % 5]);
		} else if (word[0] == 'v') {
			snprintf(v, 64, "%u", (unsigned)(rnd(x) % 2 ? rnd(x) % 4 : rnd(x) % 4096));
		} else if (word[0] == 'p' && word[1] == 'r') {
			snprintf(v, 64, "%u", wide_protos[rnd(x) % sizeof(wide_protos)]);
		} else if ((word[0] == 's' && word[1] == 'r') || (word[0] == 'd' && word[1] == 's' && word[2] == 't')) {
			uint8_t a[16];
			unsigned bits = fam == 4 ? 32 : 128, len = (unsigned)(rnd(x) % (bits + 1));
			if (shape_len >= 0)
				len = (unsigned)shape_len % (bits + 1);
			char t[INET6_ADDRSTRLEN];
			wide_addr(x, a, fam);
			for (unsigned b = len; b < bits; b++)
				a[b / 8] &= (uint8_t)~(0x80 >> (b % 8));
			inet_ntop(fam == 4 ? AF_INET : AF_INET6, a, t, sizeof(t));
			snprintf(v, 64, "%s/%u", t, len);
		} else if (word[0] == 'd' && word[1] == 's') {
			snprintf(v, 64, "%u", (unsigned)(rnd(x) % 64));
		} else {
			unsigned lo = wide_ports[rnd(x) % 8], hi = wide_ports[rnd(x) % 8];
			if (lo > hi)
				lo ^= hi, hi ^= lo, lo ^= hi;
			if (shape_len >= 0 || rnd(x) % 2)
				snprintf(v, 64, "%u", lo);
			else
				snprintf(v, 64, "%u-%u", lo, hi);
		}
		w[n++] = v;
	}
	return le_match_parse_words(n, w, m, NULL, 0);
}

static void put16(uint8_t *b, uint16_t v)
{
	b[0] = (uint8_t)(v >> 8), b[1] = (uint8_t)v;
}

#define WIDE_BYTES 512
static uint32_t wide_frame(uint64_t *x, uint8_t *b)
{
	static const uint16_t tpids[] = { 0x8100, 0x88a8, 0x9100 };
	unsigned tags = rnd(x) % 4 == 0 ? (unsigned)(rnd(x) % 4) : 0, kind = (unsigned)(rnd(x) % 10);
	uint32_t off = 12, len;

	memset(b, 0, WIDE_BYTES);
	for (unsigned i = 0; i < 12; i++)
		b[i] = (uint8_t)rnd(x);
	for (unsigned t = 0; t < tags; t++, off += 4) {
		put16(b + off, tpids[rnd(x) % 3]);
		put16(b + off + 2, (uint16_t)(rnd(x) % 2 ? rnd(x) % 4 : rnd(x)));
	}
	if (kind < 5) { /* IPv4 */
		uint8_t *ip = b + off + 2, *l4;
		unsigned ihl = rnd(x) % 4 ? 5 : 5 + (unsigned)(rnd(x) % 11);
		put16(b + off, 0x0800);
		ip[0] = (uint8_t)(rnd(x) % 20 ? 0x40 | ihl : rnd(x));
		ip[1] = (uint8_t)rnd(x); /* DSCP and ECN */
		if (rnd(x) % 5 == 0)     /* flags and fragment offset */
			ip[6] = (uint8_t)rnd(x), ip[7] = (uint8_t)rnd(x);
		ip[9] = wide_protos[rnd(x) % sizeof(wide_protos)];
		wide_addr(x, ip + 12, 4);
		wide_addr(x, ip + 16, 4);
		l4 = ip + (ihl > 5 ? 4 * ihl : 20);
		for (uint8_t *o = ip + 20; o < l4; o++)
			*o = (uint8_t)rnd(x);
		put16(l4, wide_ports[rnd(x) % 8]);
		put16(l4 + 2, wide_ports[rnd(x) % 8]);
		len = (uint32_t)(l4 - b) + 8;
	} else if (kind < 8) { /* IPv6 and a chain of extension headers */
		static const uint8_t ext[] = { 0, 43, 60, 44, 51 };
		uint8_t *ip = b + off + 2, *nh = ip + 6, *h = ip + 40;
		unsigned next = (unsigned)(rnd(x) % 5);
		put16(b + off, 0x86dd);
		ip[0] = (uint8_t)(rnd(x) % 20 ? 0x60 | rnd(x) % 16 : rnd(x));
		ip[1] = (uint8_t)rnd(x);
		wide_addr(x, ip + 8, 6);
		wide_addr(x, ip + 24, 6);
		for (unsigned e = 0; e < next; e++) {
			const uint8_t t = ext[rnd(x) % 5];
			*nh = t;
			nh = h;
			if (t == 44) { /* first (offset 0) or later */
				put16(h + 2, (uint16_t)((rnd(x) % 2 ? 0 : 1 + rnd(x) % 100) << 3 | (rnd(x) % 2)));
				h += 8;
			} else if (t == 51) { /* AH: length in 4-octet units, minus 2 */
				h[1] = (uint8_t)(1 + rnd(x) % 3);
				h += (h[1] + 2) * 4;
			} else {
				h[1] = (uint8_t)(rnd(x) % 3);
				h += 8 + 8 * h[1];
			}
		}
		*nh = wide_protos[rnd(x) % sizeof(wide_protos)];
		put16(h, wide_ports[rnd(x) % 8]);
		put16(h + 2, wide_ports[rnd(x) % 8]);
		len = (uint32_t)(h - b) + 8;
	} else { /* not IP */
		static const uint16_t other[] = { 0x0806, 0x88cc, 0x0000, 0x05dc, 0x8100 };
		put16(b + off, other[rnd(x) % 5]);
		len = off + 2 + (uint32_t)(rnd(x) % 50);
	}
	if (rnd(x) % 4 == 0)
		len = (uint32_t)(rnd(x) % (len + 1));
	return len;
}

static void wide_against_scan(void)
{
	static struct le_match rules[64];
	static uint8_t fb[LE_CS_BURST][WIDE_BYTES];
	const struct le_match *ptr[64];
	const uint8_t *bp[LE_CS_BURST];
	uint32_t flen[LE_CS_BURST];
	unsigned want[LE_CS_BURST], cls[LE_CS_BURST];
	uint64_t x = 0x5eed;
	unsigned bad = 0, matched = 0, frames = 0, compiled = 0, fast = 0;

	for (unsigned i = 0; i < LE_CS_BURST; i++)
		bp[i] = fb[i];
	for (unsigned set = 0; set < 3000; set++) {
		/* small sets (class_fast) and large ones, of one shape (hashed
		 * groups, the plain IPv4 keys and the burst form) or any */
		unsigned n = 1 + (unsigned)(rnd(&x) % (rnd(&x) % 2 ? LE_CLASS_FAST_MAX : 64)), k = 0;
		int depth = LE_PKT_L2, one_shape = rnd(&x) % 2, shape_len = one_shape ? (int)(rnd(&x) % 129) : -1;
		struct le_class_set s;

		while (k < n) {
			if (wide_rule(&x, &rules[k], shape_len) < 0 ||
			    (one_shape && k > 0 && rules[k].fields != rules[0].fields && rnd(&x) % 50))
				continue;
			keep_rule(rules, ptr, &k, &depth);
		}
		CHECK(le_class_set_build(&s, ptr, n) == 0);
		compiled += s.compiled;
		for (unsigned f = 0; f < LE_CS_BURST; f++, frames++) {
			struct le_pkt p;
			unsigned a, c, d;

			/* an exact-size copy: a read past its end is an ASan report */
			uint8_t *exact;

			flen[f] = wide_frame(&x, fb[f]);
			exact = malloc(flen[f] ? flen[f] : 1);
			if (exact == NULL) {
				CHECK(0, "out of memory");
				return;
			}
			memcpy(exact, fb[f], flen[f]);
			le_pkt_parse(exact, flen[f], depth, &p);
			want[f] = le_class_set_scan(rules, n, &p);
			a = le_class_set_classify(&s, exact, flen[f], depth);
			c = le_class_set_classify_parsed(&s, exact, flen[f], depth);
			free(exact);
			d = le_class_set_lookup(&s, &p);
			fast += le_class_fast_lookup(&s.fast, fb[f], flen[f]) >= 0;
			matched += want[f] != 0;
			if ((a != want[f] || c != want[f] || d != want[f]) && bad++ < 5)
				fprintf(stderr, "wide set %u frame %u (len %u): classify %u, parsed %u, lookup %u, scan %u\n",
					set, f, flen[f], a, c, d, want[f]);
		}
		le_class_set_classify_burst(&s, bp, flen, LE_CS_BURST, depth, cls);
		for (unsigned f = 0; f < LE_CS_BURST; f++)
			if (cls[f] != want[f] && bad++ < 5)
				fprintf(stderr, "wide set %u frame %u in a burst: class %u, scan %u\n", set, f, cls[f], want[f]);
		le_class_set_free(&s);
	}
	CHECK_EQ_U64(bad, 0);
	CHECK(compiled > 100, "%u sets compiled", compiled);
	CHECK(fast > frames / 10, "%u of %u frames read without a parse", fast, frames);
	CHECK(matched > frames / 20 && matched < frames, "%u of %u frames matched", matched, frames);
}

int main(void)
{
	one_shape();
	random_against_scan();
	bytes_against_scan();
	host_prefixes_from_bytes();
	ipv6_later_fragments();
	ethertype_range();
	wide_against_scan();
	return mt_summary();
}
