/* What single class rules match on hand-built frames, through every
 * reader a path uses (the parse and the scan, a one-rule set, a compiled
 * set): the cases the random comparisons in test_class_set.c cannot
 * judge, because there both sides read the frame with the same parser.
 * And when two rules are the same rule (le_match_equal). */
#include <stdio.h>
#include <string.h>

#include "class_set.h"
#include "classify.h"
#include "minitest.h"
#include "path.h"
#include "pkt.h"

static void put16(uint8_t *b, uint16_t v)
{
	b[0] = (uint8_t)(v >> 8), b[1] = (uint8_t)v;
}

/* A rule from its text ("proto tcp dport 80"); the test fails on a
 * rule the grammar refuses. */
static int rule(const char *text, struct le_match *m)
{
	char buf[256], err[256], *w[16], *save = NULL;
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", text);
	for (char *t = strtok_r(buf, " ", &save); t != NULL && n < 16; t = strtok_r(NULL, " ", &save))
		w[n++] = t;
	if (le_match_parse_words(n, (const char *const *)w, m, err, sizeof(err)) < 0) {
		CHECK(0, "'%s': %s", text, err);
		return -1;
	}
	return 0;
}

/* 1 when `text` matches the frame, the same by every reader: the parse
 * and le_match_frame, a set of that rule alone, and a compiled set where
 * it is the last of 16 rules that match nothing here. */
static int matches(const char *text, const uint8_t *b, uint32_t len)
{
	static struct le_match rules[16];
	const struct le_match *ptr[16];
	struct le_class_set one, many;
	struct le_pkt p;
	int direct, alone, last;

	for (unsigned k = 0; k < 15; k++) {
		char r[64];
		snprintf(r, sizeof(r), "vlan %u", 4000 + k); /* no frame here is tagged */
		rule(r, &rules[k]);
		ptr[k] = &rules[k];
	}
	if (rule(text, &rules[15]) < 0)
		return -1;
	ptr[15] = &rules[15];
	le_pkt_parse(b, len, le_match_depth(&rules[15]), &p);
	direct = le_match_frame(&rules[15], &p);
	CHECK(le_class_set_build(&one, ptr + 15, 1) == 0);
	CHECK(le_class_set_build(&many, ptr, 16) == 0);
	alone = le_class_set_classify(&one, b, len, LE_PKT_L4) == 1;
	last = le_class_set_classify(&many, b, len, LE_PKT_L4) == 16;
	le_class_set_free(&one);
	le_class_set_free(&many);
	CHECK(direct == alone && direct == last, "'%s': the parse says %d, one rule %d, 16 rules %d", text, direct,
	      alone, last);
	return direct;
}

/* An Ethernet frame with an IPv6 header naming `first`; the caller
 * appends the rest at the returned offset. */
static uint32_t ipv6_frame(uint8_t *b, uint8_t first)
{
	memset(b, 0, 256);
	put16(b + 12, 0x86dd);
	b[14] = 0x60;
	b[20] = first;
	b[21] = 64;
	b[22] = 0x20, b[23] = 0x01, b[24] = 0x0d, b[25] = 0xb8, b[37] = 1; /* src 2001:db8::1 */
	b[38] = 0x20, b[39] = 0x01, b[40] = 0x0d, b[41] = 0xb8, b[53] = 2; /* dst 2001:db8::2 */
	return 54;
}

/* An Authentication Header (RFC 4302) naming `next`, with a 12-byte ICV
 * (HMAC-SHA1-96): 24 bytes, Payload Len 4 = 24 / 4 - 2. Read as the
 * other extension headers are, (4 + 1) * 8 = 40 bytes, it would put the
 * transport header 16 bytes too far. */
static uint32_t ah(uint8_t *h, uint8_t next)
{
	memset(h, 0xa5, 24); /* SPI, sequence number, ICV: not zero */
	h[0] = next;
	h[1] = 4;
	h[2] = h[3] = 0;
	return 24;
}

static uint32_t tcp(uint8_t *h, uint16_t sport, uint16_t dport)
{
	memset(h, 0, 20);
	put16(h, sport);
	put16(h + 2, dport);
	h[12] = 0x50;
	return 20;
}

