/* duplicate, corrupt, reorder (netem's meanings) and ECN marking: rates
 * within binomial bounds, exactly one bit flipped, netem's gap rule, CE
 * set with a correct IPv4 checksum, conservation with copies. */
#include <math.h>

#include "ecn.h"
#include "fake.h"
#include "link.h"
#include "minitest.h"
#include "fake_link.h"

/* 5-sigma two-sided binomial bound: |k - n p| <= 5 sqrt(n p (1-p)); a
 * correct implementation fails with probability below 6e-7. */
static int binomial_ok(double k, double n, double p)
{
	return fabs(k - n * p) <= 5 * sqrt(n * p * (1 - p));
}

static void drain_all(struct le_link *l, struct fakes *fk, le_ns_t now)
{
	struct le_frame out[512];
	unsigned n;

	while ((n = le_link_dequeue(l, now, out, 512)) > 0)
		fk_sent(fk, out, n);
}

/* duplicate 10%: copies ~ Bin(n, 0.1) (no loss here, so netem's "lost
 * and duplicated = sent once" never applies); every copy is a new frame:
 * rx + dup = tx + drops + depth, and the copy follows its original. */
static void duplicate(void)
{
	struct fakes fk;
	struct le_link l;
	struct le_frame out[64];
	const unsigned n = 200000;
	unsigned order_bad = 0;

	fk_init(&fk, 0);
	if (fk_make_link(&l, "delay 1ms duplicate 10% limit 1000000", &fk) < 0)
		return;
	for (unsigned i = 0; i < n; i++)
		le_link_offer(&l, fk_new(&fk, 100), 100, (le_ns_t)i * 1000);
	CHECK(binomial_ok((double)l.ctr.dup, n, 0.10), "%llu copies", (unsigned long long)l.ctr.dup);
	CHECK_EQ_U64(l.ctr.dup, fk.clones);
	CHECK(le_counters_conserved(&l.ctr, le_link_depth(&l)));
	/* a copy leaves right after its original */
	uint32_t prev = UINT32_MAX;
	unsigned k;
	while ((k = le_link_dequeue(&l, 10 * LE_NS_PER_S, out, 64)) > 0) {
		for (unsigned j = 0; j < k; j++) {
			uint32_t i = fk_idx(out[j].handle);
			if (fk.parent[i] != i && fk.parent[i] != prev)
				order_bad++;
			prev = i;
		}
		fk_sent(&fk, out, k);
	}
	CHECK_EQ_U64(order_bad, 0);
	CHECK_EQ_U64(l.ctr.tx, n + l.ctr.dup);
	le_link_free(&l);
	fk_fini(&fk);

	/* A failed copy is an event, not a drop and not a frame. */
	fk_init(&fk, 0);
	fk.fail_clone_every = 2;
	if (fk_make_link(&l, "duplicate 100% limit 100000", &fk) < 0)
		return;
	for (unsigned i = 0; i < 1000; i++)
		le_link_offer(&l, fk_new(&fk, 100), 100, i);
	CHECK_EQ_U64(l.ctr.dup, 500);
	CHECK_EQ_U64(l.ctr.event[LE_EVENT_DUP_FAILED], 500);
	CHECK_EQ_U64(le_counters_dropped(&l.ctr), 0);
	drain_all(&l, &fk, 1000000);
	CHECK_EQ_U64(l.ctr.tx, 1500);
	CHECK(le_counters_conserved(&l.ctr, le_link_depth(&l)));
	le_link_free(&l);
	fk_fini(&fk);

	/* netem: a frame both lost and duplicated goes through once; a copy
	 * meets the loss model again. With loss 100%, copies are all lost:
	 * rx + dup = drops exactly. */
	fk_init(&fk, 0);
	if (fk_make_link(&l, "loss 50% duplicate 50%", &fk) < 0)
		return;
	for (unsigned i = 0; i < 100000; i++)
		le_link_offer(&l, fk_new(&fk, 100), 100, i);
	drain_all(&l, &fk, 1000000);
	/* P(sent once) = P(not lost, no copy) + P(lost and copied) = 1/2; a
	 * copy (P 1/4) survives its own loss draw with 1/2. */
	CHECK(binomial_ok((double)l.ctr.dup, 100000, 0.25), "%llu copies", (unsigned long long)l.ctr.dup);
	CHECK(le_counters_conserved(&l.ctr, 0));
	CHECK_EQ_U64(fk_count(&fk, FK_LIVE), 0);
	le_link_free(&l);
	fk_fini(&fk);
}

