/* Live changes (swap.h), in virtual time.
 *
 * The identity invariant: changing a direction's path for an identical
 * one at frame k gives exactly the output of not changing it, frame for
 * frame (which frames leave, in which order, at which deadlines, which
 * are dropped, duplicated or corrupted, and every counter), for every
 * stage of the link and several k; the same change with another `seed`
 * changes it. Then timed changes: a change lands exactly at its model
 * time, whenever the owner polls. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fake.h"
#include "minitest.h"
#include "swap.h"

static const char *traces_dir = "traces";

/* Config texts name traces as @FILE, resolved under traces_dir. */
static void expand(const char *text, char *out, size_t n)
{
	size_t len = 0;

	for (const char *p = text; *p && len + 1 < n; p++) {
		if (*p == '@')
			len += (size_t)snprintf(out + len, n - len, "%s/", traces_dir);
		else
			out[len++] = *p;
	}
	out[len < n ? len : n - 1] = '\0';
}

static struct le_path *build(const char *text, struct fakes *fk, uint64_t seed)
{
	static struct le_path_config c;
	char err[LE_ERR_MAX] = "", full[2048];
	struct le_path *p = malloc(sizeof(*p));

	expand(text, full, sizeof(full));
	if (p == NULL || le_path_config_parse(full, &c, err, sizeof(err)) != 0 ||
	    le_path_init(p, &c, LE_DIR_A2B, seed, &fk->ops, err, sizeof(err)) != 0) {
		CHECK(0, "'%s': %s", full, err);
		free(p);
		return NULL;
	}
	return p;
}

/* A deterministic traffic source of its own (not the model's streams):
 * bursts of back-to-back frames and idle gaps, IPv4/UDP frames with a few
 * DSCPs and ports, half of them ECN-capable. */
struct source {
	uint64_t x;
	le_ns_t unused;
};

static uint64_t src_next(struct source *s)
{
	s->x ^= s->x << 13;
	s->x ^= s->x >> 7;
	s->x ^= s->x << 17;
	return s->x;
}

static void *make_frame(struct fakes *fk, struct source *s, uint32_t *len)
{
	uint64_t r = src_next(s);
	static const uint8_t dscp[4] = { 0, 46, 34, 10 };
	void *h;
	uint8_t *b;

	*len = 64 + (uint32_t)(r % 1437);
	h = fk_new(fk, *len);
	b = fk->data[fk_idx(h)];
	b[12] = 0x08; /* IPv4 */
	b[14] = 0x45;
	b[15] = (uint8_t)(dscp[(r >> 12) & 3] << 2 | ((r >> 14) & 1 ? 2 : 0)); /* ECT(0) half the time */
	b[23] = 17; /* UDP */
	b[36] = 0x13;
	b[37] = (r >> 16) & 1 ? 0x89 : 0x88; /* dport 5001 or 5000 */
	return h;
}

static le_ns_t next_gap(struct source *s)
{
	uint64_t r = src_next(s);

	/* mostly bursts 2..20 us apart, sometimes 1..4 ms of silence */
	return (r & 15) == 0 ? 1000000 + (r >> 8) % 3000000 : 2000 + (r >> 8) % 18000;
}

/* frames per run: 3000, or argv[2] (fewer under valgrind) */
static long FRAMES = 3000;
#define POLL 70000 /* the owner polls every 70 us, whatever happens */

struct outcome {
	uint64_t hash;     /* every departure and every byte sent, in order */
	uint64_t sent, freed;
	uint64_t early;    /* frames handed back before their deadline */
	struct le_counters ctr;
};

static void take(struct fakes *fk, struct le_swap *sw, le_ns_t now, struct outcome *o)
{
	struct le_frame out[32];
	unsigned n;

	while ((n = le_swap_dequeue(sw, now, out, 32)) > 0) {
		CHECK_EQ_U64(fk_sent(fk, out, n), 0);
		for (unsigned j = 0; j < n; j++) {
			uint32_t i = fk_idx(out[j].handle);

			o->hash = fnv(o->hash, i);
			o->hash = fnv(o->hash, out[j].deadline);
			o->hash = fnv(o->hash, now);
			o->hash = fnv(o->hash, fk->parent[i]);
			for (unsigned b = 0; b < FK_BYTES; b += 8) {
				uint64_t w;
				memcpy(&w, &fk->data[i][b], 8);
				o->hash = fnv(o->hash, w);
			}
			o->early += out[j].deadline > now;
		}
		o->sent += n;
	}
}

/* Runs FRAMES frames through `a`; at frame k (k < 0: never) `b` takes over
 * at that frame's arrival: staged just before the frame is offered, or
 * (early) before the first frame, with polls in between. */
static int run(const char *a, const char *b, long k, int early, struct outcome *o)
{
	struct fakes fk;
	struct source src = { 0x9e3779b97f4a7c15ULL, 0 }, gaps = { 0x2545f4914f6cdd1dULL, 0 };
	struct le_swap sw;
	struct le_path *pa, *pb = NULL, *left[2 * LE_SWAP_RETIRING_MAX + 2];
	le_ns_t poll = 0, t = 0, tk = 0;
	unsigned nd;

	memset(o, 0, sizeof(*o));
	fk_init(&fk, 1);
	pa = build(a, &fk, 1);
	if (pa == NULL)
		return -1;
	if (k >= 0 && (pb = build(b, &fk, 1)) == NULL) {
		le_path_free(pa);
		free(pa);
		return -1;
	}
	le_swap_init(&sw, pa);
	if (k >= 0 && early) {
		struct source g = gaps;
		for (long i = 0; i <= k; i++)
			tk += next_gap(&g);
		CHECK(le_swap_stage(&sw, pb, tk) == 0);
	}
	for (long i = 0; i < FRAMES; i++) {
		uint32_t len;
		void *h;

		t += next_gap(&gaps);
		while (poll < t) {
			take(&fk, &sw, poll, o);
			poll += POLL;
		}
		if (i == k && !early)
			CHECK(le_swap_stage(&sw, pb, t) == 0);
		h = make_frame(&fk, &src, &len);
		le_swap_offer(&sw, h, len, t);
	}
	if (k >= 0)
		CHECK(sw.swaps == 1 && (early ? sw.swapped_at == tk : 1));
	/* until everything left (a `once` trace may keep frames: 30 s) */
	for (le_ns_t end = t + 30 * LE_NS_PER_S; poll < end && le_swap_depth(&sw) > 0; poll += POLL)
		take(&fk, &sw, poll, o);
	o->freed = fk.freed;
	le_swap_counters(&sw, &o->ctr);
	CHECK(le_counters_conserved(&o->ctr, le_swap_depth(&sw)), "'%s'", a);
	CHECK_EQ_U64(o->ctr.tx, o->sent);
	CHECK_EQ_U64(o->early, 0);
	le_swap_drain(&sw);
	nd = le_swap_release(&sw, left);
	for (unsigned i = 0; i < nd; i++) {
		le_path_free(left[i]);
		free(left[i]);
	}
	CHECK_EQ_U64(fk_count(&fk, FK_LIVE), 0);
	CHECK_EQ_U64(fk.double_free + fk.bad_handle, 0);
	fk_fini(&fk);
	return 0;
}

