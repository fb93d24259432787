/* A direction: class rules and their grammar, classification of real
 * header layouts, per-class links and counters, live reconfiguration
 * (le_path_inherit), reproducibility. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fake.h"
#include "minitest.h"
#include "path.h"

static int make(struct le_path *p, const char *text, struct fakes *fk, uint64_t seed)
{
	struct le_path_config c;
	char err[LE_ERR_MAX] = "";

	if (le_path_config_parse(text, &c, err, sizeof(err)) != 0 ||
	    le_path_init(p, &c, LE_DIR_B2A, seed, &fk->ops, err, sizeof(err)) != 0) {
		CHECK(0, "'%s': %s", text, err);
		return -1;
	}
	return 0;
}

static void grammar(void)
{
	struct le_path_config c, back;
	char err[LE_ERR_MAX] = "", buf[LE_PATH_TEXT_MAX];

	CHECK(le_path_config_parse("delay 10ms", &c, err, sizeof(err)) == 0, "%s", err);
	CHECK(c.nclasses == 0 && c.dflt.delay == 10000000);
	CHECK(le_path_config_parse("", &c, err, sizeof(err)) == 0 && c.nclasses == 0);

	const char *text = "delay 20ms loss 1% ; class ctl match proto tcp port 830 : ; "
			   "class voice match dscp ef : delay 1ms;class lan match src 10.1.0.0/16 dst 2001:db8::/32 : delay 2ms";
	CHECK(le_path_config_parse(text, &c, err, sizeof(err)) == -1); /* v4 src with v6 dst */
	CHECK_STR_CONTAINS(err, "class lan: dst: an IPv6 prefix cannot match IPv4 frames");

	text = "delay 20ms loss 1% ; class ctl match proto tcp port 830 : ; "
	       "class voice match dscp ef : delay 1ms;class lan match ether ipv4 src 10.1.0.0/16 sport 1000-2000 : delay 2ms rate 1mbit ; "
	       "class v6 match ether ipv6 dst 2001:db8::/32 dscp af41 : delay 3ms ; class tag match vlan 100 ether arp : ; "
	       "class x match ether 0x88cc dport 5 proto udp : delay 1us";
	CHECK(le_path_config_parse(text, &c, err, sizeof(err)) == -1);
	CHECK_STR_CONTAINS(err, "class x: ether 0x88cc: IP filters");
	text = "delay 20ms loss 1% ; class ctl match proto tcp port 830 : ; "
	       "class voice match dscp ef : delay 1ms;class lan match ether ipv4 src 10.1.0.0/16 sport 1000-2000 : delay 2ms rate 1mbit ; "
	       "class v6 match ether ipv6 dst 2001:db8::/32 dscp af41 : delay 3ms ; class tag match vlan 100 ether arp : ; "
	       "class x match ether 0x88cc vlan 7 : delay 1us";
	CHECK(le_path_config_parse(text, &c, err, sizeof(err)) == 0, "%s", err);
	CHECK_EQ_U64(c.nclasses, 6);
	CHECK(strcmp(c.cls[0].name, "ctl") == 0 && c.cls[0].match.proto == 6 && c.cls[0].match.port.lo == 830);
	CHECK(c.cls[1].match.dscp == 46 && c.cls[1].link.delay == 1000000);
	CHECK(c.cls[2].match.sport.lo == 1000 && c.cls[2].match.sport.hi == 2000 && c.cls[2].link.rate.bps == 1000000);
	CHECK(c.cls[3].match.dscp == 34 && c.cls[3].match.dst.family == 6 && c.cls[3].match.dst.len == 32);
	CHECK(c.cls[4].match.ethertype == 0x0806 && c.cls[4].match.vlan == 100);
	CHECK(c.cls[5].match.ethertype == 0x88cc);
	le_path_config_format(&c, buf, sizeof(buf));
	CHECK(strcmp(buf, "delay 20ms loss 1% ; class ctl match proto tcp port 830 : ; class voice match dscp ef : delay 1ms ; "
			  "class lan match ether ipv4 src 10.1.0.0/16 sport 1000-2000 : delay 2ms rate 1mbit ; "
			  "class v6 match ether ipv6 dst 2001:db8::/32 dscp af41 : delay 3ms ; "
			  "class tag match ether arp vlan 100 : ; class x match ether 0x88cc vlan 7 : delay 1us") == 0,
	      "got '%s'", buf);
	CHECK(le_path_config_parse(buf, &back, err, sizeof(err)) == 0, "%s", err);
	CHECK(le_path_config_equal(&c, &back));
	/* default empty, classes only */
	CHECK(le_path_config_parse("; class a match dscp cs5 : delay 1ms", &c, err, sizeof(err)) == 0, "%s", err);
	le_path_config_format(&c, buf, sizeof(buf));
	CHECK(strcmp(buf, "; class a match dscp cs5 : delay 1ms") == 0, "got '%s'", buf);
	CHECK(c.cls[0].match.dscp == 40);

	static const struct {
		const char *text, *want;
	} bad[] = {
		{ "dealy 1ms ; class a match vlan 1 : ", "unknown word 'dealy'" },
		{ "delay 1ms ;", "rule 1: nothing after ';'" },
		{ "delay 1ms ; klass a match vlan 1 :", "rule 1: 'klass' where 'class' was expected" },
		{ "; class", "class: missing NAME" },
		{ "; class a b", "class a: expected 'match' after the name" },
		/* The name left out: 'match' is not taken for one. */
		{ "; class match proto tcp : delay 1ms", "class: missing NAME before 'match'" },
		{ "; class a match vlan 1", "class a: missing ':'" },
		{ "; class a match vlan 1 : delay 1x", "class a: delay: '1x' is not a time" },
		{ "; class a match : delay 1ms", "class a: match: needs at least one filter word" },
		{ "; class a match vlan : ", "class a: vlan: missing value" },
		{ "; class a match vlan 4096 : ", "class a: vlan: '4096' is out of range (0 .. 4095)" },
		{ "; class a match color red : ", "class a: match: unknown filter word 'color'" },
		{ "; class a match vlan 1 vlan 2 : ", "class a: vlan: given twice in one rule" },
		{ "; class a match proto xyz : ", "class a: proto: 'xyz' is not tcp" },
		{ "; class a match proto 256 : ", "class a: proto: '256'" },
		{ "; class a match proto icmp port 5 : ", "class a: proto icmp: has no ports" },
		{ "; class a match dport 70000 : ", "class a: dport: '70000' is not a port or range" },
		{ "; class a match port 90-80 : ", "class a: port: '90-80' is an empty range" },
		{ "; class a match src 10.0.0/8 : ", "class a: src: '10.0.0/8' is not an IPv4 or IPv6 address" },
		{ "; class a match src 10.0.0.0/33 : ", "class a: src: '10.0.0.0/33' has a bad prefix length (0 .. 32)" },
		{ "; class a match src 10.0.0.1/8 : ", "class a: src: '10.0.0.1/8' has address bits set beyond" },
		{ "; class a match dst ::1/129 : ", "bad prefix length (0 .. 128)" },
		{ "; class a match ether ipv4 src ::1 : ", "class a: src: an IPv6 prefix cannot match IPv4 frames" },
		{ "; class a match ether bogus : ", "class a: ether: 'bogus' is not ipv4" },
		{ "; class a match dscp af51 : ", "class a: dscp: 'af51'" },
		{ "; class a match dscp 64 : ", "class a: dscp: '64'" },
		{ "; class a match vlan 1 : ; class a match vlan 2 : ", "class a: the name is used twice" },
		{ "; class default match vlan 1 : ", "'default' is not a class name" },
		{ "; class a.b match vlan 1 : ", "'a.b' is not a class name" },
	};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		CHECK(le_path_config_parse(bad[i].text, &c, err, sizeof(err)) == -1, "'%s' accepted", bad[i].text);
		CHECK(strstr(err, bad[i].want) != NULL, "'%s': got '%s', want '%s'", bad[i].text, err, bad[i].want);
	}
	/* at most 64 classes */
	char many[4000];
	size_t len = 0;
	for (int i = 0; i < 65; i++)
		len += (size_t)snprintf(many + len, sizeof(many) - len, "; class c%d match vlan %d : ", i, i);
	CHECK(le_path_config_parse(many, &c, err, sizeof(err)) == -1);
	CHECK_STR_CONTAINS(err, "class c64: more than 64 classes");
}