static int bits(uint8_t x)
{
	return __builtin_popcount(x);
}

/* corrupt 5%: corrupted ~ Bin(n, 0.05), each one differs from its bytes
 * before in exactly one bit, inside the frame's first contiguous bytes. */
static void corrupt(void)
{
	struct fakes fk;
	struct le_link l;
	const unsigned n = 100000;
	unsigned one_bit = 0, other = 0, changed = 0;

	fk_init(&fk, 1);
	if (fk_make_link(&l, "corrupt 5% limit 1000000", &fk) < 0)
		return;
	for (unsigned i = 0; i < n; i++) {
		void *h = fk_new(&fk, 60 + i % 1000);
		memset(fk.data[fk_idx(h)], 0xa5, FK_BYTES);
		le_link_offer(&l, h, 60 + i % 1000, i);
	}
	for (unsigned i = 0; i < n; i++) {
		int d = 0;
		for (unsigned b = 0; b < FK_BYTES; b++)
			d += bits(fk.data[i][b] ^ 0xa5);
		changed += d > 0;
		one_bit += d == 1;
		other += d > 1;
	}
	CHECK(binomial_ok(l.ctr.event[LE_EVENT_CORRUPTED], n, 0.05), "%llu", (unsigned long long)l.ctr.event[LE_EVENT_CORRUPTED]);
	CHECK_EQ_U64(changed, l.ctr.event[LE_EVENT_CORRUPTED]);
	CHECK_EQ_U64(one_bit, changed);
	CHECK_EQ_U64(other, 0);
	le_link_free(&l);
	fk_fini(&fk);

	/* the flip stays within the frame (a 1-byte frame can only lose its
	 * one byte's bit) */
	fk_init(&fk, 1);
	if (fk_make_link(&l, "corrupt 100%", &fk) < 0)
		return;
	for (unsigned i = 0; i < 1000; i++)
		le_link_offer(&l, fk_new(&fk, 1), 1, i);
	unsigned outside = 0;
	for (unsigned i = 0; i < 1000; i++) {
		outside += fk.data[i][1] != 0;
		CHECK(bits(fk.data[i][0]) == 1);
	}
	CHECK_EQ_U64(outside, 0);
	le_link_free(&l);
	fk_fini(&fk);
}

/* reorder P gap N (netem_enqueue): with gap 1 each frame skips the delay
 * with probability P (~ Bin(n, P)); with gap 5 and 100% exactly every 5th
 * frame (netem: "the 5th, 10th ... packet is sent immediately"). A frame
 * sent ahead leaves at its arrival (no serializer here). */
