#include "snapshot.h"

#include <time.h>

#define ANSWER_TIMEOUT_NS 1000000000LL
#define SPINS_BEFORE_SLEEP 1000

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int dp_task_snapshot_take(struct dp_task *t, int live, const volatile int *stop, struct dp_task_snapshot *out)
{
	if (!live) {
		dp_task_snapshot(t, out);
		return 0;
	}
	/* One reader at a time (the caller holds the state lock). */
	uint64_t req = __atomic_add_fetch(&t->snap_req, 1, __ATOMIC_RELEASE);
	long long give_up = now_ns() + ANSWER_TIMEOUT_NS;
	for (unsigned spins = 0; __atomic_load_n(&t->snap_done, __ATOMIC_ACQUIRE) != req; spins++) {
		if (spins < SPINS_BEFORE_SLEEP)
			continue;
		if ((stop && *stop) || now_ns() > give_up)
			return -1;
		struct timespec nap = {.tv_sec = 0, .tv_nsec = 20000};
		nanosleep(&nap, NULL);
	}
	*out = t->snap;
	return 0;
}