/* Random paths from pieces: parse, format, parse again, equal. */
static void round_trip(void)
{
	static const char *const links[] = {
		"", "delay 10ms", "delay 1ms 200us 10% distribution pareto noreorder loss gemodel 1% 20%",
		"rate 10mbit 24 limit-queue 50 drop-head codel target 2ms ecn loss 1% ecn",
		"slot 1ms 3ms packets 4 limit 500 seed 9", "duplicate 1% corrupt 0.1% 5% delay 5ms reorder 2% gap 3",
	};
	static const char *const matches[] = {
		"proto tcp port 830", "vlan 100", "dscp ef", "src 10.0.0.0/8 dport 1-1024", "ether ipv6 dst 2001:db8::1",
		"ether 0x88cc", "proto 47", "sport 5000-6000 proto udp", "dscp cs7 ether ipv4", "dst ::/0",
	};
	uint64_t x = 77;
	unsigned bad = 0;

	for (int i = 0; i < 2000; i++) {
		char text[4000], buf[LE_PATH_TEXT_MAX], err[LE_ERR_MAX];
		struct le_path_config c, back;
		size_t len = 0;
		unsigned n;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		n = (unsigned)(x % 17);
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%s", links[x % 6]);
		for (unsigned k = 0; k < n; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			len += (size_t)snprintf(text + len, sizeof(text) - len, " ;class c%u match %s : %s", k,
						matches[x % 10], links[(x >> 8) % 6]);
		}
		if (le_path_config_parse(text, &c, err, sizeof(err)) != 0) {
			if (bad++ < 3)
				CHECK(0, "'%s': %s", text, err);
			continue;
		}
		le_path_config_format(&c, buf, sizeof(buf));
		if (le_path_config_parse(buf, &back, err, sizeof(err)) != 0 || !le_path_config_equal(&c, &back))
			if (bad++ < 3)
				CHECK(0, "round trip of '%s' -> '%s': %s", text, buf, err);
	}
	CHECK_EQ_U64(bad, 0);
}

