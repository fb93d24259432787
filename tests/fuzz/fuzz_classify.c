/* libFuzzer target: arbitrary bytes as frames, classified every way the
 * data plane can classify them, against the linear scan.
 *
 * The class set answers from the bytes for the plain shapes (class_fast.c:
 * sets of up to 8 rules; class_set.c: the keys of larger sets' hash
 * groups, one frame or a burst at a time) and from a parse for the rest.
 * Each of those readers must give what le_class_set_scan gives on
 * le_pkt_parse's reading of the same bytes: a disagreement, however odd
 * the frame, is a frame sent to the wrong class, and aborts.
 *
 * The first input byte picks a rule set (small ones, taken by the fast
 * match, and large ones of one or several shapes, taken by the hash
 * groups); the rest is one frame, which is also classified cut at every
 * length from 0 to its own (a burst of those), so every short-header
 * edge is seen. Each frame is its own exact-size allocation, so a read
 * one byte past it is an ASan report. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "class_set.h"
#include "path.h"
#include "pkt.h"

#define MAX_FRAME 256 /* the headers, with room for VLAN tags and IPv6 */

/* Rule sets: small (fast match), and large ones, per-flow (one shape, many
 * exact values) and mixed (several shapes, ranges and prefixes, scanned
 * rules among hashed ones, `proto ah` among them). Values are chosen near
 * each other so that mutated frames hit and miss them. */
static const char *const rule_sets[] = {
	"delay 0 ; class a match proto udp dport 5000 : delay 1ms",
	"delay 0 ; class a match proto tcp port 830 : delay 0 ; class b match src 198.18.0.0/15 : delay 1ms ; "
	"class c match ether 0x88b5 : delay 0 ; class d match dscp ef proto udp sport 53-60 : delay 0",
	"delay 0 ; class a match dst 198.19.0.1/32 proto icmp : delay 0 ; class b match vlan 7 : delay 0 ; "
	"class c match ether ipv6 proto udp dport 443 : delay 0 ; class d match port 9-9 : delay 0 ; "
	"class e match proto 0 : delay 0 ; class f match dscp 0 src 0.0.0.0/1 : delay 0",
	/* 16 of one shape: a hash group */
	"delay 0 ; class c0 match proto udp dport 5000 : delay 0 ; class c1 match proto udp dport 5001 : delay 0 ; "
	"class c2 match proto udp dport 5002 : delay 0 ; class c3 match proto udp dport 5003 : delay 0 ; "
	"class c4 match proto udp dport 5004 : delay 0 ; class c5 match proto udp dport 5005 : delay 0 ; "
	"class c6 match proto udp dport 5006 : delay 0 ; class c7 match proto udp dport 5007 : delay 0 ; "
	"class c8 match proto udp dport 5008 : delay 0 ; class c9 match proto udp dport 5009 : delay 0 ; "
	"class c10 match proto udp dport 5010 : delay 0 ; class c11 match proto udp dport 5011 : delay 0 ; "
	"class c12 match proto tcp dport 5012 : delay 0 ; class c13 match proto tcp dport 5013 : delay 0 ; "
	"class c14 match proto tcp dport 5014 : delay 0 ; class c15 match proto tcp dport 5015 : delay 0",
	/* mixed shapes, more than the fast match takes */
	"delay 0 ; class h0 match src 198.18.0.1/32 dst 198.19.0.1/32 proto udp sport 5000 dport 5000 : delay 0 ; "
	"class h1 match src 198.18.0.2/32 dst 198.19.0.1/32 proto udp sport 5000 dport 5000 : delay 0 ; "
	"class h2 match src 198.18.0.0/24 proto tcp : delay 0 ; class h3 match src 198.18.1.0/24 proto tcp : delay 0 ; "
	"class r0 match dport 1000-2000 : delay 0 ; class r1 match sport 53 proto udp : delay 0 ; "
	"class v0 match vlan 100 proto udp : delay 0 ; class v1 match vlan 101 : delay 0 ; "
	"class e0 match ether 0x0806 : delay 0 ; class s0 match dst 2001:db8::/32 proto tcp dport 80 : delay 0 ; "
	"class s1 match dst 2001:db8::1/128 : delay 0 ; class d0 match dscp af41 : delay 0 ; "
	"class d1 match dscp cs1 proto 17 : delay 0 ; class p0 match proto icmpv6 : delay 0 ; "
	"class a0 match proto ah dst 2001:db8::/32 : delay 0 ; class a1 match proto tcp dport 80 : delay 0",
};
#define NSETS (sizeof(rule_sets) / sizeof(rule_sets[0]))

