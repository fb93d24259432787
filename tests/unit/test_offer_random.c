/* Bursts and single frames agree on links drawn at random from the whole
 * grammar. test_offer_burst.c holds twins of chosen links to the same
 * frames and counters; the burst paths (the plain loop, the chances as
 * gaps, quiet frames passed without fate(), blocks queued behind a busy
 * serializer and served to the line at once) decide between themselves
 * from the link's words, and a combination nobody chose can take a path
 * with a defect the chosen ones miss. So: a few hundred links from a
 * fixed seed, each word present or not, its values from small and
 * large ranges (rare and frequent chances, limits met and not, a rate
 * that is or is not the bottleneck), each run through the twin schedule
 * of twin_links.h at one of three time scales. A failure names the link's
 * text, which reproduces it alone (`twin_link_run`).
 *
 * Then paths: four random paths (half with a UDP class), the last three
 * staged in turn as live changes into a running swap, often while the
 * ones before still hold frames; offered frame by frame and by bursts
 * (le_swap_offer / le_swap_offer_burst), dequeued as le_frames or split
 * (le_swap_dequeue / le_swap_dequeue_split). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fake.h"
#include "minitest.h"
#include "twin_links.h"
#include "twin_paths.h"

static const char *traces_dir = "traces";

struct words {
	char s[512];
	size_t n;
};

static void put(struct words *w, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (w->n > 0 && w->n < sizeof(w->s) - 1)
		w->s[w->n++] = ' ';
	va_start(ap, fmt);
	k = vsnprintf(w->s + w->n, sizeof(w->s) - w->n, fmt, ap);
	va_end(ap);
	if (k > 0)
		w->n += (size_t)k < sizeof(w->s) - w->n ? (size_t)k : sizeof(w->s) - w->n - 1;
}

static int one_in(struct le_rng *r, unsigned n)
{
	return le_rng_below(r, n) == 0;
}

/* A chance: rare (what the gaps and quiet frames serve) or frequent. */
static void put_pct(struct words *w, struct le_rng *r)
{
	if (one_in(r, 2))
		put(w, "%u.%u%%", (unsigned)le_rng_below(r, 5), 1 + (unsigned)le_rng_below(r, 9));
	else
		put(w, "%u%%", 5 + (unsigned)le_rng_below(r, 60));
}

static void put_chance(struct words *w, struct le_rng *r, const char *word)
{
	put(w, "%s", word);
	put_pct(w, r);
	if (one_in(r, 4))
		put(w, "%u%%", 1 + (unsigned)le_rng_below(r, 90)); /* correlation */
}

/* One link's text; `queue` words only with a serializer, as the
 * grammar asks. */
