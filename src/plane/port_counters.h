/* What the interfaces under a data plane counted, apart from the data
 * plane itself: the DPDK ports' rte_eth_stats, or the kernel sockets'
 * PACKET_STATISTICS (drops before the socket could receive). */
#ifndef DP_PORT_COUNTERS_H
#define DP_PORT_COUNTERS_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* What the port and its driver counted (rte_eth_stats): frames that never
 * reached linkemud (imissed: no room in the RX ring or the device's
 * buffers; ierrors: bad frames; rx_nombuf: no mbuf to receive into) and
 * frames the device failed to send after taking them (oerrors). */
struct dp_port_counters {
	uint64_t ipackets;
	uint64_t opackets;
	uint64_t imissed;
	uint64_t ierrors;
	uint64_t rx_nombuf;
	uint64_t oerrors;
};

/* Frames that arrived at the port but never reached the data plane. */
static inline uint64_t dp_port_lost_before_rx(const struct dp_port_counters *c)
{
	return c->imissed + c->ierrors + c->rx_nombuf;
}

/* The driver's extended statistics (rte_eth_xstats) that count frames a
 * port dropped or could not handle: only those whose name says so (see
 * dp_xstat_is_drop) and that are not zero, as the driver names them. They
 * say where the drops counted above happened (e.g. af_xdp's ring full,
 * a queue's errors), which rte_eth_stats folds together. Read on the
 * control thread when a report is taken, never by the lcores. */
#define DP_XSTATS_MAX 16
#define DP_XSTAT_NAME_MAX 64 /* RTE_ETH_XSTATS_NAME_SIZE */

struct dp_xstat {
	char name[DP_XSTAT_NAME_MAX];
	uint64_t value;
};

struct dp_port_xstats {
	unsigned n;
	unsigned more; /* nonzero drop counters past DP_XSTATS_MAX, not kept */
	struct dp_xstat x[DP_XSTATS_MAX];
};

/* Whether an xstat's name says it counts frames dropped, missed, in
 * error, refused by a full ring, or lacking a buffer. */
static inline int dp_xstat_is_drop(const char *name)
{
	static const char *const word[] = {"drop", "miss", "err", "full", "nombuf"};
	for (unsigned i = 0; i < sizeof(word) / sizeof(word[0]); i++)
		if (strstr(name, word[i]))
			return 1;
	return 0;
}

/* Keeps one xstat the driver gave if it is a nonzero drop counter. */
static inline void dp_xstats_offer(struct dp_port_xstats *s, const char *name, uint64_t value)
{
	if (!value || !dp_xstat_is_drop(name))
		return;
	if (s->n == DP_XSTATS_MAX) {
		s->more++;
		return;
	}
	struct dp_xstat *x = &s->x[s->n++];
	snprintf(x->name, sizeof(x->name), "%s", name);
	x->value = value;
}

/* s -= base, name by name (`reset stats`); what did not grow since is
 * left out, as a counter that never counted is. */
static inline void dp_xstats_subtract(struct dp_port_xstats *s, const struct dp_port_xstats *base)
{
	unsigned kept = 0;
	for (unsigned i = 0; i < s->n; i++) {
		struct dp_xstat x = s->x[i];
		for (unsigned j = 0; j < base->n; j++)
			if (strcmp(x.name, base->x[j].name) == 0) {
				x.value -= base->x[j].value;
				break;
			}
		if (x.value)
			s->x[kept++] = x;
	}
	s->n = kept;
}

#endif