/* --- frames ------------------------------------------------------------------ */

enum { F_V4TCP830, F_V4TCP80, F_V4UDP830, F_V6EXT830, F_VLAN100, F_ARP, F_FRAG830, F_TRUNC830, F_EF, F_LAN, F_V6UDP, F_KINDS };

/* Builds a frame of a kind in b; returns its length. */
static uint32_t build(uint8_t *b, int kind)
{
	unsigned o = 14;
	uint32_t len;

	memset(b, 0, FK_BYTES);
	b[12] = 0x08, b[13] = 0x00;
	if (kind == F_VLAN100) {
		b[12] = 0x81, b[13] = 0x00, b[14] = 0x20, b[15] = 100, b[16] = 0x08, b[17] = 0x00;
		o = 18;
	}
	if (kind == F_ARP) {
		b[12] = 0x08, b[13] = 0x06;
		return 60;
	}
	if (kind == F_V6EXT830 || kind == F_V6UDP) {
		b[12] = 0x86, b[13] = 0xdd;
		b[o] = 0x60;
		b[o + 8] = 0x20, b[o + 9] = 0x01, b[o + 10] = 0x0d, b[o + 11] = 0xb8; /* src 2001:db8:: */
		if (kind == F_V6UDP) {
			b[o + 6] = 17;
			b[o + 40] = 0x13, b[o + 41] = 0x88, b[o + 42] = 0x03, b[o + 43] = 0x3e; /* 5000 -> 830 */
			return o + 48;
		}
		b[o + 6] = 0;                       /* hop-by-hop */
		b[o + 40] = 60, b[o + 41] = 0;      /* -> dest opts, 8 bytes */
		b[o + 48] = 6, b[o + 49] = 1;       /* -> TCP, 16 bytes */
		b[o + 64] = 0x30, b[o + 65] = 0x39, b[o + 66] = 0x03, b[o + 67] = 0x3e; /* 12345 -> 830 */
		return o + 84;
	}
	b[o] = 0x45;
	b[o + 9] = kind == F_V4UDP830 ? 17 : 6;
	b[o + 12] = 192, b[o + 13] = 168, b[o + 15] = 1;
	if (kind == F_LAN)
		b[o + 12] = 10, b[o + 13] = 1, b[o + 14] = 7, b[o + 15] = 9;
	if (kind == F_EF)
		b[o + 1] = 46 << 2 | 2;
	if (kind == F_FRAG830)
		b[o + 6] = 0x00, b[o + 7] = 0xb9; /* fragment offset 185: no L4 header */
	uint16_t dport = kind == F_V4TCP80 || kind == F_EF || kind == F_LAN ? 80 : 830;
	b[o + 20] = 0x30, b[o + 21] = 0x39, b[o + 22] = (uint8_t)(dport >> 8), b[o + 23] = (uint8_t)dport;
	len = o + 40;
	if (kind == F_TRUNC830)
		len = o + 22; /* ends inside the destination port */
	return len;
}

