#include "report_collect.h"

#include <stdlib.h>
#include <string.h>

#include "paced_source.h"
#include "ports.h"
#include "snapshot.h"

/* Downstream first (snapshot.h): TX, then the task that runs the model,
 * then RX. */
static int stage_rank(enum dp_task_kind k)
{
	switch (k) {
	case DP_TASK_TX: return 0;
	case DP_TASK_RUN_TO_COMPLETION:
	case DP_TASK_WORKER: return 1;
	case DP_TASK_RX: return 2;
	}
	return 3;
}

static void add_task(struct dp_direction_report *out, const struct dp_task_snapshot *s, enum dp_task_kind kind,
		     uint64_t ring[2][2])
{
	dp_counters_add(&out->dp, &s->ctr);
	out->in_flight += s->held;
	/* ring[r][0]: frames put on ring r, ring[r][1]: frames taken from it */
	switch (kind) {
	case DP_TASK_RX: ring[0][0] += s->ring_out; break;
	case DP_TASK_WORKER: ring[0][1] += s->ring_in; ring[1][0] += s->ring_out; break;
	case DP_TASK_TX: ring[1][1] += s->ring_in; break;
	case DP_TASK_RUN_TO_COMPLETION: break;
	}
	dp_report_add_models(out, &s->models);
}

static int collect_direction(struct dp_direction_report *out, const struct dp_plan *plan, struct dp_direction *dir,
			     int live, const volatile int *stop, struct dp_task_snapshot *snap)
{
	uint64_t ring[2][2] = {{0, 0}, {0, 0}};
	memset(&out->dp, 0, sizeof(out->dp));
	memset(&out->model, 0, sizeof(out->model));
	out->in_flight = 0;
	out->in_flight_base = 0;
	le_hist_init(&out->error);
	le_hist_init(&out->poll_gaps);
	out->poll_observed_ns = 0;
	for (int rank = 0; rank < 3; rank++) {
		for (unsigned i = 0; i < plan->ntasks; i++) {
			struct dp_task *t = plan->task[i];
			if (t->dir != dir || stage_rank(t->kind) != rank)
				continue;
			if (dp_task_snapshot_take(t, live, stop, snap))
				return -1;
			add_task(out, snap, t->kind, ring);
			le_hist_merge(&out->error, &t->error);
			if (t->kind == DP_TASK_RUN_TO_COMPLETION || t->kind == DP_TASK_WORKER)
				dp_poll_gaps_merge(&out->poll_gaps, &out->poll_observed_ns, &t->gaps);
		}
	}
	for (int r = 0; r < 2; r++)
		out->in_flight += ring[r][0] - ring[r][1] - dir->ring_flushed[r];
	dp_counters_add(&out->dp, &dir->shutdown_ctr);
	out->npunt = dp_punt_status(dir->punt, dir->id, out->punt);
	dp_port_counters_read(dir->port_in, &out->port_in);
	out->has_paced = dir->paced != NULL;
	if (dir->paced) {
		const struct dp_paced_source *s = dir->paced;
		out->paced.pps = s->pps;
		out->paced.ring = s->ring;
		out->paced.delivered = s->delivered;
		out->paced.missed = s->missed;
		le_hist_init(&out->paced.wait);
		le_hist_merge(&out->paced.wait, &s->wait);
		/* What a NIC's counters would say of the wire it receives. */
		out->port_in.ipackets += s->delivered;
		out->port_in.imissed += s->missed;
	}
	dp_port_counters_read(dir->port_out, &out->port_out);
	dp_port_xstats_read(dir->port_in, &out->xstats_in);
	dp_port_xstats_read(dir->port_out, &out->xstats_out);
	return 0;
}

int dp_report_collect(struct dp_report *r, const struct dp_plan *plan, struct dp_direction dirs[LE_DIRS], int live,
		      const volatile int *stop)
{
	struct dp_task_snapshot *snap = malloc(sizeof(*snap)); /* large: off the stack */
	int rc = snap ? 0 : -1;
	for (int d = 0; d < LE_DIRS && rc == 0; d++)
		rc = collect_direction(&r->dir[d], plan, &dirs[d], live, stop, snap);
	free(snap);
	return rc;
}

