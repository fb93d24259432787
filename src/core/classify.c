/* Class rules: parsing, formatting, matching; see classify.h. */
#include "classify.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static const struct {
	const char *name;
	unsigned bit;
} filters[] = {
	{ "ether", LE_M_ETHER }, { "vlan", LE_M_VLAN }, { "proto", LE_M_PROTO }, { "src", LE_M_SRC },
	{ "dst", LE_M_DST }, { "sport", LE_M_SPORT }, { "dport", LE_M_DPORT }, { "port", LE_M_PORT },
	{ "dscp", LE_M_DSCP },
};
#define NFILTERS (sizeof(filters) / sizeof(filters[0]))

static int parse_ether(const char *v, uint16_t *out)
{
	uint64_t u;
	char tmp[8];

	if (strcmp(v, "ipv4") == 0)
		*out = 0x0800;
	else if (strcmp(v, "ipv6") == 0)
		*out = 0x86dd;
	else if (strcmp(v, "arp") == 0)
		*out = 0x0806;
	else if ((v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) && strlen(v) > 2 && strlen(v) <= 6 &&
		 strspn(v + 2, "0123456789abcdefABCDEF") == strlen(v + 2)) {
		*out = (uint16_t)strtoul(v + 2, NULL, 16);
	} else if (le_parse_u64(v, 0, 0xffff, &u, tmp, sizeof(tmp)) == 0) {
		*out = (uint16_t)u;
	} else {
		return -1;
	}
	return 0;
}

static int parse_proto(const char *v, uint8_t *out)
{
	static const struct {
		const char *name;
		uint8_t n;
	} names[] = { { "tcp", 6 },   { "udp", 17 },  { "icmp", 1 },      { "icmpv6", 58 },
		      { "sctp", 132 }, { "dccp", 33 }, { "udplite", 136 }, { "ah", LE_PROTO_AH } };
	uint64_t u;
	char tmp[8];

	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(v, names[i].name) == 0) {
			*out = names[i].n;
			return 0;
		}
	if (le_parse_u64(v, 0, 255, &u, tmp, sizeof(tmp)) < 0)
		return -1;
	*out = (uint8_t)u;
	return 0;
}

static int parse_dscp(const char *v, uint8_t *out)
{
	uint64_t u;
	char tmp[8];

	if (strcmp(v, "ef") == 0) {
		*out = 46;
	} else if (v[0] == 'a' && v[1] == 'f' && v[2] >= '1' && v[2] <= '4' && v[3] >= '1' && v[3] <= '3' &&
		   v[4] == '\0') {
		*out = (uint8_t)(8 * (v[2] - '0') + 2 * (v[3] - '0'));
	} else if (v[0] == 'c' && v[1] == 's' && v[2] >= '0' && v[2] <= '7' && v[3] == '\0') {
		*out = (uint8_t)(8 * (v[2] - '0'));
	} else if (le_parse_u64(v, 0, 63, &u, tmp, sizeof(tmp)) == 0) {
		*out = (uint8_t)u;
	} else {
		return -1;
	}
	return 0;
}

static int parse_prefix(const char *v, struct le_prefix *p)
{
	char addr[64];
	const char *slash = strchr(v, '/');
	size_t n = slash ? (size_t)(slash - v) : strlen(v);
	uint64_t len;
	char tmp[8];

	memset(p, 0, sizeof(*p));
	if (n == 0 || n >= sizeof(addr))
		return -1;
	memcpy(addr, v, n);
	addr[n] = '\0';
	if (inet_pton(AF_INET, addr, p->addr) == 1)
		p->family = 4;
	else if (inet_pton(AF_INET6, addr, p->addr) == 1)
		p->family = 6;
	else
		return -1;
	len = p->family == 4 ? 32 : 128;
	if (slash && le_parse_u64(slash + 1, 0, len, &len, tmp, sizeof(tmp)) < 0)
		return -2;
	p->len = (uint8_t)len;
	/* Host bits set below the prefix are a typo more often than not. */
	for (unsigned bit = p->len; bit < (p->family == 4 ? 32u : 128u); bit++)
		if (p->addr[bit / 8] & (0x80 >> (bit % 8)))
			return -3;
	return 0;
}