/* IPv6's DSCP is the high six bits of the traffic class, which spans the
 * first two bytes (version 4 bits, traffic class 8, flow label 20). */
static void ipv6_dscp(void)
{
	struct fakes fk;
	struct le_path p;
	/* traffic class -> class expected: ef (46), af41 (34), ef with ECN
	 * bits set, 0, and cs5 (40) which no rule names */
	static const struct { uint8_t tc; unsigned cls; } want[] = {
		{ 46 << 2, 1 }, { 34 << 2, 2 }, { 46 << 2 | 3, 1 }, { 0, 0 }, { 40 << 2, 0 },
	};

	fk_init(&fk, 1);
	if (make(&p, "delay 5ms ; class ef match ether ipv6 dscp ef : ; class af41 match dscp af41 :", &fk, 1) < 0)
		return;
	for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		void *h = fk_new(&fk, 100);
		uint8_t *b = fk.data[fk_idx(h)];
		uint32_t len = build(b, F_V6UDP);

		b[14] = (uint8_t)(0x60 | want[i].tc >> 4);
		b[15] = (uint8_t)((want[i].tc & 0x0f) << 4);
		fk.len[fk_idx(h)] = len;
		CHECK(le_path_classify(&p, h, len) == want[i].cls, "traffic class 0x%02x: class %u, want %u",
		      want[i].tc, le_path_classify(&p, h, len), want[i].cls);
	}
	le_path_free(&p);
	fk_fini(&fk);
}

/* Frames reach the link of the first rule they match; the others use the
 * default link. The docs' example: control traffic (TCP port 830)
 * unimpaired, everything else 5G-like. */
