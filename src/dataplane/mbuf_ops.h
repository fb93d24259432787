/* The link model's frame operations (frame.h) on DPDK mbufs. */
#ifndef DP_MBUF_OPS_H
#define DP_MBUF_OPS_H

#include <rte_mempool.h>

#include "frame.h"

/* Operations whose clones come from `pool`. */
struct le_frame_ops dp_mbuf_ops(struct rte_mempool *pool);
/* A new mbuf from `pool` (ctx) holding a copy of len bytes; NULL when the
 * pool is dry or the frame does not fit one mbuf (punted frames coming
 * back, punt.h). */
void *dp_mbuf_make(void *pool, const uint8_t *bytes, uint32_t len);

#endif
