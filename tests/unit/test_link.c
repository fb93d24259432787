/* A link end to end, in virtual time: deadlines, the limit, conservation
 * (counters and frame objects), independence from the polling pattern,
 * the legacy API. */
#include "fake.h"
#include "link.h"
#include "minitest.h"
#include "fake_link.h"

static int conserved(const struct le_link *l)
{
	return le_counters_conserved(&l->ctr, le_link_depth(l));
}

static void exact_deadlines(void)
{
	static const struct {
		const char *text;
		le_ns_t delay;
	} cases[] = {
		{ "delay 0", 0 }, { "delay 1ns", 1 }, { "delay 1us", 1000 }, { "delay 1ms", 1000000 },
		{ "delay 10s", 10 * LE_NS_PER_S }, { "delay 3600s", 3600 * LE_NS_PER_S },
	};
	/* Arrivals not on any round number, and one near the top of u64 time. */
	static const le_ns_t arrivals[] = { 0, 1, 123456789, 987654321012345ULL };

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fakes fk;
		struct le_link l;
		struct le_frame out[4];

		fk_init(&fk, 0);
		if (fk_make_link(&l, cases[i].text, &fk) < 0)
			continue;
		for (unsigned a = 0; a < 4; a++) {
			le_ns_t t = arrivals[a], dl = t + cases[i].delay;
			void *h = fk_new(&fk, 60 + a);

			le_link_offer(&l, h, 60 + a, t);
			CHECK_EQ_U64(le_link_next_deadline(&l), dl);
			if (dl > 0 && dl - 1 >= t)
				CHECK_EQ_U64(le_link_dequeue(&l, dl - 1, out, 4), 0);
			CHECK_EQ_U64(le_link_dequeue(&l, dl, out, 4), 1);
			CHECK_EQ_U64(out[0].deadline, dl);
			CHECK_EQ_U64(out[0].arrival, t);
			CHECK_EQ_U64(out[0].len, 60 + a);
			CHECK(out[0].handle == h);
			CHECK_EQ_U64(out[0].cls, 0);
		}
		CHECK_EQ_U64(l.ctr.tx, 4);
		CHECK_EQ_U64(l.ctr.tx_bytes, 60 + 61 + 62 + 63);
		CHECK_EQ_U64(l.ctr.rx_bytes, l.ctr.tx_bytes);
		CHECK_EQ_U64(le_link_next_deadline(&l), UINT64_MAX);
		le_link_free(&l);
		fk_fini(&fk);
	}
}

static void in_order_at_deadline(void)
{
	struct fakes fk;
	struct le_link l;
	struct le_frame out[16];
	unsigned bad = 0, got = 0;

	fk_init(&fk, 0);
	if (fk_make_link(&l, "delay 1ms", &fk) < 0)
		return;
	/* Ten frames 7 ns apart; step time 1 ns at a time around the deadlines:
	 * each frame leaves exactly at arrival + 1 ms, alone, in order. */
	for (unsigned i = 0; i < 10; i++)
		le_link_offer(&l, fk_new(&fk, 100), 100, 5000 + 7 * i);
	for (le_ns_t now = 5000 + 1000000 - 3; now < 5000 + 1000000 + 80; now++) {
		unsigned n = le_link_dequeue(&l, now, out, 16);
		for (unsigned k = 0; k < n; k++, got++)
			bad += fk_idx(out[k].handle) != got || out[k].deadline != now;
	}
	CHECK_EQ_U64(got, 10);
	CHECK_EQ_U64(bad, 0);
	le_link_free(&l);
	fk_fini(&fk);
}

/* netem's limit counts every frame the link holds; a frame whose deadline
 * has passed is no longer held even if nobody dequeued it yet, so the
 * drops do not depend on the caller's polling. */