static void random_link(struct le_rng *r, struct words *w)
{
	static const char *const dists[] = { "uniform", "normal", "pareto", "paretonormal" };
	unsigned delay_us = one_in(r, 5) ? 0 : (unsigned)le_rng_below(r, 3) == 0 ? 1 + (unsigned)le_rng_below(r, 20)
										     : 20 + (unsigned)le_rng_below(r, 2000);
	int jitter = delay_us > 0 && one_in(r, 3), serializer = 0;

	w->n = 0;
	w->s[0] = '\0';
	put(w, "delay %uus", delay_us);
	if (jitter) {
		put(w, "%uus", 1 + (unsigned)le_rng_below(r, delay_us + 50));
		if (one_in(r, 5))
			put(w, "%u%%", 1 + (unsigned)le_rng_below(r, 90));
		if (one_in(r, 3))
			put(w, "distribution %s", dists[le_rng_below(r, 4)]);
	}
	if (delay_us > 0 && one_in(r, 5)) {
		put_chance(w, r, "reorder");
		if (one_in(r, 3))
			put(w, "gap %u", 1 + (unsigned)le_rng_below(r, 6));
	} else if (jitter && one_in(r, 4)) {
		put(w, "noreorder");
	}
	switch (le_rng_below(r, 6)) {
	case 0:
		put_chance(w, r, "loss");
		break;
	case 1:
		put(w, "loss gemodel");
		for (unsigned k = 0, n = 1 + (unsigned)le_rng_below(r, 4); k < n; k++)
			put_pct(w, r);
		break;
	case 2:
		put(w, "loss state %u%% %u%% %u%% %u%% %u%%", 1 + (unsigned)le_rng_below(r, 20),
		    5 + (unsigned)le_rng_below(r, 60), (unsigned)le_rng_below(r, 30), 20 + (unsigned)le_rng_below(r, 80),
		    (unsigned)le_rng_below(r, 5));
		break;
	default:
		break;
	}
	if (strstr(w->s, "loss") != NULL && one_in(r, 3))
		put(w, "ecn");
	if (one_in(r, 4))
		put_chance(w, r, "duplicate");
	if (one_in(r, 4))
		put_chance(w, r, "corrupt");
	switch (le_rng_below(r, 8)) {
	case 0:
	case 1:
	case 2: /* from a bottleneck to a rate no burst meets */
		serializer = 1;
		put(w, "rate %umbit", 1 + (unsigned)le_rng_below(r, 3) * 300 + (unsigned)le_rng_below(r, 200));
		if (one_in(r, 4))
			put(w, "%d", (int)le_rng_below(r, 60) - 20);
		if (one_in(r, 4))
			put(w, "slot %uus %uus packets %u", 5 + (unsigned)le_rng_below(r, 20),
			    30 + (unsigned)le_rng_below(r, 50), 1 + (unsigned)le_rng_below(r, 8));
		break;
	case 3:
		serializer = 1;
		put(w, "slot %uus %uus", 1 + (unsigned)le_rng_below(r, 30), 40 + (unsigned)le_rng_below(r, 100));
		if (one_in(r, 2))
			put(w, "bytes %u", 1500 + (unsigned)le_rng_below(r, 6000));
		break;
	case 4:
		serializer = 1;
		put(w, "trace %s/pantheon_12mbps.trace", traces_dir);
		break;
	default:
		break;
	}
	/* limits from a few frames to more than ever arrive */
	put(w, "limit %u", one_in(r, 3) ? 1 + (unsigned)le_rng_below(r, 10)
			   : one_in(r, 2) ? 10 + (unsigned)le_rng_below(r, 200)
					  : 1000 + (unsigned)le_rng_below(r, 100000));
	if (serializer) {
		if (one_in(r, 3))
			put(w, "limit-queue %u", 1 + (unsigned)le_rng_below(r, 60));
		if (one_in(r, 4))
			put(w, "limit-bytes %u", 100 + (unsigned)le_rng_below(r, 30000));
		if (one_in(r, 3))
			put(w, "drop-head");
		if (one_in(r, 4))
			put(w, "codel target %uus interval %uus%s", 20 + (unsigned)le_rng_below(r, 500),
			    1000 + (unsigned)le_rng_below(r, 5000), one_in(r, 2) ? " ecn" : "");
	}
}

static void random_links_agree(void)
{
	static const uint64_t gaps[] = { 2000, 20000, 300000 };
	struct le_rng r;
	unsigned plain = 0, chances = 0, failed = 0;
	uint64_t tx = 0, drops = 0, late = 0;

	le_rng_seed(&r, 20261129, 0, 0);
	for (unsigned c = 0; c < 400 && failed < 5; c++) {
		struct words w;
		struct twin_link_seen seen;
		uint64_t seed = le_rng_u64(&r), gap = gaps[le_rng_below(&r, 3)];
		unsigned ip_run = (unsigned)le_rng_below(&r, 4);

		random_link(&r, &w);
		if (twin_link_run(w.s, seed, 1500, gap, 1455, ip_run, &seen) != 0) {
			failed++;
			continue;
		}
		plain += seen.plain > 0;
		chances += seen.chances > 0;
		tx += seen.tx;
		late += seen.ctr.event[LE_EVENT_LATE_ARRIVAL];
		for (unsigned d = 0; d < LE_DROP_CAUSES; d++)
			drops += seen.ctr.drop[d];
	}
	printf("random links: %u plain, %u chances, tx %llu drops %llu late %llu\n", plain, chances, (unsigned long long)tx, (unsigned long long)drops, (unsigned long long)late);
	/* The draw reached the burst loops and the cases they treat apart. */
	CHECK(plain > 10, "%u links took the plain loop", plain);
	CHECK(chances > 10, "%u links took the chances", chances);
	CHECK(tx > 100000 && drops > 10000 && late > 1000, "tx %llu drops %llu late %llu", (unsigned long long)tx,
	      (unsigned long long)drops, (unsigned long long)late);
}

