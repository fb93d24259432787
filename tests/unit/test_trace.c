/* Trace-driven links: Mahimahi's format read exactly (and its errors),
 * delivery opportunities shared by small frames and spanned by large
 * ones, capacity per window equal to the trace's, looping and `once`,
 * the microsecond variant, the real traces of the repository's traces/ (missing: a failure). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fake.h"
#include "link.h"
#include "minitest.h"
#include "fake_link.h"
#include "trace.h"

static char tmpdir[] = "/tmp/le_trace_XXXXXX";
static const char *traces_dir = "traces";
static unsigned nfiles;

static const char *file_with(const char *text)
{
	static char path[64][320];
	char *p = path[nfiles++ % 64];
	FILE *f;

	snprintf(p, 320, "%s/t%u.trace", tmpdir, nfiles);
	f = fopen(p, "w");
	fputs(text, f);
	fclose(f);
	return p;
}

/* The link text `fmt` with the trace file's path in its %s. */
static int make(struct le_link *l, const char *fmt, const char *file, struct fakes *fk)
{
	char text[600];

	snprintf(text, sizeof(text), fmt, file);
	return fk_make_link(l, text, fk);
}

static void parse_errors(void)
{
	static const struct {
		const char *text;
		int us;
		const char *want;
	} bad[] = {
		{ "", 0, "empty trace" },
		{ "1\n2\nabc\n", 0, ":3: 'abc' is not a whole number of milliseconds" },
		{ "1\n2\n1.5\n", 0, ":3: '1.5' is not a whole number" },
		{ "1\n 2\n", 0, ":2: ' 2' is not a whole number" },
		{ "5\n3\n", 0, ":2: 3 is below the timestamp before it (5)" },
		{ "1\n-2\n", 0, ":2: '-2' is negative" },
		{ "99999999999\n", 0, ":1: '99999999999' is too large (max 10000000000 milliseconds)" },
		{ "99999999999999\n", 1, ":1: '99999999999999' is too large (max 10000000000000 microseconds)" },
		{ "1\n\n2\n", 0, ":2: empty line" },
		{ "0\n0\n", 0, ":2: the last timestamp is 0" },
		{ "1\n2\nx\n", 1, "not a whole number of microseconds" },
	};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct le_trace t;
		char err[LE_ERR_MAX] = "";
		const char *f = file_with(bad[i].text);

		CHECK(le_trace_load(f, bad[i].us, &t, err, sizeof(err)) == -1, "'%s' accepted", bad[i].text);
		CHECK(strstr(err, bad[i].want) != NULL && strstr(err, f) != NULL, "'%s': got '%s'", bad[i].text, err);
	}
	/* Bytes that are not text are shown, not passed on: a NUL cut the
	 * quote short ('' is not a whole number), and a stray byte went raw
	 * into the message (a terminal's mojibake, U+FFFD in JSON). Valid
	 * UTF-8 is text and stays. */
	static const struct {
		const char *text;
		size_t len;
		const char *want;
	} bytes[] = {
		{ "1\n\0002\n", 5, "x.trace:2: '\\x002' is not a whole number" },
		{ "1\n2\xff\n", 5, "x.trace:2: '2\\xff' is not a whole number" },
		{ "1\n2\r5\n", 6, "x.trace:2: '2\\x0d5' is not a whole number" },
		{ "\xef\xbc\x91\n", 4, "x.trace:1: '\xef\xbc\x91' is not a whole number" },
	};
	for (unsigned i = 0; i < sizeof(bytes) / sizeof(bytes[0]); i++) {
		struct le_trace t;
		char err[LE_ERR_MAX] = "";

		CHECK(le_trace_parse(bytes[i].text, bytes[i].len, "x.trace", 0, &t, err, sizeof(err)) == -1);
		CHECK(strstr(err, bytes[i].want) != NULL, "case %u: got '%s', want '%s'", i, err, bytes[i].want);
	}
	struct le_trace t;
	char err[LE_ERR_MAX];
	CHECK(le_trace_load("/nonexistent/x.trace", 0, &t, err, sizeof(err)) == -1);
	CHECK_STR_CONTAINS(err, "/nonexistent/x.trace: cannot open");
	/* Accepted: no final newline, Windows line ends, repeated lines. */
	CHECK(le_trace_load(file_with("0\r\n3\r\n3\r\n7"), 0, &t, err, sizeof(err)) == 0, "%s", err);
	CHECK(t.n == 4 && t.t[1] == 3000000 && t.t[3] == 7000000 && t.period == 7000000);
	le_trace_free(&t);
	CHECK(le_trace_load(file_with("250\n500\n"), 1, &t, err, sizeof(err)) == 0, "%s", err);
	CHECK(t.n == 2 && t.t[0] == 250000 && t.period == 500000);
	le_trace_free(&t);
}