static int same(const struct outcome *x, const struct outcome *y)
{
	return x->hash == y->hash && x->sent == y->sent && x->freed == y->freed &&
	       memcmp(&x->ctr, &y->ctr, sizeof(x->ctr)) == 0;
}

/* Every stage, alone and combined; @ names a file in traces/. */
static const struct {
	const char *cfg;
	int random; /* draws from a random stream */
} configs[] = {
	{ "delay 10ms", 0 },
	{ "delay 10ms 4ms", 1 },
	{ "delay 10ms 4ms 30% distribution normal", 1 },
	{ "delay 10ms 4ms distribution pareto noreorder", 1 },
	{ "delay 3ms 2ms distribution paretonormal limit 40", 1 },
	{ "loss 8%", 1 },
	{ "loss 8% 40%", 1 },
	{ "loss gemodel 2% 20% 70% 1%", 1 },
	{ "loss state 2% 30% 5% 20% 1%", 1 },
	{ "delay 1ms loss 20% ecn", 1 },
	{ "delay 1ms duplicate 10% 20%", 1 },
	{ "corrupt 10%", 1 },
	{ "delay 1ms corrupt 10% 30%", 1 },
	{ "delay 10ms reorder 25% 50%", 1 },
	{ "delay 10ms reorder 50% gap 4", 1 },
	{ "rate 20mbit", 0 },
	{ "rate 20mbit limit 30", 0 },
	{ "rate 20mbit limit 30 drop-head delay 5ms", 0 },
	{ "rate 10mbit 24 limit-bytes 20kb", 0 },
	{ "rate 10mbit limit-queue 20 delay 2ms 1ms", 1 },
	{ "rate 5mbit codel target 1ms interval 10ms", 0 },
	{ "rate 5mbit codel target 1ms interval 10ms ecn limit 200", 0 },
	{ "slot 1ms 3ms packets 4", 1 },
	{ "slot distribution normal 2ms 1ms bytes 6000", 1 },
	{ "rate 20mbit slot 1ms 2ms packets 3", 1 },
	{ "trace @pantheon_12mbps.trace", 0 },
	{ "trace @mahimahi_TMobile-LTE-short.down delay 5ms limit 300", 0 },
	{ "trace @mahimahi_TMobile-LTE-short.up once", 0 },
	{ "rate 10mbit delay 5ms 2ms loss gemodel 1% 10% duplicate 2% corrupt 1% reorder 10% limit 100", 1 },
	/* chains (chain.h): hop i continues hop i; frames served by an old
	 * hop go on to the next hop's successor */
	{ "rate 100mbit >> delay 6ms rate 45mbit limit-bytes 100kb", 0 },
	{ "delay 2ms loss 5% >> rate 10mbit limit 50 delay 3ms 1ms", 1 },
	{ "rate 20mbit >> delay 10ms reorder 25% 50% >> rate 15mbit limit 40 loss 3%", 1 },
	{ "delay 1ms 1ms >> rate 8mbit ; class ef match dscp ef : rate 5mbit >> delay 2ms loss 5% >> rate 4mbit", 1 },
	{ "delay 1ms ; class ef match dscp ef : rate 5mbit delay 2ms 1ms loss 5% ; "
	  "class bulk match proto udp dport 5001 : trace @mahimahi_TMobile-LTE-short.down limit 200",
	  1 },
};

static void identity(void)
{
	const long ks[] = { 0, 1, FRAMES / 4, FRAMES / 2, FRAMES - 1 };

	for (unsigned c = 0; c < sizeof(configs) / sizeof(configs[0]); c++) {
		struct outcome base, o;
		char other[1024];

		if (run(configs[c].cfg, NULL, -1, 0, &base) < 0)
			continue;
		CHECK(base.sent > 0, "'%s' sent nothing", configs[c].cfg);
		for (unsigned j = 0; j < sizeof(ks) / sizeof(ks[0]); j++) {
			if (run(configs[c].cfg, configs[c].cfg, ks[j], 0, &o) == 0)
				CHECK(same(&base, &o), "'%s' changed at frame %ld: %llu/%llu sent vs %llu/%llu",
				      configs[c].cfg, ks[j], (unsigned long long)o.sent, (unsigned long long)o.freed,
				      (unsigned long long)base.sent, (unsigned long long)base.freed);
		}
		/* Staged long before its time, with polls in between. */
		if (run(configs[c].cfg, configs[c].cfg, FRAMES * 2 / 5, 1, &o) == 0)
			CHECK(same(&base, &o), "'%s' staged early", configs[c].cfg);
		if (!configs[c].random)
			continue;
		/* Another seed: the streams start anew from it. */
		snprintf(other, sizeof(other), "%s seed 99", configs[c].cfg);
		if (strchr(configs[c].cfg, ';') == NULL && run(configs[c].cfg, other, FRAMES / 3, 0, &o) == 0)
			CHECK(!same(&base, &o), "'%s': seed 99 changed nothing", configs[c].cfg);
	}
}

static void *frame(struct fakes *fk, uint32_t len, uint8_t dscp, uint16_t dport)
{
	void *h = fk_new(fk, len);
	uint8_t *b = fk->data[fk_idx(h)];

	b[12] = 0x08;
	b[14] = 0x45;
	b[15] = (uint8_t)(dscp << 2);
	b[23] = 17;
	b[36] = (uint8_t)(dport >> 8);
	b[37] = (uint8_t)dport;
	return h;
}

