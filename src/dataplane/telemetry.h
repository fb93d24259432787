/* linkemud's counters through DPDK telemetry (rte_telemetry), so that
 * dpdk-telemetry.py and existing dashboards read them:
 *   /linkemu/stats    per direction: rx, tx, bytes, in_flight, drops by
 *                     cause, emulation error percentiles (ns)
 *   /linkemu/config   the links as grammar text */
#ifndef DP_TELEMETRY_H
#define DP_TELEMETRY_H

#include "state.h"

/* Registers the commands. DPDK 22.11 telemetry callbacks take no user
 * argument, so the state is remembered here until dp_telemetry_detach. */
int dp_telemetry_attach(struct dp_state *st);
void dp_telemetry_detach(void);

#endif
