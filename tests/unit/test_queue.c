/* The queue and the serializers in front of the delay: rate exact to the
 * nanosecond, drop-tail / drop-head / byte limits dropping exactly the
 * predicted frames, CoDel against RFC 8289, slots. */
#include <math.h>

#include "codel.h"
#include "fake.h"
#include "link.h"
#include "minitest.h"
#include "fake_link.h"
#include "rate.h"

/* Everything the link will ever send, by frame index (deadline), or
 * UINT64_MAX for frames it dropped. */
static void run_out(struct le_link *l, struct fakes *fk, le_ns_t from, le_ns_t *dl)
{
	struct le_frame out[256];

	for (le_ns_t t = from; le_link_depth(l) > 0; t += 100000) {
		unsigned n = le_link_dequeue(l, t, out, 256);
		for (unsigned k = 0; k < n; k++)
			dl[fk_idx(out[k].handle)] = out[k].deadline;
		fk_sent(fk, out, n);
		if (t > from + 3600 * LE_NS_PER_S)
			break;
	}
}

/* Back-to-back frames leave exactly one serialization time apart:
 * netem's packet_time_ns, worked out here independently:
 * floor((len + 24) * 8 * 10^9 / 7,000,000) ns. */
static void rate_exact(void)
{
	struct fakes fk;
	struct le_link l;
	enum { N = 2000 };
	static le_ns_t dl[N], want[N];
	static uint32_t len[N];
	uint64_t x = 12345;
	le_ns_t t0 = 987654321, busy = t0, arr = t0;
	unsigned bad = 0;

	fk_init(&fk, 0);
	if (fk_make_link(&l, "rate 7mbit 24 delay 3ms limit 100000", &fk) < 0)
		return;
	for (int i = 0; i < N; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		len[i] = 60 + (uint32_t)(x % 1455);
		/* Half the frames back to back, the others after idle gaps. */
		if (i % 100 == 50)
			arr = busy + x % 5000000;
		le_ns_t pt = (le_ns_t)(((unsigned __int128)(len[i] + 24) * 8 * 1000000000ULL) / 7000000ULL);
		le_ns_t start = arr > busy ? arr : busy;
		busy = start + pt;
		want[i] = busy + 3000000;
		le_link_offer(&l, fk_new(&fk, len[i]), len[i], arr);
	}
	run_out(&l, &fk, arr, dl);
	for (int i = 0; i < N; i++)
		bad += dl[i] != want[i];
	CHECK_EQ_U64(bad, 0);
	CHECK_EQ_U64(want[1] - want[0], (len[1] + 24) * 8000ULL / 7);
	le_link_free(&l);
	fk_fini(&fk);
}

/* Ten 1500-byte frames at once into a 1 Mbit/s link (12 ms each):
 *   limit-queue 3, drop-tail: 1 in service, 2-4 wait, 5-10 refused;
 *   limit-queue 3, drop-head: each arrival finds the queue full and
 *     pushes out its oldest: 2-7 dropped from the head, 8-10 stay;
 *   limit 4 (netem: every frame held): 1-4 held, 5-10 refused; with
 *     drop-head the waiting ones make room as with limit-queue 3 (frame
 *     1, being sent, is held but not in the queue);
 *   limit-bytes 4000: 1 in service, 3000 B wait (2, 3), 4-10 refused. */
