/* The link model's frame operations (frame.h) on DPDK mbufs. */
#ifndef DP_MBUF_OPS_H
#define DP_MBUF_OPS_H

#include <rte_mempool.h>

#include "frame.h"

/* Operations whose clones come from `pool`. */
struct le_frame_ops dp_mbuf_ops(struct rte_mempool *pool);

#endif
