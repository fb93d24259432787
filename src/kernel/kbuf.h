/* Frame buffers of the kernel-socket data plane: one anonymous mapping cut
 * into fixed-size buffers, handed out from a free stack (the forwarding
 * thread's only; nobody else takes or frees one). Pages are touched only
 * as far as the link ever held frames.
 *
 * Sized like linkemud's mbuf pool: every frame the models may hold at once
 * (DP_MODEL_LIMITS x max_limit per direction) plus what the forwarding
 * thread holds in receive and send batches, so the models never find the
 * pool dry while they have room. */
#ifndef K_BUF_H
#define K_BUF_H

#include <stddef.h>
#include <stdint.h>

#include "frame.h"

/* A buffer: a 64-byte header (the frame's length, so the models' `bytes`
 * never reads past the frame) and the frame. A handle is the buffer. */
#define K_BUF_SIZE 2048u
#define K_BUF_HEAD 64u
#define K_FRAME_MAX (K_BUF_SIZE - K_BUF_HEAD)   /* MTU 1966 with a VLAN tag */

struct kbuf_pool {
	uint8_t *base;
	size_t bytes;
	uint32_t n;        /* buffers */
	uint32_t nfree;
	uint32_t *free;    /* stack of free buffer indices */
};

int kbuf_pool_init(struct kbuf_pool *p, uint32_t n, char *err, size_t errlen);
void kbuf_pool_fini(struct kbuf_pool *p);

static inline uint8_t *kbuf_get(struct kbuf_pool *p)
{
	if (p->nfree == 0)
		return NULL;
	return p->base + (size_t)p->free[--p->nfree] * K_BUF_SIZE;
}

static inline void kbuf_put(struct kbuf_pool *p, uint8_t *b)
{
	p->free[p->nfree++] = (uint32_t)((size_t)(b - p->base) / K_BUF_SIZE);
}

static inline uint32_t kbuf_in_use(const struct kbuf_pool *p)
{
	return p->n - p->nfree;
}

static inline uint8_t *kbuf_data(uint8_t *b)
{
	return b + K_BUF_HEAD;
}

static inline uint32_t *kbuf_len(uint8_t *b)
{
	return (uint32_t *)b;
}

/* The models' frame operations over this pool (clone copies the frame). */
struct le_frame_ops kbuf_frame_ops(struct kbuf_pool *p);
/* A buffer holding a copy of len bytes (a punted class's frame coming
 * back, punt.h); NULL when the pool is dry or the frame too long. */
void *kbuf_make(void *pool, const uint8_t *bytes, uint32_t len);

#endif