static void drops_by_hand(void)
{
	static const struct {
		const char *text;
		const char *kept;   /* 1 = sent, by frame */
		enum le_drop_cause cause;
		unsigned drops;
	} cases[] = {
		{ "rate 1mbit limit-queue 3", "1111000000", LE_DROP_QUEUE_FULL, 6 },
		{ "rate 1mbit limit-queue 3 drop-head", "1000000111", LE_DROP_QUEUE_HEAD, 6 },
		{ "rate 1mbit limit 4", "1111000000", LE_DROP_QUEUE_FULL, 6 },
		{ "rate 1mbit limit 4 drop-head", "1000000111", LE_DROP_QUEUE_HEAD, 6 },
		{ "rate 1mbit limit-bytes 4000", "1110000000", LE_DROP_QUEUE_FULL, 7 },
		{ "rate 1mbit limit-bytes 4000 drop-head", "1000000011", LE_DROP_QUEUE_HEAD, 7 },
	};
	for (unsigned c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct fakes fk;
		struct le_link l;
		le_ns_t dl[10];
		char got[11];

		fk_init(&fk, 0);
		if (fk_make_link(&l, cases[c].text, &fk) < 0)
			continue;
		for (int i = 0; i < 10; i++) {
			dl[i] = UINT64_MAX;
			le_link_offer(&l, fk_new(&fk, 1500), 1500, 1000);
		}
		run_out(&l, &fk, 1000, dl);
		for (int i = 0; i < 10; i++)
			got[i] = dl[i] != UINT64_MAX ? '1' : '0';
		got[10] = '\0';
		CHECK(strcmp(got, cases[c].kept) == 0, "%s: kept %s, want %s", cases[c].text, got, cases[c].kept);
		CHECK_EQ_U64(l.ctr.drop[cases[c].cause], cases[c].drops);
		CHECK_EQ_U64(le_counters_dropped(&l.ctr) + l.ctr.tx, 10);
		/* the survivors leave 12 ms apart, in order */
		le_ns_t prev = 0;
		for (int i = 0; i < 10; i++)
			if (dl[i] != UINT64_MAX) {
				CHECK(prev == 0 || dl[i] == prev + 12000000, "%s: frame %d at %llu", cases[c].text, i,
				      (unsigned long long)dl[i]);
				prev = dl[i];
			}
		le_link_free(&l);
		fk_fini(&fk);
	}
}

/* A known arrival pattern into a known queue: random arrivals against a
 * reference single-server FIFO written here from the definition (serve
 * everything whose start time has come, then admit or drop), for
 * drop-tail and drop-head; the link must drop exactly the same frames and
 * send the others at exactly the same times. */
static void drops_against_reference(void)
{
	enum { N = 20000, Q = 8 };
	for (int head = 0; head < 2; head++) {
		struct fakes fk;
		struct le_link l;
		static le_ns_t dl[N], want[N], arr[N];
		static uint32_t len[N];
		uint32_t q[N], qh = 0, qt = 0; /* waiting frames, by index */
		le_ns_t busy = 0;
		uint64_t x = 99;
		unsigned bad = 0, dropped = 0;

		fk_init(&fk, 0);
		if (fk_make_link(&l, head ? "rate 10mbit limit-queue 8 drop-head limit 100000" : "rate 10mbit limit-queue 8 limit 100000",
			 &fk) < 0)
			return;
		for (int i = 0; i < N; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			arr[i] = (i ? arr[i - 1] : 0) + x % 1500000; /* mean gap 0.75 ms vs 0.8 ms service */
			len[i] = 500 + (uint32_t)((x >> 32) % 1001);
			want[i] = dl[i] = UINT64_MAX;
			/* reference: starts at or before the arrival happen first */
			while (qh < qt) {
				uint32_t j = q[qh];
				le_ns_t s = arr[j] > busy ? arr[j] : busy;
				if (s > arr[i])
					break;
				busy = s + (le_ns_t)len[j] * 8 * 1000000000ULL / 10000000ULL;
				want[j] = busy;
				qh++;
			}
			if (qt - qh + 1 > Q) {
				if (head)
					qh++, dropped++; /* the oldest waiting frame goes */
				else {
					dropped++;
					goto offer;
				}
			}
			q[qt++] = (uint32_t)i;
offer:
			le_link_offer(&l, fk_new(&fk, len[i]), len[i], arr[i]);
		}
		while (qh < qt) {
			uint32_t j = q[qh++];
			busy = (arr[j] > busy ? arr[j] : busy) + (le_ns_t)len[j] * 8 * 1000000000ULL / 10000000ULL;
			want[j] = busy;
		}
		run_out(&l, &fk, arr[N - 1], dl);
		for (int i = 0; i < N; i++)
			bad += dl[i] != want[i];
		CHECK_EQ_U64(bad, 0);
		CHECK(dropped > 100, "%u drops: a weak test", dropped);
		CHECK_EQ_U64(le_counters_dropped(&l.ctr), dropped);
		CHECK_EQ_U64(l.ctr.drop[head ? LE_DROP_QUEUE_HEAD : LE_DROP_QUEUE_FULL], dropped);
		le_link_free(&l);
		fk_fini(&fk);
	}
}

