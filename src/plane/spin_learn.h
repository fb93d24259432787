/* The spin before a deadline, learned from the thread's own wake-ups
 * (--spin-us auto, the adaptive waiting mode's default).
 *
 * An adaptive thread sleeps until spin_ns before its next deadline and
 * polls from there, so a frame leaves on time when the sleep ends less
 * than spin_ns late. How late a sleep ends is the machine's: a few us on
 * bare metal with a tickless idle, a median of ~30 us and a p99.9 of
 * 130-330 us on the 2-vCPU VMs this project runs on (a timer, a VM exit,
 * a scheduler wake-up), and it moves with the load. A fixed spin is then
 * either late (50 us: 1-2 % of wake-ups) or wasteful on a quicker host.
 *
 * The learner keeps a histogram of the lateness of the sleeps that ended
 * by their timer (not by a frame), 2 us buckets up to DP_SPIN_MAX_NS,
 * halved every DP_SPIN_WINDOW observations so that it follows the
 * machine (the last ~2 windows weigh most). The spin is the upper edge of
 * the bucket that holds the DP_SPIN_QUANTILE quantile, plus
 * DP_SPIN_MARGIN_NS for the poll pass that follows a wake-up. Wake-ups
 * later than DP_SPIN_MAX_NS are counted apart and not learned from: the
 * CPU was taken from the thread for that long (another task, the
 * hypervisor), and a thread spinning instead would have lost it too.
 * Until DP_SPIN_WARMUP observations it keeps the spin it started with.
 *
 * Pure (no clock, no sleep): the loops feed it (dataplane/wait.c,
 * kernel/kloop.c); tests/unit/test_spin_learn.c drives it in virtual
 * time. */
#ifndef DP_SPIN_LEARN_H
#define DP_SPIN_LEARN_H

#include <stdint.h>
#include <stdio.h>

#include "le_time.h"

#define DP_SPIN_BUCKET_NS 2000u
#define DP_SPIN_BUCKETS 512u /* up to 1.024 ms */
#define DP_SPIN_MAX_NS ((le_ns_t)DP_SPIN_BUCKET_NS * DP_SPIN_BUCKETS)
#define DP_SPIN_MARGIN_NS 5000u
/* One sleep in a thousand may end later than the spin. */
#define DP_SPIN_QUANTILE_PER_MILLE 999u
#define DP_SPIN_WARMUP 256u
#define DP_SPIN_WINDOW 4096u
/* The spin an adaptive thread starts with before it has learned: what a
 * fixed spin needed on the VMs measured (docs/performance.md). */
#define DP_SPIN_INITIAL_NS (200 * LE_NS_PER_US)

struct dp_spin_learner {
	uint32_t count[DP_SPIN_BUCKETS];
	uint32_t n;           /* observations in the histogram (after halvings) */
	uint32_t since;       /* observations since the last halving */
	uint64_t learned;     /* every observation taken into the histogram */
	uint64_t beyond;      /* wake-ups later than DP_SPIN_MAX_NS */
	le_ns_t spin_ns;      /* the spin to use now */
};

void dp_spin_init(struct dp_spin_learner *s, le_ns_t initial_ns);
/* A sleep that ended by its timer, lateness_ns after the time asked. */
void dp_spin_observe(struct dp_spin_learner *s, le_ns_t lateness_ns);
/* One line on `log`: "<who> <id>: --wait adaptive: spin ..." with the
 * spin reached and what it was learned from. */
void dp_spin_report(const struct dp_spin_learner *s, FILE *log, const char *who, unsigned id);

#endif
