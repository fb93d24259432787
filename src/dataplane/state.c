#include "state.h"

#include <string.h>

int dp_state_report(struct dp_state *st, struct dp_report *r, int since_reset)
{
	r->layout = dp_layout_name(st->plan->kind);
	r->lcores = st->plan->nlcores;
	r->seed = st->seed;
	r->tsc_hz = st->clock->hz;
	r->tsc_nominal_hz = st->clock->nominal_hz;
	r->time_ns = tsc_clock_now(st->clock);
	r->uptime_s = (double)(r->time_ns - st->started_ns) / 1e9;
	r->mempool_size = st->pool ? st->pool->size : 0;
	r->mempool_in_use = st->pool ? rte_mempool_in_use_count(st->pool) : 0;
	if (dp_report_collect(r, st->plan, st->dir, st->lcores_running, st->stop))
		return -1;
	if (since_reset && st->baseline)
		dp_report_subtract(r, st->baseline);
	return 0;
}

void dp_state_collect(struct dp_state *st)
{
	pthread_mutex_lock(&st->lock);
	for (int d = 0; d < LE_DIRS; d++)
		dp_model_slot_collect(&st->dir[d].models);
	pthread_mutex_unlock(&st->lock);
}
