/* Twin tests of links (test_offer_burst.c, test_offer_random.c): two
 * links of one configuration, each on its own pool of fake frames, get
 * the same random schedule (bursts of one arrival, some late, dequeues
 * at random times and sizes); one is offered frame by frame
 * (le_link_offer, the reference) and one by bursts
 * (le_link_offer_burst). After every step they must agree on the frames
 * that leave (handle, length, arrival, deadline, class), every counter,
 * the frames held and the delay line's due mark. Include after fake.h
 * and minitest.h. */
#ifndef TWIN_LINKS_H
#define TWIN_LINKS_H

#include <string.h>

#include "config.h"
#include "link.h"
#include "rng.h"

/* The longest burst twin_link_run offers. */
#define TWIN_LONG_BURST 200

struct twin_step {
	le_ns_t t;
	unsigned burst; /* 0: a dequeue of up to `max` */
	unsigned max;
};

/* The schedule: time moves on by up to `gap` ns, a burst sometimes
 * arrives late (before the link's clock: late_arrival events),
 * dequeues in between. */
static inline struct twin_step twin_next_step(struct le_rng *r, le_ns_t *clock, uint64_t gap)
{
	struct twin_step s = { 0, 0, 0 };

	*clock += le_rng_below(r, gap);
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
 * frames, UDP and TCP alternating in runs of `run` frames; every third
 * run ECN-capable (ECT(0)), for `ecn` to mark. */
static inline int twin_frames(struct fakes *fa, struct fakes *fb, struct le_rng *r, unsigned n, uint32_t spread,
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
			b[15] = (i / run) % 3 == 0 ? 0x02 : 0x00; /* ECT(0) */
			b[23] = ((i / run) & 1) ? 6 : 17;
		}
	}
	return 1;
}

static inline int twin_same_frames(const struct le_frame *a, const struct le_frame *b, unsigned n, const char *what)
{
	for (unsigned i = 0; i < n; i++)
		if (a[i].handle != b[i].handle || a[i].len != b[i].len || a[i].arrival != b[i].arrival ||
		    a[i].deadline != b[i].deadline || a[i].cls != b[i].cls) {
			CHECK(0, "%s: frame %u of a dequeue differs", what, i);
			return 0;
		}
	return 1;
}

/* How a twin run went, for the caller's checks on what it reached. */
struct twin_link_seen {
	struct le_link_config cfg;
	struct le_counters ctr; /* the burst twin's, at the end */
	unsigned plain;         /* the burst twin took the plain burst loop */
	unsigned chances;       /* ... or the per-frame chances (runs) */
	unsigned steps;         /* steps completed in agreement */
	uint64_t tx;            /* frames that left */
};

/* The schedule of `steps` steps (time moving up to `gap` ns a step,
 * frames up to 59 + spread bytes, `ip_run` as twin_frames) through two
 * links of `text`; 0 when they agreed throughout (and the end checks
 * held: conservation, the same bytes, no double free), else -1 with a
 * failed check naming the text and the step. Both are drained and
 * freed. */
