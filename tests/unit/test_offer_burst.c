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
};

struct twin_step {
	le_ns_t t;
	unsigned burst;  /* 0: a dequeue of up to `max` */
	unsigned max;
};

/* The schedule: time mostly moves on, a burst sometimes arrives late
 * (before the link's clock: late_arrival events), dequeues in between. */
static struct twin_step next_step(struct le_rng *r, le_ns_t *clock)
{
	struct twin_step s = { 0, 0, 0 };

	*clock += le_rng_below(r, 20000);
	s.t = *clock;
	if (le_rng_below(r, 3) == 0) {
		s.max = 1 + (unsigned)le_rng_below(r, 40);
		return s;
	}
	s.burst = 1 + (unsigned)le_rng_below(r, 32);
	if (le_rng_below(r, 10) == 0 && s.t > 30000)
		s.t -= le_rng_below(r, 30000);
	return s;
}

/* n frames of random length (60 .. 59 + spread) in both twins' pools,
 * under the same handles; 0 when the pools went apart. run > 0: IPv4
 * frames, UDP and TCP alternating in runs of `run` frames. */
static int twin_frames(struct fakes *fa, struct fakes *fb, struct le_rng *r, unsigned n, uint32_t spread,
		       unsigned run, void **h, uint32_t *len)
{
	for (unsigned i = 0; i < n; i++) {
		len[i] = 60 + (uint32_t)le_rng_below(r, spread);
		h[i] = fk_new(fa, len[i]);
		if (fk_new(fb, len[i]) != h[i]) {
			CHECK(0, "the twins' frame pools went apart");
			return 0;
		}
		if (run == 0)
			continue;
		for (struct fakes *fk = fa; fk != NULL; fk = fk == fa ? fb : NULL) {
			uint8_t *b = fk->data[fk_idx(h[i])];
			b[12] = 0x08; /* IPv4 */
			b[14] = 0x45;
			b[23] = ((i / run) & 1) ? 6 : 17;
		}
	}
	return 1;
}

static int same_frames(const struct le_frame *a, const struct le_frame *b, unsigned n, const char *what)
{
	for (unsigned i = 0; i < n; i++)
		if (a[i].handle != b[i].handle || a[i].len != b[i].len || a[i].arrival != b[i].arrival ||
		    a[i].deadline != b[i].deadline || a[i].cls != b[i].cls) {
			CHECK(0, "%s: frame %u of a dequeue differs", what, i);
			return 0;
		}
	return 1;
}

static void links_agree(void)
{
	for (unsigned c = 0; c < sizeof(links) / sizeof(links[0]); c++) {
		struct fakes fa, fb;
		struct le_link a, b;
		struct le_link_config cfg;
		char err[LE_ERR_MAX] = "";
		struct le_rng r;
		le_ns_t clock = 1000;
		unsigned plain_seen = 0, chances_seen = 0;

		fk_init(&fa, 1);
		fk_init(&fb, 1);
		if (le_config_parse(links[c], &cfg, err, sizeof(err)) != 0 ||
		    le_link_init_ops(&a, &cfg, LE_DIR_A2B, 0, 7, &fa.ops, err, sizeof(err)) != 0 ||
		    le_link_init_ops(&b, &cfg, LE_DIR_A2B, 0, 7, &fb.ops, err, sizeof(err)) != 0) {
			CHECK(0, "'%s': %s", links[c], err);
			continue;
		}
		le_rng_seed(&r, 20261127 + c, 0, 0);
		for (unsigned step = 0; step < 4000; step++) {
			struct twin_step s = next_step(&r, &clock);
			struct le_frame oa[40], ob[40];

			if (s.burst) {
				void *h[32];
				uint32_t len[32];

				/* Both twins' frames first: copies made while
				 * offering must get the same numbers in both. */
				if (!twin_frames(&fa, &fb, &r, s.burst, 1455, 0, h, len))
					break;
				for (unsigned i = 0; i < s.burst; i++)
					le_link_offer(&a, h[i], len[i], s.t);
				plain_seen += b.plain;
				chances_seen += !b.stageless && b.line.runs;
				le_link_offer_burst(&b, h, len, s.burst, s.t);
			} else {
				unsigned na = le_link_dequeue(&a, s.t, oa, s.max);
				unsigned nb = le_link_dequeue(&b, s.t, ob, s.max);

				if (nb != na || !same_frames(oa, ob, na, links[c])) {
					CHECK(0, "'%s': dequeue of step %u: %u frames against %u", links[c], step, nb, na);
					break;
				}
				fk_sent(&fa, oa, na);
				fk_sent(&fb, ob, nb);
			}
			if (memcmp(&a.ctr, &b.ctr, sizeof(a.ctr)) != 0 || a.line.due != b.line.due ||
			    a.line.count != b.line.count || a.clock != b.clock || a.last_deadline != b.last_deadline ||
			    le_link_held(&a) != le_link_held(&b)) {
				CHECK(0, "'%s': the twins differ after step %u", links[c], step);
				break;
			}
		}
		/* The schedule must reach the cases the burst loop handles
		 * apart: drops at the limit, late arrivals. */
		if (b.plain) {
			CHECK(plain_seen > 0);
			if (cfg.limit < 10 && cfg.delay > 0)
				CHECK(b.ctr.drop[LE_DROP_QUEUE_FULL] > 0, "'%s': no frame met the limit", links[c]);
			CHECK(b.ctr.event[LE_EVENT_LATE_ARRIVAL] > 0);
		}
		if (!b.stageless && b.line.runs) {
			CHECK(chances_seen > 0);
			if (cfg.limit < 10)
				CHECK(b.ctr.drop[LE_DROP_QUEUE_FULL] > 0, "'%s': no frame met the limit", links[c]);
			CHECK(b.ctr.event[LE_EVENT_LATE_ARRIVAL] > 0);
			CHECK(!cfg.duplicate_set || b.ctr.dup > 0);
		}
		/* corrupt flipped the same bits of the same frames */
		CHECK(fa.n == fb.n && memcmp(fa.data, fb.data, (size_t)fa.n * FK_BYTES) == 0,
		      "'%s': the twins' frame bytes differ", links[c]);
		CHECK(le_counters_conserved(&b.ctr, le_link_depth(&b)));
		CHECK_EQ_U64(fb.double_free + fb.bad_handle, 0);
		le_link_free(&a);
		le_link_free(&b);
		fk_fini(&fa);
		fk_fini(&fb);
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
			struct twin_step s = next_step(&r, &clock);
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

				if (nb != na || !same_frames(oa, ob, na, paths[c][0])) {
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
