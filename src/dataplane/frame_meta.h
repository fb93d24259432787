/* Per-frame state carried in an mbuf dynamic field (not the removed
 * udata64): when the link received the frame and when it must leave. The
 * pipeline layout needs both on other lcores: the worker reads the
 * arrival stamped by RX, the TX lcore reads the deadline to measure its
 * own emulation error. */
#ifndef DP_FRAME_META_H
#define DP_FRAME_META_H

#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include "le_time.h"

struct frame_meta {
	le_ns_t arrival;
	le_ns_t deadline;
};

/* Registers the field; returns its offset, or -1 (rte_errno set). */
int frame_meta_register(void);

static inline struct frame_meta *frame_meta(struct rte_mbuf *m, int offset)
{
	return RTE_MBUF_DYNFIELD(m, offset, struct frame_meta *);
}

#endif