static void limit_counts_held_frames(void)
{
	struct fakes fk;
	struct le_link l;
	struct le_frame out[8];

	fk_init(&fk, 0);
	if (fk_make_link(&l, "delay 10ms limit 3", &fk) < 0)
		return;
	for (int i = 0; i < 5; i++)
		le_link_offer(&l, fk_new(&fk, 100), 100, (le_ns_t)i * 1000);
	CHECK_EQ_U64(l.ctr.drop[LE_DROP_QUEUE_FULL], 2);
	CHECK_EQ_U64(fk.state[3], FK_FREED);
	CHECK_EQ_U64(fk.state[4], FK_FREED);
	CHECK_EQ_U64(le_link_depth(&l), 3);
	/* At 10 ms + 500 ns the first frame has left (deadline 10 ms): room
	 * for one, without any dequeue call. */
	le_link_offer(&l, fk_new(&fk, 100), 100, 10000000 + 500);
	CHECK_EQ_U64(l.ctr.drop[LE_DROP_QUEUE_FULL], 2);
	CHECK_EQ_U64(le_link_held(&l), 3);
	CHECK_EQ_U64(le_link_depth(&l), 4);
	le_link_offer(&l, fk_new(&fk, 100), 100, 10000000 + 600);
	CHECK_EQ_U64(l.ctr.drop[LE_DROP_QUEUE_FULL], 3);
	CHECK_EQ_U64(le_link_dequeue(&l, 10002000, out, 8), 3);
	for (int i = 0; i < 3; i++)
		CHECK_EQ_U64(fk_idx(out[i].handle), i);
	CHECK(conserved(&l));
	le_link_free(&l);
	fk_fini(&fk);
}

/* Random traffic through a link with every stage on: after every call the
 * counters conserve frames, every frame object is in exactly one state,
 * no frame leaves before its deadline, none is freed twice. */
static void randomized_conservation(void)
{
	static const char *const texts[] = {
		"delay 250us loss 10% limit 50 seed 3",
		"delay 1ms 300us distribution normal loss gemodel 2% 20% duplicate 5% corrupt 1% reorder 10% gap 3 rate 50mbit limit 200 limit-bytes 60kb drop-head seed 4",
		"delay 200us 50us noreorder loss state 1% 30% 5% 40% 0.5% duplicate 10% 50% rate 20mbit 24 limit 500 limit-queue 30 codel target 500us interval 5ms seed 5",
		"delay 500us slot 100us 800us packets 4 bytes 6000 loss 1% duplicate 2% limit 300 codel seed 6",
		"delay 100us rate 40mbit slot 200us 300us packets 8 limit 100 seed 7",
	};

	for (unsigned t = 0; t < sizeof(texts) / sizeof(texts[0]); t++) {
		struct fakes fk;
		struct le_link l;
		struct le_frame out[32];
		uint64_t x = 0x2545F4914F6CDD1DULL + t;
		le_ns_t now = 0;
		unsigned broken = 0, late = 0, objects = 0;

		fk_init(&fk, 1);
		fk.fail_clone_every = 7;
		if (fk_make_link(&l, texts[t], &fk) < 0)
			continue;
		for (int i = 0; i < 100000; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64: test schedule only */
			now += x % 20000;                          /* 0 .. 20 us between events */
			if (x >> 62) {                             /* 3 in 4: a frame arrives */
				uint32_t len = 64 + (uint32_t)(x % 1400);
				le_link_offer(&l, fk_new(&fk, len), len, now);
			} else {
				unsigned n = le_link_dequeue(&l, now, out, 1 + (unsigned)(x >> 40) % 32);
				for (unsigned k = 0; k < n; k++)
					late += out[k].deadline > now;
				objects += fk_sent(&fk, out, n);
			}
			broken += !conserved(&l);
		}
		CHECK_EQ_U64(broken, 0);
		CHECK_EQ_U64(late, 0);
		CHECK_EQ_U64(objects, 0);
		CHECK_EQ_U64(fk.double_free + fk.bad_handle, 0);
		CHECK(l.ctr.tx > 0 && le_counters_dropped(&l.ctr) > 0, "'%s': tx %llu drops %llu", texts[t],
		      (unsigned long long)l.ctr.tx, (unsigned long long)le_counters_dropped(&l.ctr));
		/* Object level: live frames are exactly those the link holds. */
		CHECK_EQ_U64(fk_count(&fk, FK_LIVE), le_link_depth(&l));
		CHECK_EQ_U64(fk_count(&fk, FK_FREED), le_counters_dropped(&l.ctr));
		CHECK_EQ_U64(fk.clones, l.ctr.dup);

		/* drain (shutdown): everything left is freed by the model and
		 * counted as a shutdown drop, not as sent. */
		uint64_t depth = le_link_depth(&l), tx = l.ctr.tx;
		uint64_t shut = l.ctr.drop[LE_DROP_SHUTDOWN];
		CHECK_EQ_U64(le_link_drain(&l), depth);
		CHECK_EQ_U64(l.ctr.tx, tx);
		CHECK_EQ_U64(l.ctr.drop[LE_DROP_SHUTDOWN], shut + depth);
		CHECK_EQ_U64(le_link_depth(&l), 0);
		CHECK_EQ_U64(fk_count(&fk, FK_LIVE), 0);
		CHECK_EQ_U64(fk_count(&fk, FK_FREED), le_counters_dropped(&l.ctr));
		CHECK_EQ_U64(fk.double_free + fk.bad_handle, 0);
		CHECK(conserved(&l));
		le_link_free(&l);
		fk_fini(&fk);
	}
}