/* IPv6 AH is an extension header: ip6tables' `-p tcp` (and its port
 * matches) find TCP behind it (ipv6_find_hdr), so `proto tcp` and the
 * ports read past it; `proto ah` (51) still matches the frame, as it did
 * when AH ended the walk and as nft's `meta l4proto ah` does. */
static void ipv6_ah(void)
{
	uint8_t b[256];
	uint32_t off = ipv6_frame(b, 51), len;

	off += ah(b + off, 6);
	len = off + tcp(b + off, 40000, 80);
	CHECK(matches("proto tcp", b, len) == 1);
	CHECK(matches("proto 6 dport 80", b, len) == 1);
	CHECK(matches("sport 40000", b, len) == 1);
	CHECK(matches("port 80 src 2001:db8::/32", b, len) == 1);
	CHECK(matches("proto ah", b, len) == 1);
	CHECK(matches("proto 51 dst 2001:db8::2", b, len) == 1);
	CHECK(matches("proto udp", b, len) == 0);
	CHECK(matches("dport 443", b, len) == 0);

	/* behind hop-by-hop, AH and destination options: UDP */
	off = ipv6_frame(b, 0);
	b[off] = 51, b[off + 1] = 0, off += 8;
	off += ah(b + off, 60);
	b[off] = 17, b[off + 1] = 1, off += 16;
	put16(b + off, 53), put16(b + off + 2, 5353);
	len = off + 8;
	CHECK(matches("proto udp dport 5353", b, len) == 1);
	CHECK(matches("proto ah", b, len) == 1);
	CHECK(matches("proto tcp", b, len) == 0);

	/* the frame cut inside TCP's ports: the protocol, no ports */
	off = ipv6_frame(b, 51);
	off += ah(b + off, 6);
	tcp(b + off, 40000, 80);
	CHECK(matches("proto tcp", b, off + 3) == 1);
	CHECK(matches("dport 80", b, off + 3) == 0);
	/* ... and cut inside AH: the upper layer is unknown, AH is not */
	CHECK(matches("proto tcp", b, 54 + 6) == 0);
	CHECK(matches("proto ah", b, 54 + 6) == 1);

	/* a later fragment whose fragment header names AH: its payload is
	 * not read, so only `proto ah` matches (as the first fragment does) */
	off = ipv6_frame(b, 44);
	b[off] = 51, put16(b + off + 2, 185 << 3 | 1), off += 8;
	off += ah(b + off, 6);
	len = off + tcp(b + off, 40000, 80);
	CHECK(matches("proto ah", b, len) == 1);
	CHECK(matches("proto tcp", b, len) == 0);
	CHECK(matches("dport 80", b, len) == 0);
}

/* IPv4 has no extension headers: AH is the protocol (iptables' `-p`
 * and nft's `meta l4proto` read the header's protocol field), and it has
 * no ports. */
static void ipv4_ah(void)
{
	uint8_t b[128] = { 0 };
	uint32_t len;

	put16(b + 12, 0x0800);
	b[14] = 0x45;
	b[23] = 51;
	b[26] = 198, b[27] = 18, b[28] = 0, b[29] = 1;
	b[30] = 198, b[31] = 19, b[32] = 0, b[33] = 1;
	len = 34 + ah(b + 34, 6);
	len += tcp(b + len, 40000, 80);
	CHECK(matches("proto ah", b, len) == 1);
	CHECK(matches("proto 51 src 198.18.0.0/15", b, len) == 1);
	CHECK(matches("proto tcp", b, len) == 0);
	CHECK(matches("dport 80", b, len) == 0);
}

/* An IPv4 frame behind `ntags` VLAN tags (TPID, VID pairs), from
 * 198.18.0.1 to 198.19.0.1, with `ihl` 32-bit words of header, flags and
 * fragment offset `frag`, and a transport header with the two ports. */