static void release(struct le_swap *sw)
{
	struct le_path *left[2 * LE_SWAP_RETIRING_MAX + 2];
	unsigned n;

	le_swap_drain(sw);
	n = le_swap_release(sw, left);
	for (unsigned i = 0; i < n; i++) {
		le_path_free(left[i]);
		free(left[i]);
	}
}

/* Frames, and a swap whose active path is built from ca, with the path
 * of cb in *b for the test to stage. */
static int start(struct fakes *fk, struct le_swap *sw, const char *ca, const char *cb, struct le_path **b)
{
	struct le_path *a;

	fk_init(fk, 1);
	if ((a = build(ca, fk, 1)) == NULL || (*b = build(cb, fk, 1)) == NULL)
		return -1;
	le_swap_init(sw, a);
	return 0;
}

/* Departure deadlines by frame index. */
static void collect(struct le_swap *sw, le_ns_t now, le_ns_t *dl, uint32_t max)
{
	struct le_frame out[64];
	unsigned n;

	while ((n = le_swap_dequeue(sw, now, out, 64)) > 0)
		for (unsigned j = 0; j < n; j++)
			if (fk_idx(out[j].handle) < max)
				dl[fk_idx(out[j].handle)] = out[j].deadline;
}

/* A step lands at its model time exactly: frames before T take the old
 * delay, from T on the new one, whether the owner polled or not. */
static void timed_delay(int polls)
{
	const le_ns_t T = 5 * LE_NS_PER_MS + 1;
	const le_ns_t at[6] = { 0, 4 * LE_NS_PER_MS, T - 1, T, T + 1, 9 * LE_NS_PER_MS };
	struct fakes fk;
	struct le_swap sw;
	struct le_path *b;
	le_ns_t dl[6] = { 0 };

	if (start(&fk, &sw, "delay 10ms", "delay 20ms", &b) < 0)
		return;
	CHECK(le_swap_stage(&sw, b, T) == 0);
	CHECK(le_swap_stage(&sw, b, T) == -1); /* one staged at a time */
	CHECK(le_swap_next_deadline(&sw) == T);
	for (int i = 0; i < 6; i++) {
		if (polls)
			for (le_ns_t t = i ? at[i - 1] : 0; t < at[i]; t += 100000)
				collect(&sw, t, dl, 6);
		le_swap_offer(&sw, frame(&fk, 100, 0, 0), 100, at[i]);
		CHECK_EQ_U64(sw.swaps, at[i] >= T);
	}
	collect(&sw, LE_NS_PER_S, dl, 6);
	for (int i = 0; i < 6; i++)
		CHECK_EQ_U64(dl[i], at[i] + (at[i] < T ? 10 : 20) * LE_NS_PER_MS);
	CHECK_EQ_U64(sw.swapped_at, T);
	release(&sw);
	fk_fini(&fk);
}

/* A rate step with frames queued: the old rate serves until T (a frame
 * it started before T finishes at the old rate), the new one after. */
static void timed_rate(int polls)
{
	const le_ns_t T = 3500 * LE_NS_PER_US;
	struct fakes fk;
	struct le_swap sw;
	struct le_path *b;
	le_ns_t dl[12] = { 0 };

	if (start(&fk, &sw, "rate 10mbit", "rate 1mbit", &b) < 0)
		return;
	for (int i = 0; i < 10; i++)
		le_swap_offer(&sw, frame(&fk, 1250, 0, 0), 1250, 0); /* 1 ms each at 10 Mbit/s */
	CHECK(le_swap_stage(&sw, b, T) == 0);
	if (polls)
		for (le_ns_t t = 0; t < T; t += 70000)
			collect(&sw, t, dl, 12);
	le_swap_offer(&sw, frame(&fk, 1250, 0, 0), 1250, T + 1);
	collect(&sw, LE_NS_PER_S, dl, 12);
	for (int i = 0; i < 4; i++) /* 0..3 started before T */
		CHECK_EQ_U64(dl[i], (le_ns_t)(i + 1) * LE_NS_PER_MS);
	for (int i = 4; i < 11; i++) /* then 10 ms each */
		CHECK_EQ_U64(dl[i], 4 * LE_NS_PER_MS + (le_ns_t)(i - 3) * 10 * LE_NS_PER_MS);
	release(&sw);
	fk_fini(&fk);
}

/* The change applies at T on a dequeue too, with no frame arriving. */
static void timed_by_dequeue(void)
{
	struct fakes fk;
	struct le_swap sw;
	struct le_path *a, *b;
	struct le_frame out[4];

	if (start(&fk, &sw, "delay 1ms", "delay 2ms", &b) < 0)
		return;
	a = sw.active;
	CHECK(le_swap_stage(&sw, b, 7 * LE_NS_PER_MS) == 0);
	le_swap_dequeue(&sw, 6 * LE_NS_PER_MS, out, 4);
	CHECK_EQ_U64(sw.swaps, 0);
	le_swap_dequeue(&sw, 50 * LE_NS_PER_MS, out, 4);
	CHECK_EQ_U64(sw.swaps, 1);
	CHECK_EQ_U64(sw.swapped_at, 7 * LE_NS_PER_MS);
	/* the old path held nothing: handed back at once */
	struct le_path *d = le_swap_take_drained(&sw);
	CHECK(d == a);
	CHECK(le_swap_take_drained(&sw) == NULL);
	if (d) {
		le_path_free(d);
		free(d);
	}
	release(&sw);
	fk_fini(&fk);
}

/* Classes are matched by name: reordered rules keep each class's
 * backlog, loss chain and counts; a new name starts fresh. */
