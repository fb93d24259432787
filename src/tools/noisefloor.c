/* noisefloor: the machine's own scheduling noise on one CPU.
 *
 * A busy loop pinned to --cpu reads CLOCK_MONOTONIC as fast as it can and
 * histograms the gaps between consecutive reads. On a quiet CPU every gap is
 * the cost of one clock read (tens of ns); anything longer is time the loop
 * did not run: an interrupt, a softirq, another task, the hypervisor taking
 * the vCPU away. A polling data plane on that CPU loses the same time, so
 * these gaps bound from below what any emulator can promise there.
 *
 *   noisefloor --cpu 1 --seconds 3          (prints one JSON object)
 *
 * Output: p50/p90/p99/p99.9/p99.99/max of the gaps, counts of gaps over
 * 10 us / 100 us / 1 ms, the total time lost in gaps over 10 us, and the
 * non-empty histogram buckets ([low_ns, high_ns, count]) for plots. Quantiles
 * are upper bucket edges of the shared log-linear histogram (src/core/hist.h,
 * the daemon's own), so they compare directly with its emulation error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hist.h"

#define PROG "noisefloor"

static void usage(FILE *f)
{
	fprintf(f, "usage: " PROG " --cpu N [--seconds S] [--no-histogram]\n"
		   "  Busy-reads CLOCK_MONOTONIC on CPU N for S seconds (default 3, 0.1 .. 3600)\n"
		   "  and prints the gap histogram between consecutive reads as JSON.\n");
}

static int bad(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, PROG ": ");
	fprintf(stderr, fmt, a, b);
	fprintf(stderr, "\n");
	usage(stderr);
	return 2;
}

static inline uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int parse_double(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end)
		return -1;
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	long cpu = -1;
	double seconds = 3.0;
	int histogram = 1;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--no-histogram")) {
			histogram = 0;
		} else if (!strcmp(a, "--cpu") || !strcmp(a, "--seconds")) {
			if (i + 1 >= argc)
				return bad("%s needs a value%s", a, "");
			const char *v = argv[++i];
			if (!strcmp(a, "--cpu")) {
				char *end;
				errno = 0;
				cpu = strtol(v, &end, 10);
				if (errno || end == v || *end || cpu < 0 || cpu >= CPU_SETSIZE)
					return bad("--cpu '%s' is not a CPU number%s", v, "");
			} else if (parse_double(v, &seconds) || !(seconds >= 0.1 && seconds <= 3600))
				return bad("--seconds '%s' is out of range (0.1 .. 3600)%s", v, "");
		} else {
			return bad("unknown argument '%s'%s", a, "");
		}
	}
	if (cpu < 0)
		return bad("--cpu is required%s%s", "", "");

	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET((int)cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, PROG ": cannot pin to CPU %ld: %s\n", cpu, strerror(errno));
		return 1;
	}

	static struct le_hist h;
	le_hist_init(&h);
	uint64_t over_10us = 0, over_100us = 0, over_1ms = 0, lost_ns = 0;
	/* Touch the histogram and warm the clock before timing. */
	for (int i = 0; i < 1000; i++)
		(void)now_ns();
	const uint64_t start = now_ns();
	const uint64_t end = start + (uint64_t)(seconds * 1e9);
	uint64_t prev = start, t = start;
	while (t < end) {
		t = now_ns();
		uint64_t gap = t - prev;
		prev = t;
		le_hist_record(&h, gap);
		if (gap > 10000) {
			over_10us++;
			lost_ns += gap;
			if (gap > 100000) {
				over_100us++;
				if (gap > 1000000)
					over_1ms++;
			}
		}
	}
	const double elapsed = (double)(t - start) / 1e9;
	int ran_on = sched_getcpu();

	printf("{\"tool\": \"noisefloor\", \"clock\": \"CLOCK_MONOTONIC\", \"cpu\": %ld, \"ran_on_cpu\": %d, "
	       "\"seconds\": %.6f, \"reads\": %" PRIu64 ", \"reads_per_s\": %.0f,\n",
	       cpu, ran_on, elapsed, h.count, (double)h.count / elapsed);
	printf(" \"gap_ns\": {\"min\": %" PRIu64 ", \"mean\": %.2f, \"p50\": %" PRIu64 ", \"p90\": %" PRIu64
	       ", \"p99\": %" PRIu64 ", \"p999\": %" PRIu64 ", \"p9999\": %" PRIu64 ", \"max\": %" PRIu64 "},\n",
	       h.min, le_hist_mean(&h), le_hist_quantile(&h, 0.5), le_hist_quantile(&h, 0.9),
	       le_hist_quantile(&h, 0.99), le_hist_quantile(&h, 0.999), le_hist_quantile(&h, 0.9999), h.max);
	printf(" \"gaps_over\": {\"10us\": %" PRIu64 ", \"100us\": %" PRIu64 ", \"1ms\": %" PRIu64 "},\n",
	       over_10us, over_100us, over_1ms);
	printf(" \"lost_in_gaps_over_10us_ns\": %" PRIu64 ", \"lost_fraction\": %.3g", lost_ns,
	       (double)lost_ns / ((double)(t - start)));
	if (histogram) {
		printf(",\n \"histogram\": [");
		int first = 1;
		for (unsigned i = 0; i < LE_HIST_BUCKETS; i++) {
			if (!h.bucket[i])
				continue;
			printf("%s[%" PRIu64 ", %" PRIu64 ", %" PRIu64 "]", first ? "" : ", ", le_hist_bucket_low(i),
			       le_hist_bucket_high(i), h.bucket[i]);
			first = 0;
		}
		printf("]");
	}
	printf("}\n");
	return 0;
}
