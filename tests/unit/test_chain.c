/* Chained links (chain.h, `LINK >> LINK`), in virtual time: the grammar,
 * departures equal to the hops run one after the other by hand, loss
 * counted in the hop that lost, conservation per hop and across the chain
 * at every step, order, independence from how often dequeue is called,
 * and live changes between chains of different lengths. */
#include <stdio.h>
#include <stdlib.h>

#include "fake.h"
#include "minitest.h"
#include "swap.h"

static struct le_path *build(const char *text, struct fakes *fk, uint64_t seed)
{
	static struct le_path_config c;
	char err[LE_ERR_MAX] = "";
	struct le_path *p = malloc(sizeof(*p));

	if (p == NULL || le_path_config_parse(text, &c, err, sizeof(err)) != 0 ||
	    le_path_init(p, &c, LE_DIR_A2B, seed, &fk->ops, err, sizeof(err)) != 0) {
		CHECK(0, "'%s': %s", text, err);
		free(p);
		return NULL;
	}
	return p;
}

static void drop_path(struct le_path *p)
{
	le_path_free(p);
	free(p);
}

static void parse_error(const char *text, const char *want)
{
	static struct le_path_config c;
	char err[LE_ERR_MAX] = "";

	CHECK(le_path_config_parse(text, &c, err, sizeof(err)) == -1, "'%s' parsed", text);
	CHECK_STR_CONTAINS(err, want);
}

static void grammar(void)
{
	static struct le_path_config c, back;
	char err[LE_ERR_MAX] = "", buf[LE_PATH_TEXT_MAX];
	const char *text = "rate 100mbit >> delay 6ms rate 45mbit limit-bytes 100kb ; "
			   "class ef match dscp ef : delay 1ms >> rate 5mbit >> loss 1%";

	CHECK(le_path_config_parse(text, &c, err, sizeof(err)) == 0, "%s", err);
	CHECK_EQ_U64(le_path_config_hops(&c, 0), 2);
	CHECK_EQ_U64(le_path_config_hops(&c, 1), 3);
	CHECK_EQ_U64(le_path_config_hop(&c, 0, 0)->rate.bps, 100000000);
	CHECK_EQ_U64(le_path_config_hop(&c, 0, 1)->rate.bps, 45000000);
	CHECK_EQ_U64(le_path_config_hop(&c, 0, 1)->delay, 6000000);
	CHECK_EQ_U64(le_path_config_hop(&c, 1, 1)->rate.bps, 5000000);
	le_path_config_format(&c, buf, sizeof(buf));
	CHECK(strcmp(buf, text) == 0, "format: '%s'", buf);
	CHECK(le_path_config_parse(buf, &back, err, sizeof(err)) == 0 && le_path_config_equal(&c, &back));
	/* no spaces needed around >> */
	CHECK(le_path_config_parse("rate 1mbit>>delay 2ms", &back, err, sizeof(err)) == 0, "%s", err);
	CHECK_EQ_U64(le_path_config_hops(&back, 0), 2);
	CHECK(!le_path_config_equal(&c, &back));
	/* a hop that formats as nothing still parses back */
	CHECK(le_path_config_parse("delay 0ms >> rate 1mbit", &back, err, sizeof(err)) == 0, "%s", err);
	le_path_config_format(&back, buf, sizeof(buf));
	CHECK(le_path_config_parse(buf, &c, err, sizeof(err)) == 0 && le_path_config_equal(&c, &back), "'%s'", buf);
	/* a plain link is one hop */
	CHECK(le_path_config_parse("delay 1ms", &c, err, sizeof(err)) == 0 && le_path_config_hops(&c, 0) == 1);

	parse_error(">> delay 1ms", "hop 1 is empty: '>>' at the start");
	parse_error("delay 1ms >>", "hop 2 is empty: '>>' at the end");
	parse_error("delay 1ms >> >> rate 1mbit", "hop 2 is empty: '>>' twice in a row");
	parse_error("delay 1ms >> delay 1x", "hop 2: delay");
	parse_error("delay 1ms ; class a match dscp ef : rate 1mbit >>", "class a: hop 2 is empty");
	parse_error("delay 1ms >> delay 1ms >> delay 1ms >> delay 1ms >> delay 1ms >> delay 1ms >> delay 1ms >> "
		    "delay 1ms >> delay 1ms",
		    "more than 8 hops");
}