/* --- CoDel ------------------------------------------------------------------ */

struct codel_log {
	le_ns_t now;
	le_ns_t drops[4096];
	unsigned ndrops;
};

static void log_drop(void *ctx, struct le_frame *f)
{
	struct codel_log *g = ctx;
	(void)f;
	if (g->ndrops < 4096)
		g->drops[g->ndrops] = g->now;
	g->ndrops++;
}

static int no_mark(void *ctx, struct le_frame *f)
{
	(void)ctx, (void)f;
	return 0;
}

/* RFC 8289 on a queue that grows: frames of 1000 B arrive every 0.5 ms,
 * the serializer takes one per ms. A frame taken at t arrived at t/2, so
 * its sojourn is t/2: it first reaches target (5 ms) for the frame taken
 * at T = 10 ms (when more than one frame's bytes stay behind it). CoDel
 * must not drop before T + interval = 110 ms; it drops first at the first
 * dequeue at or after that, then at drop_next values following
 *     D_1 = first drop, D_{k+1} = D_k + interval / sqrt(k)
 * each drop happening at the first dequeue at or after its D_k (the
 * serializer asks once per ms; a drop is followed by the next frame at the
 * same instant). */
static void codel_schedule(void)
{
	struct le_codel_config c = { .enabled = 1, .target = 5000000, .interval = 100000000 };
	struct le_codel_state s;
	struct le_queue q;
	struct codel_log g = { 0 };
	const struct le_codel_io io = { &g, log_drop, no_mark };
	unsigned next_arrival = 0;
	le_ns_t first_target = 0;

	le_codel_init(&s);
	s.maxpacket = 1000;
	CHECK(le_queue_init(&q, 1 << 16) == 0);
	for (le_ns_t t = 0; t <= 2000 * LE_NS_PER_MS; t += LE_NS_PER_MS) {
		struct le_frame f;

		while ((le_ns_t)next_arrival * 500000 <= t) {
			struct le_frame a = { .len = 1000, .arrival = (le_ns_t)next_arrival * 500000 };
			le_queue_push(&q, &a);
			next_arrival++;
		}
		g.now = t;
		if (le_queue_head(&q) && first_target == 0 && t - le_queue_head(&q)->arrival >= c.target)
			first_target = t;
		le_codel_dequeue(&s, &c, &q, t, &io, &f);
	}
	CHECK(g.ndrops > 20, "%u drops", g.ndrops);
	CHECK(first_target == 10 * LE_NS_PER_MS, "sojourn reached target at %llu", (unsigned long long)first_target);
	CHECK(g.drops[0] >= first_target + c.interval, "first drop at %llu", (unsigned long long)g.drops[0]);
	CHECK(g.drops[0] < first_target + c.interval + LE_NS_PER_MS);
	le_ns_t D = g.drops[0];
	unsigned bad = 0;
	for (unsigned k = 1; k < g.ndrops && k < 4096; k++) {
		D += (le_ns_t)((double)c.interval / sqrt((double)k));
		le_ns_t expect = (D + LE_NS_PER_MS - 1) / LE_NS_PER_MS * LE_NS_PER_MS; /* next ms grid point */
		bad += g.drops[k] != expect;
	}
	CHECK_EQ_U64(bad, 0);
	/* Spacing shrinks as interval / sqrt(count): the 4th gap is about
	 * 100/sqrt(4) = 50 ms. */
	CHECK(g.drops[4] - g.drops[3] >= 49 * LE_NS_PER_MS && g.drops[4] - g.drops[3] <= 51 * LE_NS_PER_MS);
	le_queue_free(&q);
}