/* Offers n frames of len bytes at `at`, returns their departures. */
static void burst(struct le_link *l, struct fakes *fk, unsigned n, uint32_t len, le_ns_t at)
{
	for (unsigned i = 0; i < n; i++)
		le_link_offer(l, fk_new(fk, len), len, at);
}

static unsigned collect(struct le_link *l, struct fakes *fk, le_ns_t until, le_ns_t *dl, unsigned max)
{
	struct le_frame out[256];
	unsigned got = 0;

	for (le_ns_t t = 0; t <= until; t += 50000) {
		unsigned n = le_link_dequeue(l, t, out, 256);
		for (unsigned k = 0; k < n; k++)
			if (fk_idx(out[k].handle) < max)
				dl[fk_idx(out[k].handle)] = out[k].deadline, got++;
		fk_sent(fk, out, n);
	}
	return got;
}

#define MS LE_NS_PER_MS

static void sharing_and_spanning(void)
{
	struct fakes fk;
	struct le_link l;
	le_ns_t dl[12];
	const char *one = file_with("1\n"); /* an opportunity every ms: 12 Mbit/s */

	/* 500-byte frames: three share each 1500-byte opportunity. The trace
	 * starts at the first frame (t = 1 ms here). */
	fk_init(&fk, 0);
	if (make(&l, "trace %s", one, &fk) == 0) {
		burst(&l, &fk, 9, 500, 1 * MS);
		CHECK_EQ_U64(collect(&l, &fk, 10 * MS, dl, 12), 9);
		for (int i = 0; i < 9; i++)
			CHECK(dl[i] == (le_ns_t)(2 + i / 3) * MS, "frame %d at %llu", i, (unsigned long long)dl[i]);
		le_link_free(&l);
	}
	fk_fini(&fk);

	/* 1000-byte frames: frame 1 takes the last 500 bytes of the first
	 * opportunity and 500 of the second, and leaves with it. */
	fk_init(&fk, 0);
	if (make(&l, "trace %s", one, &fk) == 0) {
		static const le_ns_t want[6] = { 1, 2, 2, 3, 4, 4 };
		burst(&l, &fk, 6, 1000, 0);
		CHECK_EQ_U64(collect(&l, &fk, 10 * MS, dl, 12), 6);
		for (int i = 0; i < 6; i++)
			CHECK(dl[i] == want[i] * MS, "frame %d at %llu", i, (unsigned long long)dl[i]);
		le_link_free(&l);
	}
	fk_fini(&fk);

	/* 3000-byte frames span two opportunities; a 1514-byte Ethernet frame
	 * needs a little of a second one. */
	fk_init(&fk, 0);
	if (make(&l, "trace %s", one, &fk) == 0) {
		burst(&l, &fk, 3, 3000, 0);
		burst(&l, &fk, 1, 1514, 0);
		CHECK_EQ_U64(collect(&l, &fk, 20 * MS, dl, 12), 4);
		CHECK(dl[0] == 2 * MS && dl[1] == 4 * MS && dl[2] == 6 * MS && dl[3] == 8 * MS);
		le_link_free(&l);
	}
	fk_fini(&fk);
}

/* Opportunities nobody uses are lost: after an idle spell a burst gets one
 * opportunity per ms, not the ones it missed. */
static void unused_lost(void)
{
	struct fakes fk;
	struct le_link l;
	le_ns_t dl[12];

	fk_init(&fk, 0);
	if (make(&l, "trace %s", file_with("1\n"), &fk) < 0)
		return;
	burst(&l, &fk, 1, 1500, 0);
	burst(&l, &fk, 10, 1500, 10 * MS + MS / 2);
	CHECK_EQ_U64(collect(&l, &fk, 30 * MS, dl, 12), 11);
	CHECK_EQ_U64(dl[0], 1 * MS);
	for (int i = 1; i < 11; i++)
		CHECK(dl[i] == (le_ns_t)(10 + i) * MS, "frame %d at %llu", i, (unsigned long long)dl[i]);
	le_link_free(&l);
	fk_fini(&fk);
}

/* Looping as Mahimahi: the next lap starts one period (the last
 * timestamp) later, so "0 0 10" gives 2 opportunities at 0 (unused: the
 * trace starts with the first frame, which, as every frame, can only use
 * opportunities after its arrival), then 3 at 10 ms (the last line and
 * the next lap's two zeros), 3 at 20 ms ...; repeated lines are several
 * opportunities in the same ms. */
