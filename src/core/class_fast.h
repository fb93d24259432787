/* A few class rules matched straight from a frame's bytes, for the two
 * shapes nearly every frame has: IPv4 with a 20-byte header and no VLAN
 * tag, and a frame that is not IP at all (ARP, LLDP, ...).
 *
 * The general path parses every frame into a struct le_pkt (le_pkt_parse)
 * and then tests the rules on it (le_match_frame): about 140 instructions
 * a frame with one rule, a third of the plain delay path's rate. For the
 * plain shapes every field sits at a fixed offset, so each rule is
 * compiled to masks and ranges and tested on the few values read from the
 * frame, with the same first-match result. Any other frame (VLAN tags,
 * IPv6, IPv4 options, short or malformed headers) returns -1 and goes
 * through the general path; tests/unit/test_class_set.c checks the two
 * against each other on random rules and frames. */
#ifndef LE_CLASS_FAST_H
#define LE_CLASS_FAST_H

#include <stdint.h>

#include "classify.h"
#include "pkt.h"

/* Above this many rules the hashed groups of class_set.h are cheaper. */
#define LE_CLASS_FAST_MAX 8

struct le_fast_rule {
	uint32_t src, src_mask, dst, dst_mask; /* IPv4 prefixes; mask 0 when not tested */
	uint16_t sport_lo, sport_span;         /* in range when (uint16_t)(v - lo) <= span; */
	uint16_t dport_lo, dport_span;         /* not tested: 0, 0xffff */
	uint16_t port_lo, port_span;           /* `port`: either port in range */
	uint16_t ethertype;                    /* the `ether` value, when tested */
	uint8_t proto, proto_mask, dscp, dscp_mask;
	uint8_t needs_ports;                   /* tests a port: needs the pair */
	uint8_t either_port;                   /* `port` given */
	uint8_t on_ipv4;                       /* can match a plain IPv4 frame */
	uint8_t on_other;                      /* can match a frame that is not IP */
	uint8_t tests_ether;
};

struct le_class_fast {
	unsigned n; /* rules compiled; 0 when the set is too large (or empty) */
	struct le_fast_rule r[LE_CLASS_FAST_MAX];
};

/* Compiles rules[0 .. n) when n <= LE_CLASS_FAST_MAX; else f->n = 0. */
void le_class_fast_build(struct le_class_fast *f, const struct le_match *rules, unsigned n);

static inline int le_fast_in(uint16_t v, uint16_t lo, uint16_t span)
{
	return (uint16_t)(v - lo) <= span;
}

/* A plain IPv4 frame against the compiled rules. */
static inline unsigned le_class_fast_ipv4(const struct le_class_fast *f, const uint8_t *b, uint32_t len)
{
	struct le_plain4 v;

	le_plain4_read(b, len, &v);
	for (unsigned k = 0; k < f->n; k++) {
		const struct le_fast_rule *r = &f->r[k];

		if (!r->on_ipv4 || (((v.proto ^ r->proto) & r->proto_mask) | ((v.dscp ^ r->dscp) & r->dscp_mask)) ||
		    (((v.src ^ r->src) & r->src_mask) | ((v.dst ^ r->dst) & r->dst_mask)))
			continue;
		if (r->needs_ports &&
		    (!v.ports || !le_fast_in(v.sport, r->sport_lo, r->sport_span) ||
		     !le_fast_in(v.dport, r->dport_lo, r->dport_span) ||
		     (r->either_port && !le_fast_in(v.sport, r->port_lo, r->port_span) &&
		      !le_fast_in(v.dport, r->port_lo, r->port_span))))
			continue;
		return k + 1;
	}
	return 0;
}

/* 1 + the index of the first rule the frame's first len bytes match, 0
 * when none, or -1 when the frame is not of a plain shape (or the set was
 * not compiled): then parse it. */
static inline int le_class_fast_lookup(const struct le_class_fast *f, const uint8_t *b, uint32_t len)
{
	uint16_t type;

	if (f->n == 0 || b == NULL || len < 14)
		return -1;
	type = le_pkt_be16(b + 12);
	if (type == 0x0800)
		return len >= 34 && b[14] == 0x45 ? (int)le_class_fast_ipv4(f, b, len) : -1; /* le_plain4_shape */
	if (type == 0x86dd || type == 0x8100 || type == 0x88a8)
		return -1;
	/* Not IP: the frame has an ethertype and nothing else to test. */
	for (unsigned k = 0; k < f->n; k++)
		if (f->r[k].on_other && (!f->r[k].tests_ether || f->r[k].ethertype == type))
			return (int)k + 1;
	return 0;
}

#endif
