#include "layout.h"

#include <stdio.h>

#include <rte_malloc.h>

unsigned dp_layout_lcores_needed(enum dp_layout_kind k)
{
	switch (k) {
	case DP_LAYOUT_SINGLE: return 1;
	case DP_LAYOUT_PER_DIRECTION: return 2;
	case DP_LAYOUT_PIPELINE: return 6;
	case DP_LAYOUT_AUTO: return 1;
	}
	return 1;
}

static enum dp_layout_kind choose_auto(unsigned nlcores)
{
	if (nlcores >= dp_layout_lcores_needed(DP_LAYOUT_PIPELINE))
		return DP_LAYOUT_PIPELINE;
	if (nlcores >= dp_layout_lcores_needed(DP_LAYOUT_PER_DIRECTION))
		return DP_LAYOUT_PER_DIRECTION;
	return DP_LAYOUT_SINGLE;
}

static struct dp_task *new_task(struct dp_plan *p, enum dp_task_kind kind, struct dp_direction *dir,
				const struct dp_context *ctx)
{
	struct dp_task *t = rte_zmalloc("linkemu_task", sizeof(*t), RTE_CACHE_LINE_SIZE);
	if (!t)
		return NULL;
	t->kind = kind;
	t->dir = dir;
	t->ctx = ctx;
	le_hist_init(&t->error);
	dp_poll_gaps_init(&t->gaps);
	p->task[p->ntasks++] = t;
	return t;
}

static int assign(struct dp_plan *p, unsigned slot, unsigned lcore_id, struct dp_task *t)
{
	if (!t)
		return -1;
	struct dp_lcore_work *w = &p->lcore[slot];
	w->lcore_id = lcore_id;
	w->task[w->ntasks++] = t;
	if (slot + 1 > p->nlcores)
		p->nlcores = slot + 1;
	return 0;
}

int dp_plan_build(struct dp_plan *p, enum dp_layout_kind want, const unsigned *lcore_ids, unsigned nlcores,
		  struct dp_direction dirs[LE_DIRS], const struct dp_context *ctx, char *err, size_t errlen)
{
	*p = (struct dp_plan){0};
	enum dp_layout_kind kind = want == DP_LAYOUT_AUTO ? choose_auto(nlcores) : want;
	unsigned need = dp_layout_lcores_needed(kind);
	if (nlcores < need) {
		snprintf(err, errlen,
			 "layout %s needs %u lcores (%s), EAL was given %u; add lcores with -l/--lcores "
			 "or choose --layout %s",
			 dp_layout_name(kind), need,
			 kind == DP_LAYOUT_PIPELINE ? "RX, worker and TX per direction" : "one per direction",
			 nlcores, dp_layout_name(choose_auto(nlcores)));
		return -2;
	}
	p->kind = kind;
	int rc = 0;
	switch (kind) {
	case DP_LAYOUT_SINGLE:
	case DP_LAYOUT_AUTO:
		for (int d = 0; d < LE_DIRS; d++)
			rc |= assign(p, 0, lcore_ids[0], new_task(p, DP_TASK_RUN_TO_COMPLETION, &dirs[d], ctx));
		break;
	case DP_LAYOUT_PER_DIRECTION:
		for (int d = 0; d < LE_DIRS; d++)
			rc |= assign(p, (unsigned)d, lcore_ids[d],
				     new_task(p, DP_TASK_RUN_TO_COMPLETION, &dirs[d], ctx));
		break;
	case DP_LAYOUT_PIPELINE: {
		static const enum dp_task_kind stages[] = {DP_TASK_RX, DP_TASK_WORKER, DP_TASK_TX};
		unsigned slot = 0;
		for (int d = 0; d < LE_DIRS; d++)
			for (unsigned s = 0; s < 3; s++, slot++)
				rc |= assign(p, slot, lcore_ids[slot], new_task(p, stages[s], &dirs[d], ctx));
		break;
	}
	}
	if (rc) {
		dp_plan_free(p);
		snprintf(err, errlen, "cannot allocate task state from hugepage memory");
		return -1;
	}
	return 0;
}

void dp_plan_free(struct dp_plan *p)
{
	for (unsigned i = 0; i < p->ntasks; i++)
		rte_free(p->task[i]);
	p->ntasks = 0;
}

int dp_lcore_runs_whole_polls(const struct dp_lcore_work *w)
{
	for (unsigned i = 0; i < w->ntasks; i++)
		if (w->task[i]->kind != DP_TASK_RUN_TO_COMPLETION)
			return 0;
	return 1;
}