/* With the queue draining below target CoDel stops, and a short queue
 * (one max-size frame) is never dropped from. */
static void codel_quiet(void)
{
	struct le_codel_config c = { .enabled = 1, .target = 5000000, .interval = 100000000 };
	struct le_codel_state s;
	struct le_queue q;
	struct codel_log g = { 0 };
	const struct le_codel_io io = { &g, log_drop, no_mark };
	struct le_frame f;

	le_codel_init(&s);
	s.maxpacket = 1500;
	le_queue_init(&q, 16);
	/* one frame waiting a whole second: never dropped (bytes <= maxpacket) */
	for (le_ns_t t = 0; t < 1000; t++) {
		struct le_frame a = { .len = 1500, .arrival = t * LE_NS_PER_MS };
		le_queue_push(&q, &a);
		g.now = (t + 1000) * LE_NS_PER_MS;
		le_codel_dequeue(&s, &c, &q, g.now, &io, &f);
	}
	CHECK_EQ_U64(g.ndrops, 0);
	CHECK(le_codel_dequeue(&s, &c, &q, 1, &io, &f) == -1);
	le_queue_free(&q);
}

/* CoDel in a link: overload into a rate, drops only once the standing
 * queue persisted; with ecn, ECN-capable frames are marked instead. */
static void ipv4_frame(uint8_t *b, uint8_t tos)
{
	memset(b, 0, 64);
	b[12] = 0x08, b[13] = 0x00;
	b[14] = 0x45, b[15] = tos;
	b[22] = 64, b[23] = 17;
}

static void codel_link(void)
{
	for (int ecn = 0; ecn < 2; ecn++) {
		struct fakes fk;
		struct le_link l;
		struct le_frame out[256];
		le_ns_t t;

		fk_init(&fk, 1);
		if (fk_make_link(&l, ecn ? "rate 8mbit codel ecn limit 100000" : "rate 8mbit codel limit 100000", &fk) < 0)
			return;
		/* 1000-byte frames (1 ms each) at two per ms for 1 s; every
		 * other one ECN-capable */
		for (t = 0; t < LE_NS_PER_S; t += 500000) {
			void *h = fk_new(&fk, 1000);
			ipv4_frame(fk.data[fk_idx(h)], (t / 500000) % 2 ? 0x02 : 0x00);
			le_link_offer(&l, h, 1000, t);
			fk_sent(&fk, out, le_link_dequeue(&l, t, out, 256));
			/* Up to 110 ms nothing may be dropped (target reached at
			 * about 10 ms of service, plus a 100 ms interval). */
			if (t < 110 * LE_NS_PER_MS)
				CHECK(l.ctr.drop[LE_DROP_CODEL] + l.ctr.event[LE_EVENT_CODEL_MARKED] == 0);
		}
		CHECK(l.ctr.drop[LE_DROP_CODEL] > 10, "ecn %d: %llu drops", ecn, (unsigned long long)l.ctr.drop[LE_DROP_CODEL]);
		if (ecn) {
			CHECK(l.ctr.event[LE_EVENT_CODEL_MARKED] > 10);
			/* marked frames went out with CE set */
			unsigned ce = 0;
			for (uint32_t i = 0; i < fk.n; i++)
				ce += (fk.data[i][15] & 3) == 3;
			CHECK_EQ_U64(ce, l.ctr.event[LE_EVENT_CODEL_MARKED]);
		} else {
			CHECK_EQ_U64(l.ctr.event[LE_EVENT_CODEL_MARKED], 0);
		}
		CHECK(le_counters_conserved(&l.ctr, le_link_depth(&l)));
		le_link_free(&l);
		fk_fini(&fk);
	}
}