static int parse_ports(const char *v, struct le_port_range *r)
{
	const char *dash = strchr(v, '-');
	char a[16], tmp[8];
	uint64_t lo, hi;
	size_t n = dash ? (size_t)(dash - v) : strlen(v);

	if (n == 0 || n >= sizeof(a))
		return -1;
	memcpy(a, v, n);
	a[n] = '\0';
	if (le_parse_u64(a, 0, 65535, &lo, tmp, sizeof(tmp)) < 0)
		return -1;
	hi = lo;
	if (dash && le_parse_u64(dash + 1, 0, 65535, &hi, tmp, sizeof(tmp)) < 0)
		return -1;
	if (hi < lo)
		return -2;
	r->lo = (uint16_t)lo;
	r->hi = (uint16_t)hi;
	return 0;
}

int le_match_parse_words(int n, const char *const *w, struct le_match *m, char *err, size_t errlen)
{
	int i = 0;

	memset(m, 0, sizeof(*m));
	if (n == 0)
		return fail(err, errlen,
			    "match: needs at least one filter word (ether, vlan, proto, src, dst, sport, dport, port, dscp)");
	while (i < n) {
		const char *word = w[i++], *v;
		unsigned bit = 0;
		int rc = 0;

		for (unsigned k = 0; k < NFILTERS; k++)
			if (strcmp(word, filters[k].name) == 0)
				bit = filters[k].bit;
		if (bit == 0)
			return fail(err, errlen,
				    "match: unknown filter word '%s' (expected ether, vlan, proto, src, dst, sport, dport, port or dscp)",
				    word);
		if (m->fields & bit)
			return fail(err, errlen, "%s: given twice in one rule", word);
		m->fields |= bit;
		if (i >= n)
			return fail(err, errlen, "%s: missing value", word);
		v = w[i++];
		switch (bit) {
		case LE_M_ETHER:
			if (parse_ether(v, &m->ethertype) < 0 || strlen(v) >= sizeof(m->ether_text))
				return fail(err, errlen, "ether: '%s' is not ipv4, ipv6, arp or an EtherType (0xNNNN)", v);
			/* Below 0x0600 the field is an 802.3 length; and 0 is
			 * what a frame too short for the field reads as
			 * (le_pkt_parse), which must match no rule. */
			if (m->ethertype < 0x0600)
				return fail(err, errlen,
					    "ether: '%s' is an 802.3 length, not an EtherType (0x0600 .. 0xffff)", v);
			strcpy(m->ether_text, v);
			break;
		case LE_M_VLAN: {
			uint64_t u;
			char tmp[64];
			if (le_parse_u64(v, 0, 4095, &u, tmp, sizeof(tmp)) < 0)
				return fail(err, errlen, "vlan: %s", tmp);
			m->vlan = (uint16_t)u;
			break;
		}
		case LE_M_PROTO:
			if (parse_proto(v, &m->proto) < 0 || strlen(v) >= sizeof(m->proto_text))
				return fail(err, errlen, "proto: '%s' is not tcp, udp, icmp, icmpv6, sctp, dccp, udplite, ah or a number 0 .. 255", v);
			strcpy(m->proto_text, v);
			break;
		case LE_M_SRC:
		case LE_M_DST: {
			struct le_prefix *p = bit == LE_M_SRC ? &m->src : &m->dst;
			char *text = bit == LE_M_SRC ? m->src_text : m->dst_text;
			rc = parse_prefix(v, p);
			if (rc == -1 || strlen(v) >= sizeof(m->src_text))
				return fail(err, errlen, "%s: '%s' is not an IPv4 or IPv6 address or prefix", word, v);
			if (rc == -2)
				return fail(err, errlen, "%s: '%s' has a bad prefix length (0 .. %d)", word, v,
					    p->family == 4 ? 32 : 128);
			if (rc == -3)
				return fail(err, errlen, "%s: '%s' has address bits set beyond its prefix length", word, v);
			strcpy(text, v);
			break;
		}
		case LE_M_SPORT:
		case LE_M_DPORT:
		case LE_M_PORT: {
			struct le_port_range *r = bit == LE_M_SPORT ? &m->sport : bit == LE_M_DPORT ? &m->dport : &m->port;
			rc = parse_ports(v, r);
			if (rc == -1)
				return fail(err, errlen, "%s: '%s' is not a port or range P-P (0 .. 65535)", word, v);
			if (rc == -2)
				return fail(err, errlen, "%s: '%s' is an empty range (the first port is above the last)", word, v);
			break;
		}
		case LE_M_DSCP:
			if (parse_dscp(v, &m->dscp) < 0 || strlen(v) >= sizeof(m->dscp_text))
				return fail(err, errlen, "dscp: '%s' is not 0 .. 63, ef, afXY (X 1-4, Y 1-3) or csN (N 0-7)", v);
			strcpy(m->dscp_text, v);
			break;
		}
	}
	/* Combinations that can never match are mistakes. */
	{
		const unsigned l3 = LE_M_PROTO | LE_M_SRC | LE_M_DST | LE_M_SPORT | LE_M_DPORT | LE_M_PORT | LE_M_DSCP;
		int fam = 0;

		if ((m->fields & LE_M_ETHER) && (m->fields & l3) && m->ethertype != 0x0800 && m->ethertype != 0x86dd)
			return fail(err, errlen, "ether %s: IP filters (proto, src, dst, ports, dscp) need ether ipv4 or ipv6",
				    m->ether_text);
		if (m->fields & LE_M_ETHER)
			fam = m->ethertype == 0x0800 ? 4 : m->ethertype == 0x86dd ? 6 : 0;
		for (int k = 0; k < 2; k++) {
			const struct le_prefix *p = k ? &m->dst : &m->src;
			if (!(m->fields & (k ? LE_M_DST : LE_M_SRC)))
				continue;
			if (fam && p->family != fam)
				return fail(err, errlen, "%s: an IPv%d prefix cannot match IPv%d frames", k ? "dst" : "src",
					    p->family, fam);
			fam = p->family;
		}
		/* IPv6 frames' protocol is the one behind these (pkt.h); `proto
		 * ah` also takes the frames AH protects. */
		if (fam == 6 && (m->fields & LE_M_PROTO) && m->proto != LE_PROTO_AH && le_pkt_ipv6_ext_hdr(m->proto))
			return fail(err, errlen,
				    "proto %s: an IPv6 extension header, skipped to find the protocol, so no IPv6 frame has it",
				    m->proto_text);
		if ((m->fields & (LE_M_SPORT | LE_M_DPORT | LE_M_PORT)) && (m->fields & LE_M_PROTO) &&
		    !le_pkt_has_ports(m->proto))
			return fail(err, errlen, "proto %s: has no ports (ports need tcp, udp, sctp, dccp or udplite)",
				    m->proto_text);
	}
	return 0;
}

