/* Consistent counters while the lcores run.
 *
 * A reader that summed the lcores' counters itself would read each at a
 * different moment: a frame could be counted as received but not yet as
 * held, or a retiring model could leave the retiring list between two
 * reads and be counted twice or not at all; `stats` would then show a
 * false "not conserved". So readers ask the owning lcore instead (as
 * DPDK's ip_pipeline does): the lcore copies its task's counters and its
 * models' counts between two polls, when they agree with each other. A
 * sequence lock was the other choice; under full load an lcore is always
 * inside a burst, so a reader could wait indefinitely for a quiet moment,
 * while a request is answered within one poll and costs the fast path one
 * load per poll.
 *
 * A direction's tasks are asked downstream first (TX, then the task that
 * runs the model, then RX). A frame that moves between two answers is
 * then counted on a ring (enqueued by the later, not yet dequeued by the
 * earlier), never twice and never nowhere, so every snapshot conserves. */
#ifndef DP_SNAPSHOT_H
#define DP_SNAPSHOT_H

#include "fastpath.h"

/* The task's snapshot. live: its lcore runs (ask it and wait; give up
 * when *stop is set or after a second); else read it directly. 0 or -1. */
int dp_task_snapshot_take(struct dp_task *t, int live, const volatile int *stop, struct dp_task_snapshot *out);

#endif