static void looping(void)
{
	struct fakes fk;
	struct le_link l;
	le_ns_t dl[12];
	static const le_ns_t want[11] = { 10, 10, 10, 20, 20, 20, 30, 30, 30, 40, 40 };

	fk_init(&fk, 0);
	if (make(&l, "trace %s limit 100", file_with("0\n0\n10\n"), &fk) < 0)
		return;
	burst(&l, &fk, 11, 1500, 0);
	CHECK_EQ_U64(collect(&l, &fk, 50 * MS, dl, 12), 11);
	for (int i = 0; i < 11; i++)
		CHECK(dl[i] == want[i] * MS, "frame %d at %llu", i, (unsigned long long)dl[i]);
	le_link_free(&l);
	fk_fini(&fk);
}

/* once: after the last opportunity nothing more leaves; the frames wait
 * (the link holds them) and later arrivals find the link full. */
static void once(void)
{
	struct fakes fk;
	struct le_link l;
	le_ns_t dl[12];

	fk_init(&fk, 0);
	if (make(&l, "trace %s once limit 4", file_with("1\n2\n3\n"), &fk) < 0)
		return;
	burst(&l, &fk, 5, 1500, 0);     /* 4 held, 1 refused */
	CHECK_EQ_U64(collect(&l, &fk, 100 * MS, dl, 12), 3);
	CHECK(dl[0] == 1 * MS && dl[1] == 2 * MS && dl[2] == 3 * MS);
	CHECK_EQ_U64(le_link_depth(&l), 1);
	burst(&l, &fk, 5, 1500, 200 * MS); /* 3 more fit, 2 refused */
	CHECK_EQ_U64(collect(&l, &fk, 1000 * MS, dl, 12), 0);
	CHECK_EQ_U64(le_link_depth(&l), 4);
	CHECK_EQ_U64(l.ctr.drop[LE_DROP_QUEUE_FULL], 3);
	CHECK_EQ_U64(le_link_next_deadline(&l), UINT64_MAX);
	CHECK(le_counters_conserved(&l.ctr, le_link_depth(&l)));
	le_link_free(&l);
	fk_fini(&fk);
}

/* With a saturated queue every opportunity carries exactly one 1500-byte
 * frame, so the bytes delivered in each 100 ms window are 1500 x the
 * trace's lines in that window (relative to the trace's start, the first
 * frame's arrival; the lines at 0 of the first lap come at the arrival
 * itself and go unused). */
static void capacity_windows(const char *path, int us, le_ns_t span, const char *name)
{
	struct fakes fk;
	struct le_link l;
	struct le_trace t;
	struct le_frame out[512];
	char err[LE_ERR_MAX];
	const le_ns_t t0 = 5 * LE_NS_PER_S + 123;
	unsigned nwin = (unsigned)(span / (100 * MS)), bad = 0;
	uint64_t *got = calloc(nwin, sizeof(*got)), *want = calloc(nwin, sizeof(*want));
	uint64_t frames;

	if (le_trace_load(path, us, &t, err, sizeof(err)) < 0) {
		CHECK(0, "%s", err);
		return;
	}
	/* opportunities per window, with the laps */
	frames = 0;
	for (uint64_t lap = 0; lap * t.period < span; lap++)
		for (uint32_t i = 0; i < t.n; i++) {
			le_ns_t at = lap * t.period + t.t[i];
			if (at > 0 && at < (le_ns_t)nwin * 100 * MS)
				want[at / (100 * MS)] += LE_TRACE_OPPORTUNITY, frames++;
		}
	fk_init(&fk, 0);
	if (make(&l, us ? "trace-us %s limit 200000" : "trace %s limit 200000", path, &fk) < 0)
		return;
	burst(&l, &fk, (unsigned)frames + 100, 1500, t0);
	for (le_ns_t now = t0; now <= t0 + span; now += MS) {
		unsigned n;
		while ((n = le_link_dequeue(&l, now, out, 512)) > 0) {
			for (unsigned k = 0; k < n; k++) {
				le_ns_t rel = out[k].deadline - t0;
				if (rel < (le_ns_t)nwin * 100 * MS)
					got[rel / (100 * MS)] += out[k].len;
			}
			fk_sent(&fk, out, n);
		}
	}
	for (unsigned w = 0; w < nwin; w++)
		if (got[w] != want[w] && bad++ < 3)
			CHECK(0, "%s: window %u: %llu bytes, trace capacity %llu", name, w, (unsigned long long)got[w],
			      (unsigned long long)want[w]);
	CHECK_EQ_U64(bad, 0);
	le_link_free(&l);
	fk_fini(&fk);
	le_trace_free(&t);
	free(got);
	free(want);
}

