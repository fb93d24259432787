/* Offering frames a burst at a time (le_link_offer_burst,
 * le_path_enqueue_burst, le_swap_offer_burst) is exactly offering them one
 * by one: two twins get the same random schedule (bursts of one arrival,
 * some late, dequeues at random times and sizes), one frame by frame and
 * one by bursts, and must agree after every step on the frames that leave
 * (handle, length, arrival, deadline, class), every counter, the frames
 * held and the delay line's due mark. Plain links take the burst loop;
 * the others (and paths with classes) must fall back to the frame loop. */
#include <string.h>

#include "fake.h"
#include "link.h"
#include "minitest.h"
#include "path.h"
#include "rng.h"
#include "swap.h"
#include "twin_links.h"
#include "twin_paths.h"

/* Plain (the burst loop) and not plain (the frame loop behind it). */
static const char *const links[] = {
	"delay 0",
	"delay 1ms",
	"delay 1ms limit 5",
	"delay 0 limit 3",
	"delay 10us limit 2",
	"delay 5us limit 40",
	"delay 1ms 100us limit 50",
	/* Reordering jitter alone, whole bursts pushed at once
	 * (offer_jittered): room for every burst, and a zero delay drawn
	 * often (the jitter exceeds the delay), so frames due at once. */
	"delay 1ms 100us limit 100000",
	"delay 10us 20us limit 400",
	"delay 200us loss 10% limit 60",
	"delay 1ms reorder 25% limit 30",
	/* `reorder` alone, or with jitter, whole bursts pushed at once
	 * (offer_reordered): room for every burst, frames `reorder` sends at
	 * once in most bursts, a gap, correlation. */
	"delay 1ms reorder 10% limit 100000",
	"delay 300us 100us reorder 20% 50% gap 3 limit 100000",
	"rate 100mbit limit 10",
	"delay 50us duplicate 5% corrupt 5% limit 20",
	/* Frame by frame without an advance before each (offer_framewise):
	 * serializers, a queue limit with drop-head, CoDel, slots, frames due
	 * at once with no serializer, all stages. */
	"delay 1ms rate 50mbit 20 limit 30 drop-head",
	"rate 20mbit limit-bytes 6000 codel target 100us interval 1ms",
	"delay 20us slot 20us 40us packets 3 limit 30",
	"delay 3us reorder 50% loss 5% limit 20",
	"delay 0 duplicate 20% limit 8",
	("delay 300us 200us loss gemodel 5% 20% duplicate 10% corrupt 5% reorder 20% gap 2 "
	 "rate 300mbit limit 25"),
	/* A late frame that `reorder` sends at once behind a rate is due
	 * on arrival; the tight limit counts it only if it is marked so. */
	"delay 5us rate 1gbit reorder 50% limit 6",
	/* A fixed delay behind per-frame chances (offer_chances): the limit
	 * met with copies in flight, correlated chances, loss models, ecn
	 * (these frames are not IP: the mark fails and the loss stands),
	 * late bursts that go frame by frame. */
	"delay 2us loss 20% duplicate 30% corrupt 10% limit 5",
	"delay 1ms loss 10% 25% duplicate 20% 10% corrupt 20% 50% limit 9",
	"delay 30us loss gemodel 10% 30% ecn duplicate 50% limit 4",
	"delay 500us loss state 5% 10% 20% 1% duplicate 5% limit 70",
	/* Rare chances only, every gemodel chance among them: a burst
	 * passes the frames no chance touches without their trials
	 * (pass_quietly), frame by frame each takes its trials. */
	"delay 1ms loss gemodel 4% 30% 15% 5% duplicate 3% corrupt 4% limit 60",
	"delay 100us 50us loss gemodel 3% 20% 10% 2% duplicate 3% corrupt 4% reorder 5% rate 200mbit limit 40",
	"delay 2ms loss 2% ecn duplicate 1% limit 80",
	/* Frames queued behind a busy rate serializer a block at a time
	 * (queue_quietly) up to each limit: limit-queue; the delay line's
	 * capacity, met when due frames pile up faster than the dequeues
	 * take them (delay 0, a high limit). */
	"delay 100us rate 200mbit limit 300 limit-queue 12",
	"rate 10gbit limit 5000",
	/* Chances without delay (offer_chances, due at once): frame by
	 * frame each turn marks the frames before it due, so `limit` counts
	 * only the turn's original when its copy is admitted: limit 1
	 * refuses every copy, limit 2 none. */
	"delay 0 duplicate 50% limit 1",
	"delay 0 loss gemodel 5% 20% ecn duplicate 20% corrupt 5% limit 2",
	"delay 0 loss 1% limit 1000",
	/* `noreorder` jitter on a FIFO, whole bursts at once (offer_drawn):
	 * a zero delay drawn often (the jitter exceeds the delay), so
	 * frames due at once inside a burst behind the clamp; a limit met. */
	"delay 10us 50us noreorder limit 100000",
	"delay 5us 20us 30% noreorder limit 40",
};