struct set {
	struct le_path_config cfg;
	const struct le_match *rules[LE_MAX_CLASSES];
	struct le_match flat[LE_MAX_CLASSES]; /* the same, in one array: the scan's form */
	unsigned n;
	int depth;
	struct le_class_set cs;
};

static struct set sets[NSETS];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[LE_ERR_MAX];

	(void)argc;
	(void)argv;
	for (unsigned k = 0; k < NSETS; k++) {
		struct set *s = &sets[k];

		if (le_path_config_parse(rule_sets[k], &s->cfg, err, sizeof(err)) < 0) {
			fprintf(stderr, "fuzz_classify: rule set %u: %s\n", k, err);
			abort();
		}
		s->n = s->cfg.nclasses;
		s->depth = LE_PKT_L2;
		for (unsigned i = 0; i < s->n; i++) {
			s->rules[i] = &s->cfg.cls[i].match;
			s->flat[i] = s->cfg.cls[i].match;
			if (le_match_depth(s->rules[i]) > s->depth)
				s->depth = le_match_depth(s->rules[i]);
		}
		if (le_class_set_build(&s->cs, s->rules, s->n) < 0)
			abort();
	}
	return 0;
}

static void disagree(unsigned set, const char *how, uint32_t len, unsigned got, unsigned want)
{
	fprintf(stderr, "fuzz_classify: rule set %u, %u bytes: %s says class %u, the scan %u\n", set, len, how,
		got, want);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *cut[LE_CS_BURST];
	uint32_t cut_len[LE_CS_BURST];
	unsigned want[LE_CS_BURST], got[LE_CS_BURST];
	struct le_pkt pkt;
	unsigned k, nb = 0;
	uint32_t len;
	struct set *s;

	if (size < 1 || size - 1 > MAX_FRAME)
		return -1;
	k = data[0] % NSETS;
	s = &sets[k];
	len = (uint32_t)(size - 1);
	/* The frame cut at every length, the whole frame last; a burst takes
	 * at most LE_CS_BURST of them, the longest. */
	for (uint32_t l = len + 1 > LE_CS_BURST ? len + 1 - LE_CS_BURST : 0; l <= len; l++) {
		uint8_t *b = malloc(l ? l : 1);
		unsigned one;

		if (b == NULL)
			abort();
		memcpy(b, data + 1, l);
		le_pkt_parse(b, l, s->depth, &pkt);
		want[nb] = le_class_set_scan(s->flat, s->n, &pkt);
		if ((one = le_class_set_lookup(&s->cs, &pkt)) != want[nb])
			disagree(k, "the lookup of the parsed frame", l, one, want[nb]);
		if ((one = le_class_set_classify(&s->cs, b, l, s->depth)) != want[nb])
			disagree(k, "le_class_set_classify", l, one, want[nb]);
		if ((one = le_class_set_classify_parsed(&s->cs, b, l, s->depth)) != want[nb])
			disagree(k, "le_class_set_classify_parsed", l, one, want[nb]);
		le_pkt_parse_fast(b, l, s->depth, &pkt);
		if ((one = le_class_set_lookup(&s->cs, &pkt)) != want[nb])
			disagree(k, "the lookup after le_pkt_parse_fast", l, one, want[nb]);
		cut[nb] = b;
		cut_len[nb] = l;
		nb++;
	}
	le_class_set_classify_burst(&s->cs, cut, cut_len, nb, s->depth, got);
	for (unsigned i = 0; i < nb; i++) {
		if (got[i] != want[i])
			disagree(k, "le_class_set_classify_burst", cut_len[i], got[i], want[i]);
		free((void *)cut[i]);
	}
	return 0;
}
