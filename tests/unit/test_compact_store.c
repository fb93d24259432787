/* The compact store: fill, wrap (slots reused round after round), frees
 * in any order, exhaustion counted, bytes intact; and a link model in
 * virtual time holding its frames as store slots (handles are slot
 * numbers, drops and duplicates go through the frame operations), so the
 * store and the model's accounting agree frame for frame. */
#include <stdlib.h>

#include "compact_store.h"
#include "config.h"
#include "link.h"
#include "minitest.h"
#include "rng.h"

/* A frame's bytes: a pattern from its number, so a slot handed to two
 * frames at once, or reused too early, shows as a wrong byte. */
static void pattern(uint8_t *b, uint32_t len, uint64_t id)
{
	for (uint32_t i = 0; i < len; i++)
		b[i] = (uint8_t)(id * 131 + i * 7 + (id >> 8));
}

static int pattern_ok(const uint8_t *b, uint32_t len, uint64_t id)
{
	uint8_t want[LE_COMPACT_SLOT];
	pattern(want, len, id);
	return memcmp(b, want, len) == 0;
}

static struct le_compact_store *new_store(uint32_t nslots)
{
	struct le_compact_store *s = malloc(sizeof(*s));
	void *mem = aligned_alloc(64, le_compact_store_bytes(nslots) ? le_compact_store_bytes(nslots) : 64);
	le_compact_store_init(s, mem, nslots);
	return s;
}

static void free_store(struct le_compact_store *s)
{
	free(s->mem);
	free(s);
}

/* Fill to the last slot, refuse one more (counted), empty, fill again. */
static void fill_and_exhaust(void)
{
	enum { N = 1000 };
	struct le_compact_store *s = new_store(N);
	static uint32_t idx[N];
	uint8_t b[LE_COMPACT_SLOT];
	unsigned bad = 0, dup = 0;
	static uint8_t seen[N];

	for (uint32_t i = 0; i < N; i++) {
		pattern(b, LE_COMPACT_SLOT, i);
		idx[i] = le_compact_put(s, b, LE_COMPACT_SLOT);
		bad += idx[i] >= N;
		dup += idx[i] < N && seen[idx[i]]++;
	}
	CHECK_EQ_U64(bad, 0);
	CHECK_EQ_U64(dup, 0);
	CHECK_EQ_U64(s->in_use, N);
	CHECK_EQ_U64(s->full, 0);
	CHECK(le_compact_put(s, b, 10) == LE_COMPACT_NONE);
	CHECK(le_compact_alloc(s) == LE_COMPACT_NONE);
	CHECK_EQ_U64(s->full, 2);
	CHECK_EQ_U64(s->in_use, N);
	/* too long: refused, not counted as full */
	for (uint32_t i = 0; i < 3; i++)
		le_compact_release(s, idx[i]);
	CHECK(le_compact_put(s, b, LE_COMPACT_SLOT + 1) == LE_COMPACT_NONE);
	CHECK_EQ_U64(s->full, 2);
	unsigned intact = 0;
	for (uint32_t i = 3; i < N; i++)
		intact += pattern_ok(le_compact_data(s, idx[i]), LE_COMPACT_SLOT, i);
	CHECK_EQ_U64(intact, N - 3);
	for (uint32_t i = 3; i < N; i++)
		le_compact_release(s, idx[i]);
	CHECK_EQ_U64(s->in_use, 0);
	CHECK_EQ_U64(s->high_water, N);
	/* Every slot again, each exactly once. */
	memset(seen, 0, sizeof(seen));
	bad = dup = 0;
	for (uint32_t i = 0; i < N; i++) {
		uint32_t k = le_compact_alloc(s);
		bad += k >= N;
		dup += k < N && seen[k]++;
	}
	CHECK_EQ_U64(bad, 0);
	CHECK_EQ_U64(dup, 0);
	CHECK(le_compact_alloc(s) == LE_COMPACT_NONE);
	free_store(s);

	/* A store of no slots refuses everything, counted. */
	s = new_store(0);
	CHECK(le_compact_put(s, b, 1) == LE_COMPACT_NONE);
	CHECK_EQ_U64(s->full, 1);
	free_store(s);
}

/* A FIFO of frames through a store smaller than the FIFO at times:
 * many wraps, random lengths and random holding depth; every frame that
 * got a slot comes back intact; refusals are exactly the times the store
 * was full. Then frees in random order, and a reference count of slots. */
static void wrap_fifo_and_random_order(void)
{
	enum { N = 257, RING = 512, STEPS = 200000 };
	struct le_compact_store *s = new_store(N);
	struct { uint32_t idx, len; uint64_t id; } ring[RING];
	unsigned head = 0, count = 0, bad = 0, refused_when_free = 0;
	uint64_t id = 0, refused = 0;
	struct le_rng r;
	le_rng_seed(&r, 12, 0, LE_STREAM_LOSS);
	uint8_t b[LE_COMPACT_SLOT];

	for (int step = 0; step < STEPS; step++) {
		int push = count == 0 || (count < RING && le_rng_u64(&r) % 100 < 52 - (count > 400) * 10);
		if (push) {
			uint32_t len = 1 + (uint32_t)(le_rng_u64(&r) % LE_COMPACT_SLOT);
			uint32_t was_free = s->nslots - s->in_use;
			pattern(b, len, id);
			uint32_t k = le_compact_put(s, b, len);
			if (k == LE_COMPACT_NONE) {
				refused++;
				refused_when_free += was_free != 0;
				id++;
				continue;
			}
			ring[(head + count) % RING].idx = k;
			ring[(head + count) % RING].len = len;
			ring[(head + count) % RING].id = id++;
			count++;
		} else {
			bad += !pattern_ok(le_compact_data(s, ring[head].idx), ring[head].len, ring[head].id);
			le_compact_release(s, ring[head].idx);
			head = (head + 1) % RING;
			count--;
		}
		if (s->in_use != count)
			bad++;
	}
	CHECK_EQ_U64(bad, 0);
	CHECK_EQ_U64(refused_when_free, 0);
	CHECK_EQ_U64(s->full, refused);
	CHECK(refused > 0, "the walk should have filled the store at times");
	CHECK(s->stored > 50 * N, "the slots should have been reused many times over");
	CHECK_EQ_U64(s->high_water, N);

	/* Release what is left in random order; then all N slots are free. */
	while (count) {
		unsigned j = (unsigned)(le_rng_u64(&r) % count);
		unsigned a = (head + j) % RING, last = (head + count - 1) % RING;
		bad += !pattern_ok(le_compact_data(s, ring[a].idx), ring[a].len, ring[a].id);
		le_compact_release(s, ring[a].idx);
		ring[a] = ring[last];
		count--;
	}
	CHECK_EQ_U64(bad, 0);
	CHECK_EQ_U64(s->in_use, 0);
	unsigned got = 0;
	while (le_compact_alloc(s) != LE_COMPACT_NONE)
		got++;
	CHECK_EQ_U64(got, N);
	free_store(s);
}

