/* One link's model cost per frame, offered as the data plane offers it:
 * bursts of 32 frames of one arrival, due frames taken after each burst.
 * The model alone, in virtual time (no DPDK, no ports), so the timing
 * wheel's buckets hold what they hold at the rate given, whatever the
 * speed of the run: under cachegrind linkemud itself runs ~50x slower
 * against a real clock and its buckets hold a fiftieth of their frames
 * (docs/performance.md, "The jitter row"). Under cachegrind this program
 * gives a link's instructions per frame at a true density.
 *
 * Usage: model_burst_cost LINK [MPPS [FRAMES [ROUNDS [PORTS]]]]
 *   MPPS: the rate offered to the one direction (default 6.2, what one
 *   lcore forwards a direction of the jitter row at); FRAMES per round
 *   (default 4,000,000; whole bursts only, so rounded down to a multiple
 *   of 32; the first half of the bursts warms up); ROUNDS (default 5);
 *   PORTS: 1 (default) sends every frame to UDP port 5000; P > 1 gives
 *   the frames destination ports 5000 .. 5000 + P - 1 in turn, as the
 *   udp4 rows of forwarding.py do (bench/udp4_pcap.py), so class rules
 *   on ports spread them over classes.
 * Prints the rounds' least and median ns of CPU per frame, and how many
 * frames each round timed (the second half of its bursts). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_kit.h"
#include "path.h"

#define BURST 32
_Static_assert(BURST <= LE_CS_BURST, "a burst is classified whole before any of it is corrupted");

/* duplicate's copy is the same frame (handles only point to bench_udp4()) */
static void *same_frame(void *ctx, void *h)
{
	(void)ctx;
	return h;
}

/* PORTS > 1: a frame per port, each handle pointing to its bytes. */
#define PORTS_MAX 1024
static uint8_t port_frame[PORTS_MAX][BENCH_UDP4_LEN];

static uint8_t *port_frame_bytes(void *ctx, void *h, uint32_t *n)
{
	(void)ctx;
	*n = BENCH_UDP4_LEN;
	return h;
}

/* The frames of burst b: port_frame[(b * BURST + i) % ports], restored
 * (`corrupt` may have flipped bits in them as the last burst). */
static void port_burst(uint64_t b, unsigned ports, void **handles)
{
	for (unsigned i = 0; i < BURST; i++) {
		const unsigned k = (unsigned)((b * BURST + i) % ports);
		const uint16_t port = (uint16_t)(5000 + k);

		memcpy(port_frame[k], bench_udp4_template, BENCH_UDP4_LEN);
		port_frame[k][36] = (uint8_t)(port >> 8);
		port_frame[k][37] = (uint8_t)port;
		handles[i] = port_frame[k];
	}
}

/* The frames a round times: only whole bursts are offered, and the
 * first half of them (rounded down) warms up. */
static uint64_t timed_frames(uint64_t frames)
{
	const uint64_t bursts = frames / BURST;

	return (bursts - bursts / 2) * BURST;
}

/* ns of CPU per frame over the second half of the bursts; -1 on a bad link. */
static double round_ns(const char *text, double mpps, uint64_t frames, unsigned ports)
{
	static struct le_path_config cfg;
	static struct le_path p;
	const struct le_frame_ops ops = { NULL, same_frame, bench_nop_free,
					  ports > 1 ? port_frame_bytes : bench_udp4_bytes, NULL, NULL };
	const double burst_ns = BURST * 1e3 / mpps;
	struct le_frame out[BURST];
	void *handles[BURST];
	uint32_t lens[BURST];
	char err[LE_ERR_MAX];
	double t0 = 0;

	if (le_path_config_parse(text, &cfg, err, sizeof(err)) < 0 ||
	    le_path_init(&p, &cfg, LE_DIR_A2B, 1, &ops, err, sizeof(err)) < 0) {
		fprintf(stderr, "model_burst_cost: '%s': %s\n", text, err);
		return -1;
	}
	bench_udp4_restore();
	for (unsigned i = 0; i < BURST; i++)
		handles[i] = bench_udp4(), lens[i] = BENCH_UDP4_LEN;
	for (uint64_t b = 0; b < frames / BURST; b++) {
		const le_ns_t now = (le_ns_t)((double)b * burst_ns);

		if (b == frames / BURST / 2)
			t0 = bench_thread_cpu_s();
		if (ports > 1)
			port_burst(b, ports, handles);
		le_path_enqueue_burst(&p, handles, lens, BURST, now);
		/* A burst (BURST <= LE_CS_BURST) is classified whole before
		 * any of its frames meets `corrupt`: undo its flips for the
		 * next one. */
		bench_udp4_restore();
		while (le_path_dequeue(&p, now, out, BURST) > 0)
			;
	}
	t0 = bench_thread_cpu_s() - t0;
	le_path_drain(&p);
	le_path_free(&p);
	/* Over the frames offered in the timed bursts, not `frames`: the
	 * FRAMES % BURST left over were never offered. */
	return t0 * 1e9 / (double)timed_frames(frames);
}

/* A number word, whole: "6.2x" or "-1000" is not one (strtoull would
 * take "-1000" as 2^64 - 1000 frames). */
static int whole_double(const char *s, double *v)
{
	char *end;

	*v = strtod(s, &end);
	return end != s && *end == '\0';
}

static int whole_u64(const char *s, uint64_t *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return 0;
	*v = strtoull(s, &end, 10);
	return *end == '\0';
}

int main(int argc, char **argv)
{
	double mpps = 6.2;
	uint64_t frames = 4000000, rounds = 5, ports = 1;
	double ns[64];

	if (argc < 2 || argc > 6 || (argc > 2 && !whole_double(argv[2], &mpps)) ||
	    (argc > 3 && !whole_u64(argv[3], &frames)) || (argc > 4 && !whole_u64(argv[4], &rounds)) ||
	    (argc > 5 && !whole_u64(argv[5], &ports)) || !(mpps > 0) || !isfinite(mpps) || frames < 2 * BURST || rounds < 1 ||
	    rounds > 64 || ports < 1 || ports > PORTS_MAX) {
		fprintf(stderr, "usage: model_burst_cost LINK [MPPS [FRAMES [ROUNDS [PORTS]]]]\n"
				"  MPPS > 0 (default 6.2), FRAMES >= %d (default 4000000; whole bursts of %d),\n"
				"  ROUNDS 1..64 (default 5), PORTS 1..%d (default 1)\n",
			2 * BURST, BURST, PORTS_MAX);
		return 2;
	}
	for (uint64_t r = 0; r < rounds; r++)
		if ((ns[r] = round_ns(argv[1], mpps, frames, (unsigned)ports)) < 0)
			return 1;
	bench_median(ns, (size_t)rounds); /* sorts them: ns[0] is the least */
	printf("%s at %.2f Mpps: least %.2f, median %.2f ns of CPU a frame (%d rounds, %llu frames timed each)\n",
	       argv[1], mpps, ns[0], ns[rounds / 2], (int)rounds, (unsigned long long)timed_frames(frames));
	return 0;
}