static uint32_t ipv4_frame(uint8_t *b, const uint16_t *tags, unsigned ntags, unsigned ihl, uint16_t frag,
			   uint8_t proto, uint8_t tos, uint16_t sport, uint16_t dport)
{
	uint32_t off = 12;
	uint8_t *ip;

	memset(b, 0, 256);
	for (unsigned t = 0; t < ntags; t++, off += 4)
		put16(b + off, tags[2 * t]), put16(b + off + 2, tags[2 * t + 1]);
	put16(b + off, 0x0800);
	ip = b + off + 2;
	ip[0] = (uint8_t)(0x40 | ihl);
	ip[1] = tos;
	put16(ip + 6, frag);
	ip[8] = 64;
	ip[9] = proto;
	ip[12] = 198, ip[13] = 18, ip[15] = 1;
	ip[16] = 198, ip[17] = 19, ip[19] = 1;
	for (unsigned o = 20; o < 4 * ihl; o++)
		ip[o] = 1; /* NOP options */
	put16(ip + 4 * ihl, sport);
	put16(ip + 4 * ihl + 2, dport);
	return (uint32_t)(ip - b) + 4 * ihl + 8;
}

/* VLAN tags, IPv4 options and fragments, prefixes /0 and /32 and ports at
 * 0 and 65535, each as the grammar says (docs/grammar.md, Classes). */
static void ipv4_shapes(void)
{
	static const uint16_t qinq[] = { 0x88a8, 100, 0x8100, 7 }, three[] = { 0x8100, 1, 0x8100, 2, 0x8100, 3 };
	uint8_t b[256];
	uint32_t len;

	/* QinQ: the outer VID; the EtherType behind both tags */
	len = ipv4_frame(b, qinq, 2, 5, 0, 17, 0, 53, 5353);
	CHECK(matches("vlan 100", b, len) == 1);
	CHECK(matches("vlan 7", b, len) == 0);
	CHECK(matches("ether ipv4 proto udp dport 5353", b, len) == 1);
	/* a third tag is not skipped: its TPID is the EtherType, no IP */
	len = ipv4_frame(b, three, 3, 5, 0, 17, 0, 53, 5353);
	CHECK(matches("vlan 1", b, len) == 1);
	CHECK(matches("ether 0x8100", b, len) == 1);
	CHECK(matches("ether ipv4", b, len) == 0);
	CHECK(matches("src 0.0.0.0/0", b, len) == 0);
	/* options: the ports behind them */
	len = ipv4_frame(b, NULL, 0, 15, 0, 6, 0xb8, 0, 65535);
	CHECK(matches("proto tcp sport 0 dport 65535", b, len) == 1);
	CHECK(matches("dscp ef port 65535", b, len) == 1);
	CHECK(matches("port 1-65534", b, len) == 0);
	CHECK(matches("dport 0-65535", b, len - 5) == 0); /* cut inside the ports */
	/* a first fragment (MF, offset 0) has ports; a later one none */
	len = ipv4_frame(b, NULL, 0, 5, 0x2000, 17, 0, 53, 5353);
	CHECK(matches("dport 5353", b, len) == 1);
	len = ipv4_frame(b, NULL, 0, 5, 0x0010, 17, 0, 53, 5353);
	CHECK(matches("proto udp", b, len) == 1);
	CHECK(matches("dport 0-65535", b, len) == 0);
	/* prefixes: /0 takes every IPv4 frame and no IPv6 one, /32 one address */
	len = ipv4_frame(b, NULL, 0, 5, 0, 1, 0, 0, 0);
	CHECK(matches("src 0.0.0.0/0 dst 198.19.0.1/32", b, len) == 1);
	CHECK(matches("dst 198.19.0.0/32", b, len) == 0);
	CHECK(matches("dst 198.19.0.0/31", b, len) == 1);
	CHECK(matches("src ::/0", b, len) == 0);
	CHECK(matches("port 0-65535", b, len) == 0); /* ICMP has no ports */
}

/* IPv6 walks past its extension headers to the upper layer, so a rule
 * for IPv6 frames whose `proto` is one of them (ip6tables' `-p 44` alike)
 * can never match: refused, as other such combinations are. AH is the
 * exception (`proto ah` takes the frames it protects), and without IPv6
 * the number is IPv4's protocol field. */