/* Runs frames of `len` bytes arriving at `at[]` through a path, polling
 * every `poll` ns; departures (index order of leaving, deadlines) out. */
static unsigned run(const char *text, const le_ns_t *at, unsigned n, uint32_t len, le_ns_t poll, uint32_t *idx,
		    le_ns_t *dl, struct le_counters *ctr)
{
	struct fakes fk;
	struct le_path *p;
	struct le_frame out[16];
	unsigned got = 0, k;
	le_ns_t now = 0;

	fk_init(&fk, 1);
	p = build(text, &fk, 7);
	if (p == NULL)
		return 0;
	for (unsigned i = 0; i < n || le_path_depth(p) > 0; now += poll) {
		for (; i < n && at[i] <= now; i++)
			le_path_enqueue(p, fk_new(&fk, len), len, at[i]);
		while ((k = le_path_dequeue(p, now, out, 16)) > 0) {
			CHECK_EQ_U64(fk_sent(&fk, out, k), 0);
			for (unsigned j = 0; j < k; j++) {
				CHECK(out[j].deadline <= now);
				idx[got] = fk_idx(out[j].handle);
				dl[got++] = out[j].deadline;
			}
		}
		if (now > 10 * LE_NS_PER_S)
			break;
	}
	*ctr = le_path_class_counters(p, 0);
	CHECK(le_counters_conserved(ctr, le_path_depth(p)));
	drop_path(p);
	fk_fini(&fk);
	return got;
}

/* 1000-byte frames at 8 Mbit/s take 1 ms each. */
static void hand_computed(void)
{
	const le_ns_t ms = LE_NS_PER_MS;
	const le_ns_t at[4] = { 0, 0, 0, 10 * ms };
	/* rate then delay: leave hop 0 at 1, 2, 3, 11 ms; +5 ms */
	const le_ns_t rate_delay[4] = { 6 * ms, 7 * ms, 8 * ms, 16 * ms };
	/* delay then rate: reach hop 1 at 5, 5, 5, 15 ms; served 1 ms each */
	const le_ns_t delay_rate[4] = { 6 * ms, 7 * ms, 8 * ms, 16 * ms };
	/* two rates: the second (4 Mbit/s, 2 ms a frame) is the bottleneck:
	 * hop 0 out at 1, 2, 3, 11; hop 1 out at 3, 5, 7, 13 */
	const le_ns_t two_rates[4] = { 3 * ms, 5 * ms, 7 * ms, 13 * ms };
	uint32_t idx[8];
	le_ns_t dl[8];
	struct le_counters c;

	CHECK_EQ_U64(run("rate 8mbit >> delay 5ms", at, 4, 1000, 100000, idx, dl, &c), 4);
	for (unsigned i = 0; i < 4; i++)
		CHECK(idx[i] == i && dl[i] == rate_delay[i], "rate>>delay %u: %u at %llu", i, idx[i],
		      (unsigned long long)dl[i]);
	CHECK_EQ_U64(run("delay 5ms >> rate 8mbit", at, 4, 1000, 100000, idx, dl, &c), 4);
	for (unsigned i = 0; i < 4; i++)
		CHECK(idx[i] == i && dl[i] == delay_rate[i], "delay>>rate %u: %u at %llu", i, idx[i],
		      (unsigned long long)dl[i]);
	CHECK_EQ_U64(run("rate 8mbit >> rate 4mbit", at, 4, 1000, 100000, idx, dl, &c), 4);
	for (unsigned i = 0; i < 4; i++)
		CHECK(idx[i] == i && dl[i] == two_rates[i], "rate>>rate %u: %u at %llu", i, idx[i],
		      (unsigned long long)dl[i]);
	CHECK_EQ_U64(c.rx, 4);
	CHECK_EQ_U64(c.tx, 4);
	CHECK_EQ_U64(c.tx_bytes, 4000);
	/* limit 1 at the second hop: frame 1 (there at 2 ms, while frame 0
	 * is served until 3 ms) is dropped; frame 2 (there at 3 ms) is not */
	CHECK_EQ_U64(run("rate 8mbit >> rate 4mbit limit 1", at, 4, 1000, 100000, idx, dl, &c), 3);
	CHECK_EQ_U64(c.drop[LE_DROP_QUEUE_FULL], 1);
	CHECK(idx[0] == 0 && idx[1] == 2 && idx[2] == 3);
	CHECK(dl[0] == 3 * ms && dl[1] == 5 * ms && dl[2] == 13 * ms);
}