static void classification(void)
{
	struct fakes fk;
	struct le_path p;
	struct le_frame out[64];
	const char *text = "delay 10ms 2ms distribution normal noreorder loss 0.1% rate 100mbit ; "
			   "class ctl match proto tcp port 830 : ; "
			   "class vlan100 match vlan 100 : delay 5ms ; "
			   "class voice match dscp ef : delay 1ms ; "
			   "class lan match src 10.1.0.0/16 : delay 2ms ; "
			   "class v6 match ether ipv6 : delay 3ms";
	/* expected class per kind */
	static const unsigned want[F_KINDS] = {
		[F_V4TCP830] = 1, [F_V4TCP80] = 0, [F_V4UDP830] = 0, [F_V6EXT830] = 1, [F_VLAN100] = 1,
		[F_ARP] = 0, [F_FRAG830] = 0, [F_TRUNC830] = 0, [F_EF] = 3, [F_LAN] = 4, [F_V6UDP] = 5,
	};

	fk_init(&fk, 1);
	if (make(&p, text, &fk, 1) < 0)
		return;
	CHECK_EQ_U64(le_path_classes(&p), 6);
	CHECK(strcmp(le_path_class_name(&p, 0), "default") == 0 && strcmp(le_path_class_name(&p, 1), "ctl") == 0);
	for (int k = 0; k < F_KINDS; k++) {
		void *h = fk_new(&fk, 100);
		uint32_t len = build(fk.data[fk_idx(h)], k);
		fk.len[fk_idx(h)] = len;
		CHECK(le_path_classify(&p, h, len) == want[k], "kind %d: class %u, want %u", k,
		      le_path_classify(&p, h, len), want[k]);
	}
	/* VLAN 100 carrying TCP 830: the first matching rule (ctl) wins */
	CHECK_EQ_U64(want[F_VLAN100], 1);

	/* Through the path: class-1 frames are unimpaired (leave at arrival),
	 * each class counts its own. */
	unsigned per[6] = { 0 };
	for (unsigned i = 0; i < 1000; i++) {
		void *h = fk_new(&fk, 100);
		int k = (int)(i % F_KINDS);
		uint32_t len = build(fk.data[fk_idx(h)], k);
		fk.len[fk_idx(h)] = len;
		le_path_enqueue(&p, h, len, (le_ns_t)i * 10000);
		per[want[k]]++;
	}
	for (unsigned c = 0; c < 6; c++)
		CHECK_EQ_U64(le_path_class_counters(&p, c).rx, per[c]);
	unsigned got[6] = { 0 }, unimpaired_late = 0, n;
	le_ns_t last = 0;
	unsigned order = 0;
	while ((n = le_path_dequeue(&p, LE_NS_PER_S, out, 64)) > 0) {
		for (unsigned j = 0; j < n; j++) {
			got[out[j].cls]++;
			if (out[j].cls == 1)
				unimpaired_late += out[j].deadline != out[j].arrival;
			order += out[j].deadline < last;
			last = out[j].deadline;
		}
		fk_sent(&fk, out, n);
	}
	CHECK_EQ_U64(unimpaired_late, 0);
	CHECK_EQ_U64(order, 0); /* merged across classes in deadline order */
	struct le_counters total;
	le_path_counters(&p, &total);
	for (unsigned c = 0; c < 6; c++)
		CHECK_EQ_U64(got[c], le_path_class_counters(&p, c).tx);
	CHECK(le_counters_conserved(&total, le_path_depth(&p)));
	CHECK_EQ_U64(total.rx, 1000);
	le_path_free(&p);
	fk_fini(&fk);
}

/* Same seed, configuration and input: the same departures (order, times)
 * and drops, frame for frame; another seed: different ones. */
static uint64_t run(uint64_t seed)
{
	struct fakes fk;
	struct le_path p;
	struct le_frame out[64];
	uint64_t x = 3, h = 0xcbf29ce484222325ULL;
	const char *text = "delay 5ms 1ms distribution paretonormal loss gemodel 3% 30% duplicate 2% corrupt 1% "
			   "reorder 5% gap 2 rate 50mbit limit 500 ; class ctl match proto tcp port 830 : loss 1% ; "
			   "class v6 match ether ipv6 : delay 1ms 1ms noreorder loss state 2% 40% rate 20mbit codel limit-queue 50";

	fk_init(&fk, 1);
	if (make(&p, text, &fk, seed) < 0)
		return 0;
	for (unsigned i = 0; i < 50000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		void *hd = fk_new(&fk, 100);
		uint32_t len = build(fk.data[fk_idx(hd)], (int)(x % F_KINDS));
		fk.len[fk_idx(hd)] = len;
		le_path_enqueue(&p, hd, len, (le_ns_t)i * 20000);
		unsigned n = le_path_dequeue(&p, (le_ns_t)i * 20000, out, 64);
		for (unsigned j = 0; j < n; j++)
			h = fnv(fnv(fnv(h, fk_idx(out[j].handle)), out[j].deadline), out[j].cls);
		fk_sent(&fk, out, n);
	}
	for (uint32_t i = 0; i < fk.n; i++) {
		h = fnv(h, fk.state[i]);
		for (unsigned b = 0; b < 64; b++)
			h = fnv(h, fk.data[i][b]);
	}
	le_path_free(&p);
	fk_fini(&fk);
	return h;
}