static int twin_link_run(const char *text, uint64_t seed, unsigned steps, uint64_t gap, uint32_t spread,
			 unsigned ip_run, struct twin_link_seen *seen)
{
	struct fakes fa, fb;
	struct le_link a, b;
	char err[LE_ERR_MAX] = "";
	struct le_rng r;
	le_ns_t clock = 1000;
	int ok = 1;

	memset(seen, 0, sizeof(*seen));
	fk_init(&fa, 1);
	fk_init(&fb, 1);
	if (le_config_parse(text, &seen->cfg, err, sizeof(err)) != 0 ||
	    le_link_init_ops(&a, &seen->cfg, LE_DIR_A2B, 0, 7, &fa.ops, err, sizeof(err)) != 0) {
		CHECK(0, "'%s': %s", text, err);
		fk_fini(&fa);
		fk_fini(&fb);
		return -1;
	}
	if (le_link_init_ops(&b, &seen->cfg, LE_DIR_A2B, 0, 7, &fb.ops, err, sizeof(err)) != 0) {
		CHECK(0, "'%s': %s", text, err);
		le_link_free(&a);
		fk_fini(&fa);
		fk_fini(&fb);
		return -1;
	}
	le_rng_seed(&r, seed, 0, 0);
	for (unsigned step = 0; step < steps && ok; step++) {
		struct twin_step s = twin_next_step(&r, &clock, gap);
		struct le_frame oa[40], ob[40];

		/* One burst in 16 longer than the blocks of 64 frames the
		 * burst paths cut theirs into. */
		if (s.burst && step % 16 == 15)
			s.burst += 64 + (unsigned)le_rng_below(&r, TWIN_LONG_BURST - 96);
		if (s.burst) {
			void *h[TWIN_LONG_BURST];
			uint32_t len[TWIN_LONG_BURST];

			/* Both twins' frames first: copies made while offering
			 * must get the same numbers in both. */
			if (!(ok = twin_frames(&fa, &fb, &r, s.burst, spread, ip_run, h, len)))
				break;
			for (unsigned i = 0; i < s.burst; i++)
				le_link_offer(&a, h[i], len[i], s.t);
			seen->plain += b.plain;
			seen->chances += !b.stageless && b.line.runs;
			le_link_offer_burst(&b, h, len, s.burst, s.t);
		} else {
			unsigned na = le_link_dequeue(&a, s.t, oa, s.max);
			unsigned nb = le_link_dequeue(&b, s.t, ob, s.max);

			if (nb != na || !twin_same_frames(oa, ob, na, text)) {
				CHECK(0, "'%s': dequeue of step %u: %u frames against %u", text, step, nb, na);
				ok = 0;
				break;
			}
			if (fk_sent(&fa, oa, na) + fk_sent(&fb, ob, nb) != 0) {
				CHECK(0, "'%s': step %u sent a frame that was not live", text, step);
				ok = 0;
			}
			seen->tx += na;
		}
		if (memcmp(&a.ctr, &b.ctr, sizeof(a.ctr)) != 0 || a.line.due != b.line.due ||
		    a.line.count != b.line.count || a.clock != b.clock || a.last_deadline != b.last_deadline ||
		    le_link_held(&a) != le_link_held(&b) || le_link_depth(&a) != le_link_depth(&b)) {
			CHECK(0, "'%s': the twins differ after step %u", text, step);
			ok = 0;
			break;
		}
		seen->steps = step + 1;
	}
	seen->ctr = b.ctr;
	if (ok) {
		/* corrupt flipped the same bits of the same frames */
		ok = fa.n == fb.n && memcmp(fa.data, fb.data, (size_t)fa.n * FK_BYTES) == 0;
		CHECK(ok, "'%s': the twins' frame bytes differ", text);
		ok = ok && le_counters_conserved(&b.ctr, le_link_depth(&b));
		CHECK(ok, "'%s': the counters do not add up", text);
	}
	/* Drained to the end, the twins must have sent and freed the same. */
	for (unsigned drain = 0; ok && drain < 1000000; drain++) {
		struct le_frame oa[40], ob[40];
		unsigned na = le_link_dequeue(&a, UINT64_MAX - 1, oa, 40);
		unsigned nb = le_link_dequeue(&b, UINT64_MAX - 1, ob, 40);

		if (na != nb || !twin_same_frames(oa, ob, na, text)) {
			CHECK(0, "'%s': the drain differs", text);
			ok = 0;
		}
		if (fk_sent(&fa, oa, na) + fk_sent(&fb, ob, nb) != 0) {
			CHECK(0, "'%s': the drain sent a frame that was not live", text);
			ok = 0;
		}
		if (na == 0)
			break;
	}
	for (uint32_t i = 0; ok && i < fb.n; i++)
		if (fb.state[i] == FK_LIVE) {
			CHECK(0, "'%s': frame %u neither sent nor freed after the drain", text, i);
			ok = 0;
		}
	if (ok) {
		ok = le_link_depth(&b) == 0 && le_link_held(&b) == 0 && fa.freed == fb.freed &&
		     fb.double_free + fb.bad_handle == 0 && le_counters_conserved(&b.ctr, 0);
		CHECK(ok, "'%s': after the drain: depth %u held %u freed %llu/%llu double %llu", text,
		      le_link_depth(&b), le_link_held(&b), (unsigned long long)fa.freed,
		      (unsigned long long)fb.freed, (unsigned long long)(fb.double_free + fb.bad_handle));
	}
	le_link_free(&a);
	le_link_free(&b);
	fk_fini(&fa);
	fk_fini(&fb);
	return ok ? 0 : -1;
}

#endif
