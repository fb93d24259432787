#include "final.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

int dp_final_reports(struct dp_state *st, const struct dp_options *o, const char *prog)
{
	struct dp_report *r = calloc(1, sizeof(*r));
	if (!r)
		return -1;
	if (dp_state_report(st, r, 0)) {
		free(r);
		return -1;
	}
	int rc = 0;
	if (o->json)
		dp_report_print_json(stdout, r);
	else
		dp_report_print_human(stdout, r);
	fflush(stdout);
	if (o->stats_file) {
		FILE *f = fopen(o->stats_file, "w");
		int failed = f == NULL;
		if (f) {
			dp_report_print_json(f, r);
			/* A full disk shows only here, not at fopen. ferror
			 * first: f is gone once fclose returns. */
			failed = ferror(f);
			failed |= fclose(f) != 0;
		}
		if (failed) {
			fprintf(stderr, "%s: cannot write %s: %s\n", prog, o->stats_file, strerror(errno));
			rc = -1;
		}
	}
	for (int d = 0; d < LE_DIRS; d++)
		if (!dp_report_conserved(&r->dir[d])) {
			fprintf(stderr, "%s: BUG: %s does not conserve frames\n", prog, le_direction_name(d));
			rc = -1;
		}
	free(r);
	return rc;
}

uint64_t dp_random_seed(void)
{
	uint64_t s = 0;
	if (getrandom(&s, sizeof(s), 0) != (ssize_t)sizeof(s)) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		s = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid();
	}
	return s;
}

static volatile int *g_stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	*g_stop_flag = 1;
}

void dp_stop_on_signals(volatile int *stop)
{
	struct sigaction sa = {0};
	g_stop_flag = stop;
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}