static void capacity(void)
{
	/* synthetic: bursty, with repeated and idle milliseconds */
	char text[20000];
	size_t len = 0;
	uint64_t x = 5;
	for (unsigned ms = 0; ms < 1000; ms++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		for (unsigned k = 0; k < x % 4; k++)
			len += (size_t)snprintf(text + len, sizeof(text) - len, "%u\n", ms);
	}
	len += (size_t)snprintf(text + len, sizeof(text) - len, "1000\n");
	capacity_windows(file_with(text), 0, 3 * LE_NS_PER_S, "synthetic");
	capacity_windows(file_with("100\n100\n250\n300\n"), 1, LE_NS_PER_S, "microseconds");

	static const char *const real[] = { "pantheon_12mbps.trace", "mahimahi_TMobile-LTE-short.up",
					    "pantheon_0.57mbps-poisson.trace" };
	for (unsigned i = 0; i < 3; i++) {
		char path[600];
		snprintf(path, sizeof(path), "%s/%s", traces_dir, real[i]);
		if (!CHECK(access(path, R_OK) == 0, "%s: the repository's traces/ is missing", path))
			continue;
		capacity_windows(path, 0, 10 * LE_NS_PER_S, real[i]);
	}
}

/* pantheon's 12 Mbit/s trace is the single line `1`: 1500 bytes every ms. */
static void pantheon_12mbps(void)
{
	struct fakes fk;
	struct le_link l;
	char path[600];
	le_ns_t dl[1000];

	snprintf(path, sizeof(path), "%s/pantheon_12mbps.trace", traces_dir);
	if (!CHECK(access(path, R_OK) == 0, "%s: the repository's traces/ is missing", path))
		return;
	fk_init(&fk, 0);
	if (make(&l, "trace %s", path, &fk) < 0)
		return;
	burst(&l, &fk, 1000, 1500, 0);
	CHECK_EQ_U64(collect(&l, &fk, 1100 * MS, dl, 1000), 1000);
	/* 1000 x 1500 B in 1 s = 12 Mbit/s */
	CHECK_EQ_U64(dl[999] - dl[0], 999 * MS);
	le_link_free(&l);
	fk_fini(&fk);
}

/* The trace, CoDel and head drops all act at virtual times: departures
 * must not depend on how often the caller dequeues. */
static uint64_t trace_run(const char *file, int pattern)
{
	struct fakes fk;
	struct le_link l;
	struct le_frame out[64];
	uint64_t x = 42, y = 9, h = 0xcbf29ce484222325ULL;
	le_ns_t t = 0;

	fk_init(&fk, 0);
	if (make(&l, "trace %s limit 300 limit-queue 60 drop-head codel target 2ms interval 20ms delay 1ms", file, &fk) < 0)
		return 0;
	for (int i = 0; i < 30000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		le_ns_t arrival = t + x % 400000;
		uint32_t len = 64 + (uint32_t)(x >> 33) % 1450;
		for (;;) {
			le_ns_t next;
			if (pattern == 0)
				next = t + 20000;
			else
				y ^= y << 13, y ^= y >> 7, y ^= y << 17, next = t + y % 3000000;
			if (next > arrival)
				break;
			t = next;
			unsigned n = le_link_dequeue(&l, t, out, 64);
			for (unsigned k = 0; k < n; k++)
				h = fnv(fnv(h, fk_idx(out[k].handle)), out[k].deadline);
		}
		t = arrival;
		le_link_offer(&l, fk_new(&fk, len), len, arrival);
	}
	for (uint32_t i = 0; i < fk.n; i++)
		h = fnv(h, fk.state[i]);
	h = fnv(h, l.ctr.drop[LE_DROP_CODEL]);
	CHECK(l.ctr.drop[LE_DROP_CODEL] > 0 && l.ctr.drop[LE_DROP_QUEUE_HEAD] > 0, "codel %llu head %llu",
	      (unsigned long long)l.ctr.drop[LE_DROP_CODEL], (unsigned long long)l.ctr.drop[LE_DROP_QUEUE_HEAD]);
	le_link_free(&l);
	fk_fini(&fk);
	return h;
}

static void polling(void)
{
	const char *f = file_with("1\n1\n3\n4\n4\n4\n9\n10\n");
	uint64_t a = trace_run(f, 0), b = trace_run(f, 1);
	CHECK(a == b, "%llx vs %llx", (unsigned long long)a, (unsigned long long)b);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		traces_dir = argv[1];
	if (mkdtemp(tmpdir) == NULL)
		return 1;
	parse_errors();
	sharing_and_spanning();
	unused_lost();
	looping();
	once();
	capacity();
	pantheon_12mbps();
	polling();
	for (unsigned i = 1; i <= nfiles; i++) {
		char p[320];
		snprintf(p, sizeof(p), "%s/t%u.trace", tmpdir, i);
		unlink(p);
	}
	rmdir(tmpdir);
	return mt_summary();
}
