/* The link model's frame operations (frame.h) on DPDK mbufs and on
 * compact frames (compact_frames.h). */
#ifndef DP_MBUF_OPS_H
#define DP_MBUF_OPS_H

#include "compact_frames.h"
#include "frame.h"

/* Operations on the frames of `f` (which must outlive the models):
 * mbuf clones come from f->pool, compact ones from their store. */
struct le_frame_ops dp_mbuf_ops(struct dp_frames *f);

#endif
