/* Reading frame headers, as far as a caller needs: Ethernet, up to two
 * VLAN tags (0x8100, 0x88a8), IPv4 or IPv6 (skipping hop-by-hop, routing,
 * destination-options, fragment and authentication extension headers, as
 * ip6tables finds the upper-layer protocol), and the ports of TCP, UDP,
 * UDP-Lite, SCTP and DCCP. Used by the classifier (class rules)
 * and by ECN marking. Never reads past the bytes it is given: a truncated
 * or malformed header just leaves the later fields unknown. */
#ifndef LE_PKT_H
#define LE_PKT_H

#include <stdint.h>
#include <string.h>

enum { LE_PKT_L2 = 2, LE_PKT_L3 = 3, LE_PKT_L4 = 4 };

/* The IP Authentication Header's protocol number (RFC 4302). */
#define LE_PROTO_AH 51

struct le_pkt {
	uint16_t ethertype;     /* after VLAN tags */
	int has_vlan;
	uint16_t vlan;          /* VID of the outermost tag */
	int ip;                 /* 0 (not IP or truncated), 4 or 6 */
	uint32_t l3off;         /* offset of the IP header */
	uint8_t dscp, ecn;
	uint8_t src[16], dst[16]; /* IPv4 in the first 4 bytes */
	int has_proto;
	uint8_t proto;          /* IPv4 protocol / IPv6 upper-layer protocol */
	int has_ah;             /* IPv6: a header named AH on the way to it
				 * (IPv4's AH is its protocol, LE_PROTO_AH) */
	int has_ports;          /* first fragment (or none) with a complete port pair */
	uint16_t sport, dport;
};

/* Reads up to `depth` (LE_PKT_L2/L3/L4). Returns 0; fields not reached
 * are zero. */
int le_pkt_parse(const uint8_t *b, uint32_t len, int depth, struct le_pkt *out);

static inline uint16_t le_pkt_be16(const uint8_t *b)
{
	return (uint16_t)(b[0] << 8 | b[1]);
}

static inline uint32_t le_pkt_be32(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* The IPv6 extension headers walked past to the upper-layer protocol:
 * hop-by-hop 0, routing 43, fragment 44, AH 51, destination options 60
 * (ipv6_ext_hdr in Linux, less ESP, whose next header is encrypted, and
 * "no next header"). */
static inline int le_pkt_ipv6_ext_hdr(uint8_t nh)
{
	return nh == 0 || nh == 43 || nh == 44 || nh == LE_PROTO_AH || nh == 60;
}

/* TCP, UDP, DCCP, SCTP, UDP-Lite: source and destination port first. */
static inline int le_pkt_has_ports(uint8_t proto)
{
	return proto == 6 || proto == 17 || proto == 33 || proto == 132 || proto == 136;
}

/* The frame nearly every class rule set sees, "plain IPv4": IPv4 with a
 * 20-byte header and no VLAN tag, every field at a fixed offset. */
static inline int le_plain4_shape(const uint8_t *b, uint32_t len)
{
	return b != NULL && len >= 34 && b[12] == 0x08 && b[13] == 0x00 && b[14] == 0x45;
}

/* A plain IPv4 frame (le_plain4_shape) that has both ports: the first
 * fragment of TCP, UDP, DCCP, SCTP or UDP-Lite, long enough for them. */
static inline int le_plain4_has_ports(const uint8_t *b, uint32_t len)
{
	return (le_pkt_be16(b + 20) & 0x1fff) == 0 && len >= 38 && le_pkt_has_ports(b[23]);
}

/* A plain IPv4 frame's fields, as le_pkt_parse reads them to LE_PKT_L4. */
struct le_plain4 {
	uint32_t src, dst;         /* host order */
	uint32_t src_raw, dst_raw; /* the 4 bytes as they lie in the frame */
	uint16_t sport, dport;     /* 0 without ports */
	uint8_t proto, dscp;
	uint8_t ports;             /* the first fragment of TCP, UDP, DCCP,
				    * SCTP or UDP-Lite, both ports present */
};

static inline void le_plain4_read(const uint8_t *b, uint32_t len, struct le_plain4 *v)
{
	v->proto = b[23];
	v->dscp = b[15] >> 2;
	v->src = le_pkt_be32(b + 26);
	v->dst = le_pkt_be32(b + 30);
	memcpy(&v->src_raw, b + 26, 4);
	memcpy(&v->dst_raw, b + 30, 4);
	v->ports = le_plain4_has_ports(b, len);
	v->sport = v->ports ? le_pkt_be16(b + 34) : 0;
	v->dport = v->ports ? le_pkt_be16(b + 36) : 0;
}

/* le_pkt_parse, with a plain IPv4 frame read inline (le_plain4_read);
 * every other frame goes to le_pkt_parse. The same result
 * (tests/unit/test_class_set.c compares the two on random frames). */
static inline int le_pkt_parse_fast(const uint8_t *b, uint32_t len, int depth, struct le_pkt *out)
{
	struct le_plain4 v;

	if (depth < LE_PKT_L3 || !le_plain4_shape(b, len))
		return le_pkt_parse(b, len, depth, out);
	le_plain4_read(b, len, &v);
	memset(out, 0, sizeof(*out));
	out->ethertype = 0x0800;
	out->ip = 4;
	out->l3off = 14;
	out->dscp = v.dscp;
	out->ecn = b[15] & 3;
	memcpy(out->src, &v.src_raw, 4);
	memcpy(out->dst, &v.dst_raw, 4);
	out->has_proto = 1;
	out->proto = v.proto;
	if (depth >= LE_PKT_L4 && v.ports) {
		out->has_ports = 1;
		out->sport = v.sport;
		out->dport = v.dport;
	}
	return 0;
}

#endif
