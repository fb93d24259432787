/* ECN marking; see ecn.h. */
#include "ecn.h"

#include "pkt.h"

uint16_t le_csum_update16(uint16_t check, uint16_t old, uint16_t new_)
{
	/* RFC 1624 eqn. 3, in 32 bits with the carries folded back. */
	uint32_t sum = (uint16_t)~check;

	sum += (uint16_t)~old;
	sum += new_;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

int le_ecn_set_ce(uint8_t *b, uint32_t len)
{
	struct le_pkt p;
	uint8_t *ip;

	le_pkt_parse(b, len, LE_PKT_L3, &p);
	if (p.ip == 0 || p.ecn == 0)
		return 0;        /* not IP, or Not-ECT */
	if (p.ecn == 3)
		return 1;        /* already CE */
	ip = b + p.l3off;
	if (p.ip == 4) {
		uint16_t old = (uint16_t)(ip[0] << 8 | ip[1]), new_, check;

		ip[1] |= 3;
		new_ = (uint16_t)(ip[0] << 8 | ip[1]);
		check = (uint16_t)(ip[10] << 8 | ip[11]);
		check = le_csum_update16(check, old, new_);
		ip[10] = (uint8_t)(check >> 8);
		ip[11] = (uint8_t)check;
	} else {
		ip[1] |= 0x30;   /* ECN bits are the traffic class's low two */
	}
	return 1;
}