/* A run's last step: every frame's final state into the hash h, the
 * counters out, the link and its frames freed. */
static uint64_t run_end(struct le_link *l, struct fakes *fk, uint64_t h, struct le_counters *ctr)
{
	for (uint32_t i = 0; i < fk->n; i++)
		h = fnv(h, fk->state[i]);
	*ctr = l->ctr;
	le_link_free(l);
	fk_fini(fk);
	return h;
}

/* The model's results must not depend on when dequeue is called: the same
 * arrivals give the same departures (frame, deadline), drops and counters
 * whether the caller polls every microsecond, at random, or only at the
 * times next_deadline names. */
static uint64_t run_polling(const char *text, int pattern, struct le_counters *ctr)
{
	struct fakes fk;
	struct le_link l;
	struct le_frame out[64];
	uint64_t x = 88172645463325252ULL, h = 0xcbf29ce484222325ULL, y = 7;
	le_ns_t t = 0;

	fk_init(&fk, 1);
	if (fk_make_link(&l, text, &fk) < 0)
		return 0;
	for (int i = 0; i < 20000; i++) {
		le_ns_t arrival;
		uint32_t len;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		arrival = t + x % 40000;
		len = 64 + (uint32_t)(x >> 20) % 1437;
		/* Poll up to the arrival, the way the pattern says. */
		for (;;) {
			le_ns_t next;
			unsigned n;

			if (pattern == 0)
				next = t + 1000;
			else if (pattern == 1)
				y ^= y << 13, y ^= y >> 7, y ^= y << 17, next = t + y % 30000;
			else
				next = le_link_next_deadline(&l);
			if (next > arrival)
				break;
			if (next < t)
				next = t;
			t = next;
			n = le_link_dequeue(&l, t, out, 64);
			for (unsigned k = 0; k < n; k++)
				h = fnv(fnv(h, fk_idx(out[k].handle)), out[k].deadline);
			if (pattern == 2 && n == 0 && le_link_next_deadline(&l) <= t)
				t++; /* nothing due yet: step on */
		}
		t = arrival;
		le_link_offer(&l, fk_new(&fk, len), len, arrival);
	}
	for (;;) {
		unsigned n = le_link_dequeue(&l, t, out, 64);
		for (unsigned k = 0; k < n; k++)
			h = fnv(fnv(h, fk_idx(out[k].handle)), out[k].deadline);
		if (le_link_depth(&l) == 0 || t > 1000 * LE_NS_PER_S)
			break;
		t += 100000;
	}
	return run_end(&l, &fk, h, ctr);
}