static void classes_by_name(void)
{
	struct fakes fk;
	struct le_swap sw;
	struct le_path *a, *b;
	le_ns_t dl[40] = { 0 };
	struct le_counters c;

	fk_init(&fk, 1);
	a = build("delay 1ms ; class x match dscp ef : rate 1mbit ; class y match proto udp dport 5001 : loss gemodel 100% 0%",
		  &fk, 1);
	b = build("delay 1ms ; class z match dscp af41 : loss gemodel 100% 0% ; class y match proto udp dport 5001 : "
		  "loss gemodel 0% 0% ; class x match dscp ef : rate 1mbit",
		  &fk, 1);
	if (a == NULL || b == NULL)
		return;
	le_swap_init(&sw, a);
	for (int i = 0; i < 5; i++) /* x: 10 ms each at 1 Mbit/s */
		le_swap_offer(&sw, frame(&fk, 1250, 46, 0), 1250, 0);
	le_swap_offer(&sw, frame(&fk, 100, 0, 5001), 100, 1); /* y: the chain goes Bad */
	CHECK(le_swap_stage(&sw, b, 2) == 0);
	le_swap_offer(&sw, frame(&fk, 1250, 46, 0), 1250, 2);       /* x after the change */
	for (int i = 0; i < 5; i++)
		le_swap_offer(&sw, frame(&fk, 100, 0, 5001), 100, 3); /* y: still Bad, p = r = 0 */
	le_swap_offer(&sw, frame(&fk, 100, 34, 0), 100, 4);         /* z: fresh chain, Good */
	collect(&sw, LE_NS_PER_S, dl, 40);
	for (int i = 0; i < 5; i++)
		CHECK_EQ_U64(dl[i], (le_ns_t)(i + 1) * 10 * LE_NS_PER_MS);
	CHECK_EQ_U64(dl[6], 60 * LE_NS_PER_MS); /* behind x's backlog */
	le_swap_class_counters(&sw, 2, &c); /* y, now the second rule */
	CHECK_EQ_U64(c.rx, 6);
	/* the first frame moved the chain to Bad (Good loses with 1-k = 0);
	 * the five after the change meet Bad: a fresh chain would lose none */
	CHECK_EQ_U64(c.drop[LE_DROP_LOSS], 5);
	le_swap_class_counters(&sw, 3, &c); /* x */
	CHECK_EQ_U64(c.rx, 6);
	CHECK_EQ_U64(c.tx, 6);
	le_swap_class_counters(&sw, 1, &c); /* z */
	CHECK_EQ_U64(c.rx, 1);
	CHECK_EQ_U64(c.tx, 1);
	le_swap_reset_counters(&sw);
	le_swap_class_counters(&sw, 3, &c);
	CHECK_EQ_U64(c.rx + c.tx, 0);
	release(&sw);
	fk_fini(&fk);
}

/* Which class of its name a class is (le_path_class_born, what a
 * `reset stats` baseline is matched with): kept while changes carry the
 * class with its counts, new when a class removed by one change comes
 * back in a later one; the same for a hop of a chain cut short and grown
 * again. */
static void born_with_the_counts(void)
{
	const char *a2 = "class a match dscp ef : delay 1ms >> delay 2ms", *a1 = "class a match dscp ef : delay 1ms",
		   *b = "class b match proto udp dport 5001 : delay 1ms";
	char cfg[4][256];
	struct fakes fk;
	struct le_swap sw;
	struct le_path *p[4];

	snprintf(cfg[0], sizeof(cfg[0]), "delay 1ms ; %s ; %s", a2, b);
	snprintf(cfg[1], sizeof(cfg[1]), "delay 1ms ; %s", b);          /* a ends */
	snprintf(cfg[2], sizeof(cfg[2]), "delay 1ms ; %s ; %s", b, a1); /* a again, one hop */
	snprintf(cfg[3], sizeof(cfg[3]), "delay 1ms ; %s ; %s", a2, b); /* its second hop again */
	fk_init(&fk, 1);
	for (int i = 0; i < 4; i++)
		if ((p[i] = build(cfg[i], &fk, 1)) == NULL)
			return;
	le_swap_init(&sw, p[0]);
	CHECK_EQ_U64(le_path_class_born(sw.active, 1), 0);
	CHECK_EQ_U64(le_path_hop_born(sw.active, 1, 1), 0);
	for (int i = 1; i < 4; i++) {
		CHECK(le_swap_stage(&sw, p[i], 0) == 0);
		le_swap_advance(&sw, (le_ns_t)i * LE_NS_PER_MS);
		CHECK(sw.active == p[i]);
	}
	CHECK_EQ_U64(le_path_class_born(sw.active, 0), 0);                       /* default: always carried */
	CHECK_EQ_U64(le_path_class_born(sw.active, le_path_class_index(sw.active, "b")), 0);
	CHECK_EQ_U64(le_path_class_born(sw.active, le_path_class_index(sw.active, "a")), 2);
	CHECK_EQ_U64(le_path_hop_born(sw.active, le_path_class_index(sw.active, "a"), 1), 3);
	release(&sw); /* frees all four: the swap holds them until then */
	fk_fini(&fk);
}

/* A class's books while its predecessor still serves what it held: the
 * depth (le_swap_class_depth) counts the predecessor's frames as the
 * counts do, so rx + dup == tx + drops + depth for the class during the
 * change; a class the change removed is what the direction counts beyond
 * its classes (the report's "ended_classes"), its books balanced too. */
static void class_books_during_a_change(void)
{
	struct fakes fk;
	struct le_swap sw;
	struct le_path *b;
	struct le_counters total, cls, sum;
	uint32_t depth_sum;

	if (start(&fk, &sw, "delay 1ms ; class x match dscp ef : delay 10ms ; class gone match proto udp dport 5001 : delay 20ms",
		  "delay 1ms ; class x match dscp ef : delay 5ms", &b) < 0)
		return;
	for (int i = 0; i < 4; i++)
		le_swap_offer(&sw, frame(&fk, 100, 46, 0), 100, (le_ns_t)i);
	for (int i = 0; i < 3; i++)
		le_swap_offer(&sw, frame(&fk, 100, 0, 5001), 100, (le_ns_t)(10 + i));
	CHECK(le_swap_stage(&sw, b, LE_NS_PER_MS) == 0);
	for (int i = 0; i < 2; i++)
		le_swap_offer(&sw, frame(&fk, 100, 46, 0), 100, 2 * LE_NS_PER_MS + (le_ns_t)i);
	for (int step = 0; step < 2; step++) {
		const le_ns_t now = step ? LE_NS_PER_S : 3 * LE_NS_PER_MS;
		struct le_frame out[64];

		while (step && le_swap_dequeue(&sw, now, out, 64) > 0)
			;
		CHECK_EQ_U64(le_path_classes(sw.active), 2);
		le_swap_class_counters(&sw, 1, &cls); /* x: 4 frames before the change, 2 after */
		CHECK_EQ_U64(cls.rx, 6);
		CHECK_EQ_U64(le_swap_class_depth(&sw, 1), step ? 0 : 6);
		CHECK(le_counters_conserved(&cls, le_swap_class_depth(&sw, 1)));
		/* Beyond the classes: the removed class's 3 frames, held, then sent. */
		memset(&total, 0, sizeof(total));
		le_swap_counters(&sw, &total);
		memset(&sum, 0, sizeof(sum));
		depth_sum = 0;
		for (unsigned k = 0; k < le_path_classes(sw.active); k++) {
			le_swap_class_counters(&sw, k, &cls);
			le_counters_add(&sum, &cls);
			depth_sum += le_swap_class_depth(&sw, k);
		}
		le_counters_sub(&total, &sum);
		CHECK_EQ_U64(total.rx, 3);
		CHECK_EQ_U64(total.tx, step ? 3 : 0);
		CHECK_EQ_U64(le_swap_depth(&sw) - depth_sum, step ? 0 : 3);
		CHECK(le_counters_conserved(&total, le_swap_depth(&sw) - depth_sum));
	}
	release(&sw);
	fk_fini(&fk);
}