/* --- slots ------------------------------------------------------------------- */

static void slots_by_hand(void)
{
	static const struct {
		const char *text;
		uint32_t len;
		le_ns_t when[10]; /* departure of each of 10 frames offered at 1 us */
	} cases[] = {
		/* packets 3: three per slot, slots 10 ms apart, the first 10 ms
		 * after the first frame */
		{ "slot 10ms packets 3", 100, { 10001000, 10001000, 10001000, 20001000, 20001000, 20001000, 30001000, 30001000, 30001000, 40001000 } },
		/* bytes 3000 with 1400-byte frames: the slot closes once the
		 * budget reaches 0 or below, after the 3rd frame (netem) */
		{ "slot 5ms bytes 3000", 1400, { 5001000, 5001000, 5001000, 10001000, 10001000, 10001000, 15001000, 15001000, 15001000, 20001000 } },
		/* no budget: everything ready goes in the first slot */
		{ "slot 2ms", 100, { 2001000, 2001000, 2001000, 2001000, 2001000, 2001000, 2001000, 2001000, 2001000, 2001000 } },
		/* behind a rate (1 ms per 100 B at 800 kbit/s): frames ready by
		 * the open slot go with it; a frame ready after it has passed
		 * draws a fresh slot from its own ready time (netem's
		 * slot_next < time_to_send): frame 0 ends at 1.001 ms -> slot at
		 * 3.501 takes frames 0-2; frame 3 ends at 4.001 -> 6.501 (3-5);
		 * frame 6 at 7.001 -> 9.501 (6-8); frame 9 at 10.001 -> 12.501 */
		{ "rate 800kbit slot 2500us packets 100", 100, { 3501000, 3501000, 3501000, 6501000, 6501000, 6501000, 9501000, 9501000, 9501000, 12501000 } },
	};
	for (unsigned c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct fakes fk;
		struct le_link l;
		le_ns_t dl[10];

		fk_init(&fk, 0);
		if (fk_make_link(&l, cases[c].text, &fk) < 0)
			continue;
		for (int i = 0; i < 10; i++)
			le_link_offer(&l, fk_new(&fk, cases[c].len), cases[c].len, 1000);
		run_out(&l, &fk, 1000, dl);
		for (int i = 0; i < 10; i++)
			CHECK(dl[i] == cases[c].when[i], "%s: frame %d at %llu, want %llu", cases[c].text, i,
			      (unsigned long long)dl[i], (unsigned long long)cases[c].when[i]);
		le_link_free(&l);
		fk_fini(&fk);
	}
}

/* slot MIN MAX: gaps uniform on [MIN, MAX): with a saturated queue and
 * packets 1 each frame opens a slot, so departures are spaced by the
 * gaps; mean (MIN+MAX)/2 within 5 sd/sqrt(n), sd (MAX-MIN)/sqrt(12). */
static void slot_gaps(void)
{
	struct fakes fk;
	struct le_link l;
	enum { N = 20000 };
	static le_ns_t dl[N];
	double s = 0;

	fk_init(&fk, 0);
	if (fk_make_link(&l, "slot 1ms 3ms packets 1 limit 100000", &fk) < 0)
		return;
	for (int i = 0; i < N; i++)
		le_link_offer(&l, fk_new(&fk, 100), 100, 1000);
	run_out(&l, &fk, 1000, dl);
	for (int i = 1; i < N; i++)
		s += (double)(dl[i] - dl[i - 1]);
	double mean = s / (N - 1), sd = 2e6 / sqrt(12.0);
	CHECK(fabs(mean - 2e6) <= 5 * sd / sqrt(N - 1.0), "mean gap %.0f", mean);
	le_link_free(&l);
	fk_fini(&fk);
}

int main(void)
{
	rate_exact();
	drops_by_hand();
	drops_against_reference();
	codel_schedule();
	codel_quiet();
	codel_link();
	slots_by_hand();
	slot_gaps();
	return mt_summary();
}