size_t le_match_format(const struct le_match *m, char *buf, size_t buflen)
{
	size_t len = 0;

#define PUT(...) len += (size_t)snprintf(buf + len, len < buflen ? buflen - len : 0, __VA_ARGS__)
	if (buflen)
		buf[0] = '\0';
	if (m->fields & LE_M_ETHER)
		PUT("%sether %s", len ? " " : "", m->ether_text);
	if (m->fields & LE_M_VLAN)
		PUT("%svlan %u", len ? " " : "", (unsigned)m->vlan);
	if (m->fields & LE_M_PROTO)
		PUT("%sproto %s", len ? " " : "", m->proto_text);
	if (m->fields & LE_M_SRC)
		PUT("%ssrc %s", len ? " " : "", m->src_text);
	if (m->fields & LE_M_DST)
		PUT("%sdst %s", len ? " " : "", m->dst_text);
	static const char *const pn[3] = { "sport", "dport", "port" };
	const struct le_port_range *pr[3] = { &m->sport, &m->dport, &m->port };
	const unsigned pb[3] = { LE_M_SPORT, LE_M_DPORT, LE_M_PORT };
	for (int k = 0; k < 3; k++) {
		if (!(m->fields & pb[k]))
			continue;
		if (pr[k]->lo == pr[k]->hi)
			PUT("%s%s %u", len ? " " : "", pn[k], (unsigned)pr[k]->lo);
		else
			PUT("%s%s %u-%u", len ? " " : "", pn[k], (unsigned)pr[k]->lo, (unsigned)pr[k]->hi);
	}
	if (m->fields & LE_M_DSCP)
		PUT("%sdscp %s", len ? " " : "", m->dscp_text);
#undef PUT
	if (len >= buflen && buflen)
		len = buflen - 1;
	return len;
}

