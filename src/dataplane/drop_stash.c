/* The dropped mbufs a run-to-completion lcore keeps (drop_stash.h). */
#include "drop_stash.h"

RTE_DEFINE_PER_LCORE(struct dp_drop_stash, dp_drop_stash);

void dp_drop_stash_free(unsigned n)
{
	struct dp_drop_stash *s = &RTE_PER_LCORE(dp_drop_stash);

	if (n > s->n)
		n = s->n;
	s->n -= n;
	rte_pktmbuf_free_bulk(&s->m[s->n], n);
}

void dp_drop_stash_set(int on)
{
	if (!on)
		dp_drop_stash_release(DP_DROP_STASH_MAX);
	RTE_PER_LCORE(dp_drop_stash).on = (unsigned)on;
}