static void polling_independence(void)
{
	static const char *const texts[] = {
		"delay 2ms limit 40 seed 1",
		"delay 1ms 500us loss 3% duplicate 2% rate 100mbit limit 60 limit-queue 20 drop-head seed 2",
		"delay 300us rate 80mbit 20 codel target 200us interval 2ms limit 400 seed 3",
		"delay 100us 80us distribution pareto reorder 5% gap 2 rate 60mbit limit-bytes 20kb seed 4",
		"slot 200us 1ms packets 3 bytes 3000 limit 80 limit-queue 40 seed 5",
		"delay 50us rate 150mbit slot distribution normal 300us 100us packets 5 limit 100 seed 6",
	};
	for (unsigned t = 0; t < sizeof(texts) / sizeof(texts[0]); t++) {
		struct le_counters c[3];
		uint64_t h[3];
		for (int p = 0; p < 3; p++)
			h[p] = run_polling(texts[t], p, &c[p]);
		CHECK(h[0] == h[1] && h[1] == h[2], "'%s': %llx %llx %llx", texts[t], (unsigned long long)h[0],
		      (unsigned long long)h[1], (unsigned long long)h[2]);
		CHECK(memcmp(&c[0], &c[1], sizeof(c[0])) == 0 && memcmp(&c[1], &c[2], sizeof(c[0])) == 0,
		      "'%s': counters differ", texts[t]);
		CHECK(le_counters_dropped(&c[0]) > 0 || t == 0, "'%s': no drops, weak test", texts[t]);
		CHECK_EQ_U64(c[0].event[LE_EVENT_LATE_ARRIVAL], 0);
	}
}

/* A rate serializer serves the frames that have started a block at a
 * time (link.c, serve_rate_blocks). Frame for frame it must give what
 * serving them one by one gives: the same deadlines, draws and drops.
 * Bursts of 400 frames at a rate whose frames take 50-1200 ns; `fine`
 * polls every 40 ns, so each serve starts at most one frame, the other
 * polls only once a burst has arrived, so one serve starts hundreds. */
static uint64_t run_bursts(const char *text, int fine, struct le_counters *ctr)
{
	static const le_ns_t at[] = { 0, 100000, 130000, 2000000, 2000001 };
	struct fakes fk;
	struct le_link l;
	struct le_frame out[64];
	void *handles[400];
	uint32_t lens[400];
	uint64_t h = 0xcbf29ce484222325ULL, x = 2463534242ULL;
	le_ns_t t = 0;

	fk_init(&fk, 1);
	if (fk_make_link(&l, text, &fk) < 0)
		return 0;
	for (unsigned b = 0; b <= sizeof(at) / sizeof(at[0]); b++) {
		const le_ns_t until = b < sizeof(at) / sizeof(at[0]) ? at[b] : 20 * LE_NS_PER_MS;
		unsigned n;

		for (; fine && t < until; t += 40)
			while ((n = le_link_dequeue(&l, t, out, 64)) > 0)
				for (unsigned k = 0; k < n; k++)
					h = fnv(fnv(h, fk_idx(out[k].handle)), out[k].deadline);
		t = until;
		while ((n = le_link_dequeue(&l, t, out, 64)) > 0)
			for (unsigned k = 0; k < n; k++)
				h = fnv(fnv(h, fk_idx(out[k].handle)), out[k].deadline);
		if (b == sizeof(at) / sizeof(at[0]))
			break;
		for (unsigned i = 0; i < 400; i++) {
			x ^= x << 13, x ^= x >> 17, x ^= x << 5;
			lens[i] = 64 + (uint32_t)(x % 1437);
			handles[i] = fk_new(&fk, lens[i]);
		}
		le_link_offer_burst(&l, handles, lens, 400, at[b]);
	}
	CHECK(le_link_depth(&l) == 0, "'%s': %u frames left", text, le_link_depth(&l));
	return run_end(&l, &fk, h, ctr);
}

