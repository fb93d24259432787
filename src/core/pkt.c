/* Header reading; see pkt.h. Every read is bounds-checked against len. */
#include "pkt.h"

#include <string.h>

int le_pkt_parse(const uint8_t *b, uint32_t len, int depth, struct le_pkt *out)
{
	uint32_t off = 12, l4 = 0;
	uint16_t type;
	int tags = 0, first_fragment = 1;

	memset(out, 0, sizeof(*out));
	if (b == NULL || len < 14)
		return 0;
	type = le_pkt_be16(b + off);
	while ((type == 0x8100 || type == 0x88a8) && tags < 2) {
		if (len < off + 6)
			return 0;
		if (tags == 0) {
			out->has_vlan = 1;
			out->vlan = le_pkt_be16(b + off + 2) & 0x0fff;
		}
		off += 4;
		type = le_pkt_be16(b + off);
		tags++;
	}
	off += 2;
	out->ethertype = type;
	if (depth < LE_PKT_L3)
		return 0;
	if (type == 0x0800) {
		uint32_t ihl;

		if (len < off + 20 || (b[off] >> 4) != 4 || (ihl = (b[off] & 0x0fu) * 4u) < 20)
			return 0;
		out->ip = 4;
		out->l3off = off;
		out->dscp = b[off + 1] >> 2;
		out->ecn = b[off + 1] & 3;
		memcpy(out->src, b + off + 12, 4);
		memcpy(out->dst, b + off + 16, 4);
		out->has_proto = 1;
		out->proto = b[off + 9];
		/* Only the first fragment (offset 0) carries the L4 header. */
		first_fragment = (le_pkt_be16(b + off + 6) & 0x1fff) == 0;
		l4 = off + ihl;
		if (len < l4)
			return 0;
	} else if (type == 0x86dd) {
		uint8_t nh;
		int hops = 0;

		if (len < off + 40 || (b[off] >> 4) != 6)
			return 0;
		out->ip = 6;
		out->l3off = off;
		out->dscp = (uint8_t)(((b[off] & 0x0f) << 2) | (b[off + 1] >> 6));
		out->ecn = (b[off + 1] >> 4) & 3;
		memcpy(out->src, b + off + 8, 16);
		memcpy(out->dst, b + off + 24, 16);
		nh = b[off + 6];
		l4 = off + 40;
		/* Extension headers: hop-by-hop, routing and destination
		 * options (length in 8-octet units past the first 8), fragment
		 * (8 bytes) and AH (length in 4-octet units past the first 8,
		 * RFC 4302). A bounded number, so a hostile chain cannot keep
		 * us here. AH is noted as it is named, so that `proto ah`
		 * matches the frames it protects whatever follows it, even
		 * when that cannot be read. */
		while (le_pkt_ipv6_ext_hdr(nh) && hops++ < 8) {
			out->has_ah |= nh == LE_PROTO_AH;
			if (len < l4 + 8)
				return 0; /* next header unknown: no protocol */
			if (nh == 44) {
				const int later = (le_pkt_be16(b + l4 + 2) & 0xfff8) != 0;
				nh = b[l4];
				l4 += 8;
				/* A later fragment: what follows is payload,
				 * not headers. Its protocol is the one named
				 * here, or unknown when that is another
				 * extension header. */
				if (later) {
					first_fragment = 0;
					break;
				}
			} else {
				uint8_t next = b[l4];
				l4 += nh == LE_PROTO_AH ? 4u * (b[l4 + 1] + 2u) : 8u + 8u * b[l4 + 1];
				nh = next;
			}
		}
		out->has_ah |= nh == LE_PROTO_AH;
		if (le_pkt_ipv6_ext_hdr(nh))
			return 0; /* too long a chain, or a later fragment's */
		out->has_proto = 1;
		out->proto = nh;
	} else {
		return 0;
	}
	if (depth < LE_PKT_L4 || !first_fragment || !le_pkt_has_ports(out->proto) || len < l4 + 4)
		return 0;
	out->has_ports = 1;
	out->sport = le_pkt_be16(b + l4);
	out->dport = le_pkt_be16(b + l4 + 2);
	return 0;
}
