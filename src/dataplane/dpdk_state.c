#include "dpdk_state.h"

#include <rte_lcore.h>

#include "compact_store.h"
#include "fastpath.h"
#include "report_collect.h"

static le_ns_t dpdk_now(const struct dp_state *st)
{
	const struct dp_dpdk_plane *p = st->plane;
	return tsc_clock_now(p->clock);
}

static int dpdk_collect(struct dp_state *st, struct dp_report *r, int live)
{
	const struct dp_dpdk_plane *p = st->plane;
	r->layout = dp_layout_name(p->plan->kind);
	r->lcores = p->plan->nlcores;
	r->tsc_hz = p->clock->hz;
	r->tsc_nominal_hz = p->clock->nominal_hz;
	r->time_ns = tsc_clock_now(p->clock);
	r->mempool_size = p->pool ? p->pool->size : 0;
	r->mempool_in_use = p->pool ? rte_mempool_in_use_count(p->pool) : 0;
	for (int d = 0; d < LE_DIRS; d++) {
		const struct le_compact_store *s = p->dir[d].compact;
		if (!s)
			continue;
		r->has_compact = 1;
		r->compact[d] = (struct dp_compact_report){
			.slots = s->nslots, .bytes = le_compact_store_bytes(s->nslots), .in_use = s->in_use,
			.high_water = s->high_water, .stored = s->stored, .full = s->full,
			.send_waits = p->dir[d].compact_tx_wait,
		};
	}
	return dp_report_collect(r, p->plan, p->dir, live, st->stop);
}

/* A control thread: EAL pins it off the lcores' CPUs. */
static int dpdk_thread_create(pthread_t *t, const char *name, void *(*fn)(void *), void *arg)
{
	return rte_ctrl_thread_create(t, name, NULL, fn, arg);
}

void dp_dpdk_state_bind(struct dp_state *st, struct dp_dpdk_plane *p)
{
	st->plane = p;
	st->now = dpdk_now;
	st->collect = dpdk_collect;
	st->thread_create = dpdk_thread_create;
	for (int d = 0; d < LE_DIRS; d++)
		st->slot[d] = &p->dir[d].models;
}
