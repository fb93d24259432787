#include "mbuf_ops.h"

#include <rte_mbuf.h>

/* A deep copy, not rte_pktmbuf_clone: `corrupt` and `ecn` write into
 * frames, and a clone shares its data with the original. */
static void *mbuf_clone(void *ctx, void *handle)
{
	return rte_pktmbuf_copy(handle, ctx, 0, UINT32_MAX);
}

static void mbuf_free(void *ctx, void *handle)
{
	(void)ctx;
	rte_pktmbuf_free(handle);
}

static uint8_t *mbuf_bytes(void *ctx, void *handle, uint32_t *contiguous_len)
{
	(void)ctx;
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

struct le_frame_ops dp_mbuf_ops(struct rte_mempool *pool)
{
	return (struct le_frame_ops){
		.ctx = pool, .clone = mbuf_clone, .free = mbuf_free, .bytes = mbuf_bytes,
	};
}