static int prefix_equal(const struct le_prefix *a, const struct le_prefix *b)
{
	/* The parse refuses address bits beyond the length, so the bytes
	 * past it are zero in both. */
	return a->family == b->family && a->len == b->len && memcmp(a->addr, b->addr, sizeof(a->addr)) == 0;
}

static int range_equal(const struct le_port_range *a, const struct le_port_range *b)
{
	return a->lo == b->lo && a->hi == b->hi;
}

int le_match_equal(const struct le_match *a, const struct le_match *b)
{
	const unsigned f = a->fields;

	/* The parsed values, not the words as written (kept for formatting):
	 * `ether ipv4` is `ether 0x0800`, `proto tcp` is `proto 6`, `dscp
	 * ef` is `dscp 46`, a bare address is its /32 or /128. */
	return f == b->fields && (!(f & LE_M_ETHER) || a->ethertype == b->ethertype) &&
	       (!(f & LE_M_VLAN) || a->vlan == b->vlan) && (!(f & LE_M_PROTO) || a->proto == b->proto) &&
	       (!(f & LE_M_SRC) || prefix_equal(&a->src, &b->src)) && (!(f & LE_M_DST) || prefix_equal(&a->dst, &b->dst)) &&
	       (!(f & LE_M_SPORT) || range_equal(&a->sport, &b->sport)) &&
	       (!(f & LE_M_DPORT) || range_equal(&a->dport, &b->dport)) &&
	       (!(f & LE_M_PORT) || range_equal(&a->port, &b->port)) && (!(f & LE_M_DSCP) || a->dscp == b->dscp);
}

int le_match_depth(const struct le_match *m)
{
	if (m->fields & (LE_M_SPORT | LE_M_DPORT | LE_M_PORT))
		return LE_PKT_L4;
	if (m->fields & (LE_M_PROTO | LE_M_SRC | LE_M_DST | LE_M_DSCP))
		return LE_PKT_L3;
	return LE_PKT_L2;
}

static int prefix_match(const struct le_prefix *p, int ip, const uint8_t *addr)
{
	unsigned full = p->len / 8, rest = p->len % 8;

	if (ip != p->family)
		return 0;
	if (memcmp(p->addr, addr, full) != 0)
		return 0;
	if (rest) {
		uint8_t mask = (uint8_t)(0xff << (8 - rest));
		if ((p->addr[full] & mask) != (addr[full] & mask))
			return 0;
	}
	return 1;
}

/* The frame's protocol is `want`; `proto ah` also takes an IPv6 frame
 * whose AH the parse walked past to the upper layer (pkt.h). */
static int proto_match(uint8_t want, const struct le_pkt *p)
{
	return (p->has_proto && p->proto == want) || (want == LE_PROTO_AH && p->has_ah);
}

static int in(const struct le_port_range *r, uint16_t v)
{
	return v >= r->lo && v <= r->hi;
}

int le_match_frame(const struct le_match *m, const struct le_pkt *p)
{
	unsigned f = m->fields;

	if ((f & LE_M_ETHER) && p->ethertype != m->ethertype)
		return 0;
	if ((f & LE_M_VLAN) && (!p->has_vlan || p->vlan != m->vlan))
		return 0;
	if ((f & LE_M_PROTO) && !proto_match(m->proto, p))
		return 0;
	if ((f & LE_M_SRC) && !prefix_match(&m->src, p->ip, p->src))
		return 0;
	if ((f & LE_M_DST) && !prefix_match(&m->dst, p->ip, p->dst))
		return 0;
	if ((f & (LE_M_SPORT | LE_M_DPORT | LE_M_PORT)) && !p->has_ports)
		return 0;
	if ((f & LE_M_SPORT) && !in(&m->sport, p->sport))
		return 0;
	if ((f & LE_M_DPORT) && !in(&m->dport, p->dport))
		return 0;
	if ((f & LE_M_PORT) && !in(&m->port, p->sport) && !in(&m->port, p->dport))
		return 0;
	if ((f & LE_M_DSCP) && (p->ip == 0 || p->dscp != m->dscp))
		return 0;
	return 1;
}
