#include "snapshot.h"

#include "ask.h"

int dp_task_snapshot_take(struct dp_task *t, int live, const volatile int *stop, struct dp_task_snapshot *out)
{
	if (!live) {
		dp_task_snapshot(t, out);
		return 0;
	}
	if (dp_ask_wait(&t->snap_req, &t->snap_done, stop))
		return -1;
	*out = t->snap;
	return 0;
}