/* One link's text, and sometimes a class of its own (UDP) with another. */
static void random_path(struct le_rng *r, struct words *w)
{
	struct words cls;

	random_link(r, w);
	if (!one_in(r, 2))
		return;
	random_link(r, &cls);
	put(w, "; class u match proto udp : %s", cls.s);
}

/* le_swap_dequeue_split, the data plane's take, into le_frames: the
 * fields it does not hand out (arrival, class) copied from the
 * reference's frames `ref`, so only handle, length and deadline can
 * differ. */
static unsigned dequeue_split(struct le_swap *s, le_ns_t now, const struct le_frame *ref, struct le_frame *out,
			      unsigned max)
{
	void *handle[40];
	uint32_t len[40];
	le_ns_t deadline[40];
	const struct le_frame_split split = { handle, len, deadline };
	unsigned n = le_swap_dequeue_split(s, now, &split, max);

	for (unsigned i = 0; i < n; i++) {
		out[i] = ref[i];
		out[i].handle = handle[i];
		out[i].len = len[i];
		out[i].deadline = deadline[i];
	}
	return n;
}

/* Live changes between random paths: one twin takes bursts frame by
 * frame and dequeues le_frames (the reference); the other takes them as
 * bursts and dequeues either way (half the time split, as the data
 * plane does); the reference takes one frame a call, so a merge of due
 * classes or paths that hands out several at once is held to the order
 * of taking the first frame of all each time. Each run stages up to
 * CHANGES changes at random steps,
 * often while the paths before still hold frames (a chain of retiring
 * paths); a change refused (one already staged) must be refused by
 * both, and is tried again later. */
enum { CHANGES = 3 };

struct random_swaps {
	struct fakes fa, fb;
	struct le_path *pa[CHANGES + 1], *pb[CHANGES + 1];
	unsigned npaths;
	struct le_swap sa, sb;
	struct words text[CHANGES + 1];
};

static int random_swaps_init(struct random_swaps *w, struct le_rng *r)
{
	w->npaths = 0;
	fk_init(&w->fa, 1);
	fk_init(&w->fb, 1);
	for (unsigned k = 0; k <= CHANGES; k++) {
		random_path(r, &w->text[k]);
		if (twin_paths_init(w->text[k].s, &w->fa, &w->fb, &w->pa[k], &w->pb[k]) < 0)
			break;
		w->npaths++;
	}
	if (w->npaths > 0) {
		le_swap_init(&w->sa, w->pa[0]);
		le_swap_init(&w->sb, w->pb[0]);
	}
	return w->npaths == CHANGES + 1 ? 0 : -1;
}

/* Drained to the end: nothing left, the same frames freed, no frame
 * both sent and freed or left live; then everything released. */
static void random_swaps_fini(struct random_swaps *w, int check)
{
	struct le_frame oa[64], ob[64];
	unsigned na, nb;

	if (w->npaths > 0)
		do {
			na = le_swap_dequeue(&w->sa, UINT64_MAX - 1, oa, 64);
			nb = le_swap_dequeue(&w->sb, UINT64_MAX - 1, ob, 64);
			if (check && (fk_sent(&w->fa, oa, na) + fk_sent(&w->fb, ob, nb) != 0 || na != nb)) {
				CHECK(0, "'%s': the drain differs or sent a frame that was not live", w->text[0].s);
				check = 0;
			}
		} while (na + nb > 0);
	if (check) {
		CHECK_EQ_U64(le_path_depth(w->sb.active), 0);
		CHECK_EQ_U64(w->fb.freed, w->fa.freed);
		CHECK_EQ_U64(w->fb.double_free + w->fb.bad_handle, 0);
		for (uint32_t i = 0; i < w->fb.n; i++)
			if (w->fb.state[i] == FK_LIVE) {
				CHECK(0, "'%s': frame %u neither sent nor freed", w->text[0].s, i);
				break;
			}
	}
	for (unsigned k = 0; k < w->npaths; k++)
		twin_paths_free(w->pa[k], w->pb[k]);
	fk_fini(&w->fa);
	fk_fini(&w->fb);
}

