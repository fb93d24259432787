/* Reading frame headers, as far as a caller needs: Ethernet, up to two
 * VLAN tags (0x8100, 0x88a8), IPv4 or IPv6 (skipping hop-by-hop, routing,
 * destination-options and fragment extension headers), and the ports of
 * TCP, UDP, UDP-Lite, SCTP and DCCP. Used by the classifier (class rules)
 * and by ECN marking. Never reads past the bytes it is given: a truncated
 * or malformed header just leaves the later fields unknown. */
#ifndef LE_PKT_H
#define LE_PKT_H

#include <stdint.h>

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

#endif