/* A change of loss model: the loss stream goes on (not reseeded), the
 * chain does not (a different model starts in state 1). The new model's
 * fates equal those of a fresh `loss 50%` link whose stream already gave
 * the draws the old model took: two per frame for a gemodel none of
 * whose chances is rare (below 25 %, drawn as gaps) or certain. */
static void loss_model_change(void)
{
	struct fakes fk;
	struct le_swap sw, ref;
	struct le_path *a, *b, *r;
	le_ns_t dl[400] = { 0 };
	int diff = 0, lost = 0;

	fk_init(&fk, 1);
	a = build("loss gemodel 30% 40% 70% 30%", &fk, 1);
	b = build("loss 50%", &fk, 1);
	r = build("loss 50%", &fk, 1);
	if (a == NULL || b == NULL || r == NULL)
		return;
	le_swap_init(&sw, a);
	le_swap_init(&ref, r);
	for (int i = 0; i < 100; i++)
		le_swap_offer(&sw, frame(&fk, 100, 0, 0), 100, (le_ns_t)i);
	CHECK(le_swap_stage(&sw, b, 100) == 0);
	for (int i = 0; i < 200; i++) /* indices 100..299: the reference's first 200 */
		le_swap_offer(&ref, frame(&fk, 100, 0, 0), 100, (le_ns_t)i);
	for (int i = 0; i < 100; i++) { /* 300..399: after the change, and the reference's next */
		void *x = frame(&fk, 100, 0, 0), *y;
		le_swap_offer(&sw, x, 100, 100 + (le_ns_t)i);
		(void)y;
	}
	for (int i = 0; i < 100; i++)
		le_swap_offer(&ref, frame(&fk, 100, 0, 0), 100, 200 + (le_ns_t)i); /* 400..499 */
	collect(&sw, LE_NS_PER_S, dl, 400);
	{
		le_ns_t rdl[500] = { 0 };
		collect(&ref, LE_NS_PER_S, rdl, 500);
		for (int i = 0; i < 100; i++) {
			int gone_new = fk.state[300 + i] == FK_FREED, gone_ref = fk.state[400 + i] == FK_FREED;
			diff += gone_new != gone_ref;
			lost += gone_new;
		}
	}
	CHECK_EQ_U64(diff, 0);
	CHECK(lost > 20 && lost < 80, "%d lost", lost); /* a real loss 50% */
	release(&sw);
	release(&ref);

	/* gemodel -> 4-state: Gilbert-Elliott's Bad (2) means nothing to the
	 * 4-state chain, which starts in 1, where it never loses here (p13 =
	 * p14 = 0); from 2 it would lose at once (p23 = 100%). */
	a = build("loss gemodel 100% 0%", &fk, 1);
	b = build("loss state 0% 100% 0% 100% 0%", &fk, 1);
	if (a == NULL || b == NULL)
		return;
	le_swap_init(&sw, a);
	for (int i = 0; i < 3; i++)
		le_swap_offer(&sw, frame(&fk, 100, 0, 0), 100, (le_ns_t)i);
	CHECK(le_swap_stage(&sw, b, 10) == 0);
	for (int i = 0; i < 10; i++)
		le_swap_offer(&sw, frame(&fk, 100, 0, 0), 100, 10 + (le_ns_t)i);
	{
		struct le_counters c;
		le_swap_class_counters(&sw, 0, &c);
		CHECK_EQ_U64(c.drop[LE_DROP_LOSS], 2); /* the two gemodel losses only */
	}
	release(&sw);
	fk_fini(&fk);
}

/* rate -> slot and rate -> trace with frames still queued: frames the
 * rate started before T finish at the rate; the rest wait for the new
 * serializer, which starts at T. 1250 B at 1 Mbit/s = 10 ms; T = 15 ms. */
static void rate_to(const char *cfg, const le_ns_t want[5])
{
	struct fakes fk;
	struct le_swap sw;
	struct le_path *b;
	le_ns_t dl[5] = { 0 };

	if (start(&fk, &sw, "rate 1mbit", cfg, &b) < 0)
		return;
	for (int i = 0; i < 5; i++)
		le_swap_offer(&sw, frame(&fk, 1250, 0, 0), 1250, 0);
	CHECK(le_swap_stage(&sw, b, 15 * LE_NS_PER_MS) == 0);
	collect(&sw, LE_NS_PER_S, dl, 5);
	for (int i = 0; i < 5; i++)
		CHECK(dl[i] == want[i], "'%s' frame %d: %llu, want %llu", cfg, i, (unsigned long long)dl[i],
		      (unsigned long long)want[i]);
	CHECK_EQ_U64(le_swap_depth(&sw), 0);
	release(&sw);
	fk_fini(&fk);
}