static void links_agree(void)
{
	for (unsigned c = 0; c < sizeof(links) / sizeof(links[0]); c++) {
		struct twin_link_seen seen;
		const struct le_counters *ctr = &seen.ctr;

		if (twin_link_run(links[c], 20261127 + c, 4000, 20000, 1455, 0, &seen) != 0)
			continue;
		/* The schedule must reach the cases the burst loop handles
		 * apart: drops at the limit, late arrivals. */
		if (seen.plain) {
			if (seen.cfg.limit < 10 && seen.cfg.delay > 0)
				CHECK(ctr->drop[LE_DROP_QUEUE_FULL] > 0, "'%s': no frame met the limit", links[c]);
			CHECK(ctr->event[LE_EVENT_LATE_ARRIVAL] > 0);
		}
		if (seen.chances) {
			if (seen.cfg.limit < 10)
				CHECK(ctr->drop[LE_DROP_QUEUE_FULL] > 0, "'%s': no frame met the limit", links[c]);
			CHECK(ctr->event[LE_EVENT_LATE_ARRIVAL] > 0);
			CHECK(!seen.cfg.duplicate_set || ctr->dup > 0);
		}
	}
}

/* Which links take the burst loop: a link with any stage beyond a fixed
 * delay must not. */
static void plain_means_only_delay(void)
{
	for (unsigned c = 0; c < sizeof(links) / sizeof(links[0]); c++) {
		struct fakes fk;
		struct le_link l;
		struct le_link_config cfg;
		char err[LE_ERR_MAX] = "";

		fk_init(&fk, 1);
		if (le_config_parse(links[c], &cfg, err, sizeof(err)) != 0 ||
		    le_link_init_ops(&l, &cfg, LE_DIR_A2B, 0, 7, &fk.ops, err, sizeof(err)) != 0) {
			CHECK(0, "'%s': %s", links[c], err);
			continue;
		}
		CHECK_EQ_U64(l.plain, c < 6);
		le_link_free(&l);
		fk_fini(&fk);
	}
}

/* A direction: classes fall back to frame by frame, one class takes the
 * link's burst, and a change staged inside the schedule applies at the
 * same frame for both twins. */
static void swaps_agree(void)
{
	static const char *const paths[][2] = {
		{ "delay 1ms limit 20", "delay 2ms limit 30" },
		{ "delay 0 limit 4 ; class t match proto tcp : delay 1ms", "delay 1ms limit 8" },
		{ "delay 100us", "delay 100us 10us limit 40 ; class u match proto udp : delay 0" },
		/* the old link's frames count against the new link's limit */
		{ "delay 1ms rate 20mbit limit 30", "rate 50mbit delay 200us limit 12" },
	};

	for (unsigned c = 0; c < sizeof(paths) / sizeof(paths[0]); c++) {
		struct fakes fa, fb;
		struct le_path *pa[2], *pb[2];
		struct le_swap sa, sb;
		struct le_rng r;
		le_ns_t clock = 1000;
		int ok = 1;

		fk_init(&fa, 1);
		fk_init(&fb, 1);
		for (unsigned k = 0; k < 2 && ok; k++)
			ok = twin_paths_init(paths[c][k], &fa, &fb, &pa[k], &pb[k]) == 0;
		if (!ok)
			continue;
		le_swap_init(&sa, pa[0]);
		le_swap_init(&sb, pb[0]);
		le_rng_seed(&r, 7 + c, 0, 0);
		for (unsigned step = 0; step < 3000; step++) {
			struct twin_step s = twin_next_step(&r, &clock, 20000);
			struct le_frame oa[40], ob[40];

			if (step == 1500) {
				CHECK_EQ_U64(le_swap_stage(&sa, pa[1], clock + 50000), 0);
				CHECK_EQ_U64(le_swap_stage(&sb, pb[1], clock + 50000), 0);
			}
			if (s.burst) {
				void *h[32];
				uint32_t len[32];

				/* half TCP, half UDP, in runs of 1 to 4, for the
				 * class rules */
				if (!twin_frames(&fa, &fb, &r, s.burst, 100, 1 + step % 4, h, len))
					break;
				for (unsigned i = 0; i < s.burst; i++)
					le_swap_offer(&sa, h[i], len[i], s.t);
				le_swap_offer_burst(&sb, h, len, s.burst, s.t);
			} else {
				unsigned na = le_swap_dequeue(&sa, s.t, oa, s.max);
				unsigned nb = le_swap_dequeue(&sb, s.t, ob, s.max);

				if (nb != na || !twin_same_frames(oa, ob, na, paths[c][0])) {
					CHECK(0, "'%s': dequeue of step %u: %u frames against %u", paths[c][0], step, nb,
					      na);
					break;
				}
			}
			struct le_counters ca, cb;
			le_path_counters(sa.active, &ca);
			le_path_counters(sb.active, &cb);
			if (memcmp(&ca, &cb, sizeof(ca)) != 0 || sa.swaps != sb.swaps ||
			    le_path_depth(sa.active) != le_path_depth(sb.active)) {
				CHECK(0, "'%s': the twins differ after step %u", paths[c][0], step);
				break;
			}
		}
		CHECK_EQ_U64(sb.swaps, 1);
		/* Every frame out, then both paths freed. */
		struct le_frame o[64];
		while (le_swap_dequeue(&sa, UINT64_MAX - 1, o, 64) > 0)
			;
		while (le_swap_dequeue(&sb, UINT64_MAX - 1, o, 64) > 0)
			;
		CHECK_EQ_U64(le_path_depth(sb.active), 0);
		for (unsigned k = 0; k < 2; k++)
			twin_paths_free(pa[k], pb[k]);
		fk_fini(&fa);
		fk_fini(&fb);
	}
}

int main(void)
{
	plain_means_only_delay();
	links_agree();
	swaps_agree();
	return mt_summary();
}
