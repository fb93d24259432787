#include "kbuf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int kbuf_pool_init(struct kbuf_pool *p, uint32_t n, char *err, size_t errlen)
{
	*p = (struct kbuf_pool){0};
	p->bytes = (size_t)n * K_BUF_SIZE;
	p->base = mmap(NULL, p->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	p->free = malloc((size_t)n * sizeof(*p->free));
	if (p->base == MAP_FAILED || !p->free) {
		snprintf(err, errlen, "cannot reserve %u frame buffers (%.0f MiB): %s", n,
			 (double)p->bytes / 1048576.0, strerror(errno ? errno : ENOMEM));
		if (p->base != MAP_FAILED)
			munmap(p->base, p->bytes);
		free(p->free);
		*p = (struct kbuf_pool){0};
		return -1;
	}
	p->n = p->nfree = n;
	/* Lowest index on top: buffers are reused from the start of the
	 * mapping, so untouched pages stay untouched. */
	for (uint32_t i = 0; i < n; i++)
		p->free[i] = n - 1 - i;
	return 0;
}

void kbuf_pool_fini(struct kbuf_pool *p)
{
	if (p->base)
		munmap(p->base, p->bytes);
	free(p->free);
	*p = (struct kbuf_pool){0};
}

static void *op_clone(void *ctx, void *handle)
{
	uint8_t *b = kbuf_get(ctx);
	if (b)
		memcpy(b, handle, K_BUF_HEAD + *kbuf_len(handle));
	return b;
}

static void op_free(void *ctx, void *handle)
{
	kbuf_put(ctx, handle);
}

static uint8_t *op_bytes(void *ctx, void *handle, uint32_t *contiguous_len)
{
	(void)ctx;
	*contiguous_len = *kbuf_len(handle);
	return kbuf_data(handle);
}

struct le_frame_ops kbuf_frame_ops(struct kbuf_pool *p)
{
	return (struct le_frame_ops){.ctx = p, .clone = op_clone, .free = op_free, .bytes = op_bytes};
}

void *kbuf_make(void *pool, const uint8_t *bytes, uint32_t len)
{
	uint8_t *b;

	if (len > K_FRAME_MAX || (b = kbuf_get(pool)) == NULL)
		return NULL;
	memcpy(kbuf_data(b), bytes, len);
	*kbuf_len(b) = len;
	return b;
}
