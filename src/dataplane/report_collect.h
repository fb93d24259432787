/* The DPDK data plane's half of a report: counters gathered from its
 * tasks, rings and ports (report.h prints and compares them). */
#ifndef DP_REPORT_COLLECT_H
#define DP_REPORT_COLLECT_H

#include "layout.h"
#include "report.h"

/* Reads counters as one consistent snapshot (snapshot.h). live: the
 * lcores run and are asked; else they are stopped and read directly.
 * -1 when an lcore did not answer (stopping). */
int dp_report_collect(struct dp_report *r, const struct dp_plan *plan, struct dp_direction dirs[LE_DIRS], int live,
		      const volatile int *stop);
#endif
