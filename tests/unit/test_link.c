/* A link direction end to end, in virtual time. */
#include "link.h"
#include "minitest.h"

static int make(struct le_link *l, const char *text, uint32_t capacity)
{
	struct le_link_config c;
	char err[LE_ERR_MAX] = "";

	if (le_config_parse(text, &c, err, sizeof(err)) != 0 ||
	    le_link_init(l, &c, LE_DIR_A2B, 1, capacity, err, sizeof(err)) != 0) {
		CHECK(0, "'%s': %s", text, err);
		return -1;
	}
	return 0;
}

static int conserved(const struct le_link *l)
{
	return l->ctr.rx == l->ctr.tx + le_counters_dropped(&l->ctr) + le_link_depth(l);
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
		struct le_link l;
		struct le_frame out[4];
		enum le_drop_cause cause;

		if (make(&l, cases[i].text, LE_DEFAULT_LIMIT) < 0)
			continue;
		for (unsigned a = 0; a < 4; a++) {
			le_ns_t t = arrivals[a], dl = t + cases[i].delay;

			CHECK(le_link_enqueue(&l, (void *)(uintptr_t)(a + 1), 60 + a, t, &cause) == 0);
			CHECK_EQ_U64(le_link_next_deadline(&l), dl);
			if (dl > 0)
				CHECK_EQ_U64(le_link_dequeue(&l, dl - 1, out, 4), 0);
			CHECK_EQ_U64(le_link_dequeue(&l, dl, out, 4), 1);
			CHECK_EQ_U64(out[0].deadline, dl);
			CHECK_EQ_U64(out[0].arrival, t);
			CHECK_EQ_U64(out[0].len, 60 + a);
			CHECK_EQ_U64((uintptr_t)out[0].handle, a + 1);
		}
		CHECK_EQ_U64(l.ctr.tx, 4);
		CHECK_EQ_U64(l.ctr.tx_bytes, 60 + 61 + 62 + 63);
		CHECK_EQ_U64(l.ctr.rx_bytes, l.ctr.tx_bytes);
		CHECK_EQ_U64(le_link_next_deadline(&l), UINT64_MAX);
		le_link_free(&l);
	}
}

static void in_order_at_deadline(void)
{
	struct le_link l;
	struct le_frame out[16];
	enum le_drop_cause cause;
	unsigned bad = 0, got = 0;

	if (make(&l, "delay 1ms", LE_DEFAULT_LIMIT) < 0)
		return;
	/* Ten frames 7 ns apart; step time 1 ns at a time around the deadlines:
	 * each frame leaves exactly at arrival + 1 ms, alone, in order. */
	for (unsigned i = 0; i < 10; i++)
		le_link_enqueue(&l, (void *)(uintptr_t)i, 100, 5000 + 7 * i, &cause);
	for (le_ns_t now = 5000 + 1000000 - 3; now < 5000 + 1000000 + 80; now++) {
		unsigned n = le_link_dequeue(&l, now, out, 16);
		for (unsigned k = 0; k < n; k++, got++)
			bad += (uintptr_t)out[k].handle != got || out[k].deadline != now;
	}
	CHECK_EQ_U64(got, 10);
	CHECK_EQ_U64(bad, 0);
	le_link_free(&l);
}

static void queue_limit(void)
{
	struct le_link l;
	struct le_frame out[8];
	enum le_drop_cause cause;
	int rc[5];

	if (make(&l, "delay 10ms limit 3", 3) < 0)
		return;
	for (int i = 0; i < 5; i++) {
		cause = LE_DROP_CAUSES;
		rc[i] = le_link_enqueue(&l, (void *)(uintptr_t)(i + 1), 100, (le_ns_t)i * 1000, &cause);
		if (i >= 3)
			CHECK(cause == LE_DROP_QUEUE_FULL, "frame %d: cause %d", i + 1, (int)cause);
	}
	CHECK(rc[0] == 0 && rc[1] == 0 && rc[2] == 0 && rc[3] == -1 && rc[4] == -1);
	CHECK_EQ_U64(l.ctr.drop[LE_DROP_QUEUE_FULL], 2);
	CHECK_EQ_U64(l.ctr.drop[LE_DROP_LOSS], 0);
	CHECK_EQ_U64(le_link_depth(&l), 3);
	CHECK_EQ_U64(le_link_dequeue(&l, 10000000 + 2000, out, 8), 3);
	for (int i = 0; i < 3; i++)
		CHECK_EQ_U64((uintptr_t)out[i].handle, i + 1);
	/* Room again once frames left. */
	CHECK(le_link_enqueue(&l, NULL, 100, 20000000, &cause) == 0);
	CHECK(conserved(&l));
	le_link_free(&l);
}

