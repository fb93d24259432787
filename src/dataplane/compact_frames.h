/* Frames held in the compact store (src/core/compact_store.h) instead of
 * their mbufs.
 *
 * A frame of up to LE_COMPACT_SLOT bytes in one segment is copied into
 * its direction's store as the model takes it, and its mbuf goes back to
 * the pool at once: a held frame then costs 64 bytes of slot (plus the
 * delay line's 32-byte entry) instead of a 2 KiB+ mbuf. When it is due, a
 * fresh mbuf from a small send pool takes the bytes back. Everything else
 * (longer or chained frames, or frames that find the store full) keeps its
 * mbuf, as before.
 *
 * The model sees opaque handles either way. A compact handle is tagged in
 * its lowest bit, which an mbuf pointer (cache-line aligned) never has:
 *
 *   bit 0 = 1 | bit 1 = direction | bits 2..8 = length | bits 9.. = slot
 *
 * so the frame operations (mbuf_ops.c) find the store and the length from
 * the handle alone, for either direction. A store is touched only by the
 * lcore that runs its direction's model (and by the main lcore once the
 * lcores stopped). */
#ifndef DP_COMPACT_FRAMES_H
#define DP_COMPACT_FRAMES_H

#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "compact_store.h"
#include "link.h"
#include "options.h"

/* Held frames that keep their mbufs, per direction, by default when the
 * compact store is on (--held-mbufs): about 150 MiB of mbufs. A larger
 * pool costs the lines that hold no more (docs/performance.md, "Where the
 * plain delay copied"). */
#define DP_HELD_MBUFS_DEFAULT 65536u
/* Held mbufs of a direction before its short frames go into the store
 * (--compact-after): three quarters of DP_HELD_MBUFS_DEFAULT (the most it
 * can be: dp_frames_plan), about 110 MiB of mbufs, while a 1 ms line at
 * 10 GbE holds 14,880 frames, so plain delays of a few ms never pay for
 * copies. It was 16,384, then 32,768 (half), each until the plain delay
 * path outran it on net_null: at 65 Mpps a 1 ms line holds 32,768 frames
 * a direction, and a line that hovers at the mark copies in bursts (5 %
 * of its frames) and ran 16-18 % slower than one that never copies. */
#define DP_COMPACT_AFTER_DEFAULT 49152u

struct dp_frames {
	struct rte_mempool *pool;                 /* received frames, copies of them */
	struct rte_mempool *tx_pool;              /* compact frames on their way out */
	struct le_compact_store *store[LE_DIRS];  /* NULL: that direction keeps mbufs */
};

static inline int dp_is_compact(const void *h)
{
	return (uintptr_t)h & 1u;
}

static inline void *dp_compact_handle(unsigned dir, uint32_t len, uint32_t slot)
{
	return (void *)(((uintptr_t)slot << 9) | ((uintptr_t)len << 2) | ((uintptr_t)dir << 1) | 1u);
}

static inline uint32_t dp_compact_slot(const void *h)
{
	return (uint32_t)((uintptr_t)h >> 9);
}

static inline uint32_t dp_compact_len(const void *h)
{
	return (uint32_t)(((uintptr_t)h >> 2) & 127u);
}

static inline unsigned dp_compact_dir(const void *h)
{
	return (unsigned)(((uintptr_t)h >> 1) & 1u);
}

/* The frame's bytes into a slot of `s`; its mbuf is then the caller's to
 * free. NULL when the frame does not qualify or the store is full
 * (counted in s->full): the frame keeps its mbuf. */
static inline void *dp_compact_take(struct le_compact_store *s, unsigned dir, struct rte_mbuf *m)
{
	uint32_t len = m->pkt_len;
	if (len > LE_COMPACT_SLOT || m->nb_segs != 1)
		return NULL;
	uint32_t slot = le_compact_alloc(s);
	if (slot == LE_COMPACT_NONE)
		return NULL;
	/* The whole slot when the buffer has it (a fixed-size copy is two
	 * vector moves), else just the frame. */
	if ((uint32_t)(m->buf_len - m->data_off) >= LE_COMPACT_SLOT)
		memcpy(le_compact_data(s, slot), rte_pktmbuf_mtod(m, const void *), LE_COMPACT_SLOT);
	else
		memcpy(le_compact_data(s, slot), rte_pktmbuf_mtod(m, const void *), len);
	return dp_compact_handle(dir, len, slot);
}

/* The frame of handle h into the fresh mbuf m (data room >= one slot);
 * its slot is free again. */
static inline struct rte_mbuf *dp_compact_give(struct le_compact_store *s, const void *h, struct rte_mbuf *m)
{
	uint32_t slot = dp_compact_slot(h), len = dp_compact_len(h);
	/* The whole slot: a fixed-size copy is two vector moves */
	memcpy(rte_pktmbuf_mtod(m, void *), le_compact_data(s, slot), LE_COMPACT_SLOT);
	m->data_len = (uint16_t)len;
	m->pkt_len = len;
	le_compact_release(s, slot);
	return m;
}

/* Frees a handle of either kind. */
static inline void dp_frame_free(struct le_compact_store *s, void *h)
{
	if (dp_is_compact(h))
		le_compact_release(s, dp_compact_slot(h));
	else
		rte_pktmbuf_free(h);
}

/* What memory the frames need, from the options and the ports/layout
 * (mbufs for everything but held frames given by the caller). */
struct dp_frames_plan {
	uint32_t slots[LE_DIRS];      /* compact slots per direction (0: off) */
	uint64_t held_mbufs;          /* per direction */
	unsigned pool_mbufs;          /* received frames + held_mbufs x directions */
	unsigned tx_mbufs;            /* the send pool */
	uint64_t store_bytes, pool_bytes, tx_bytes;
	uint32_t compact_after;       /* per direction */
};

/* Held frames per direction that keep their mbufs. */
uint64_t dp_frames_held_mbufs(const struct dp_options *o);
/* Fills the plan: `other_mbufs`: mbufs the pool needs besides held frames
 * (descriptors, rings, bursts, caches); `tx_mbufs`: the send pool's size
 * (what can be on its way out at once). */
void dp_frames_plan(struct dp_frames_plan *p, const struct dp_options *o, uint64_t other_mbufs,
		    unsigned tx_mbufs);
/* Allocates the stores and both pools in hugepage memory. On failure,
 * frees what it took and says what was needed, in all, and the knobs. */
int dp_frames_create(struct dp_frames *f, const struct dp_frames_plan *p, unsigned cache, char *err,
		     size_t errlen);
void dp_frames_free(struct dp_frames *f);

#endif