/* Loss in hop 2 is counted by hop 2; hop counts chain into the class's. */
static void loss_in_hop2(void)
{
	struct fakes fk;
	struct le_path *p;
	struct le_frame out[64];
	const struct le_counters *h0, *h1;
	struct le_counters c;
	unsigned k;

	fk_init(&fk, 1);
	p = build("delay 1ms >> loss 30% delay 2ms", &fk, 3);
	if (p == NULL)
		return;
	CHECK_EQ_U64(le_path_class_hops(p, 0), 2);
	/* one frame every 10 us: 300 held at most, within the default limit */
	for (le_ns_t now = 0; now < 120 * LE_NS_PER_MS; now += 50000) {
		for (unsigned i = (unsigned)(now / 10000); i < 10000 && i < (now + 50000) / 10000; i++)
			le_path_enqueue(p, fk_new(&fk, 100), 100, (le_ns_t)i * 10000);
		while ((k = le_path_dequeue(p, now, out, 64)) > 0)
			CHECK_EQ_U64(fk_sent(&fk, out, k), 0);
	}
	h0 = le_path_hop_counters(p, 0, 0);
	h1 = le_path_hop_counters(p, 0, 1);
	c = le_path_class_counters(p, 0);
	CHECK_EQ_U64(h0->rx, 10000);
	CHECK_EQ_U64(le_counters_dropped(h0), 0);
	CHECK_EQ_U64(h0->tx, 10000);
	CHECK_EQ_U64(h0->hop_out, 10000);
	CHECK_EQ_U64(h1->hop_in, 10000);
	CHECK_EQ_U64(h1->rx, 10000);
	/* binomial(10000, 0.3): sd 46; 6 sd either side */
	CHECK(h1->drop[LE_DROP_LOSS] > 2724 && h1->drop[LE_DROP_LOSS] < 3276, "%llu",
	      (unsigned long long)h1->drop[LE_DROP_LOSS]);
	CHECK_EQ_U64(c.rx, 10000);
	CHECK_EQ_U64(c.drop[LE_DROP_LOSS], h1->drop[LE_DROP_LOSS]);
	CHECK_EQ_U64(c.tx, h1->tx);
	CHECK_EQ_U64(c.hop_in + c.hop_out, 0);
	CHECK(le_counters_conserved(&c, le_path_depth(p)));
	CHECK_EQ_U64(le_path_depth(p), 0);
	CHECK(fk.freed == h1->drop[LE_DROP_LOSS], "%llu freed, %llu sent, %llu live, n %u", (unsigned long long)fk.freed,
	      (unsigned long long)fk_count(&fk, FK_SENT), (unsigned long long)fk_count(&fk, FK_LIVE), fk.n);
	drop_path(p);
	fk_fini(&fk);
}