/* Frame operations over a store: a handle is slot + 1 (never NULL). */
struct store_frames {
	struct le_compact_store *s;
	uint64_t clone_refused;
};

static void *sf_clone(void *ctx, void *h)
{
	struct store_frames *f = ctx;
	uint32_t from = (uint32_t)((uintptr_t)h - 1);
	uint32_t k = le_compact_alloc(f->s);
	if (k == LE_COMPACT_NONE) {
		f->clone_refused++;
		return NULL;
	}
	memcpy(le_compact_data(f->s, k), le_compact_data(f->s, from), LE_COMPACT_SLOT);
	return (void *)(uintptr_t)(k + 1);
}

static void sf_free(void *ctx, void *h)
{
	struct store_frames *f = ctx;
	le_compact_release(f->s, (uint32_t)((uintptr_t)h - 1));
}

static uint8_t *sf_bytes(void *ctx, void *h, uint32_t *len)
{
	struct store_frames *f = ctx;
	*len = LE_COMPACT_SLOT;
	return le_compact_data(f->s, (uint32_t)((uintptr_t)h - 1));
}

/* A link holding 10 ms at one frame per 67.2 ns (14.88 Mpps: ~149k
 * frames), with loss, duplicates and jitter that reorders (the timing
 * wheel frees out of arrival order), in virtual time. The store holds
 * exactly what the link holds at every step; every frame leaves with its
 * own bytes; after the drain every slot is free again. */
static void link_in_store(const char *text, uint32_t nslots)
{
	struct le_link_config cfg;
	char err[256];
	struct le_link l;
	struct store_frames f = {.s = new_store(nslots)};
	struct le_frame_ops ops = {.ctx = &f, .clone = sf_clone, .free = sf_free, .bytes = sf_bytes};
	struct le_frame out[64];
	uint8_t b[LE_COMPACT_SLOT];
	uint64_t offered = 0, sent = 0, bad = 0, mismatch = 0, refused = 0;

	if (!CHECK(le_config_parse(text, &cfg, err, sizeof(err)) == 0, "%s", err) ||
	    !CHECK(le_link_init_ops(&l, &cfg, LE_DIR_A2B, 0, 1, &ops, err, sizeof(err)) == 0, "%s", err)) {
		free_store(f.s);
		return;
	}
	for (uint64_t i = 0; i < 400000; i++) {
		le_ns_t now = i * 672 / 10;
		/* The frame's id goes in its first bytes; the rest is its pattern. */
		pattern(b, LE_COMPACT_SLOT, i);
		memcpy(b, &i, sizeof(i));
		uint32_t k = le_compact_put(f.s, b, 60);
		if (k == LE_COMPACT_NONE) {
			refused++; /* the data plane would keep the mbuf */
		} else {
			le_link_offer(&l, (void *)(uintptr_t)(k + 1), 60, now);
			offered++;
		}
		unsigned n = le_link_dequeue(&l, now, out, 64);
		for (unsigned j = 0; j < n; j++) {
			uint32_t slot = (uint32_t)((uintptr_t)out[j].handle - 1);
			uint64_t fid;
			memcpy(&fid, le_compact_data(f.s, slot), sizeof(fid));
			/* a duplicate carries the original's bytes */
			uint8_t want[LE_COMPACT_SLOT];
			pattern(want, LE_COMPACT_SLOT, fid);
			bad += fid > i || memcmp(le_compact_data(f.s, slot) + 8, want + 8, 52) != 0;
			le_compact_release(f.s, slot);
			sent++;
		}
		if (f.s->in_use != le_link_depth(&l))
			mismatch++;
	}
	CHECK_EQ_U64(bad, 0);
	CHECK_EQ_U64(mismatch, 0);
	CHECK_EQ_U64(refused, f.s->full - f.clone_refused);
	CHECK(sent > 150000, "sent %" PRIu64, sent);
	le_link_drain(&l);
	CHECK_EQ_U64(f.s->in_use, 0);
	le_link_free(&l);
	free_store(f.s);
}

int main(void)
{
	fill_and_exhaust();
	wrap_fifo_and_random_order();
	link_in_store("delay 10ms loss 1% duplicate 1% limit 200000", 1u << 18);
	link_in_store("delay 10ms 2ms loss 1% duplicate 1% limit 200000", 1u << 18);
	/* a store smaller than what the link holds: refusals counted, the
	 * store never hands out a slot twice */
	link_in_store("delay 10ms 2ms duplicate 1% limit 200000", 100000);
	return mt_summary();
}
