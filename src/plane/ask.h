/* Asking a forwarding thread for a copy of its counters (snapshot.h of
 * either data plane): the reader bumps `req`, the thread copies between
 * two polls and sets `done` to it. */
#ifndef DP_ASK_H
#define DP_ASK_H

#include <stdint.h>

/* Asks and waits for the answer; gives up when *stop is set or after a
 * second. 0, or -1. One reader at a time (the caller holds the state
 * lock). */
int dp_ask_wait(uint64_t *req, const uint64_t *done, const volatile int *stop);

/* The forwarding thread, between two polls: nonzero when asked. */
static inline int dp_ask_pending(const uint64_t *req, const uint64_t *done)
{
	return __atomic_load_n(req, __ATOMIC_ACQUIRE) != *done;
}
/* ... then, after copying: */
static inline void dp_ask_answer(const uint64_t *req, uint64_t *done)
{
	__atomic_store_n(done, __atomic_load_n(req, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
}

#endif
