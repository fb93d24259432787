/* The adaptive waiting mode of linkemud's lcores (--wait adaptive; the
 * policy is src/plane/wait.h, shared with linkemuk).
 *
 * An lcore whose tasks moved nothing for idle_ns sleeps in ppoll() until
 * spin_ns before the earliest deadline of its models, or until a frame
 * arrives on one of its input ports. What can wake it, per port:
 *
 *   - the kernel socket the PMD reads from (net_af_xdp: the AF_XDP socket,
 *     net_af_packet: the packet socket), found among the process's file
 *     descriptors by its address family and the interface it is bound to
 *     (rte_eth_dev_info.if_index). The kernel signals these sockets when
 *     a frame lands in their receive ring, which is what a DPDK Rx
 *     interrupt would do; neither PMD implements rte_eth_dev_rx_intr_*
 *     in DPDK 22.11.
 *   - nothing (net_null, PCI NICs here): the lcore naps at most
 *     DP_WAIT_BLIND_NAP_NS, so a frame waits up to that long (plus the
 *     wake-up) before it is stamped.
 *
 * Only run-to-completion tasks (single and per-direction layouts): in the
 * pipeline the lcores hand frames over rings, which cannot wake a sleeper.
 * Frames the output port did not take keep the lcore polling. */
#ifndef DP_DATAPLANE_WAIT_H
#define DP_DATAPLANE_WAIT_H

#include <stdio.h>

#include "layout.h"
#include "wait.h"

#define DP_WAIT_WAKE_MAX_NAP_NS (1000 * LE_NS_PER_US)
#define DP_WAIT_BLIND_NAP_NS (50 * LE_NS_PER_US)

/* The lcore's loop in adaptive mode (the busy loop is main.c's), until
 * *ctx->stop. Says on `log` what wakes it and, at the end, how long it
 * slept. */
int dp_wait_lcore_loop(struct dp_lcore_work *w, const struct dp_wait_policy *pol, FILE *log);

/* Whether every task of the plan can wait adaptively; else a message. */
int dp_wait_plan_check(const struct dp_plan *p, char *err, size_t errlen);

#endif
