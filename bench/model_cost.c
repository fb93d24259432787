/* How the link model's cost per frame grows with the work: frames held
 * (10^3 .. 1.5 x 10^7) for each form of the delay line, and the number of
 * class rules (1 .. 64). The model alone, in virtual time (no DPDK, no
 * ports), so the figures are the model's own share of a frame's cost.
 *
 * Frames arrive every 67.2 ns (64-byte frames at 10 GbE line rate,
 * 14.88 Mpps) and due frames are taken every 32 frames, as the data
 * plane's burst does. A link holding N frames at that rate has
 * delay N x 67.2 ns; the jitter row adds 100 us of jitter (the
 * forwarding benchmark's `delay 1ms 100us`): the jitter's spread, not the
 * frames held, sets how many buckets are being filled at once, so it is
 * kept fixed along the curve. Time is the thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID), so another process sharing the CPU does not
 * count, though it still cools the caches.
 *
 * Usage: model_cost [--quick] [--max-held N | --held N | --rules-only] [--json]
 * (--quick: up to 10^6 held; --held N: that row of the held curve only) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_kit.h"
#include "path.h"

#define ARRIVAL_PS 67200 /* picoseconds between frames at 14.88 Mpps */
#define BURST 32

static uint64_t freed;

static void op_free(void *ctx, void *h)
{
	freed++;
}

/* ns of CPU per frame through a path configured by `text`, after `warm`
 * frames, over `frames` frames. Returns -1 on a bad configuration. */
static double run(const char *text, uint64_t warm, uint64_t frames, uint64_t *held)
{
	static struct le_path_config cfg;
	static struct le_path p;
	const struct le_frame_ops ops = { NULL, NULL, op_free, bench_udp4_bytes, NULL, NULL };
	struct le_frame out[BURST];
	char err[512];
	double t0 = 0;
	uint64_t tx = 0;

	bench_udp4_restore(); /* its links have no `corrupt`: the frame stays as it is */
	if (le_path_config_parse(text, &cfg, err, sizeof(err)) < 0 ||
	    le_path_init(&p, &cfg, LE_DIR_A2B, 1, &ops, err, sizeof(err)) < 0) {
		fprintf(stderr, "model_cost: '%s': %s\n", text, err);
		return -1;
	}
	freed = 0;
	for (uint64_t i = 0; i < warm + frames; i++) {
		le_ns_t now = i * ARRIVAL_PS / 1000;

		if (i == warm) {
			*held = le_path_depth(&p);
			t0 = bench_thread_cpu_s();
			tx = 0;
		}
		le_path_enqueue(&p, bench_udp4(), BENCH_UDP4_LEN, now);
		if (i % BURST == BURST - 1) {
			unsigned n;
			while ((n = le_path_dequeue(&p, now, out, BURST)) > 0)
				tx += n;
		}
	}
	t0 = bench_thread_cpu_s() - t0;
	if (freed) /* the limit is sized to hold every frame */
		fprintf(stderr, "model_cost: '%s': %llu frames dropped\n", text, (unsigned long long)freed);
	le_path_drain(&p);
	le_path_free(&p);
	return t0 * 1e9 / (double)frames;
}

int main(int argc, char **argv)
{
	static const double held[] = { 1e3, 1e4, 1e5, 1e6, 1e7, 1.5e7 };
	static const unsigned rules[] = { 0, 1, 2, 4, 8, 16, 32, 64 };
	static const char *const forms[][2] = {
		{ "fifo", "delay %lluns limit %llu" },
		/* the jitter's own cost, without reordering: what the wheel adds
		 * is the difference with the next row */
		{ "fifo (jitter nr)", "delay %lluns 100us noreorder limit %llu" },
		{ "wheel (jitter)", "delay %lluns 100us limit %llu" },
		{ "wheel (reorder)", "delay %lluns reorder 1%% limit %llu" },
		/* the label says what the current tree uses; built against an
		 * older tree, the ordered rows measure its structure */
	};
	int quick = 0, json = 0, do_held = 1, do_rules = 1;
	double max_held = 1.5e7, min_held = 0;
	char text[LE_PATH_TEXT_MAX];

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0)
			quick = 1;
		else if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (strcmp(argv[i], "--max-held") == 0 && i + 1 < argc)
			max_held = atof(argv[++i]);
		else if (strcmp(argv[i], "--held") == 0 && i + 1 < argc)
			min_held = max_held = atof(argv[++i]), do_rules = 0;
		else if (strcmp(argv[i], "--rules-only") == 0)
			do_held = 0;
		else {
			fprintf(stderr, "usage: model_cost [--quick] [--max-held N | --held N | --rules-only] [--json]\n");
			return 2;
		}
	}
	if (json)
		printf("{\"held\": [");
	else if (do_held)
		printf("ns/frame (model CPU) vs frames held, 14.88 Mpps offered\n%12s %-16s %9s\n", "held", "line",
		       "ns/frame");
	int first = 1;
	for (unsigned h = 0; h < sizeof(held) / sizeof(held[0]); h++) {
		unsigned long long n = (unsigned long long)held[h];
		/* room for the frames 100 us of jitter adds (1488 at 14.88 Mpps), twice */
		unsigned long long delay = n * ARRIVAL_PS / 1000, limit = n + n / 4 + 4000;
		uint64_t warm = n + n / 8 + 100000, frames = n > 4000000 ? n : 4000000, got = 0;

		if ((quick && n > 1000000) || n > max_held || !do_held)
			break;
		if (n < min_held)
			continue;
		for (unsigned f = 0; f < sizeof(forms) / sizeof(forms[0]); f++) {
			double ns;
			snprintf(text, sizeof(text), forms[f][1], delay, limit);
			ns = run(text, warm, frames, &got);
			if (ns < 0)
				return 1;
			if (json)
				printf("%s{\"held\": %llu, \"line\": \"%s\", \"ns\": %.2f}", first ? "" : ", ",
				       (unsigned long long)got, forms[f][0], ns);
			else
				printf("%12llu %-16s %9.2f\n", (unsigned long long)got, forms[f][0], ns);
			first = 0;
			fflush(stdout);
		}
	}
	if (json)
		printf("], \"rules\": [");
	else if (do_rules)
		printf("\nns/frame (model CPU) vs class rules (no frame matches: every rule is tried)\n%6s %-22s %9s\n",
		       "rules", "kind", "ns/frame");
	first = 1;
	for (unsigned r = 0; do_rules && r < sizeof(rules) / sizeof(rules[0]); r++) {
		for (int range = 0; range < 2; range++) {
			size_t len = (size_t)snprintf(text, sizeof(text), "delay 100us limit 100000");
			uint64_t got;
			double ns;
			for (unsigned k = 0; k < rules[r]; k++)
				len += (size_t)snprintf(text + len, sizeof(text) - len,
							range ? " ; class c%u match proto udp dport %u-%u : delay 100us"
							      : " ; class c%u match proto udp dport %u : delay 100us",
							k, 6000 + 2 * k, 6001 + 2 * k);
			ns = run(text, 100000, 4000000, &got);
			if (ns < 0)
				return 1;
			if (json)
				printf("%s{\"rules\": %u, \"kind\": \"%s\", \"ns\": %.2f}", first ? "" : ", ", rules[r],
				       range ? "port ranges" : "exact ports", ns);
			else
				printf("%6u %-22s %9.2f\n", rules[r], range ? "port ranges (scanned)" : "exact ports (hashed)", ns);
			first = 0;
			fflush(stdout);
			if (rules[r] == 0)
				break;
		}
	}
	if (json)
		printf("]}\n");
	return 0;
}
