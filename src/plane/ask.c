#include "ask.h"

#include <time.h>

#define ANSWER_TIMEOUT_NS 1000000000LL
#define SPINS_BEFORE_SLEEP 1000

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int dp_ask_wait(uint64_t *req, const uint64_t *done, const volatile int *stop)
{
	uint64_t want = __atomic_add_fetch(req, 1, __ATOMIC_RELEASE);
	long long give_up = now_ns() + ANSWER_TIMEOUT_NS;
	for (unsigned spins = 0; __atomic_load_n(done, __ATOMIC_ACQUIRE) != want; spins++) {
		if (spins < SPINS_BEFORE_SLEEP)
			continue;
		if ((stop && *stop) || now_ns() > give_up)
			return -1;
		struct timespec nap = {.tv_sec = 0, .tv_nsec = 20000};
		nanosleep(&nap, NULL);
	}
	return 0;
}
