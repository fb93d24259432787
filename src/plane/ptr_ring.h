/* A single-producer/single-consumer ring of pointers between two threads
 * (a forwarding thread hands, the control thread takes). Fixed capacity,
 * a power of two; no DPDK, so either data plane can use it. The indices
 * only grow; their difference is the number of entries. */
#ifndef DP_PTR_RING_H
#define DP_PTR_RING_H

#include <stdint.h>

#define DP_PTR_RING_CAP 64u

struct dp_ptr_ring {
	void *slot[DP_PTR_RING_CAP];
	uint64_t head; /* producer: next to write */
	uint64_t tail; /* consumer: next to read */
};

/* 0, or -1 when full. */
static inline int dp_ptr_ring_put(struct dp_ptr_ring *r, void *p)
{
	uint64_t h = r->head, t = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	if (h - t >= DP_PTR_RING_CAP)
		return -1;
	r->slot[h % DP_PTR_RING_CAP] = p;
	__atomic_store_n(&r->head, h + 1, __ATOMIC_RELEASE);
	return 0;
}

/* 0 with *p, or -1 when empty. */
static inline int dp_ptr_ring_take(struct dp_ptr_ring *r, void **p)
{
	uint64_t t = r->tail, h = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
	if (t == h)
		return -1;
	*p = r->slot[t % DP_PTR_RING_CAP];
	__atomic_store_n(&r->tail, t + 1, __ATOMIC_RELEASE);
	return 0;
}

#endif