static uint64_t xs(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Bursty traffic through a three-hop chain with drops, copies and
 * jitter: conservation per hop and across the chain after every poll;
 * the departures depend on the traffic and seed, not on the polling. */
static uint64_t conserve(const char *text, le_ns_t poll, int check_order)
{
	struct fakes fk;
	struct le_path *p;
	struct le_frame out[32];
	uint64_t x = 0x9e3779b97f4a7c15ULL, hash = 1469598103934665603ULL;
	int64_t last = -1;
	le_ns_t t = 0, now = 0;
	unsigned k, i = 0;

	fk_init(&fk, 1);
	p = build(text, &fk, 11);
	if (p == NULL)
		return 0;
	for (now = 0; i < 4000 || le_path_depth(p) > 0; now += poll) {
		for (; i < 4000 && t <= now; i++) {
			uint32_t len = 64 + (uint32_t)(xs(&x) % 1400);
			void *h = fk_new(&fk, len);

			/* its number in the bytes, which a copy shares (pool
			 * indices depend on when copies were made) */
			memcpy(fk.data[fk_idx(h)] + 100, &i, sizeof(i));
			le_path_enqueue(p, h, len, t);
			t += xs(&x) % 4 == 0 ? 2 * LE_NS_PER_MS : 20000;
		}
		while ((k = le_path_dequeue(p, now, out, 32)) > 0) {
			CHECK_EQ_U64(fk_sent(&fk, out, k), 0);
			for (unsigned j = 0; j < k; j++) {
				uint32_t id;

				memcpy(&id, fk.data[fk_idx(out[j].handle)] + 100, sizeof(id));
				hash = fnv(hash, id);
				hash = fnv(hash, out[j].deadline);
				if (check_order) {
					CHECK((int64_t)id > last, "frame %u left after %lld", id, (long long)last);
					last = id;
				}
			}
		}
		{
			struct le_counters c = le_path_class_counters(p, 0);

			CHECK(le_counters_conserved(&c, le_path_depth(p)), "'%s' at %llu", text,
			      (unsigned long long)now);
			for (unsigned h = 0; h < le_path_class_hops(p, 0); h++)
				CHECK(le_counters_conserved(le_path_hop_counters(p, 0, h), le_path_hop_depth(p, 0, h)));
		}
		if (now > 60 * LE_NS_PER_S)
			break;
	}
	CHECK_EQ_U64(le_path_depth(p), 0);
	le_path_drain(p);
	drop_path(p);
	CHECK_EQ_U64(fk_count(&fk, FK_LIVE), 0);
	CHECK_EQ_U64(fk.double_free + fk.bad_handle, 0);
	fk_fini(&fk);
	return hash;
}

static void conservation_order_polling(void)
{
	const char *lossy = "rate 20mbit limit 20 >> delay 3ms 1ms loss 5% duplicate 5% >> rate 10mbit limit 30";
	const char *ordered = "rate 50mbit >> delay 4ms >> rate 40mbit";
	uint64_t a = conserve(lossy, 10000, 0), b = conserve(lossy, 3 * LE_NS_PER_MS, 0),
		 c = conserve(lossy, 777777, 0);

	CHECK(a == b && b == c, "departures depend on the polling");
	a = conserve(ordered, 10000, 1);
	CHECK(a == conserve(ordered, 5 * LE_NS_PER_MS, 1));
}

/* Frees every path a swap holds. */
static void release_all(struct le_swap *sw)
{
	struct le_path *left[2 * LE_SWAP_RETIRING_MAX + 2];
	unsigned n;

	le_swap_drain(sw);
	n = le_swap_release(sw, left);
	for (unsigned i = 0; i < n; i++)
		drop_path(left[i]);
}

/* Live changes between chains of different lengths: nothing lost or
 * sent twice, conservation over the swap's paths. */
static void swap_lengths(const char *from, const char *to)
{
	struct fakes fk;
	struct le_swap sw;
	struct le_path *a, *b, *left[2 * LE_SWAP_RETIRING_MAX + 2];
	struct le_frame out[32];
	struct le_counters c;
	unsigned k, n;
	le_ns_t now;

	fk_init(&fk, 1);
	a = build(from, &fk, 5);
	b = build(to, &fk, 5);
	if (a == NULL || b == NULL)
		return;
	le_swap_init(&sw, a);
	CHECK(le_swap_stage(&sw, b, 20 * LE_NS_PER_MS) == 0);
	for (now = 0; now < 2 * LE_NS_PER_S; now += 100000) {
		if (now < 40 * LE_NS_PER_MS)
			for (int j = 0; j < 3; j++)
				le_swap_offer(&sw, fk_new(&fk, 1000), 1000, now);
		while ((k = le_swap_dequeue(&sw, now, out, 32)) > 0)
			CHECK_EQ_U64(fk_sent(&fk, out, k), 0);
		memset(&c, 0, sizeof(c));
		le_swap_counters(&sw, &c);
		CHECK(le_counters_conserved(&c, le_swap_depth(&sw)), "'%s' -> '%s' at %llu", from, to,
		      (unsigned long long)now);
	}
	CHECK_EQ_U64(sw.swaps, 1);
	CHECK_EQ_U64(le_swap_depth(&sw), 0);
	CHECK_EQ_U64(c.rx, 1200);
	CHECK_EQ_U64(c.tx + le_counters_dropped(&c), 1200);
	CHECK(c.tx > 0);
	le_swap_drain(&sw);
	n = le_swap_release(&sw, left);
	for (unsigned i = 0; i < n; i++)
		drop_path(left[i]);
	CHECK_EQ_U64(fk_count(&fk, FK_LIVE), 0);
	CHECK_EQ_U64(fk.double_free + fk.bad_handle, 0);
	fk_fini(&fk);
}


/* A swap over paths built from `links` (seed 5), started on the first;
 * the others are built for the test to stage. 0 when one does not build
 * (grammar() reports it). */
struct scene {
	struct fakes fk;
	struct le_swap sw;
	struct le_path *p[3];
};

static int scene_open(struct scene *s, const char *const *links, unsigned n)
{
	fk_init(&s->fk, 1);
	for (unsigned i = 0; i < n; i++)
		if ((s->p[i] = build(links[i], &s->fk, 5)) == NULL)
			return 0;
	le_swap_init(&s->sw, s->p[0]);
	return 1;
}

/* Takes every frame due at t, each sent once and due by t: its deadline
 * into dl[] and, when given, t into taken[] (by the frame's index). */
static void take_at(struct scene *s, le_ns_t t, le_ns_t *dl, le_ns_t *taken)
{
	struct le_frame out[8];
	unsigned n;

	while ((n = le_swap_dequeue(&s->sw, t, out, 8)) > 0) {
		CHECK_EQ_U64(fk_sent(&s->fk, out, n), 0);
		for (unsigned j = 0; j < n; j++) {
			CHECK(out[j].deadline <= t);
			dl[fk_idx(out[j].handle)] = out[j].deadline;
			if (taken != NULL)
				taken[fk_idx(out[j].handle)] = t;
		}
	}
}

/* Every path freed, and no frame left alive. */
static void scene_close(struct scene *s)
{
	release_all(&s->sw);
	CHECK_EQ_U64(fk_count(&s->fk, FK_LIVE), 0);
	fk_fini(&s->fk);
}

/* A chain made longer live: the old last hop's frames that left its
 * serializer before the change have left the link (chain.h: frames an
 * old hop served go on to the next hop's successor, and the last hop has
 * none), so they keep their deadlines, whether or not the owner took the
 * frames due before the change in time; frames still queued go on
 * through the new chain. `delay 1ms` becomes `delay 1ms >> delay 5ms`
 * at 2 ms: frame 0 left at 1 ms, frame 1 leaves at 2.5 ms, frame 2
 * (arriving at the change) at 2 + 1 + 5 ms; `delay 1ms >> delay 1ms` to
 * a chain of three at 3 ms: 1 ms later each, and 3 + 1 + 1 + 5 ms. */
static void grown_keeps_served(const char *from, const char *to, le_ns_t extra)
{
	const le_ns_t at = 2 * LE_NS_PER_MS + extra;
	const le_ns_t want[3] = { extra + LE_NS_PER_MS, extra + 2500000, at + extra + 6 * LE_NS_PER_MS };
	const char *const links[2] = { from, to };

	for (int polled = 0; polled < 2; polled++) {
		struct scene s;
		le_ns_t dl[3] = { 0 };

		if (!scene_open(&s, links, 2))
			return;
		le_swap_offer(&s.sw, fk_new(&s.fk, 100), 100, 0);
		le_swap_offer(&s.sw, fk_new(&s.fk, 100), 100, 1500000);
		CHECK(le_swap_stage(&s.sw, s.p[1], at) == 0);
		/* polled: the frame due at 1 ms is taken before the change */
		for (le_ns_t t = 0; polled && t < at; t += 100000)
			take_at(&s, t, dl, NULL);
		le_swap_offer(&s.sw, fk_new(&s.fk, 100), 100, at);
		for (le_ns_t t = at; t < 50 * LE_NS_PER_MS; t += 100000)
			take_at(&s, t, dl, NULL);
		for (int i = 0; i < 3; i++)
			CHECK(dl[i] == want[i], "'%s' -> '%s' (%s): frame %d left at %llu, want %llu", from, to,
			      polled ? "polled" : "not polled", i, (unsigned long long)dl[i], (unsigned long long)want[i]);
		CHECK_EQ_U64(le_swap_depth(&s.sw), 0);
		scene_close(&s);
	}
}

/* Two changes while a frame is still in the first hop of each chain:
 * `delay 5ms >> delay 1ms`, then `delay 1ms >> delay 1ms` at 1 ms, then
 * the plain `delay 1ms` at 2 ms. The first hops of both old chains feed
 * the second one's last hop, merged by their deadlines there: frame 1
 * (hop 1 until 2.5 ms) reaches it before frame 0 (until 5.5 ms), whether
 * the owner polled at 3 ms or only at 6 ms, and leaves at its deadline,
 * 3.5 ms, not behind frame 0. */
static void two_changes_one_mover(void)
{
	static const le_ns_t polls[2][4] = { { 2000000, 3000000, 6000000, 7000000 },
					     { 2000000, 6000000, 7000000, 8000000 } };
	static const char *const links[3] = { "delay 5ms >> delay 1ms", "delay 1ms >> delay 1ms", "delay 1ms" };

	for (int v = 0; v < 2; v++) {
		struct scene s;
		struct le_counters c = { 0 };
		le_ns_t dl[2] = { 0 }, taken[2] = { 0 };

		if (!scene_open(&s, links, 3))
			return;
		le_swap_offer(&s.sw, fk_new(&s.fk, 100), 100, 500000);
		CHECK(le_swap_stage(&s.sw, s.p[1], LE_NS_PER_MS) == 0);
		le_swap_offer(&s.sw, fk_new(&s.fk, 100), 100, 1500000);
		CHECK(le_swap_stage(&s.sw, s.p[2], 2 * LE_NS_PER_MS) == 0);
		for (int i = 0; i < 4; i++)
			take_at(&s, polls[v][i], dl, taken);
		CHECK_EQ_U64(dl[0], 6500000);
		CHECK_EQ_U64(dl[1], 3500000);
		CHECK(taken[1] == 6000000 && taken[0] == 7000000,
		      "polls %d: frame 1 taken at %llu, frame 0 at %llu", v, (unsigned long long)taken[1],
		      (unsigned long long)taken[0]);
		le_swap_counters(&s.sw, &c);
		CHECK_EQ_U64(c.event[LE_EVENT_LATE_ARRIVAL], 0);
		scene_close(&s);
	}
}

/* A chain made plain, then a chain again while the first chain's hop 1
 * still serves a frame: `delay 3ms >> delay 10ms`, `delay 1ms` at 1 ms,
 * `delay 1ms >> delay 1ms` at 5 ms. The frame (hop 1 until 3.5 ms) goes
 * on to its own chain's hop 2, which no change continued (chain.h), and
 * leaves at 13.5 ms, whether the owner polled between 3.5 and 5 ms or
 * not; the new chain's hops are another line. A frame after the second
 * change takes the new chain: 5 + 1 + 1 ms. */
static void regrown_keeps_its_next_hop(void)
{
	static const char *const links[3] = { "delay 3ms >> delay 10ms", "delay 1ms", "delay 1ms >> delay 1ms" };

	for (int polled = 0; polled < 2; polled++) {
		struct scene s;
		le_ns_t dl[2] = { 0 };

		if (!scene_open(&s, links, 3))
			return;
		le_swap_offer(&s.sw, fk_new(&s.fk, 100), 100, 500000);
		CHECK(le_swap_stage(&s.sw, s.p[1], LE_NS_PER_MS) == 0);
		le_swap_advance(&s.sw, LE_NS_PER_MS);
		CHECK(le_swap_stage(&s.sw, s.p[2], 5 * LE_NS_PER_MS) == 0);
		for (le_ns_t t = 4 * LE_NS_PER_MS; polled && t < 5 * LE_NS_PER_MS; t += 100000)
			take_at(&s, t, dl, NULL);
		le_swap_offer(&s.sw, fk_new(&s.fk, 100), 100, 5 * LE_NS_PER_MS);
		for (le_ns_t t = 5 * LE_NS_PER_MS; t < 50 * LE_NS_PER_MS; t += 100000)
			take_at(&s, t, dl, NULL);
		CHECK(dl[0] == 13500000, "%s: frame 0 left at %llu", polled ? "polled" : "not polled",
		      (unsigned long long)dl[0]);
		CHECK_EQ_U64(dl[1], 7 * LE_NS_PER_MS);
		scene_close(&s);
	}
}

/* `limit` across two retiring paths: `delay 1ms >> delay 10ms`, then
 * `delay 1ms >> delay 1ms limit 1` at 2 ms, then `delay 1ms` at 3.5 ms.
 * Frame 1 (arriving at 3 ms) reaches the second chain's hop 2 at 4 ms,
 * whose limit counts frame 0, still in the first chain's hop 2 until
 * 11 ms (live_changes.md: `limit` counts the frames on their way through
 * the old link): it is refused, whether the owner polled at 4 ms or only
 * at 12 ms, when frame 0 is due. */
static void limit_across_retiring_paths(void)
{
	static const char *const links[3] = { "delay 1ms >> delay 10ms", "delay 1ms >> delay 1ms limit 1",
					      "delay 1ms" };

	for (int coarse = 0; coarse < 2; coarse++) {
		struct scene s;
		struct le_counters c = { 0 };
		le_ns_t dl[2] = { 0 };

		if (!scene_open(&s, links, 3))
			return;
		le_swap_offer(&s.sw, fk_new(&s.fk, 100), 100, 0);
		CHECK(le_swap_stage(&s.sw, s.p[1], 2 * LE_NS_PER_MS) == 0);
		le_swap_offer(&s.sw, fk_new(&s.fk, 100), 100, 3 * LE_NS_PER_MS);
		CHECK(le_swap_stage(&s.sw, s.p[2], 3500000) == 0);
		le_swap_advance(&s.sw, 3500000);
		for (le_ns_t t = coarse ? 12 * LE_NS_PER_MS : 4 * LE_NS_PER_MS; t < 20 * LE_NS_PER_MS; t += 100000)
			take_at(&s, t, dl, NULL);
		le_swap_counters(&s.sw, &c);
		CHECK(c.drop[LE_DROP_QUEUE_FULL] == 1 && dl[1] == 0, "%s: frame 1 %s", coarse ? "polled at 12 ms" : "polled",
		      dl[1] ? "sent" : "not sent");
		CHECK_EQ_U64(dl[0], 11 * LE_NS_PER_MS);
		scene_close(&s);
	}
}

/* Sequences of live changes between chains of different lengths, each
 * staged ahead at its model time: every frame leaves (or is dropped) the
 * same, at the same deadline, and the counts are the same, whether the
 * owner polls every 70 us or at random gaps of up to 2.5 ms taking a
 * few frames at a time (docs/live_changes.md: a change's effect depends
 * on T and the seeds only). Changes come 6 ms apart, so several paths
 * retire at once. */
static uint64_t changes_polled(const char *const *cfg, unsigned ncfg, int coarse, struct le_counters *ctr)
{
	struct fakes fk;
	struct le_swap sw;
	struct le_path *p;
	struct le_frame out[8];
	uint64_t x = 0x2545f4914f6cdd1dULL, y = 77, hash = 1469598103934665603ULL;
	le_ns_t t = 0, poll = 0;
	unsigned next = 1, n;

	fk_init(&fk, 1);
	if ((p = build(cfg[0], &fk, 5)) == NULL)
		return 0;
	le_swap_init(&sw, p);
	for (unsigned i = 0; i < 3000 || le_swap_depth(&sw) > 0; i++) {
		t += i < 3000 ? (xs(&x) % 8 == 0 ? 1500000 : 5000 + xs(&x) % 15000) : 70000;
		while (poll < t) {
			while ((n = le_swap_dequeue(&sw, poll, out, coarse ? 1 + (unsigned)(xs(&y) % 5) : 8)) > 0) {
				CHECK_EQ_U64(fk_sent(&fk, out, n), 0);
				for (unsigned j = 0; j < n; j++) {
					CHECK(out[j].deadline <= poll);
					hash = fnv(fnv(hash, fk_idx(out[j].handle)), out[j].deadline);
				}
			}
			while ((p = le_swap_take_drained(&sw)) != NULL)
				drop_path(p);
			if (next < ncfg && sw.staged == NULL) {
				const le_ns_t at = (le_ns_t)next * 6 * LE_NS_PER_MS;

				CHECK(sw.clock <= at, "change %u staged late: weak test", next);
				if ((p = build(cfg[next], &fk, 5)) == NULL || le_swap_stage(&sw, p, at) != 0)
					break;
				next++;
			}
			poll += coarse ? 1 + xs(&y) % 2500000 : 70000;
		}
		if (i < 3000) {
			const uint32_t len = 64 + (uint32_t)(xs(&x) % 1400);

			le_swap_offer(&sw, fk_new(&fk, len), len, t);
		}
		if (t > 30 * LE_NS_PER_S)
			break;
	}
	CHECK_EQ_U64(sw.swaps, ncfg - 1);
	CHECK_EQ_U64(le_swap_depth(&sw), 0);
	memset(ctr, 0, sizeof(*ctr));
	le_swap_counters(&sw, ctr);
	CHECK(le_counters_conserved(ctr, 0));
	for (uint32_t i = 0; i < fk.n; i++)
		hash = fnv(hash, fk.state[i]);
	release_all(&sw);
	CHECK_EQ_U64(fk_count(&fk, FK_LIVE), 0);
	fk_fini(&fk);
	return hash;
}

static void changes_whatever_the_polling(void)
{
	static const char *const seq[][5] = {
		{ "delay 3ms >> delay 10ms", "delay 1ms", "delay 1ms >> delay 1ms", "delay 2ms 1ms >> rate 5mbit limit 3", NULL },
		{ "delay 5ms >> delay 1ms limit 4", "delay 1ms >> delay 1ms limit 2", "delay 1ms", "rate 8mbit >> delay 2ms", NULL },
		{ "delay 4ms 3ms >> delay 4ms 3ms >> delay 4ms 3ms >> delay 1ms", "loss 8%", "delay 1ms loss 10% >> delay 1ms",
		  "delay 0ms", "delay 2ms loss 5% >> rate 10mbit limit 50 delay 3ms 1ms" },
		{ "rate 20mbit >> delay 10ms reorder 25% 50% >> rate 15mbit limit 40 loss 3%",
		  "rate 30mbit limit 4 drop-head >> rate 10mbit limit 3 drop-head", "delay 0ms", "delay 1ms >> delay 1ms", NULL },
	};

	for (unsigned s = 0; s < sizeof(seq) / sizeof(seq[0]); s++) {
		struct le_counters a, b;
		unsigned n = 0;

		while (n < 5 && seq[s][n] != NULL)
			n++;
		CHECK(changes_polled(seq[s], n, 0, &a) == changes_polled(seq[s], n, 1, &b) &&
			      memcmp(&a, &b, sizeof(a)) == 0,
		      "'%s' and %u changes: the departures depend on the polling", seq[s][0], n - 1);
	}
}

int main(void)
{
	grammar();
	hand_computed();
	loss_in_hop2();
	conservation_order_polling();
	swap_lengths("rate 50mbit >> delay 5ms rate 20mbit limit 100", "rate 50mbit >> delay 5ms >> rate 20mbit");
	swap_lengths("rate 50mbit >> delay 5ms >> rate 20mbit", "rate 50mbit >> delay 5ms rate 20mbit limit 100");
	swap_lengths("delay 5ms", "rate 50mbit >> delay 5ms rate 20mbit");
	swap_lengths("rate 50mbit >> delay 5ms rate 20mbit", "delay 5ms");
	grown_keeps_served("delay 1ms", "delay 1ms >> delay 5ms", 0);
	grown_keeps_served("delay 1ms >> delay 1ms", "delay 1ms >> delay 1ms >> delay 5ms", LE_NS_PER_MS);
	two_changes_one_mover();
	regrown_keeps_its_next_hop();
	limit_across_retiring_paths();
	changes_whatever_the_polling();
	return mt_summary();
}