static void rate_to_slot_and_trace(void)
{
	static char file[] = "/tmp/le_swap_trace_XXXXXX";
	int fd = mkstemp(file);
	char cfg[100];
	/* slot 10ms packets 2: a slot at T + 10 ms for two, the next 10 ms on */
	static const le_ns_t slot[5] = { 10000000, 20000000, 25000000, 25000000, 35000000 };
	/* one opportunity a ms, starting after T: 1250 B frames share them */
	static const le_ns_t trace[5] = { 10000000, 20000000, 16000000, 17000000, 18000000 };
	/* opportunities at 0 and 2 ms of each 2 ms lap: the trace starts at
	 * T, whose own opportunity (offset 0) is not used, like a first
	 * frame's arrival time */
	static const le_ns_t trace0[5] = { 10000000, 20000000, 17000000, 17000000, 19000000 };
	/* no serializer: the frames left over leave it at T, then the delay */
	static const le_ns_t none[5] = { 10000000, 20000000, 16000000, 16000000, 16000000 };

	if (fd < 0)
		return;
	close(fd);
	mt_write_file(file, "1\n");
	rate_to("slot 10ms packets 2", slot);
	snprintf(cfg, sizeof(cfg), "trace %s", file);
	rate_to(cfg, trace);
	mt_write_file(file, "0\n2\n");
	rate_to(cfg, trace0);
	rate_to("delay 1ms", none);
	unlink(file);
}

/* noreorder with frames still queued in the old link: nothing the new
 * link sends leaves before them. */
static void noreorder_queued(void)
{
	struct fakes fk;
	struct le_swap sw;
	struct le_path *b;
	le_ns_t dl[25] = { 0 };

	if (start(&fk, &sw, "rate 1mbit delay 50ms 10ms noreorder", "delay 1ms 1ms noreorder", &b) < 0)
		return;
	for (int i = 0; i < 5; i++)
		le_swap_offer(&sw, frame(&fk, 1250, 0, 0), 1250, 0);
	CHECK(le_swap_stage(&sw, b, 15 * LE_NS_PER_MS) == 0);
	for (int i = 0; i < 20; i++)
		le_swap_offer(&sw, frame(&fk, 100, 0, 0), 100, 16 * LE_NS_PER_MS + (le_ns_t)i * 100000);
	collect(&sw, LE_NS_PER_S, dl, 25);
	for (int i = 1; i < 25; i++)
		CHECK(dl[i] >= dl[i - 1], "frame %d at %llu before frame %d at %llu", i, (unsigned long long)dl[i],
		      i - 1, (unsigned long long)dl[i - 1]);
	CHECK(dl[1] >= 20 * LE_NS_PER_MS + 40 * LE_NS_PER_MS); /* the old delay, after the rate */
	release(&sw);
	fk_fini(&fk);
}

/* reorder's gap: its counter goes on across a change, so every third
 * frame is still sent ahead (frames 2, 5, 8, 11). */
static void reorder_gap_phase(void)
{
	struct fakes fk;
	struct le_swap sw;
	struct le_path *b;
	le_ns_t dl[12] = { 0 };

	if (start(&fk, &sw, "delay 10ms reorder 100% gap 3", "delay 10ms reorder 100% gap 3", &b) < 0)
		return;
	for (int i = 0; i < 12; i++) {
		if (i == 4)
			CHECK(le_swap_stage(&sw, b, (le_ns_t)i * 1000) == 0);
		le_swap_offer(&sw, frame(&fk, 100, 0, 0), 100, (le_ns_t)i * 1000);
	}
	collect(&sw, LE_NS_PER_S, dl, 12);
	for (int i = 0; i < 12; i++)
		CHECK_EQ_U64(dl[i], (le_ns_t)i * 1000 + (i % 3 == 2 ? 0 : 10 * LE_NS_PER_MS));
	release(&sw);
	fk_fini(&fk);
}

/* A trace with several opportunities in one millisecond, changed to the
 * same file mid-run and to a copy of it (another table: the phase is
 * mapped by time): departures as without the change. */
static void trace_phase(void)
{
	static char f1[] = "/tmp/le_swap_ml1_XXXXXX", f2[] = "/tmp/le_swap_ml2_XXXXXX";
	int d1 = mkstemp(f1), d2 = mkstemp(f2);
	static const le_ns_t want[8] = { 2000000, 2000000, 2000000, 4000000, 6000000, 6000000, 6000000, 8000000 };

	if (d1 < 0 || d2 < 0)
		return;
	close(d1);
	close(d2);
	mt_write_file(f1, "2\n2\n2\n4\n");
	mt_write_file(f2, "2\n2\n2\n4\n");
	for (int v = 0; v < 3; v++) {
		struct fakes fk;
		struct le_swap sw;
		struct le_path *a, *b;
		le_ns_t dl[8] = { 0 };
		char ca[100], cb[100];

		snprintf(ca, sizeof(ca), "trace %s", f1);
		snprintf(cb, sizeof(cb), "trace %s", v == 2 ? f2 : f1);
		fk_init(&fk, 1);
		if ((a = build(ca, &fk, 1)) == NULL || (b = build(cb, &fk, 1)) == NULL)
			return;
		le_swap_init(&sw, a);
		for (int i = 0; i < 4; i++)
			le_swap_offer(&sw, frame(&fk, 1500, 0, 0), 1500, 0);
		if (v > 0)
			CHECK(le_swap_stage(&sw, b, 3 * LE_NS_PER_MS) == 0);
		for (int i = 0; i < 4; i++)
			le_swap_offer(&sw, frame(&fk, 1500, 0, 0), 1500, 3 * LE_NS_PER_MS + (le_ns_t)i);
		collect(&sw, LE_NS_PER_S, dl, 8);
		for (int i = 0; i < 8; i++)
			CHECK(dl[i] == want[i], "variant %d frame %d: %llu", v, i, (unsigned long long)dl[i]);
		if (v == 0) {
			le_path_free(b);
			free(b);
		}
		release(&sw);
		fk_fini(&fk);
	}
	unlink(f1);
	unlink(f2);
}

/* A change that lowers the limit far below what is queued loses no
 * admitted frame: the new serializer waits for room in its delay line. */
