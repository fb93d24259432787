/* What the DPDK benchmark programs (pacegen, holdfwd) share: a port set
 * up with one RX and one TX queue of 1024 descriptors and started, and a
 * stop flag that SIGINT and SIGTERM set. */
#ifndef BENCH_DPDK_KIT_H
#define BENCH_DPDK_KIT_H

#include <signal.h>
#include <stdint.h>

#include <rte_ethdev.h>
#include <rte_mempool.h>

static volatile sig_atomic_t bench_stop;

static void bench_on_signal(int sig)
{
	(void)sig;
	bench_stop = 1;
}

/* SIGINT and SIGTERM set bench_stop. */
static inline void bench_catch_stop(void)
{
	signal(SIGINT, bench_on_signal);
	signal(SIGTERM, bench_on_signal);
}

/* Port `id`, its frames from `pool`; 0 once started, else -1. */
static inline int bench_port_init(uint16_t id, struct rte_mempool *pool)
{
	struct rte_eth_conf conf = {0};

	if (rte_eth_dev_configure(id, 1, 1, &conf) || rte_eth_rx_queue_setup(id, 0, 1024, 0, NULL, pool) ||
	    rte_eth_tx_queue_setup(id, 0, 1024, 0, NULL) || rte_eth_dev_start(id))
		return -1;
	return 0;
}

#endif
