/* linkemud's callbacks for the shared state (src/plane/state.h): counters
 * from its tasks, rings and ports, the TSC clock, EAL control threads. */
#ifndef DP_DPDK_STATE_H
#define DP_DPDK_STATE_H

#include <rte_mempool.h>

#include "layout.h"
#include "state.h"
#include "tsc_clock.h"

struct dp_dpdk_plane {
	struct dp_direction *dir;          /* [LE_DIRS] */
	const struct dp_plan *plan;
	const struct tsc_clock *clock;
	struct rte_mempool *pool;
};

/* Points st's callbacks and model slots at p (which must outlive st). */
void dp_dpdk_state_bind(struct dp_state *st, struct dp_dpdk_plane *p);

#endif
