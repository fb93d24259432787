/* Reading frame headers, as far as a caller needs: Ethernet, up to two
 * VLAN tags (0x8100, 0x88a8), IPv4 or IPv6 (skipping hop-by-hop, routing,
 * destination-options and fragment extension headers), and the ports of
 * TCP, UDP, UDP-Lite, SCTP and DCCP. Used by the classifier (class rules)
 * and by ECN marking. Never reads past the bytes it is given: a truncated
 * or malformed header just leaves the later fields unknown. */
#ifndef LE_PKT_H
#define LE_PKT_H

#include <stdint.h>
#include <string.h>

enum { LE_PKT_L2 = 2, LE_PKT_L3 = 3, LE_PKT_L4 = 4 };

struct le_pkt {
	uint16_t ethertype;     /* after VLAN tags */
	int has_vlan;
	uint16_t vlan;          /* VID of the outermost tag */
	int ip;                 /* 0 (not IP or truncated), 4 or 6 */
	uint32_t l3off;         /* offset of the IP header */
	uint8_t dscp, ecn;
	uint8_t src[16], dst[16]; /* IPv4 in the first 4 bytes */
	int has_proto;
	uint8_t proto;          /* IPv4 protocol / IPv6 final next header */
	int has_ports;          /* first fragment (or none) with a complete port pair */
	uint16_t sport, dport;
};

/* Reads up to `depth` (LE_PKT_L2/L3/L4). Returns 0; fields not reached
 * are zero. */
int le_pkt_parse(const uint8_t *b, uint32_t len, int depth, struct le_pkt *out);

/* TCP, UDP, DCCP, SCTP, UDP-Lite: source and destination port first. */
static inline int le_pkt_has_ports(uint8_t proto)
{
	return proto == 6 || proto == 17 || proto == 33 || proto == 132 || proto == 136;
}

/* le_pkt_parse, with the frame nearly every class rule set sees read
 * inline at fixed offsets: IPv4 with a 20-byte header and no VLAN tag.
 * The same result as le_pkt_parse (tests/unit/test_class_set.c compares
 * the two on random frames); every other frame goes to it. */
static inline int le_pkt_parse_fast(const uint8_t *b, uint32_t len, int depth, struct le_pkt *out)
{
	if (b == NULL || len < 34 || depth < LE_PKT_L3 || b[12] != 0x08 || b[13] != 0x00 || b[14] != 0x45)
		return le_pkt_parse(b, len, depth, out);
	memset(out, 0, sizeof(*out));
	out->ethertype = 0x0800;
	out->ip = 4;
	out->l3off = 14;
	out->dscp = b[15] >> 2;
	out->ecn = b[15] & 3;
	memcpy(out->src, b + 26, 4);
	memcpy(out->dst, b + 30, 4);
	out->has_proto = 1;
	out->proto = b[23];
	/* only the first fragment (offset 0) carries the ports */
	if (depth >= LE_PKT_L4 && len >= 38 && (b[20] & 0x1f) == 0 && b[21] == 0 && le_pkt_has_ports(b[23])) {
		out->has_ports = 1;
		out->sport = (uint16_t)(b[34] << 8 | b[35]);
		out->dport = (uint16_t)(b[36] << 8 | b[37]);
	}
	return 0;
}

#endif