static void reorder(void)
{
	struct fakes fk;
	struct le_link l;
	struct le_frame out[64];
	const unsigned n = 100000;

	fk_init(&fk, 0);
	if (fk_make_link(&l, "delay 10ms reorder 25% limit 1000000", &fk) < 0)
		return;
	for (unsigned i = 0; i < n; i++)
		le_link_offer(&l, fk_new(&fk, 100), 100, (le_ns_t)i * 1000);
	CHECK(binomial_ok(l.ctr.event[LE_EVENT_REORDERED], n, 0.25), "%llu", (unsigned long long)l.ctr.event[LE_EVENT_REORDERED]);
	le_link_free(&l);
	fk_fini(&fk);

	fk_init(&fk, 0);
	if (fk_make_link(&l, "delay 10ms reorder 100% gap 5", &fk) < 0)
		return;
	for (unsigned i = 0; i < 20; i++)
		le_link_offer(&l, fk_new(&fk, 100), 100, (le_ns_t)i * 1000);
	unsigned k = le_link_dequeue(&l, 100000, out, 64), bad = 0;
	CHECK_EQ_U64(k, 4);
	for (unsigned j = 0; j < k; j++)
		bad += fk_idx(out[j].handle) % 5 != 4 || out[j].deadline != out[j].arrival;
	CHECK_EQ_U64(bad, 0);
	k = le_link_dequeue(&l, 20 * LE_NS_PER_MS, out, 64);
	CHECK_EQ_U64(k, 16);
	le_link_free(&l);
	fk_fini(&fk);

	/* gap 3, 50%: only frames after at least two delayed ones may go
	 * ahead; never two reordered frames closer than 3 apart. */
	fk_init(&fk, 0);
	if (fk_make_link(&l, "delay 10ms reorder 50% gap 3 limit 100000", &fk) < 0)
		return;
	for (unsigned i = 0; i < 10000; i++)
		le_link_offer(&l, fk_new(&fk, 100), 100, (le_ns_t)i * 1000);
	int last = -100;
	unsigned close = 0, ahead = 0;
	while ((k = le_link_dequeue(&l, 30 * LE_NS_PER_MS, out, 64)) > 0)
		for (unsigned j = 0; j < k; j++)
			if (out[j].deadline == out[j].arrival) {
				int i = (int)fk_idx(out[j].handle);
				close += i - last < 3;
				last = i, ahead++;
			}
	CHECK_EQ_U64(close, 0);
	CHECK(ahead > 1000);
	le_link_free(&l);
	fk_fini(&fk);
}

/* netem's gap rule is `counter < gap - 1` (delayed without a draw), with
 * a u32 counter that only counts up between reordered frames: at
 * counter = 2^32 - 1 netem still draws (2^32 - 1 >= gap - 1 for every
 * gap), so `reorder 100%` reorders that frame. Computed as counter + 1
 * >= gap in 32 bits the sum wrapped to 0 and the frame was delayed
 * without a draw: once in every 2^32 frames not reordered (at 10 Mframe/s,
 * every seven minutes of `reorder 1e-7%`), also at the default gap 1,
 * where netem draws for every frame. Both paths: le_link_offer and a
 * burst (offer_drawn keeps the counter in a local). */
static void reorder_counter_wrap(void)
{
	static const char *const texts[] = { "delay 10ms reorder 100%", "delay 10ms reorder 100% gap 5",
					     "delay 10ms reorder 100% gap 4294967295" };

	for (unsigned t = 0; t < 3; t++)
		for (int burst = 0; burst < 2; burst++) {
			struct fakes fk;
			struct le_link l;
			struct le_frame out[4];
			void *h;
			uint32_t len = 100;

			fk_init(&fk, 0);
			if (fk_make_link(&l, texts[t], &fk) < 0)
				return;
			l.reorder_counter = UINT32_MAX;
			h = fk_new(&fk, len);
			if (burst)
				le_link_offer_burst(&l, &h, &len, 1, 1000);
			else
				le_link_offer(&l, h, len, 1000);
			CHECK(le_link_dequeue(&l, 1000, out, 4) == 1, "'%s' burst %d: the frame at counter 2^32-1 was not reordered",
			      texts[t], burst);
			CHECK_EQ_U64(l.ctr.event[LE_EVENT_REORDERED], 1);
			CHECK_EQ_U64(l.reorder_counter, 0);
			le_link_free(&l);
			fk_fini(&fk);
		}
}

/* --- ECN --------------------------------------------------------------------- */

