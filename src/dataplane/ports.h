/* The two DPDK ports linkemud bridges: port 0 is side A, port 1 side B. */
#ifndef DP_PORTS_H
#define DP_PORTS_H

#include <stddef.h>
#include <stdint.h>

#include <rte_mempool.h>

#include "port_counters.h"

#define DP_PORTS 2

struct dp_port_queues {
	uint16_t nb_rxd;
	uint16_t nb_txd;
};

/* Exactly two ports must be present; -1 with a message otherwise. */
/* What a user who gave a device this build has no driver for should
 * know: the drivers inside a static build and how to get every other
 * (empty when DPDK is linked as shared libraries, which load them all). */
const char *dp_drivers_hint(void);

int dp_ports_check(char *err, size_t errlen);
/* Descriptor counts the driver accepts for what we ask (1024 each). */
int dp_port_queues(uint16_t port, struct dp_port_queues *q, char *err, size_t errlen);
/* One RX and one TX queue, promiscuous, started. */
int dp_port_start(uint16_t port, const struct dp_port_queues *q, struct rte_mempool *pool, char *err,
		  size_t errlen);

/* Whether fd is an AF_XDP socket the port's driver opened while the port
 * started (net_af_xdp; xsk_stats.h). */
int dp_port_has_xsk(uint16_t port, int fd);

/* 0, or -1 when the driver cannot tell (all zero then). */
int dp_port_counters_read(uint16_t port, struct dp_port_counters *out);
/* The port's nonzero drop-related xstats (port_counters.h). 0, or -1 when
 * the driver gives none or cannot be read (out empty then). Allocates:
 * for the control thread, not the lcores. */
int dp_port_xstats_read(uint16_t port, struct dp_port_xstats *out);
#endif
