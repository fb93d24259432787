/* Fake frames for the link model's tests: the frame operations of
 * frame.h over a pool of numbered frames, each with a state, so a test
 * can check at the object level that every frame is exactly once either
 * still held, freed by the model, or handed back (sent).
 *
 * Handles are (void *)(index + 1). Bytes (optional) are FK_BYTES per
 * frame, enough for Ethernet + VLAN + IPv6 + extension headers + ports. */
#ifndef FAKE_H
#define FAKE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"

#define FK_BYTES 160

enum { FK_NONE = 0, FK_LIVE, FK_FREED, FK_SENT };

struct fakes {
	uint32_t n, cap;
	uint8_t *state;
	uint32_t *len;
	uint32_t *parent;        /* clones: index of the original, else itself */
	uint8_t (*data)[FK_BYTES]; /* NULL: no bytes */
	uint64_t freed, clones, double_free, bad_handle;
	uint64_t fail_clone_every; /* 0: never fail; k: every k-th clone fails */
	uint64_t clone_calls;
	struct le_frame_ops ops;
};

static inline uint32_t fk_idx(const void *h)
{
	return (uint32_t)((uintptr_t)h - 1);
}

static inline void *fk_handle(uint32_t idx)
{
	return (void *)(uintptr_t)(idx + 1);
}

static void *fk_new_idx(struct fakes *fk, uint32_t len, uint32_t parent)
{
	uint32_t i;

	if (fk->n == fk->cap) {
		fk->cap = fk->cap ? fk->cap * 2 : 1024;
		fk->state = realloc(fk->state, fk->cap);
		fk->len = realloc(fk->len, fk->cap * sizeof(*fk->len));
		fk->parent = realloc(fk->parent, fk->cap * sizeof(*fk->parent));
		if (fk->data)
			fk->data = realloc(fk->data, (size_t)fk->cap * FK_BYTES);
	}
	i = fk->n++;
	fk->state[i] = FK_LIVE;
	fk->len[i] = len;
	fk->parent[i] = parent == UINT32_MAX ? i : parent;
	if (fk->data)
		memset(fk->data[i], 0, FK_BYTES);
	return fk_handle(i);
}

static inline void *fk_new(struct fakes *fk, uint32_t len)
{
	return fk_new_idx(fk, len, UINT32_MAX);
}

static void *fk_clone(void *ctx, void *h)
{
	struct fakes *fk = ctx;
	uint32_t src = fk_idx(h);
	void *c;

	fk->clone_calls++;
	if (fk->fail_clone_every && fk->clone_calls % fk->fail_clone_every == 0)
		return NULL;
	c = fk_new_idx(fk, fk->len[src], src);
	if (fk->data)
		memcpy(fk->data[fk_idx(c)], fk->data[src], FK_BYTES);
	fk->clones++;
	return c;
}

static void fk_free(void *ctx, void *h)
{
	struct fakes *fk = ctx;
	uint32_t i = fk_idx(h);

	if (i >= fk->n) {
		fk->bad_handle++;
		return;
	}
	if (fk->state[i] != FK_LIVE)
		fk->double_free++;
	fk->state[i] = FK_FREED;
	fk->freed++;
}

static uint8_t *fk_bytes(void *ctx, void *h, uint32_t *n)
{
	struct fakes *fk = ctx;
	uint32_t i = fk_idx(h);

	if (fk->data == NULL || i >= fk->n) {
		*n = 0;
		return NULL;
	}
	*n = fk->len[i] < FK_BYTES ? fk->len[i] : FK_BYTES;
	return fk->data[i];
}

/* with_bytes: give frames bytes (and the bytes operation). */
static inline void fk_init(struct fakes *fk, int with_bytes)
{
	memset(fk, 0, sizeof(*fk));
	if (with_bytes)
		fk->data = malloc(1); /* non-NULL marker; grown with the pool */
	fk->ops.ctx = fk;
	fk->ops.clone = fk_clone;
	fk->ops.free = fk_free;
	fk->ops.bytes = with_bytes ? fk_bytes : NULL;
}

static inline void fk_fini(struct fakes *fk)
{
	free(fk->state);
	free(fk->len);
	free(fk->parent);
	free(fk->data);
	memset(fk, 0, sizeof(*fk));
}

/* Marks frames handed back by dequeue/drain; returns how many were not
 * live (a bug: sent twice, or sent after being freed). */
static inline unsigned fk_sent(struct fakes *fk, const struct le_frame *out, unsigned n)
{
	unsigned bad = 0;

	for (unsigned k = 0; k < n; k++) {
		uint32_t i = fk_idx(out[k].handle);
		if (i >= fk->n || fk->state[i] != FK_LIVE)
			bad++;
		else
			fk->state[i] = FK_SENT;
	}
	return bad;
}

static inline uint64_t fk_count(const struct fakes *fk, int state)
{
	uint64_t c = 0;

	for (uint32_t i = 0; i < fk->n; i++)
		c += fk->state[i] == state;
	return c;
}

/* FNV-1a over 64-bit words: hashes departure records in reproducibility
 * tests. */
static inline uint64_t fnv(uint64_t h, uint64_t v)
{
	for (int k = 0; k < 8; k++) {
		h ^= (v >> (8 * k)) & 0xff;
		h *= 0x100000001b3ULL;
	}
	return h;
}

#endif
