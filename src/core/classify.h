/* Class rules: which frames go through which link of a path.
 *
 * A rule's filter words are ANDed (docs/grammar.md, "Classes"):
 *   ether ipv4|ipv6|arp|0xNNNN   EtherType after any VLAN tags (0x0600 .. 0xffff)
 *   vlan ID                      VID of the outermost VLAN tag (0..4095)
 *   proto tcp|udp|icmp|icmpv6|sctp|dccp|udplite|ah|N
 *                                IPv4 protocol / IPv6 upper-layer protocol
 *                                (past AH too); ah also: IPv6 with an AH
 *   src PREFIX, dst PREFIX       IPv4 or IPv6 address or CIDR prefix
 *   sport P[-P], dport P[-P]     TCP/UDP/UDP-Lite/SCTP/DCCP port or range
 *   port P[-P]                   either port in the range
 *   dscp N|ef|afXY|csN           DiffServ code point (0..63)
 * Frames are read only as deep as the rules need (pkt.h); a frame too
 * short or malformed for a field does not match a rule that tests it. */
#ifndef LE_CLASSIFY_H
#define LE_CLASSIFY_H

#include <stddef.h>
#include <stdint.h>

#include "pkt.h"

enum {
	LE_M_ETHER = 1 << 0, LE_M_VLAN = 1 << 1, LE_M_PROTO = 1 << 2, LE_M_SRC = 1 << 3,
	LE_M_DST = 1 << 4, LE_M_SPORT = 1 << 5, LE_M_DPORT = 1 << 6, LE_M_PORT = 1 << 7,
	LE_M_DSCP = 1 << 8,
};

struct le_prefix {
	int family;          /* 4 or 6 */
	uint8_t addr[16];
	uint8_t len;         /* prefix length in bits */
};

struct le_port_range {
	uint16_t lo, hi;
};

struct le_match {
	unsigned fields;     /* LE_M_* set */
	uint16_t ethertype;
	uint16_t vlan;
	uint8_t proto;
	struct le_prefix src, dst;
	struct le_port_range sport, dport, port;
	uint8_t dscp;
	/* the words as written, for formatting back */
	char ether_text[16], proto_text[16], dscp_text[16];
	char src_text[64], dst_text[64];
};

/* Parses filter words; errors name the word: "dport: '70000' is out of
 * range (0 .. 65535)". At least one word. */
int le_match_parse_words(int n, const char *const *w, struct le_match *m, char *err, size_t errlen);
size_t le_match_format(const struct le_match *m, char *buf, size_t buflen);
/* 1 when both test the same fields for the same values, however they
 * were written (`ether ipv4` and `ether 0x0800`, `proto tcp` and `proto 6`). */
int le_match_equal(const struct le_match *a, const struct le_match *b);
/* How deep frames must be read for this rule (LE_PKT_L2/L3/L4). */
int le_match_depth(const struct le_match *m);
/* 1 when the parsed frame matches every word. */
int le_match_frame(const struct le_match *m, const struct le_pkt *p);

#endif
