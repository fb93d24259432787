/* Mbufs the model drops, kept by the lcore that dropped them until a
 * poll has sent fewer frames than it received, then freed: so each poll
 * gives the lcore's mempool cache back as many mbufs as the port took
 * from it.
 *
 * Why: a run-to-completion poll takes a burst from the port (the driver
 * allocates its mbufs from the lcore's cache) and sends a burst of due
 * frames (the driver frees theirs into it). Without drops the two match
 * poll by poll and the cache's level never moves: RX gets back the mbufs
 * the last send freed, still in the CPU's cache. A drop freed at once
 * puts one more in the cache now and one fewer a delay later, so the
 * level wanders, spills to the pool's ring and refills from it, and the
 * refilled mbufs come back cold. Released where the poll's send fell
 * short of its receive, the dropped mbufs keep the level flat: `delay
 * 1ms loss 1%` ran 13 % faster on net_null (docs/performance.md, "What a
 * drop costs").
 *
 * One stash per thread, on only where the lcore runs whole polls (the
 * run-to-completion layout; lcore_loop turns it on and off); elsewhere,
 * and when the stash is full, a dropped mbuf is freed at once. */
#ifndef DP_DROP_STASH_H
#define DP_DROP_STASH_H

#include <rte_branch_prediction.h>
#include <rte_mbuf.h>
#include <rte_per_lcore.h>

#define DP_DROP_STASH_MAX 512u

struct dp_drop_stash {
	unsigned on;
	unsigned n;
	struct rte_mbuf *m[DP_DROP_STASH_MAX];
};

RTE_DECLARE_PER_LCORE(struct dp_drop_stash, dp_drop_stash);

/* Keeps m for a later release; 0 when the caller must free it now. */
static inline int dp_drop_stash_put(struct rte_mbuf *m)
{
	struct dp_drop_stash *s = &RTE_PER_LCORE(dp_drop_stash);

	if (!s->on || s->n == DP_DROP_STASH_MAX)
		return 0;
	s->m[s->n++] = m;
	return 1;
}

/* dp_drop_stash_release's work, out of line: most polls keep nothing. */
void dp_drop_stash_free(unsigned n);

/* Frees up to n of the kept mbufs, the oldest last. */
static inline void dp_drop_stash_release(unsigned n)
{
	if (unlikely(RTE_PER_LCORE(dp_drop_stash).n != 0) && n != 0)
		dp_drop_stash_free(n);
}

/* This thread keeps dropped mbufs (on) or frees them at once (off, after
 * freeing every mbuf it kept). */
void dp_drop_stash_set(int on);

#endif
