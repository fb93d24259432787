/* Gaps between a task's polls: the time its deadlines went unchecked.
 *
 * A frame falls due at some moment and leaves at the start of the next
 * poll of the task that holds it, so the gaps between polls bound what a
 * forwarder could do on this CPU: a deadline that falls inside a gap of
 * length g waits up to g, whatever the model costs. The gaps are the
 * loop's own work (the other direction's poll, a burst's processing) and
 * the time the lcore did not run at all (another thread on its CPU, an
 * interrupt). Measured in the loop itself, during the run, so a report
 * can set the emulation error beside what the machine allowed in the same
 * seconds (docs/performance.md, "The 4 ms stalls").
 *
 * From the gaps comes the lateness of a deadline that falls at a uniformly
 * random moment: P(late > x) = sum over gaps of (g - x)+ / observed time.
 * At a paced rate deadlines do fall uniformly; its quantiles are then the
 * emulation error a forwarder that took no time would show. */
#ifndef DP_POLL_GAPS_H
#define DP_POLL_GAPS_H

#include <stdint.h>

#include "hist.h"
#include "le_time.h"

/* Gaps below this are the loop idling: counted in the observed time only. */
#define DP_POLL_GAP_MIN_NS 1000
/* Gaps shorter than DP_POLL_GAP_FINE x 1024 ns (the loop's own work, most
 * of them under load) are counted in 1024 ns steps with one increment;
 * a histogram record per poll cost 2-3 % of the unimpaired row. Longer
 * ones go to the histogram, within 0.8 %. */
#define DP_POLL_GAP_FINE 64

struct dp_poll_gaps {
	le_ns_t last;          /* start of the previous poll; 0 before the first */
	uint64_t observed_ns;  /* every gap added up: the time measured */
	uint64_t fine[DP_POLL_GAP_FINE]; /* [k]: gaps in [k, k + 1) x 1024 ns, from DP_POLL_GAP_MIN_NS */
	struct le_hist hist;   /* the longer gaps */
};

void dp_poll_gaps_init(struct dp_poll_gaps *g);

/* At the start of each poll, with the time the poll reads anyway. */
static inline void dp_poll_gaps_note(struct dp_poll_gaps *g, le_ns_t now)
{
	if (__builtin_expect(g->last != 0 && now > g->last, 1)) {
		le_ns_t gap = now - g->last;
		g->observed_ns += gap;
		if (gap >= DP_POLL_GAP_MIN_NS) {
			if (__builtin_expect(gap < DP_POLL_GAP_FINE * 1024, 1))
				g->fine[gap >> 10]++;
			else
				le_hist_record(&g->hist, gap);
		}
	}
	g->last = now;
}

/* For reports: all of g's gaps of DP_POLL_GAP_MIN_NS or more into h
 * (each short one at the middle of its step), and the time they cover
 * into *observed_ns. */
void dp_poll_gaps_merge(struct le_hist *h, uint64_t *observed_ns, const struct dp_poll_gaps *g);

/* After a nap the lcore chose (--wait adaptive), before the next poll:
 * the nap ended ahead of the next deadline by design, so it is neither a
 * gap nor time measured. */
static inline void dp_poll_gaps_resume(struct dp_poll_gaps *g, le_ns_t now)
{
	g->last = now;
}

/* The lateness at quantile q (e.g. 0.99) of a deadline falling at a
 * uniformly random moment of `observed_ns`, given these gaps: the x with
 * sum (g - x)+ = (1 - q) * observed_ns, each gap taken at its bucket's
 * middle (within 0.4 %; within 512 ns for gaps under 64 us). 0 when the
 * gaps cover less than 1 - q of the time. */
uint64_t dp_poll_gaps_lateness(const struct le_hist *gaps, uint64_t observed_ns, double q);

#endif
