/* What a live change costs the thread that runs the model (le_swap), with
 * 10^3 .. 10^6 frames queued in front of the serializer, in virtual time
 * (no DPDK, no clock in the model; the benchmark reads CLOCK_MONOTONIC
 * around the calls).
 *
 * One change = le_swap_stage + le_swap_advance (the hand-over happens
 * there). Baseline, measured in the same run on the same link: one
 * offer + one dequeue of a frame. The change is O(classes): its ratio to
 * the baseline must not grow with the queue. (Before, the hand-over
 * walked the old queue to project the serializer's busy time.)
 *
 *   build/bench/bench_swap_cost [max-exponent]   (default 6: up to 10^6) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_kit.h"
#include "swap.h"

static struct le_path *build(uint32_t limit)
{
	static struct le_path_config c;
	char text[128], err[LE_ERR_MAX];
	struct le_path *p = malloc(sizeof(*p));

	snprintf(text, sizeof(text), "rate 1mbit delay 10ms limit %u", limit);
	if (p == NULL || le_path_config_parse(text, &c, err, sizeof(err)) != 0 ||
	    le_path_init(p, &c, LE_DIR_A2B, 1, &bench_ops, err, sizeof(err)) != 0) {
		fprintf(stderr, "bench_swap_cost: %s\n", err);
		exit(1);
	}
	return p;
}

int main(int argc, char **argv)
{
	int maxexp = argc > 1 ? atoi(argv[1]) : 6;
	enum { REPS = 7, BASE = 200000 };

	printf("%-10s %14s %14s %10s\n", "queued", "change (ns)", "offer+deq (ns)", "ratio");
	for (int e = 3; e <= maxexp; e++) {
		uint32_t n = 1;
		double change[REPS], base[REPS];

		for (int i = 0; i < e; i++)
			n *= 10;
		for (int r = 0; r < REPS; r++) {
			struct le_path *a = build(n + 16), *b = build(n + 16), *left[2 * LE_SWAP_RETIRING_MAX + 2];
			struct le_swap sw;
			struct le_frame out[1];
			le_ns_t t = 1;
			double t0;
			unsigned nl;

			le_swap_init(&sw, a);
			for (uint32_t i = 0; i < n; i++) /* 1 Mbit/s: they all wait */
				le_swap_offer(&sw, (void *)(uintptr_t)(i + 1), 1500, 1);
			/* baseline: one frame in and one out, on this link, with the
			 * queue as deep */
			t0 = (double)bench_now_ns();
			for (int i = 0; i < BASE; i++) {
				le_swap_offer(&sw, (void *)(uintptr_t)1, 64, t);
				le_swap_dequeue(&sw, t, out, 1);
			}
			base[r] = ((double)bench_now_ns() - t0) / BASE;
			t0 = (double)bench_now_ns();
			le_swap_stage(&sw, b, t + 1);
			le_swap_advance(&sw, t + 1);
			change[r] = (double)bench_now_ns() - t0;
			if (sw.swaps != 1 || le_swap_depth(&sw) < n) {
				fprintf(stderr, "bench_swap_cost: the change did not happen\n");
				return 1;
			}
			nl = le_swap_release(&sw, left);
			for (unsigned i = 0; i < nl; i++) {
				le_path_free(left[i]);
				free(left[i]);
			}
		}
		double c = bench_median(change, REPS), b = bench_median(base, REPS);
		printf("%-10u %14.0f %14.1f %10.1f\n", n, c, b, c / b);
	}
	return 0;
}
