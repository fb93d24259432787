/* The cost of a punted class (docs/punt.md) per frame, FIFO against
 * shared memory, with the real channel code (src/plane/punt.c) and the
 * real reference process (punt_echo) in a process of its own: frames of
 * SIZE bytes go out, punt_echo returns them, they come back into the
 * class's (unimpaired) link and are dequeued. The baseline, measured in
 * the same run, is the same loop with the class not punted (the model
 * alone), so the figures are the IPC's cost, not the machine's.
 *
 *   punt_cost PUNT_ECHO [FRAMES [SIZE [WINDOW]]]
 *
 * WINDOW: frames out at once at most (below the pipe's and the ring's
 * room, so nothing is punt_full). Prints ns per frame and frames per
 * second for each, and the ratios. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "path.h"
#include "punt.h"
#include "swap.h"

struct bframe {
	uint32_t len;
	uint8_t b[2048];
};

static struct bframe *pool_free[4096];
static unsigned npool;

static void *b_make(void *ctx, const uint8_t *bytes, uint32_t len)
{
	struct bframe *f = npool ? pool_free[--npool] : malloc(sizeof(*f));
	(void)ctx;
	f->len = len;
	memcpy(f->b, bytes, len);
	return f;
}

static void b_free(void *ctx, void *h)
{
	(void)ctx;
	if (npool < 4096)
		pool_free[npool++] = h;
	else
		free(h);
}

static uint8_t *b_bytes(void *ctx, void *h, uint32_t *n)
{
	(void)ctx;
	*n = ((struct bframe *)h)->len;
	return ((struct bframe *)h)->b;
}

static le_ns_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (le_ns_t)ts.tv_sec * 1000000000ull + (le_ns_t)ts.tv_nsec;
}

/* ns per frame through the class (punted with `punt`, or not: ""). */
static double run(const char *echo, const char *punt, const char *spin_us, unsigned frames, unsigned size,
		  unsigned window)
{
	struct le_path_config cfg[LE_DIRS];
	struct le_frame_ops ops = {.free = b_free, .bytes = b_bytes};
	struct dp_punt_set *set = NULL;
	struct le_path *path = malloc(sizeof(*path));
	struct le_swap swap;
	struct le_frame out[256];
	char text[256], err[LE_ERR_MAX] = "";
	uint8_t proto[2048];
	pid_t pid = 0;
	unsigned offered = 0, done = 0;
	le_ns_t t0, t1;

	snprintf(text, sizeof(text), "; class c match ether arp :%s%s", punt[0] ? " punt " : "", punt);
	if (le_path_config_parse(text, &cfg[0], err, sizeof(err)) < 0 ||
	    le_path_config_parse("", &cfg[1], err, sizeof(err)) < 0 ||
	    dp_punt_open(&set, cfg, &ops, b_make, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "punt_cost: %s\n", err);
		exit(1);
	}
	dp_punt_bind(set, &ops);
	if (le_path_init(path, &cfg[0], LE_DIR_A2B, 1, &ops, err, sizeof(err)) < 0) {
		fprintf(stderr, "punt_cost: %s\n", err);
		exit(1);
	}
	le_swap_init(&swap, path);
	memset(proto, 0xab, sizeof(proto));
	proto[12] = 0x08;
	proto[13] = 0x06;
	if (punt[0]) {
		char arg[128];
		snprintf(arg, sizeof(arg), "%s", strchr(punt, ' ') + 1);
		pid = fork();
		if (pid == 0) {
			execl(echo, echo, strncmp(punt, "fifo", 4) == 0 ? "--fifo" : "--shm", arg, "--wait", "10",
			      "--spin-us", spin_us, (char *)NULL);
			perror("punt_cost: exec punt_echo");
			_exit(127);
		}
		/* until it is attached (the channel checks every 10 ms) */
		struct dp_punt_status st;
		le_ns_t give_up = now_ns() + 10 * LE_NS_PER_S;
		do {
			usleep(1000);
			dp_punt_poll(set, LE_DIR_A2B, &swap, now_ns());
			dp_punt_status(set, LE_DIR_A2B, &st);
		} while (!st.up && now_ns() < give_up);
		if (!st.up) {
			fprintf(stderr, "punt_cost: punt_echo did not attach\n");
			exit(1);
		}
	}
	t0 = now_ns();
	while (done < frames) {
		le_ns_t now = now_ns();
		unsigned k;

		while (offered < frames && offered - done < window && (offered & 31) != 31) {
			le_swap_offer(&swap, b_make(NULL, proto, size), size, now);
			offered++;
		}
		if (offered < frames && offered - done < window) {
			le_swap_offer(&swap, b_make(NULL, proto, size), size, now);
			offered++;
		}
		if (set)
			dp_punt_poll(set, LE_DIR_A2B, &swap, now);
		while ((k = le_swap_dequeue(&swap, now, out, 256)) > 0)
			for (unsigned i = 0; i < k; i++, done++)
				b_free(NULL, out[i].handle);
	}
	t1 = now_ns();
	if (set) {
		struct dp_punt_status st;
		dp_punt_status(set, LE_DIR_A2B, &st);
		if (st.full || st.down || st.dropped)
			fprintf(stderr, "punt_cost: %s: full %llu down %llu dropped %llu (lower WINDOW)\n", punt,
				(unsigned long long)st.full, (unsigned long long)st.down, (unsigned long long)st.dropped);
	}
	le_path_free(path);
	free(path);
	dp_punt_close(set); /* punt_echo sees the end and exits */
	if (pid > 0) {
		int status;
		le_ns_t give_up = now_ns() + 2 * LE_NS_PER_S;
		while (waitpid(pid, &status, WNOHANG) == 0 && now_ns() < give_up)
			usleep(1000);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	return (double)(t1 - t0) / frames;
}

int main(int argc, char **argv)
{
	const char *echo = argc > 1 ? argv[1] : "build/src/tools/punt_echo";
	unsigned frames = argc > 2 ? (unsigned)atoi(argv[2]) : 200000;
	unsigned size = argc > 3 ? (unsigned)atoi(argv[3]) : 64;
	unsigned window = argc > 4 ? (unsigned)atoi(argv[4]) : 512;
	char fifo[64], shm[64];

	if (access(echo, X_OK) < 0) {
		fprintf(stderr, "usage: punt_cost PUNT_ECHO [FRAMES [SIZE [WINDOW]]] (%s is not executable)\n", echo);
		return 2;
	}
	if (size < 14 || size > 2048 || window == 0 || window > 1000 || frames == 0) {
		fprintf(stderr, "punt_cost: SIZE 14..2048, WINDOW 1..1000, FRAMES > 0\n");
		return 2;
	}
	snprintf(fifo, sizeof(fifo), "fifo /tmp/punt-cost-%d", (int)getpid());
	snprintf(shm, sizeof(shm), "shm punt-cost-%d", (int)getpid());
	double base = run(echo, "", "0", frames, size, window);
	double f = run(echo, fifo, "0", frames, size, window);
	double s = run(echo, shm, "0", frames, size, window);
	double ss = run(echo, shm, "20", frames, size, window);
	printf("punt_cost: %u frames of %u B, up to %u out at once; 2 processes on %ld CPUs\n", frames, size, window,
	       sysconf(_SC_NPROCESSORS_ONLN));
	printf("  not punted (baseline)  %8.0f ns/frame  %6.2f Mframes/s\n", base, 1e3 / base);
	printf("  punt fifo              %8.0f ns/frame  %6.2f Mframes/s  (%.1fx the baseline)\n", f, 1e3 / f, f / base);
	printf("  punt shm               %8.0f ns/frame  %6.2f Mframes/s  (%.1fx the baseline)\n", s, 1e3 / s, s / base);
	printf("  punt shm, spin 20 us   %8.0f ns/frame  %6.2f Mframes/s  (%.1fx the baseline)\n", ss, 1e3 / ss,
	       ss / base);
	printf("  shm is %.2fx as fast as fifo (%.2fx with the process spinning 20 us before it sleeps)\n", f / s,
	       f / ss);
	return 0;
}
