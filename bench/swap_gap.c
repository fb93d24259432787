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

#include "bench_kit.h"
#include "model_slot.h"

enum { REPS = 9, ITERS = 20000, AFTER = 8 };

static struct dp_model *model(const char *rate, uint32_t limit)
{
	static struct le_path_config c;
	char text[128], err[LE_ERR_MAX];
	snprintf(text, sizeof(text), "rate %s delay 10ms limit %u", rate, limit);
	struct dp_model *m = NULL;
	if (le_path_config_parse(text, &c, err, sizeof(err)) == 0)
		m = dp_model_new(&c, LE_DIR_A2B, 1, &bench_ops, err, sizeof(err));
	if (!m) {
		fprintf(stderr, "bench_swap_gap: %s\n", err);
		exit(1);
	}
	return m;
}

/* One run: n frames queued, ITERS bursts, a `set` half-way. Returns the
 * gap at the change; *typical: the median gap between bursts; *longest:
 * the longest over the change and the AFTER polls that follow it (the old
 * model retires on a later poll), a window short enough that the VM
 * rarely preempts inside it. */
static uint64_t run(uint32_t n, double *typical, double *longest)
{
	static double gap[ITERS];
	struct dp_model_slot s;
	struct le_frame out[32];
	char err[LE_ERR_MAX];
	uint32_t limit = n + ITERS + 64;
	dp_model_slot_init(&s, model("1mbit", limit), limit, err, sizeof(err));
	for (uint32_t i = 0; i < n; i++) /* 1 Mbit/s: they all wait */
		dp_model_slot_offer(&s, (void *)(uintptr_t)(i + 1), 1500, 1);
	struct dp_model *next = model("2mbit", limit);
	le_ns_t t = 1;
	uint64_t change = 0, last = bench_now_ns();
	uint64_t most = 0;
	for (int i = 0; i < ITERS; i++) {
		if (i == ITERS / 2) {
			if (dp_model_slot_publish(&s, next, 0)) {
				fprintf(stderr, "bench_swap_gap: publish refused\n");
				exit(1);
			}
			last = bench_now_ns(); /* the control thread's part is not the lcore's */
		}
		dp_model_slot_poll(&s, t);
		dp_model_slot_offer(&s, (void *)(uintptr_t)1, 64, t);
		(void)dp_model_slot_dequeue(&s, t, out, 32);
		t += 1000;
		uint64_t now = bench_now_ns();
		gap[i] = (double)(now - last);
		if (i == ITERS / 2)
			change = now - last;
		if (i >= ITERS / 2 && i <= ITERS / 2 + AFTER && now - last > most)
			most = now - last;
		last = now;
	}
	if (s.applied_seq != 1 || le_swap_depth(&s.swap) < n) {
		fprintf(stderr, "bench_swap_gap: the change did not happen (applied %lu, depth %u)\n",
			(unsigned long)s.applied_seq, le_swap_depth(&s.swap));
		exit(1);
	}
	*typical = bench_median(gap, ITERS);
	*longest = (double)most;
	dp_model_slot_drain(&s);
	dp_model_slot_fini(&s);
	return change;
}

int main(int argc, char **argv)
{
	uint32_t deep = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 1000000u;
	uint32_t queued[2] = {0, deep};
	double change[2][REPS], typical[2][REPS], longest[2][REPS];
	/* Interleaved, so both see the same machine. */
	for (int r = 0; r < REPS; r++)
		for (int q = 0; q < 2; q++)
			change[q][r] = (double)run(queued[q], &typical[q][r], &longest[q][r]);
	printf("%-10s %24s %20s %26s %8s\n", "queued", "gap between bursts (ns)", "gap at the set (ns)",
	       "longest, it + 8 after (ns)", "ratio");
	double base = 0;
	for (int q = 0; q < 2; q++) {
		double c = bench_median(change[q], REPS);
		if (q == 0)
			base = c;
		printf("%-10u %24.0f %20.0f %26.0f %8.2f\n", queued[q], bench_median(typical[q], REPS), c,
		       bench_median(longest[q], REPS), c / base);
	}
	printf("(medians of %d runs; ratio: the gap at the set against the empty queue's)\n", REPS);
	return 0;
}
