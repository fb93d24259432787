#include "ports.h"

#include <stdio.h>
#include <stdlib.h>

#include <rte_errno.h>
#include <rte_ethdev.h>

#include "xsk_stats.h"

/* The AF_XDP sockets each port's driver opened (xsk_stats.h says why we
 * keep them): written once by dp_port_start, read by the control thread's
 * reports afterwards. */
static struct dp_xsk_fds port_xsks[DP_PORTS];

const char *dp_drivers_hint(void)
{
#ifdef LE_DPDK_STATIC_DRIVERS
	return "; this linkemud has DPDK linked in with the drivers " LE_DPDK_STATIC_DRIVERS
	       " (for others, build with meson -Ddpdk_linkage=shared)";
#else
	return "";
#endif
}

int dp_ports_check(char *err, size_t errlen)
{
	unsigned n = rte_eth_dev_count_avail();
	if (n != DP_PORTS) {
		snprintf(err, errlen,
			 "2 ports to bridge are needed, EAL found %u "
			 "(give two devices, e.g. --vdev=net_af_xdp0,iface=X --vdev=net_af_xdp1,iface=Y)%s",
			 n, dp_drivers_hint());
		return -1;
	}
	return 0;
}

int dp_port_queues(uint16_t port, struct dp_port_queues *q, char *err, size_t errlen)
{
	q->nb_rxd = 1024;
	q->nb_txd = 1024;
	int rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &q->nb_rxd, &q->nb_txd);
	if (rc) {
		snprintf(err, errlen, "port %u: cannot size descriptor rings: %s", port, rte_strerror(-rc));
		return -1;
	}
	return 0;
}

int dp_port_start(uint16_t port, const struct dp_port_queues *q, struct rte_mempool *pool, char *err,
		  size_t errlen)
{
	struct rte_eth_conf conf = {0};
	struct rte_eth_dev_info info;
	int rc;

	if ((rc = rte_eth_dev_info_get(port, &info)) != 0) {
		snprintf(err, errlen, "port %u: no device info: %s", port, rte_strerror(-rc));
		return -1;
	}
	/* A transparent bridge: no offloads, frames leave as they came. */
	if ((rc = rte_eth_dev_configure(port, 1, 1, &conf)) != 0) {
		snprintf(err, errlen, "port %u (%s): configure failed: %s", port, info.driver_name,
			 rte_strerror(-rc));
		return -1;
	}
	struct dp_xsk_fds xsks_before, xsks_after;
	dp_xsk_fds_list(&xsks_before);
	int socket = rte_eth_dev_socket_id(port);
	if ((rc = rte_eth_rx_queue_setup(port, 0, q->nb_rxd, socket, NULL, pool)) != 0) {
		snprintf(err, errlen, "port %u (%s): RX queue setup failed: %s", port, info.driver_name,
			 rte_strerror(-rc));
		return -1;
	}
	if ((rc = rte_eth_tx_queue_setup(port, 0, q->nb_txd, socket, NULL)) != 0) {
		snprintf(err, errlen, "port %u (%s): TX queue setup failed: %s", port, info.driver_name,
			 rte_strerror(-rc));
		return -1;
	}
	if ((rc = rte_eth_dev_start(port)) != 0) {
		snprintf(err, errlen, "port %u (%s): start failed: %s", port, info.driver_name,
			 rte_strerror(-rc));
		return -1;
	}
	/* Some virtual PMDs have no promiscuous switch; they receive all anyway. */
	(void)rte_eth_promiscuous_enable(port);
	dp_xsk_fds_list(&xsks_after);
	if (port < DP_PORTS)
		dp_xsk_fds_new(&xsks_before, &xsks_after, &port_xsks[port]);
	return 0;
}

int dp_port_has_xsk(uint16_t port, int fd)
{
	return port < DP_PORTS && dp_xsk_fds_has(&port_xsks[port], fd);
}

int dp_port_counters_read(uint16_t port, struct dp_port_counters *out)
{
	struct rte_eth_stats st;
	*out = (struct dp_port_counters){0};
	if (rte_eth_stats_get(port, &st) != 0)
		return -1;
	*out = (struct dp_port_counters){
		.ipackets = st.ipackets, .opackets = st.opackets, .imissed = st.imissed,
		.ierrors = st.ierrors, .rx_nombuf = st.rx_nombuf, .oerrors = st.oerrors,
	};
	/* What the PMD leaves out of imissed/ierrors: frames the kernel
	 * dropped because our RX ring was full or gave a bad descriptor
	 * (its rx_dropped is in imissed already). */
	struct dp_xsk_counts k;
	if (port < DP_PORTS && dp_xsk_counts_read(&port_xsks[port], &k) == 0) {
		out->imissed += k.rx_ring_full;
		out->ierrors += k.rx_invalid_descs;
	}
	return 0;
}

int dp_port_xstats_read(uint16_t port, struct dp_port_xstats *out)
{
	out->n = out->more = 0;
	int n = rte_eth_xstats_get(port, NULL, 0);
	if (n <= 0)
		return -1;
	struct rte_eth_xstat_name *names = calloc((size_t)n, sizeof(*names));
	struct rte_eth_xstat *vals = calloc((size_t)n, sizeof(*vals));
	int rc = -1;
	/* The count can change between calls (a queue set up meanwhile): read
	 * what both calls agree on. */
	int nn = names && vals ? rte_eth_xstats_get_names(port, names, (unsigned)n) : -1;
	int nv = nn > 0 ? rte_eth_xstats_get(port, vals, (unsigned)n) : -1;
	if (nn > 0 && nv > 0 && nn <= n && nv <= n) {
		for (int i = 0; i < nv; i++)
			if (vals[i].id < (uint64_t)nn)
				dp_xstats_offer(out, names[vals[i].id].name, vals[i].value);
		rc = 0;
	}
	free(names);
	free(vals);
	/* The AF_XDP sockets' own counts, under names that say so. */
	struct dp_xsk_counts k;
	if (port < DP_PORTS && dp_xsk_counts_read(&port_xsks[port], &k) == 0) {
		dp_xstats_offer(out, "xsk_rx_ring_full", k.rx_ring_full);
		dp_xstats_offer(out, "xsk_rx_dropped", k.rx_dropped);
		dp_xstats_offer(out, "xsk_rx_invalid_descs_dropped", k.rx_invalid_descs);
		dp_xstats_offer(out, "xsk_tx_invalid_descs_dropped", k.tx_invalid_descs);
		rc = 0;
	}
	return rc;
}
