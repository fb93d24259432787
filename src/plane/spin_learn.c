/* The learned spin (see spin_learn.h). */
#include "spin_learn.h"

#include <inttypes.h>
#include <string.h>

/* The spin is worked out again every this many observations: a scan of
 * the histogram costs about a microsecond, which a thread that has just
 * woken should spend polling. */
#define RECOMPUTE_EVERY 32u

void dp_spin_init(struct dp_spin_learner *s, le_ns_t initial_ns)
{
	memset(s, 0, sizeof(*s));
	s->spin_ns = initial_ns < DP_SPIN_MAX_NS ? initial_ns : DP_SPIN_MAX_NS;
}

/* The upper edge of the bucket holding the quantile, plus the margin:
 * scanned from the top, where the few late wake-ups are. */
static le_ns_t quantile_spin(const struct dp_spin_learner *s)
{
	/* Observations allowed above the spin: the quantile's complement,
	 * rounded down, so the spin covers at least the quantile. */
	const uint64_t allowed = (uint64_t)s->n * (1000u - DP_SPIN_QUANTILE_PER_MILLE) / 1000u;
	uint64_t above = 0;
	unsigned b = DP_SPIN_BUCKETS;

	while (b > 0) {
		above += s->count[b - 1];
		if (above > allowed)
			break;
		b--;
	}
	/* Bucket b - 1 holds the quantile: its upper edge is b buckets. */
	return (le_ns_t)b * DP_SPIN_BUCKET_NS + DP_SPIN_MARGIN_NS;
}

static void halve(struct dp_spin_learner *s)
{
	s->n = 0;
	for (unsigned b = 0; b < DP_SPIN_BUCKETS; b++) {
		s->count[b] /= 2;
		s->n += s->count[b];
	}
	s->since = 0;
}

void dp_spin_observe(struct dp_spin_learner *s, le_ns_t lateness_ns)
{
	if (lateness_ns >= DP_SPIN_MAX_NS) {
		s->beyond++;
		return;
	}
	s->count[lateness_ns / DP_SPIN_BUCKET_NS]++;
	s->n++;
	s->learned++;
	if (++s->since == DP_SPIN_WINDOW)
		halve(s);
	if (s->learned >= DP_SPIN_WARMUP && s->learned % RECOMPUTE_EVERY == 0)
		s->spin_ns = quantile_spin(s);
}

void dp_spin_report(const struct dp_spin_learner *s, FILE *log, const char *who, unsigned id)
{
	if (s->learned < DP_SPIN_WARMUP)
		fprintf(log, "%s %u: --wait adaptive: spin %.1f us (auto, not learned: %" PRIu64
			" timer wake-ups, %u needed)\n", who, id, (double)s->spin_ns / 1e3, s->learned,
			DP_SPIN_WARMUP);
	else
		fprintf(log, "%s %u: --wait adaptive: spin %.1f us (auto, learned from %" PRIu64
			" timer wake-ups; %" PRIu64 " woke later than %.0f us, not learned from)\n", who, id,
			(double)s->spin_ns / 1e3, s->learned, s->beyond, (double)DP_SPIN_MAX_NS / 1e3);
	fflush(log);
}
