/* Compiling class rules for the plain shapes (see class_fast.h). */
#include "class_fast.h"

#include <string.h>

/* An IPv4 prefix as value and mask; *ok = 0 for an IPv6 one, which no
 * IPv4 frame matches. */
static void v4_prefix(const struct le_prefix *p, uint32_t *val, uint32_t *mask, uint8_t *ok)
{
	if (p->family != 4) {
		*ok = 0;
		return;
	}
	*mask = p->len == 0 ? 0 : ~0u << (32 - p->len);
	*val = le_pkt_be32(p->addr) & *mask;
}

static void range(const struct le_port_range *r, uint16_t *lo, uint16_t *span)
{
	*lo = r->lo;
	*span = (uint16_t)(r->hi - r->lo);
}

static void compile(struct le_fast_rule *r, const struct le_match *m)
{
	const unsigned f = m->fields;

	memset(r, 0, sizeof(*r));
	r->sport_span = r->dport_span = r->port_span = 0xffff;
	r->on_ipv4 = !(f & LE_M_VLAN) && (!(f & LE_M_ETHER) || m->ethertype == 0x0800);
	/* A frame that is not IP has only an ethertype (le_pkt_parse). */
	r->on_other = (f & ~(unsigned)LE_M_ETHER) == 0;
	r->tests_ether = (f & LE_M_ETHER) != 0;
	r->ethertype = m->ethertype;
	if (f & LE_M_PROTO) {
		r->proto = m->proto;
		r->proto_mask = 0xff;
	}
	if (f & LE_M_DSCP) {
		r->dscp = m->dscp;
		r->dscp_mask = 0xff;
	}
	if (f & LE_M_SRC)
		v4_prefix(&m->src, &r->src, &r->src_mask, &r->on_ipv4);
	if (f & LE_M_DST)
		v4_prefix(&m->dst, &r->dst, &r->dst_mask, &r->on_ipv4);
	r->needs_ports = (f & (LE_M_SPORT | LE_M_DPORT | LE_M_PORT)) != 0;
	if (f & LE_M_SPORT)
		range(&m->sport, &r->sport_lo, &r->sport_span);
	if (f & LE_M_DPORT)
		range(&m->dport, &r->dport_lo, &r->dport_span);
	if (f & LE_M_PORT) {
		r->either_port = 1;
		range(&m->port, &r->port_lo, &r->port_span);
	}
}

void le_class_fast_build(struct le_class_fast *f, const struct le_match *rules, unsigned n)
{
	memset(f, 0, sizeof(*f));
	if (n > LE_CLASS_FAST_MAX)
		return;
	for (unsigned k = 0; k < n; k++)
		compile(&f->r[k], &rules[k]);
	f->n = n;
}