static void random_swaps_agree(void)
{
	struct le_rng r;
	unsigned swaps = 0, chained = 0;

	le_rng_seed(&r, 2026112901, 0, 0);
	for (unsigned c = 0; c < 60; c++) {
		struct random_swaps w;
		le_ns_t clock = 1000;
		uint64_t gap = one_in(&r, 2) ? 20000 : 200000;
		unsigned next = 1, stage_at = 100 + (unsigned)le_rng_below(&r, 600);
		int ok = 1;

		if (random_swaps_init(&w, &r) < 0) {
			random_swaps_fini(&w, 0);
			continue;
		}
		for (unsigned step = 0; step < 2000 && ok; step++) {
			static const uint8_t protos[3] = { 17, 6, 17 };
			struct le_frame oa[40], ob[40];
			le_ns_t t;

			clock += le_rng_below(&r, gap);
			t = clock;
			if (next <= CHANGES && step >= stage_at) {
				le_ns_t when = clock + le_rng_below(&r, 100000);
				int ra = le_swap_stage(&w.sa, w.pa[next], when);

				if (le_swap_stage(&w.sb, w.pb[next], when) != ra) {
					CHECK(0, "'%s': change %u staged in one twin only", w.text[0].s, next);
					ok = 0;
				}
				chained += ra == 0 && w.sb.nretiring > 0;
				next += ra == 0;
				stage_at = step + 1 + (unsigned)le_rng_below(&r, 400);
			}
			if (le_rng_below(&r, 3)) {
				if (!(ok = twin_offer_burst_split(&w.fa, &w.fb, &w.sa, &w.sb, &r, t, protos, 1455)))
					break;
			} else {
				unsigned max = 1 + (unsigned)le_rng_below(&r, 40), na = 0, nb;

				/* the reference a frame a call: the merge of
				 * classes and paths then takes the one first
				 * frame of all, which a bulk call must repeat */
				while (na < max && le_swap_dequeue(&w.sa, t, &oa[na], 1) == 1)
					na++;

				nb = one_in(&r, 2) ? dequeue_split(&w.sb, t, oa, ob, max)
						   : le_swap_dequeue(&w.sb, t, ob, max);
				if (na != nb || !twin_same_frames(oa, ob, na, w.text[0].s)) {
					CHECK(0, "'%s': dequeue of step %u: %u frames against %u", w.text[0].s, step,
					      nb, na);
					ok = 0;
					break;
				}
				if (fk_sent(&w.fa, oa, na) + fk_sent(&w.fb, ob, nb) != 0) {
					CHECK(0, "'%s': step %u sent a frame that was not live", w.text[0].s, step);
					ok = 0;
				}
			}
			struct le_counters ca, cb;
			le_path_counters(w.sa.active, &ca);
			le_path_counters(w.sb.active, &cb);
			if (memcmp(&ca, &cb, sizeof(ca)) != 0 || w.sa.swaps != w.sb.swaps ||
			    w.sa.nretiring != w.sb.nretiring || le_path_depth(w.sa.active) != le_path_depth(w.sb.active)) {
				CHECK(0, "'%s': the twins differ after step %u", w.text[0].s, step);
				ok = 0;
			}
		}
		swaps += w.sb.swaps;
		random_swaps_fini(&w, ok);
	}
	/* Most changes applied; some while paths before still held frames. */
	printf("random changes: %u applied, %u staged behind a retiring path\n", swaps, chained);
	CHECK(swaps > 120 && chained > 10, "%u changes applied, %u chained", swaps, chained);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		traces_dir = argv[1];
	random_links_agree();
	random_swaps_agree();
	return mt_summary();
}
