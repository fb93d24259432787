/* What the interfaces under a data plane counted, apart from the data
 * plane itself: the DPDK ports' rte_eth_stats, or the kernel sockets'
 * PACKET_STATISTICS (drops before the socket could receive). */
#ifndef DP_PORT_COUNTERS_H
#define DP_PORT_COUNTERS_H

#include <stdint.h>

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

#endif