static void rate_blocks_as_frames(void)
{
	static const char *const texts[] = {
		"rate 10gbit delay 1ms 300us reorder 10% limit 3000 seed 9",
		"rate 8gbit delay 200us 100us distribution pareto duplicate 5% loss 3% corrupt 2% limit 700 seed 11",
		"rate 12gbit slot 20us 40us delay 100us 50us noreorder limit 3000 seed 12",
		"rate 10gbit 20 delay 50us limit-queue 150 drop-head limit 3000 seed 13",
	};
	for (unsigned i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct le_counters c[2];
		uint64_t h0 = run_bursts(texts[i], 1, &c[0]), h1 = run_bursts(texts[i], 0, &c[1]);

		CHECK(h0 == h1, "'%s': %llx %llx", texts[i], (unsigned long long)h0, (unsigned long long)h1);
		CHECK(memcmp(&c[0], &c[1], sizeof(c[0])) == 0, "'%s': counters differ", texts[i]);
		CHECK_EQ_U64(c[0].tx + le_counters_dropped(&c[0]), c[0].rx + c[0].dup);
	}
}

/* A frame offered with an arrival before the link's clock is timed from
 * its own arrival and counted as late. */
static void late_arrival(void)
{
	struct fakes fk;
	struct le_link l;
	struct le_frame out[4];

	fk_init(&fk, 0);
	if (fk_make_link(&l, "delay 1ms", &fk) < 0)
		return;
	CHECK_EQ_U64(le_link_dequeue(&l, 5000000, out, 4), 0);
	le_link_offer(&l, fk_new(&fk, 100), 100, 4500000);
	CHECK_EQ_U64(l.ctr.event[LE_EVENT_LATE_ARRIVAL], 1);
	CHECK_EQ_U64(le_link_dequeue(&l, 5500000, out, 4), 1);
	CHECK_EQ_U64(out[0].deadline, 5500000);
	le_link_free(&l);
	fk_fini(&fk);
}

static void init_errors(void)
{
	struct le_link_config c;
	struct le_link l;
	struct fakes fk;
	struct le_frame_ops none = { 0 };
	char err[LE_ERR_MAX] = "";

	fk_init(&fk, 0);
	le_config_default(&c);
	CHECK(le_link_init_ops(&l, &c, LE_DIR_A2B, 0, 1, &none, err, sizeof(err)) == -1);
	CHECK_STR_CONTAINS(err, "free");
	CHECK(le_config_parse("delay 1ms corrupt 1%", &c, err, sizeof(err)) == 0);
	CHECK(le_link_init_ops(&l, &c, LE_DIR_A2B, 0, 1, &fk.ops, err, sizeof(err)) == -1);
	CHECK_STR_CONTAINS(err, "bytes");
	fk.ops.clone = NULL;
	CHECK(le_config_parse("duplicate 1%", &c, err, sizeof(err)) == 0);
	CHECK(le_link_init_ops(&l, &c, LE_DIR_A2B, 0, 1, &fk.ops, err, sizeof(err)) == -1);
	CHECK_STR_CONTAINS(err, "clone");
	fk.ops.clone = fk_clone;

	/* Storage: limit + max(1024, limit / 8), to a power of two. */
	CHECK(le_config_parse("limit 100", &c, err, sizeof(err)) == 0);
	CHECK(le_link_init_ops(&l, &c, LE_DIR_A2B, 0, 1, &fk.ops, err, sizeof(err)) == 0, "%s", err);
	CHECK_EQ_U64(l.line.capacity, 2048);
	CHECK_EQ_U64(le_queue_capacity(&l.queue), 0);
	le_link_free(&l);
	CHECK(le_config_parse("limit 100000 rate 1gbit", &c, err, sizeof(err)) == 0);
	CHECK(le_link_init_ops(&l, &c, LE_DIR_A2B, 0, 1, &fk.ops, err, sizeof(err)) == 0, "%s", err);
	CHECK_EQ_U64(l.line.capacity, 131072);
	CHECK_EQ_U64(le_queue_capacity(&l.queue), 131072);
	CHECK(!l.line.ordered);
	le_link_free(&l);
	CHECK(le_config_parse("delay 1ms 1ms", &c, err, sizeof(err)) == 0);
	CHECK(le_link_init_ops(&l, &c, LE_DIR_A2B, 0, 1, &fk.ops, err, sizeof(err)) == 0, "%s", err);
	CHECK(l.line.ordered);
	le_link_free(&l);

	/* Seed: the config's when set, else the daemon's default. */
	CHECK(le_config_parse("seed 5", &c, err, sizeof(err)) == 0);
	CHECK(le_link_init_ops(&l, &c, LE_DIR_A2B, 0, 77, &fk.ops, err, sizeof(err)) == 0);
	CHECK_EQ_U64(l.seed, 5);
	le_link_free(&l);
	c.seed_set = 0;
	CHECK(le_link_init_ops(&l, &c, LE_DIR_A2B, 0, 77, &fk.ops, err, sizeof(err)) == 0);
	CHECK_EQ_U64(l.seed, 77);
	le_link_free(&l);

	CHECK(strcmp(le_direction_name(LE_DIR_A2B), "a2b") == 0);
	CHECK(strcmp(le_direction_name(LE_DIR_B2A), "b2a") == 0);
	fk_fini(&fk);
}

