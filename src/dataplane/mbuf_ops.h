/* The link model's frame operations (frame.h) on DPDK mbufs and on
 * compact frames (compact_frames.h). */
#ifndef DP_MBUF_OPS_H
#define DP_MBUF_OPS_H

#include "compact_frames.h"
#include "frame.h"

/* Operations on the frames of `f` (which must outlive the models):
 * mbuf clones come from f->pool, compact ones from their store. */
struct le_frame_ops dp_mbuf_ops(struct dp_frames *f);
/* A new mbuf from `pool` (ctx) holding a copy of len bytes; NULL when the
 * pool is dry or the frame does not fit one mbuf (punted frames coming
 * back, punt.h). */
void *dp_mbuf_make(void *pool, const uint8_t *bytes, uint32_t len);

#endif