static void ipv6_extension_protos(void)
{
	static const char *const bad[] = { "ether ipv6 proto 44", "proto 0 ether ipv6", "src 2001:db8::/32 proto 60",
					   "dst ::/0 proto 43" };
	static const char *const good[] = { "proto 44", "ether ipv4 proto 60", "ether ipv6 proto ah", "proto 59 ether ipv6" };
	struct le_match m;
	char err[256];

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char buf[64], *w[8], *save = NULL;
		int n = 0;
		snprintf(buf, sizeof(buf), "%s", bad[i]);
		for (char *t = strtok_r(buf, " ", &save); t != NULL; t = strtok_r(NULL, " ", &save))
			w[n++] = t;
		err[0] = '\0';
		CHECK(le_match_parse_words(n, (const char *const *)w, &m, err, sizeof(err)) < 0, "'%s' accepted", bad[i]);
		CHECK(strstr(err, "IPv6 extension header") != NULL, "'%s': '%s'", bad[i], err);
	}
	for (unsigned i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		rule(good[i], &m);
}

/* Rules are equal when they test the same fields for the same values,
 * however those were written: a name or its number, hex or decimal, a
 * bare address or its /32, a port or its one-port range, any word order.
 * (A path's equality, le_path_config_equal, is built on it.) */
static void equal_rules(void)
{
	static const char *const same[][2] = {
		{ "ether ipv4", "ether 0x0800" },     { "ether 0x0800", "ether 2048" },
		{ "ether 0x86DD", "ether ipv6" },     { "ether arp", "ether 0x0806" },
		{ "proto tcp", "proto 6" },           { "proto ah", "proto 51" },
		{ "proto dccp dport 5000", "proto 33 dport 5000" }, { "proto udplite", "proto 136" },
		{ "dscp ef", "dscp 46" },             { "dscp af41", "dscp 34" },
		{ "dscp cs0", "dscp 0" },             { "src 198.18.0.1", "src 198.18.0.1/32" },
		{ "dst 2001:db8::1", "dst 2001:0db8:0:0::1/128" },
		{ "src ::/0", "src 0::0/0" },         { "port 80", "port 80-80" },
		{ "vlan 7", "vlan 007" },
		{ "proto udp dport 53 ether ipv4", "ether 0x0800 dport 53-53 proto 17" },
	};
	static const char *const differ[][2] = {
		{ "proto tcp", "proto udp" },          { "src 198.18.0.0/15", "src 198.18.0.0/16" },
		{ "src 2001:db8::/32", "src 2001:db8::/33" }, { "src 0.0.0.0/0", "src ::/0" },
		{ "src 198.18.0.1", "dst 198.18.0.1" }, { "dport 80", "sport 80" },
		{ "port 80", "dport 80" },             { "dport 80", "dport 80-81" },
		{ "ether ipv4", "ether ipv4 vlan 0" }, { "vlan 1", "vlan 2" },
		{ "dscp 0", "dscp 1" },                { "ether 0x88cc", "ether 0x88cd" },
	};
	struct le_match a, b;

	for (unsigned i = 0; i < sizeof(same) / sizeof(same[0]); i++)
		if (rule(same[i][0], &a) == 0 && rule(same[i][1], &b) == 0)
			CHECK(le_match_equal(&a, &b) && le_match_equal(&b, &a), "'%s' and '%s' differ", same[i][0],
			      same[i][1]);
	for (unsigned i = 0; i < sizeof(differ) / sizeof(differ[0]); i++)
		if (rule(differ[i][0], &a) == 0 && rule(differ[i][1], &b) == 0)
			CHECK(!le_match_equal(&a, &b) && !le_match_equal(&b, &a), "'%s' and '%s' equal", differ[i][0],
			      differ[i][1]);
	{
		static struct le_path_config x, y;
		char err[LE_ERR_MAX];
		CHECK(le_path_config_parse("delay 1ms ; class v4 match ether ipv4 proto tcp : loss 1%", &x, err,
					   sizeof(err)) == 0, "%s", err);
		CHECK(le_path_config_parse("delay 1ms ; class v4 match proto 6 ether 0x0800 : loss 1%", &y, err,
					   sizeof(err)) == 0, "%s", err);
		CHECK(le_path_config_equal(&x, &y));
	}
}

int main(void)
{
	ipv6_ah();
	ipv4_ah();
	ipv4_shapes();
	ipv6_extension_protos();
	equal_rules();
	return mt_summary();
}