static void reproducible(void)
{
	uint64_t a = run(42), b = run(42), c = run(43);
	CHECK(a == b, "%llx vs %llx", (unsigned long long)a, (unsigned long long)b);
	CHECK(a != c);
}

/* --- live reconfiguration ------------------------------------------------------ */

static void swap_rate(int inherit)
{
	struct fakes fk;
	struct le_path a, b;
	struct le_frame out[64];
	le_ns_t dl[20] = { 0 };

	fk_init(&fk, 1);
	if (make(&a, "rate 12mbit", &fk, 1) < 0 || make(&b, "rate 12mbit", &fk, 1) < 0)
		return;
	/* 10 frames of 1 ms each queued in the old path; swap at 0.5 ms */
	for (int i = 0; i < 10; i++)
		le_path_enqueue(&a, fk_new(&fk, 1500), 1500, 0);
	if (inherit)
		le_path_inherit(&b, &a);
	for (int i = 0; i < 5; i++)
		le_path_enqueue(&b, fk_new(&fk, 1500), 1500, 500000);
	for (le_ns_t t = 0; t < 20 * LE_NS_PER_MS; t += 100000) {
		unsigned n = le_path_dequeue(&a, t, out, 64);
		for (unsigned j = 0; j < n; j++)
			dl[fk_idx(out[j].handle)] = out[j].deadline;
		n = le_path_dequeue(&b, t, out, 64);
		for (unsigned j = 0; j < n; j++)
			dl[fk_idx(out[j].handle)] = out[j].deadline;
	}
	if (inherit) {
		/* the new frames follow the old ones at the link's rate: no
		 * burst through at the change */
		for (int i = 0; i < 15; i++)
			CHECK(dl[i] == (le_ns_t)(i + 1) * LE_NS_PER_MS, "frame %d at %llu", i, (unsigned long long)dl[i]);
	} else {
		CHECK(dl[10] == 1500000); /* without it, both paths send at once */
	}
	le_path_free(&a);
	le_path_free(&b);
	fk_fini(&fk);
}