static void limit_lowered(void)
{
	struct fakes fk;
	struct le_swap sw;
	struct le_path *b;
	struct le_counters c = { 0 };
	struct le_frame out[256];
	uint64_t sent = 0;

	if (start(&fk, &sw, "rate 1mbit limit 5000", "rate 10gbit delay 1s limit 100", &b) < 0)
		return;
	for (int i = 0; i < 3000; i++)
		le_swap_offer(&sw, frame(&fk, 1250, 0, 0), 1250, 0);
	CHECK(le_swap_stage(&sw, b, LE_NS_PER_MS) == 0);
	for (le_ns_t t = 0; t < 100 * LE_NS_PER_S && le_swap_depth(&sw) > 0; t += LE_NS_PER_MS) {
		unsigned n;
		while ((n = le_swap_dequeue(&sw, t, out, 256)) > 0)
			sent += fk_sent(&fk, out, n) == 0 ? n : 0;
	}
	le_swap_counters(&sw, &c);
	CHECK_EQ_U64(sent, 3000);
	CHECK_EQ_U64(le_counters_dropped(&c), 0);
	release(&sw);
	fk_fini(&fk);
}

/* Three changes back to the first link's explicit seed: a link without
 * `seed` keeps the seed it continues, so coming back to `seed 5` is no
 * change and the run is the one without changes. */
static void seed_chain(void)
{
	static const char *const cfg[3] = { "delay 10ms 4ms loss 10% seed 5", "delay 10ms 4ms loss 10%",
					    "delay 10ms 4ms loss 10% seed 5" };
	le_ns_t base[300] = { 0 }, got[300] = { 0 };

	for (int v = 0; v < 2; v++) {
		struct fakes fk;
		struct le_swap sw;
		struct le_path *b, *c = NULL;
		le_ns_t *dl = v ? got : base;

		if (start(&fk, &sw, cfg[0], cfg[v ? 1 : 0], &b) < 0 || (c = build(cfg[v ? 2 : 0], &fk, 1)) == NULL)
			return;
		for (int i = 0; i < 300; i++) {
			if (i == 100)
				CHECK(le_swap_stage(&sw, b, (le_ns_t)i * 50000) == 0);
			if (i == 200)
				CHECK(le_swap_stage(&sw, c, (le_ns_t)i * 50000) == 0);
			le_swap_offer(&sw, frame(&fk, 100, 0, 0), 100, (le_ns_t)i * 50000);
		}
		collect(&sw, LE_NS_PER_S, dl, 300);
		release(&sw);
		fk_fini(&fk);
	}
	CHECK(memcmp(base, got, sizeof(base)) == 0);
}

/* A `once` trace that has ended keeps its frames (they wait for a
 * change); a change to the same trace does not restart it. */
static void once_ended(void)
{
	static char file[] = "/tmp/le_swap_once_XXXXXX";
	int fd = mkstemp(file);
	char cfg[100];
	struct fakes fk;
	struct le_swap sw;
	struct le_path *b;
	le_ns_t dl[6] = { 0 };

	if (fd < 0)
		return;
	close(fd);
	mt_write_file(file, "1\n2\n");
	snprintf(cfg, sizeof(cfg), "trace %s once", file);
	if (start(&fk, &sw, cfg, cfg, &b) < 0)
		return;
	for (int i = 0; i < 6; i++)
		le_swap_offer(&sw, frame(&fk, 1500, 0, 0), 1500, 0);
	collect(&sw, 10 * LE_NS_PER_MS, dl, 6); /* two left at 1 and 2 ms, the trace ended */
	CHECK(le_swap_stage(&sw, b, 20 * LE_NS_PER_MS) == 0);
	collect(&sw, LE_NS_PER_S, dl, 6);
	CHECK_EQ_U64(sw.swaps, 1);
	CHECK_EQ_U64(le_swap_depth(&sw), 4);
	CHECK(dl[0] == LE_NS_PER_MS && dl[1] == 2 * LE_NS_PER_MS && dl[2] == 0);
	release(&sw);
	fk_fini(&fk);
	unlink(file);
}

/* A change that raises the limit past the queue's ring while frames wait:
 * the new link chains the old ring before its own, in order. */
static void limit_raised(void)
{
	struct fakes fk;
	struct le_swap sw;
	struct le_path *b;
	le_ns_t dl[40] = { 0 };

	if (start(&fk, &sw, "rate 1mbit limit 10", "rate 1mbit limit 5000", &b) < 0)
		return;
	for (int i = 0; i < 10; i++) /* 1250 B: 10 ms each */
		le_swap_offer(&sw, frame(&fk, 1250, 0, 0), 1250, 0);
	CHECK(le_swap_stage(&sw, b, LE_NS_PER_MS) == 0);
	for (int i = 10; i < 40; i++)
		le_swap_offer(&sw, frame(&fk, 1250, 0, 0), 1250, 2 * LE_NS_PER_MS);
	CHECK_EQ_U64(sw.active->link[0].queue.nrings, 2);
	collect(&sw, 10 * LE_NS_PER_S, dl, 40);
	for (int i = 0; i < 40; i++)
		CHECK_EQ_U64(dl[i], (le_ns_t)(i + 1) * 10 * LE_NS_PER_MS);
	release(&sw);
	fk_fini(&fk);
}

/* Ten changes, each doubling the limit, while the first frame is still on
 * the wire: the queue chains LE_QUEUE_RINGS rings with frames, and the
 * eleventh link pushes to the tenth's ring, which is smaller than its
 * limit allows (le_queue_adopt). The frames that ring cannot take are
 * dropped and counted (queue_full), never lost. */
