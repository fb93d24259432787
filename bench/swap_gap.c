/* The forwarding gap a live `set` causes on the lcore, with 10^6 frames
 * queued against an empty queue, in the same run.
 *
 * In process, through the code the lcore runs: a direction's model slot
 * (src/plane/model_slot.c) driven as fastpath.c drives it, one poll, one
 * frame offered and a dequeue per iteration (a burst boundary), in virtual
 * model time. Half-way, the "control thread" publishes a new model (its
 * building and publishing are the control thread's work, outside the
 * timed loop); the next poll stages it and le_swap switches at once. The
 * gap at the change is the time from that poll's start to the next's:
 * what forwarding stalls for. Baseline: the same with an empty queue.
 * A swap that is O(classes) (queue rings handed over, src/core/swap.c)
 * keeps the ratio near 1; one that walked the queue grew with it.
 *
 *   build/bench/bench_swap_gap [queued]   (default 1000000) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model_slot.h"

enum { REPS = 9, ITERS = 20000 };

static void nop_free(void *ctx, void *h)
{
	(void)ctx;
	(void)h;
}

static const struct le_frame_ops ops = {NULL, NULL, nop_free, NULL};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct dp_model *model(const char *rate, uint32_t limit)
{
	static struct le_path_config c;
	char text[128], err[LE_ERR_MAX];
	snprintf(text, sizeof(text), "rate %s delay 10ms limit %u", rate, limit);
	struct dp_model *m = NULL;
	if (le_path_config_parse(text, &c, err, sizeof(err)) == 0)
		m = dp_model_new(&c, LE_DIR_A2B, 1, &ops, err, sizeof(err));
	if (!m) {
		fprintf(stderr, "bench_swap_gap: %s\n", err);
		exit(1);
	}
	return m;
}

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* One run: n frames queued, ITERS bursts, a `set` half-way. Returns the
 * gap at the change; *typical: the median gap between bursts; *longest:
 * the longest from the change on (the old model retires on later polls). */
static uint64_t run(uint32_t n, uint64_t *typical, uint64_t *longest)
{
	static uint64_t gap[ITERS];
	struct dp_model_slot s;
	struct le_frame out[32];
	char err[LE_ERR_MAX];
	uint32_t limit = n + ITERS + 64;
	dp_model_slot_init(&s, model("1mbit", limit), limit, err, sizeof(err));
	for (uint32_t i = 0; i < n; i++) /* 1 Mbit/s: they all wait */
		dp_model_slot_offer(&s, (void *)(uintptr_t)(i + 1), 1500, 1);
	struct dp_model *next = model("2mbit", limit);
	le_ns_t t = 1;
	uint64_t change = 0, last = now_ns();
	*longest = 0;
	for (int i = 0; i < ITERS; i++) {
		if (i == ITERS / 2) {
			if (dp_model_slot_publish(&s, next, 0)) {
				fprintf(stderr, "bench_swap_gap: publish refused\n");
				exit(1);
			}
			last = now_ns(); /* the control thread's part is not the lcore's */
		}
		dp_model_slot_poll(&s, t);
		dp_model_slot_offer(&s, (void *)(uintptr_t)1, 64, t);
		(void)dp_model_slot_dequeue(&s, t, out, 32);
		t += 1000;
		uint64_t now = now_ns();
		gap[i] = now - last;
		last = now;
		if (i == ITERS / 2)
			change = gap[i];
		if (i >= ITERS / 2 && gap[i] > *longest)
			*longest = gap[i];
	}
	if (s.applied_seq != 1 || le_swap_depth(&s.swap) < n) {
		fprintf(stderr, "bench_swap_gap: the change did not happen (applied %lu, depth %u)\n",
			(unsigned long)s.applied_seq, le_swap_depth(&s.swap));
		exit(1);
	}
	qsort(gap, ITERS, sizeof(gap[0]), cmp);
	*typical = gap[ITERS / 2];
	dp_model_slot_drain(&s);
	dp_model_slot_fini(&s);
	return change;
}

int main(int argc, char **argv)
{
	uint32_t deep = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 1000000u;
	uint32_t queued[2] = {0, deep};
	uint64_t change[2][REPS], typical[2][REPS], longest[2][REPS];
	/* Interleaved, so both see the same machine. */
	for (int r = 0; r < REPS; r++)
		for (int q = 0; q < 2; q++)
			change[q][r] = run(queued[q], &typical[q][r], &longest[q][r]);
	printf("%-10s %24s %20s %26s %8s\n", "queued", "gap between bursts (ns)", "gap at the set (ns)",
	       "longest gap after it (ns)", "ratio");
	uint64_t base = 0;
	for (int q = 0; q < 2; q++) {
		qsort(change[q], REPS, sizeof(uint64_t), cmp);
		qsort(typical[q], REPS, sizeof(uint64_t), cmp);
		qsort(longest[q], REPS, sizeof(uint64_t), cmp);
		if (q == 0)
			base = change[q][REPS / 2];
		printf("%-10u %24lu %20lu %26lu %8.2f\n", queued[q], (unsigned long)typical[q][REPS / 2],
		       (unsigned long)change[q][REPS / 2], (unsigned long)longest[q][REPS / 2],
		       (double)change[q][REPS / 2] / (double)base);
	}
	printf("(medians of %d runs; ratio: the gap at the set against the empty queue's)\n", REPS);
	return 0;
}
