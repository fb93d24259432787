#include "mbuf_ops.h"

#include <rte_mbuf.h>

#include "drop_stash.h"

/* A deep copy, not rte_pktmbuf_clone: `corrupt` and `ecn` write into
 * frames, and a clone shares its data with the original. A compact
 * frame's copy takes a slot of its own, or an mbuf when the store is
 * full; NULL (counted by the model) only when neither is left. */
static void *frame_clone(void *ctx, void *handle)
{
	struct dp_frames *f = ctx;
	if (!dp_is_compact(handle))
		return rte_pktmbuf_copy(handle, f->pool, 0, UINT32_MAX);
	unsigned dir = dp_compact_dir(handle);
	struct le_compact_store *s = f->store[dir];
	const uint8_t *bytes = le_compact_data(s, dp_compact_slot(handle));
	uint32_t slot = le_compact_alloc(s);
	if (slot != LE_COMPACT_NONE) {
		memcpy(le_compact_data(s, slot), bytes, LE_COMPACT_SLOT);
		return dp_compact_handle(dir, dp_compact_len(handle), slot);
	}
	struct rte_mbuf *m = rte_pktmbuf_alloc(f->pool);
	if (!m)
		return NULL;
	uint32_t len = dp_compact_len(handle);
	memcpy(rte_pktmbuf_mtod(m, void *), bytes, len);
	m->data_len = (uint16_t)len;
	m->pkt_len = len;
	return m;
}

static void frame_free(void *ctx, void *handle)
{
	struct dp_frames *f = ctx;
	if (!dp_is_compact(handle) && dp_drop_stash_put(handle))
		return; /* freed when the poll's send falls short */
	dp_frame_free(dp_is_compact(handle) ? f->store[dp_compact_dir(handle)] : NULL, handle);
}

static uint8_t *frame_bytes(void *ctx, void *handle, uint32_t *contiguous_len)
{
	struct dp_frames *f = ctx;
	if (dp_is_compact(handle)) {
		*contiguous_len = dp_compact_len(handle);
		return le_compact_data(f->store[dp_compact_dir(handle)], dp_compact_slot(handle));
	}
	struct rte_mbuf *m = handle;
	*contiguous_len = m->data_len;
	return rte_pktmbuf_mtod(m, uint8_t *);
}

void *dp_mbuf_make(void *pool, const uint8_t *bytes, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	char *d;

	if (m == NULL)
		return NULL;
	d = rte_pktmbuf_append(m, (uint16_t)len);
	if (d == NULL || len > UINT16_MAX) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	rte_memcpy(d, bytes, len);
	return m;
}

struct le_frame_ops dp_mbuf_ops(struct dp_frames *f)
{
	return (struct le_frame_ops){
		.ctx = f, .clone = frame_clone, .free = frame_free, .bytes = frame_bytes,
	};
}