static void rings_run_out(void)
{
	struct fakes fk;
	struct le_swap sw;
	struct le_path *p;
	struct le_counters c = { 0 };
	struct le_frame out[256];
	char cfg[64];
	uint32_t limit = 2, offered = 0;
	unsigned n;

	fk_init(&fk, 1);
	if ((p = build("rate 8kbit limit 2", &fk, 1)) == NULL)
		return;
	le_swap_init(&sw, p);
	for (unsigned k = 0; k <= LE_QUEUE_RINGS; k++) {
		const le_ns_t t = (le_ns_t)k * LE_NS_PER_MS;
		const uint32_t previous = k ? limit / 2 : 0;

		if (k > 0) {
			struct le_path *gone;

			while ((gone = le_swap_take_drained(&sw)) != NULL) {
				le_path_free(gone);
				free(gone);
			}
			snprintf(cfg, sizeof(cfg), "rate 8kbit limit %u", (unsigned)limit);
			if ((p = build(cfg, &fk, 1)) == NULL || le_swap_stage(&sw, p, t) != 0) {
				CHECK(0, "change %u not staged", k);
				return;
			}
		}
		/* 1000 B frames, 1 s each at 8 kbit/s: the queue keeps them */
		for (uint32_t i = previous; i < limit; i++, offered++)
			le_swap_offer(&sw, frame(&fk, 1000, 0, 0), 1000, t + 1);
		limit *= 2;
	}
	le_swap_counters(&sw, &c);
	CHECK_EQ_U64(c.rx, offered);
	CHECK(c.drop[LE_DROP_QUEUE_FULL] > 0, "the last ring never filled: weak test");
	CHECK_EQ_U64(c.rx, c.drop[LE_DROP_QUEUE_FULL] + le_swap_depth(&sw));
	CHECK_EQ_U64(fk_count(&fk, FK_FREED), c.drop[LE_DROP_QUEUE_FULL]);
	while ((n = le_swap_dequeue(&sw, UINT64_MAX - 1, out, 256)) > 0)
		fk_sent(&fk, out, n);
	CHECK_EQ_U64(fk_count(&fk, FK_LIVE), 0);
	release(&sw);
	fk_fini(&fk);
}

/* A slot's budget is half used when the change comes at its instant: the
 * frames arriving then use what is left, as without the change (two
 * 1000 B frames went at 11 ms; one more fits, then the next instant,
 * 10 ms on). */
static void slot_budget(const char *cfg)
{
	struct fakes fk;
	struct le_swap sw;
	struct le_path *b;
	le_ns_t dl[5] = { 0 };
	static const le_ns_t want[5] = { 11000000, 11000000, 11000000, 21000000, 21000000 };

	if (start(&fk, &sw, cfg, cfg, &b) < 0)
		return;
	for (int i = 0; i < 2; i++)
		le_swap_offer(&sw, frame(&fk, 1000, 0, 0), 1000, LE_NS_PER_MS);
	collect(&sw, 11 * LE_NS_PER_MS, dl, 5);
	CHECK(le_swap_stage(&sw, b, 11 * LE_NS_PER_MS) == 0);
	for (int i = 2; i < 5; i++)
		le_swap_offer(&sw, frame(&fk, 1000, 0, 0), 1000, 11 * LE_NS_PER_MS);
	collect(&sw, LE_NS_PER_S, dl, 5);
	for (int i = 0; i < 5; i++)
		CHECK(dl[i] == want[i], "'%s' frame %d: %llu", cfg, i, (unsigned long long)dl[i]);
	release(&sw);
	fk_fini(&fk);
}

/* CoDel switched on by a change with frames queued: it knows the largest
 * frame seen (RFC 8289 MAXPACKET) from before the change, so a frame
 * with one maximum-size frame behind it is not a standing queue. */
static void codel_maxpacket(void)
{
	struct fakes fk;
	struct le_swap sw;
	struct le_path *b;
	le_ns_t dl[30] = { 0 };

	if (start(&fk, &sw, "rate 1mbit", "rate 1mbit codel target 1ms interval 10ms", &b) < 0)
		return;
	for (int i = 0; i < 20; i++)
		le_swap_offer(&sw, frame(&fk, 1500, 0, 0), 1500, 0);
	CHECK(le_swap_stage(&sw, b, LE_NS_PER_MS) == 0);
	collect(&sw, 10 * LE_NS_PER_S, dl, 30);
	/* frame 18 leaves the queue with one maximum-size frame behind it:
	 * not dropped; both leave 12 ms apart (1500 B at 1 Mbit/s) */
	CHECK(dl[18] != 0, "frame 18 was dropped");
	CHECK_EQ_U64(dl[19] - dl[18], 12 * LE_NS_PER_MS);
	release(&sw);
	fk_fini(&fk);
}

/* A rare chance draws the gap to its next event (rng.h): a change to
 * another probability draws a new gap, because one drawn for the old p
 * would go on deciding the next event. From 0.001 % to 20 %, for loss
 * and for duplicate: the 2000 frames after the change see 20 % (two-sided
 * 99.9 % bound: 400 +- 3.2905 sqrt(2000 x 0.2 x 0.8) = +- 58.9); the old
 * gap, of about 10^5 frames, would leave them all alone. */
static void gaps_at_a_new_chance(void)
{
	static const char *const from[] = { "loss 0.001%", "duplicate 0.001%" };
	static const char *const to[] = { "loss 20%", "duplicate 20%" };

	for (int t = 0; t < 2; t++) {
		struct fakes fk;
		struct le_swap sw;
		struct le_path *b;
		struct le_counters c;
		le_ns_t dl[1];
		double events;

		if (start(&fk, &sw, from[t], to[t], &b) < 0)
			return;
		le_swap_offer(&sw, frame(&fk, 100, 0, 0), 100, 0); /* draws the first gap */
		CHECK(le_swap_stage(&sw, b, 1) == 0);
		for (int i = 0; i < 2000; i++)
			le_swap_offer(&sw, frame(&fk, 100, 0, 0), 100, 1 + (le_ns_t)i);
		collect(&sw, LE_NS_PER_S, dl, 0);
		le_swap_class_counters(&sw, 0, &c);
		CHECK_EQ_U64(c.rx, 2001);
		events = t == 0 ? (double)c.drop[LE_DROP_LOSS] : (double)c.dup;
		CHECK(fabs(events - 400) <= 58.9, "%s -> %s: %g events in 2000 frames", from[t], to[t], events);
		release(&sw);
		fk_fini(&fk);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1)
		traces_dir = argv[1];
	if (argc > 2)
		FRAMES = atol(argv[2]);
	timed_delay(0);
	timed_delay(1);
	timed_rate(0);
	timed_rate(1);
	timed_by_dequeue();
	classes_by_name();
	born_with_the_counts();
	class_books_during_a_change();
	loss_model_change();
	rate_to_slot_and_trace();
	noreorder_queued();
	reorder_gap_phase();
	trace_phase();
	limit_lowered();
	seed_chain();
	once_ended();
	limit_raised();
	rings_run_out();
	slot_budget("slot 10ms bytes 3000");
	slot_budget("slot 10ms packets 3");
	codel_maxpacket();
	gaps_at_a_new_chance();
	identity();
	return mt_summary();
}