static void swap_state(void)
{
	struct fakes fk;
	struct le_path a, b;
	struct le_frame out[64];
	char tr[] = "/tmp/le_path_XXXXXX";
	int fd = mkstemp(tr);
	char text[200];

	if (fd < 0 || write(fd, "1\n", 2) != 2)
		CHECK(0, "temp trace");
	close(fd);
	fk_init(&fk, 1);
	/* trace phase: old frames use the opportunities at 1..8 ms; the
	 * new path takes the six still queued over and continues the same
	 * trace: they leave at 3..8 ms, the new frame at 9 ms. */
	snprintf(text, sizeof(text), "trace %s", tr);
	if (make(&a, text, &fk, 1) < 0 || make(&b, text, &fk, 1) < 0)
		return;
	for (int i = 0; i < 8; i++)
		le_path_enqueue(&a, fk_new(&fk, 1500), 1500, 0);
	le_path_dequeue(&a, 2500000, out, 64); /* two have left */
	le_path_inherit(&b, &a);
	le_path_enqueue(&b, fk_new(&fk, 1500), 1500, 2500000);
	CHECK_EQ_U64(le_path_dequeue(&b, 8500000, out, 64), 6);
	CHECK_EQ_U64(le_path_dequeue(&b, 9000000, out, 64), 1);
	le_path_free(&a);
	le_path_free(&b);
	unlink(tr);

	/* Gilbert-Elliott state: the old chain is in Bad (p = 100%, r = 0);
	 * the new one (p = r = 0) stays where it starts: Bad if inherited. */
	if (make(&a, "loss gemodel 100% 0%", &fk, 1) < 0 || make(&b, "loss gemodel 0% 0%", &fk, 1) < 0)
		return;
	le_path_enqueue(&a, fk_new(&fk, 100), 100, 0);
	le_path_inherit(&b, &a);
	for (int i = 0; i < 10; i++)
		le_path_enqueue(&b, fk_new(&fk, 100), 100, 1);
	CHECK_EQ_U64(le_path_class_counters(&b, 0).drop[LE_DROP_LOSS], 10);
	le_path_free(&a);
	le_path_free(&b);

	/* noreorder: the new path's frames never leave before the old one's */
	if (make(&a, "delay 50ms 1ms noreorder", &fk, 1) < 0 || make(&b, "delay 1ms 1ms noreorder", &fk, 1) < 0)
		return;
	le_path_enqueue(&a, fk_new(&fk, 100), 100, 0);
	le_path_inherit(&b, &a);
	le_path_enqueue(&b, fk_new(&fk, 100), 100, 10);
	CHECK(le_path_next_deadline(&b) >= le_path_next_deadline(&a));
	le_path_free(&a);
	le_path_free(&b);
	fk_fini(&fk);
}

/* The examples in docs/grammar.md parse and initialize. */
static void doc_examples(void)
{
	static const char *const ex[] = {
		"delay 10ms 2ms distribution normal noreorder loss gemodel 0.5% 30% rate 200mbit limit-queue 500 codel ; class ctl match proto tcp port 830 :",
		"rate 50mbit delay 20ms ; class voice match dscp ef : delay 20ms rate 2mbit limit-queue 10 ; class video match dscp af41 : delay 20ms rate 20mbit limit-queue 200",
		"delay 5ms ; class lossy match vlan 42 : delay 5ms loss 2% ; class v6 match ether ipv6 : delay 15ms",
	};
	struct fakes fk;

	fk_init(&fk, 1);
	for (unsigned i = 0; i < sizeof(ex) / sizeof(ex[0]); i++) {
		struct le_path p;
		if (make(&p, ex[i], &fk, 1) == 0)
			le_path_free(&p);
	}
	fk_fini(&fk);
}

static void init_errors(void)
{
	struct fakes fk;
	struct le_path p;
	struct le_path_config c;
	char err[LE_ERR_MAX];

	fk_init(&fk, 0); /* no bytes operation */
	CHECK(le_path_config_parse("; class a match vlan 1 : delay 1ms", &c, err, sizeof(err)) == 0);
	CHECK(le_path_init(&p, &c, LE_DIR_A2B, 1, &fk.ops, err, sizeof(err)) == -1);
	CHECK_STR_CONTAINS(err, "bytes");
	fk_fini(&fk);
	fk_init(&fk, 1);
	fk.ops.clone = NULL;
	CHECK(le_path_config_parse("; class a match vlan 1 : duplicate 1%", &c, err, sizeof(err)) == 0);
	CHECK(le_path_init(&p, &c, LE_DIR_A2B, 1, &fk.ops, err, sizeof(err)) == -1);
	CHECK_STR_CONTAINS(err, "class a: the frame operations lack clone");
	fk_fini(&fk);
}

int main(void)
{
	grammar();
	round_trip();
	classification();
	ipv6_dscp();
	reproducible();
	swap_rate(1);
	swap_rate(0);
	swap_state();
	init_errors();
	doc_examples();
	return mt_summary();
}
