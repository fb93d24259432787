/* Which lcore runs which tasks, chosen from the lcores EAL was given.
 *
 *   single         1 lcore:  both directions run to completion
 *   per-direction  2 lcores: one direction each, run to completion
 *   pipeline       6 lcores: RX, worker and TX for each direction (DEMU)
 * `auto` picks the largest layout the lcores can carry. Lcore ids are
 * never assumed: they come from EAL, main lcore first. */
#ifndef DP_LAYOUT_H
#define DP_LAYOUT_H

#include <stddef.h>

#include "fastpath.h"
#include "options.h"

#define DP_TASKS_MAX 6
#define DP_TASKS_PER_LCORE_MAX 2

struct dp_lcore_work {
	unsigned lcore_id;
	unsigned ntasks;
	struct dp_task *task[DP_TASKS_PER_LCORE_MAX];
};

struct dp_plan {
	enum dp_layout_kind kind;
	unsigned nlcores;                      /* lcores that run tasks */
	struct dp_lcore_work lcore[DP_TASKS_MAX];
	unsigned ntasks;
	struct dp_task *task[DP_TASKS_MAX];    /* owned (rte_zmalloc) */
};

/* Lcores a layout needs. */
unsigned dp_layout_lcores_needed(enum dp_layout_kind k);

/* Builds the plan for `want` over the lcores given (lcore_ids[0] is the
 * main lcore). With a message: -2 when the lcores cannot carry the layout
 * (the user's choice), -1 when task memory could not be allocated. */
int dp_plan_build(struct dp_plan *p, enum dp_layout_kind want, const unsigned *lcore_ids, unsigned nlcores,
		  struct dp_direction dirs[LE_DIRS], const struct dp_context *ctx, char *err, size_t errlen);
void dp_plan_free(struct dp_plan *p);
/* Whether every task of the lcore runs whole polls (run to completion:
 * each poll receives and sends), where the drop stash may keep mbufs
 * (drop_stash.h). */
int dp_lcore_runs_whole_polls(const struct dp_lcore_work *w);

#endif