static uint16_t ip_checksum(const uint8_t *h, unsigned n)
{
	uint32_t s = 0;
	for (unsigned i = 0; i < n; i += 2)
		s += (uint32_t)(h[i] << 8 | h[i + 1]);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static void ipv4(uint8_t *b, uint8_t tos, int vlan)
{
	unsigned o = vlan ? 18 : 14;
	memset(b, 0, FK_BYTES);
	if (vlan)
		b[12] = 0x81, b[13] = 0x00, b[14] = 0x00, b[15] = 0x07, b[16] = 0x08, b[17] = 0x00;
	else
		b[12] = 0x08, b[13] = 0x00;
	b[o] = 0x45, b[o + 1] = tos, b[o + 3] = 40, b[o + 8] = 64, b[o + 9] = 6;
	b[o + 12] = 10, b[o + 15] = 1, b[o + 16] = 10, b[o + 19] = 2;
	uint16_t c = ip_checksum(b + o, 20);
	b[o + 10] = (uint8_t)(c >> 8), b[o + 11] = (uint8_t)c;
}

static void ecn(void)
{
	uint8_t b[FK_BYTES];

	/* ECT(0), ECT(1) -> CE with the checksum still right; CE stays CE;
	 * Not-ECT and non-IP are not ECN-capable. */
	for (unsigned tos = 0; tos < 256; tos++) {
		for (int vlan = 0; vlan < 2; vlan++) {
			unsigned o = vlan ? 18 : 14;
			ipv4(b, (uint8_t)tos, vlan);
			int r = le_ecn_set_ce(b, 60);
			CHECK(r == ((tos & 3) != 0), "tos %u", tos);
			CHECK((b[o + 1] & 3) == ((tos & 3) ? 3 : 0));
			CHECK((b[o + 1] & 0xfc) == (tos & 0xfc));
			CHECK(ip_checksum(b + o, 20) == 0, "tos %u: checksum does not verify", tos);
		}
	}
	/* IPv6: traffic class ECN bits */
	memset(b, 0, sizeof(b));
	b[12] = 0x86, b[13] = 0xdd, b[14] = 0x60 | 0x0b, b[15] = 0x90; /* TC 0xb9: DSCP 46, ECT(1) */
	CHECK(le_ecn_set_ce(b, 60) == 1);
	CHECK(b[14] == 0x6b && b[15] == 0xb0); /* TC 0xbb */
	b[15] = 0x80;                          /* TC 0xb8: Not-ECT */
	CHECK(le_ecn_set_ce(b, 60) == 0 && b[15] == 0x80);
	/* ARP, truncated */
	memset(b, 0, sizeof(b));
	b[12] = 0x08, b[13] = 0x06;
	CHECK(le_ecn_set_ce(b, 60) == 0);
	ipv4(b, 0x02, 0);
	CHECK(le_ecn_set_ce(b, 20) == 0);

	/* RFC 1624 against recomputation, on random headers and changes */
	uint64_t x = 1;
	unsigned bad = 0;
	for (int i = 0; i < 100000; i++) {
		uint8_t h[20];
		for (int k = 0; k < 20; k++)
			x ^= x << 13, x ^= x >> 7, x ^= x << 17, h[k] = (uint8_t)x;
		h[10] = h[11] = 0;
		uint16_t c = ip_checksum(h, 20), old = (uint16_t)(h[0] << 8 | h[1]);
		h[10] = (uint8_t)(c >> 8), h[11] = (uint8_t)c;
		h[1] = (uint8_t)(x >> 40);
		uint16_t nw = (uint16_t)(h[0] << 8 | h[1]);
		uint16_t inc = le_csum_update16(c, old, nw);
		h[10] = h[11] = 0;
		uint16_t full = ip_checksum(h, 20);
		/* one's complement has two zeros; both verify */
		bad += inc != full && !((inc == 0 && full == 0xffff) || (inc == 0xffff && full == 0));
	}
	CHECK_EQ_U64(bad, 0);

	/* In a link: `loss 100% ecn` sends every ECN-capable frame marked and
	 * drops the others. */
	struct fakes fk;
	struct le_link l;
	fk_init(&fk, 1);
	if (fk_make_link(&l, "loss 100% ecn", &fk) < 0)
		return;
	for (unsigned i = 0; i < 400; i++) {
		void *h = fk_new(&fk, 60);
		ipv4(fk.data[fk_idx(h)], (uint8_t)(i % 4), i % 3 == 0);
		le_link_offer(&l, h, 60, i);
	}
	CHECK_EQ_U64(l.ctr.event[LE_EVENT_ECN_MARKED], 300);
	CHECK_EQ_U64(l.ctr.drop[LE_DROP_LOSS], 100);
	for (unsigned i = 0; i < 400; i++)
		CHECK(fk.state[i] == (i % 4 ? FK_LIVE : FK_FREED));
	le_link_free(&l);
	fk_fini(&fk);
}

int main(void)
{
	duplicate();
	corrupt();
	reorder();
	reorder_counter_wrap();
	ecn();
	return mt_summary();
}