static void randomized_conservation(void)
{
	struct le_link l;
	struct le_frame out[32];
	uint64_t x = 0x2545F4914F6CDD1DULL;
	le_ns_t now = 0;
	unsigned broken = 0, late = 0, order = 0, ops = 0;
	uintptr_t next_id = 1, last_out = 0;

	if (make(&l, "delay 250us loss 10% limit 50 seed 3", 64) < 0)
		return;
	for (int i = 0; i < 200000; i++) {
		enum le_drop_cause cause;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64: test schedule only */
		now += x % 20000;                          /* 0 .. 20 us between events */
		if (x >> 62) {                             /* 3 in 4: a frame arrives */
			le_link_enqueue(&l, (void *)next_id++, 64 + (uint32_t)(x % 1400), now, &cause);
		} else {
			unsigned n = le_link_dequeue(&l, now, out, 1 + (unsigned)(x >> 40) % 32);
			for (unsigned k = 0; k < n; k++) {
				late += out[k].deadline > now;
				order += (uintptr_t)out[k].handle <= last_out;
				last_out = (uintptr_t)out[k].handle;
			}
		}
		ops++;
		broken += !conserved(&l);
	}
	CHECK_EQ_U64(ops, 200000);
	CHECK_EQ_U64(broken, 0);
	CHECK_EQ_U64(late, 0);
	CHECK_EQ_U64(order, 0);
	CHECK(l.ctr.drop[LE_DROP_LOSS] > 0 && l.ctr.drop[LE_DROP_QUEUE_FULL] > 0 && l.ctr.tx > 0,
	      "loss %llu queue_full %llu tx %llu", (unsigned long long)l.ctr.drop[LE_DROP_LOSS],
	      (unsigned long long)l.ctr.drop[LE_DROP_QUEUE_FULL], (unsigned long long)l.ctr.tx);
	CHECK_EQ_U64(l.ctr.rx, next_id - 1);

	/* drain: everything left comes out, counted as the model's tx. */
	uint64_t depth = le_link_depth(&l), tx = l.ctr.tx, drained = 0;
	unsigned n;
	CHECK(depth > 0);
	while ((n = le_link_drain(&l, out, 7)) > 0)
		drained += n;
	CHECK_EQ_U64(drained, depth);
	CHECK_EQ_U64(l.ctr.tx, tx + depth);
	CHECK_EQ_U64(le_link_depth(&l), 0);
	CHECK(conserved(&l));
	le_link_free(&l);
}

static void init_errors(void)
{
	struct le_link_config c;
	struct le_link l;
	char err[LE_ERR_MAX] = "";

	le_config_default(&c);
	c.limit = 100;
	CHECK(le_link_init(&l, &c, LE_DIR_B2A, 1, 99, err, sizeof(err)) == -1);
	CHECK_STR_CONTAINS(err, "capacity");
	CHECK_STR_CONTAINS(err, "99");
	CHECK(le_link_init(&l, &c, LE_DIR_B2A, 1, 100, err, sizeof(err)) == 0);
	CHECK_EQ_U64(l.line.capacity, 128);
	le_link_free(&l);

	/* Seed: the config's when set, else the daemon's default. */
	CHECK(le_config_parse("seed 5", &c, err, sizeof(err)) == 0);
	CHECK(le_link_init(&l, &c, LE_DIR_A2B, 77, 1000, err, sizeof(err)) == 0);
	CHECK_EQ_U64(l.seed, 5);
	le_link_free(&l);
	c.seed_set = 0;
	CHECK(le_link_init(&l, &c, LE_DIR_A2B, 77, 1000, err, sizeof(err)) == 0);
	CHECK_EQ_U64(l.seed, 77);
	le_link_free(&l);

	CHECK(strcmp(le_direction_name(LE_DIR_A2B), "a2b") == 0);
	CHECK(strcmp(le_direction_name(LE_DIR_B2A), "b2a") == 0);
	static const char *const names[LE_DROP_CAUSES] = { "loss", "queue_full", "ring_full",
							   "tx_refused", "shutdown", "malformed" };
	for (int i = 0; i < LE_DROP_CAUSES; i++)
		CHECK(strcmp(le_drop_cause_name((enum le_drop_cause)i), names[i]) == 0);

	struct le_counters a = { 1, 2, 3, 4, { 5, 6, 7, 8, 9, 10 } }, b = a;
	le_counters_add(&a, &b);
	CHECK_EQ_U64(a.rx, 2);
	CHECK_EQ_U64(a.tx_bytes, 8);
	CHECK_EQ_U64(a.drop[LE_DROP_MALFORMED], 20);
	CHECK_EQ_U64(le_counters_dropped(&a), 2 * (5 + 6 + 7 + 8 + 9 + 10));
}

int main(void)
{
	exact_deadlines();
	in_order_at_deadline();
	queue_limit();
	randomized_conservation();
	init_errors();
	return mt_summary();
}
