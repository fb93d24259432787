#include "state.h"

int dp_state_report(struct dp_state *st, struct dp_report *r, int since_reset)
{
	r->seed = st->seed;
	if (st->collect(st, r, st->lcores_running))
		return -1;
	r->uptime_s = (double)(r->time_ns - st->started_ns) / 1e9;
	if (since_reset && st->baseline)
		dp_report_subtract(r, st->baseline);
	return 0;
}

void dp_state_collect(struct dp_state *st)
{
	pthread_mutex_lock(&st->lock);
	for (int d = 0; d < LE_DIRS; d++)
		dp_model_slot_collect(st->slot[d]);
	pthread_mutex_unlock(&st->lock);
}