/* Names are part of the JSON vocabulary: fixed. */
static void names(void)
{
	static const char *const causes[LE_DROP_CAUSES] = { "loss", "queue_full", "shutdown", "queue_head",
							    "codel", "stalled" };
	static const char *const events[LE_EVENTS] = { "dup_failed", "corrupted", "ecn_marked",
						       "codel_marked", "reordered", "late_arrival" };
	for (int i = 0; i < LE_DROP_CAUSES; i++)
		CHECK(strcmp(le_drop_cause_name((enum le_drop_cause)i), causes[i]) == 0);
	for (int i = 0; i < LE_EVENTS; i++)
		CHECK(strcmp(le_event_name((enum le_event)i), events[i]) == 0);
	CHECK(strcmp(le_drop_cause_name(LE_DROP_CAUSES), "unknown") == 0);
	CHECK_EQ_U64(LE_DROP_LOSS, 0);
	CHECK_EQ_U64(LE_DROP_STALLED, 5);

	struct le_counters a = { .rx = 1, .tx = 2, .rx_bytes = 3, .tx_bytes = 4, .dup = 5 }, b;
	for (int i = 0; i < LE_DROP_CAUSES; i++)
		a.drop[i] = 10 + (uint64_t)i;
	a.event[LE_EVENT_CORRUPTED] = 3;
	b = a;
	le_counters_add(&a, &b);
	CHECK_EQ_U64(a.rx, 2);
	CHECK_EQ_U64(a.tx_bytes, 8);
	CHECK_EQ_U64(a.dup, 10);
	CHECK_EQ_U64(a.event[LE_EVENT_CORRUPTED], 6);
	CHECK_EQ_U64(a.drop[LE_DROP_STALLED], 2 * (10 + LE_DROP_STALLED));
	CHECK_EQ_U64(le_counters_dropped(&a), 2 * (10 * LE_DROP_CAUSES + LE_DROP_CAUSES * (LE_DROP_CAUSES - 1) / 2));
	struct le_counters z = { .rx = 10, .dup = 2, .tx = 5 };
	z.drop[LE_DROP_LOSS] = 4;
	CHECK(le_counters_conserved(&z, 3));
	CHECK(!le_counters_conserved(&z, 2));
}

int main(void)
{
	exact_deadlines();
	in_order_at_deadline();
	limit_counts_held_frames();
	randomized_conservation();
	polling_independence();
	rate_blocks_as_frames();
	late_arrival();
	init_errors();
	names();
	return mt_summary();
}
