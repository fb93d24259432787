/* Twin tests of paths (test_offer_burst.c, test_path_busy.c): two paths
 * of one configuration, each on its own pool of fake frames, driven
 * through the same schedule and compared. Include after fake.h and
 * minitest.h. */
#ifndef TWIN_PATHS_H
#define TWIN_PATHS_H

#include "path.h"
#include "rng.h"
#include "swap.h"

/* *a on fa's frames and *b on fb's, both from `text`; 0 on success, else
 * -1 with a failed check naming the text (both paths left NULL). */
static int twin_paths_init(const char *text, struct fakes *fa, struct fakes *fb, struct le_path **a,
			   struct le_path **b)
{
	struct le_path_config pc;
	char err[LE_ERR_MAX] = "";
	int ok;

	*a = calloc(1, sizeof(struct le_path));
	*b = calloc(1, sizeof(struct le_path));
	ok = *a != NULL && *b != NULL && le_path_config_parse(text, &pc, err, sizeof(err)) == 0 &&
	     le_path_init(*a, &pc, LE_DIR_A2B, 3, &fa->ops, err, sizeof(err)) == 0 &&
	     le_path_init(*b, &pc, LE_DIR_A2B, 3, &fb->ops, err, sizeof(err)) == 0;
	CHECK(ok, "'%s': %s", text, err);
	if (!ok) {
		le_path_free(*a);
		le_path_free(*b);
		free(*a);
		free(*b);
		*a = *b = NULL;
		return -1;
	}
	return 0;
}

/* One new frame of `len` bytes in each pool (the same handle in both),
 * its bytes an IPv4 header of protocol `proto` (17 UDP, 6 TCP, 1 ICMP)
 * for class rules to read; NULL when the pools went apart. */
static inline void *twin_frame(struct fakes *fa, struct fakes *fb, uint32_t len, uint8_t proto)
{
	void *h = fk_new(fa, len);

	if (fk_new(fb, len) != h)
		return NULL;
	for (struct fakes *fk = fa; fk != NULL; fk = fk == fa ? fb : NULL) {
		uint8_t *b = fk->data[fk_idx(h)];
		b[12] = 0x08;
		b[14] = 0x45;
		b[23] = proto;
	}
	return h;
}

/* One burst offered to both swaps at one arrival: 1-32 frames of one of
 * the three `protos`, 60 to 60 + spread - 1 bytes long; 1 in 8 arrives
 * late, up to 30 us before t (before the clocks the dequeues moved).
 * Both take it as a burst (le_swap_offer_burst). Returns 0 (with a failed check) when the pools went apart. */
static inline int twin_offer(struct fakes *fa, struct fakes *fb, struct le_swap *sa, struct le_swap *sb,
			     struct le_rng *r, le_ns_t t, const uint8_t *protos, uint32_t spread, int framewise)
{
	unsigned n = 1 + (unsigned)le_rng_below(r, 32);
	uint8_t proto = protos[le_rng_below(r, 3)];
	void *h[32];
	uint32_t len[32];

	if (le_rng_below(r, 8) == 0 && t > 30000)
		t -= le_rng_below(r, 30000);
	for (unsigned i = 0; i < n; i++) {
		/* the split twins' bursts mix classes, in runs */
		if (framewise && le_rng_below(r, 4) == 0)
			proto = protos[le_rng_below(r, 3)];
		len[i] = 60 + (uint32_t)le_rng_below(r, spread);
		h[i] = twin_frame(fa, fb, len[i], proto);
		if (h[i] == NULL) {
			CHECK(0, "the twins' frame pools went apart");
			return 0;
		}
	}
	if (framewise)
		for (unsigned i = 0; i < n; i++)
			le_swap_offer(sa, h[i], len[i], t);
	else
		le_swap_offer_burst(sa, h, len, n, t);
	le_swap_offer_burst(sb, h, len, n, t);
	return 1;
}

static inline int twin_offer_burst(struct fakes *fa, struct fakes *fb, struct le_swap *sa, struct le_swap *sb,
				   struct le_rng *r, le_ns_t t, const uint8_t *protos, uint32_t spread)
{
	return twin_offer(fa, fb, sa, sb, r, t, protos, spread, 0);
}

/* The same, sa taking the burst frame by frame (le_swap_offer, the
 * reference for le_swap_offer_burst), and the protocol changing within
 * a burst (1 frame in 4 draws it again). */
static inline int twin_offer_burst_split(struct fakes *fa, struct fakes *fb, struct le_swap *sa,
					 struct le_swap *sb, struct le_rng *r, le_ns_t t, const uint8_t *protos,
					 uint32_t spread)
{
	return twin_offer(fa, fb, sa, sb, r, t, protos, spread, 1);
}

static void twin_paths_free(struct le_path *a, struct le_path *b)
{
	le_path_free(a);
	le_path_free(b);
	free(a);
	free(b);
}

/* Two swaps driven as twins (test_path_busy.c, test_dequeue_split.c):
 * sa on fa's frames and sb on fb's, each starting on a path of `first`
 * (pa[0], pb[0]), with a path of `second` (pa[1], pb[1]) ready for a
 * live change. */
struct twin_swaps {
	struct fakes fa, fb;
	struct le_path *pa[2], *pb[2];
	struct le_swap sa, sb;
};

static inline int twin_swaps_init(struct twin_swaps *w, const char *first, const char *second)
{
	int ok = 1;

	fk_init(&w->fa, 1);
	fk_init(&w->fb, 1);
	for (unsigned k = 0; k < 2 && ok; k++)
		ok = twin_paths_init(k ? second : first, &w->fa, &w->fb, &w->pa[k], &w->pb[k]) == 0;
	if (!ok) {
		if (w->pa[0] != NULL)
			twin_paths_free(w->pa[0], w->pb[0]);
		fk_fini(&w->fa);
		fk_fini(&w->fb);
		return -1;
	}
	le_swap_init(&w->sa, w->pa[0]);
	le_swap_init(&w->sb, w->pb[0]);
	return 0;
}

/* Both twins drained to the end: nothing may be left, and they must
 * have freed the same frames. Then everything is released. */
static inline void twin_swaps_fini(struct twin_swaps *w)
{
	struct le_frame o[64];

	while (le_swap_dequeue(&w->sa, UINT64_MAX - 1, o, 64) > 0)
		;
	while (le_swap_dequeue(&w->sb, UINT64_MAX - 1, o, 64) > 0)
		;
	CHECK_EQ_U64(le_path_depth(w->sb.active), 0);
	CHECK_EQ_U64(w->fb.freed, w->fa.freed);
	CHECK_EQ_U64(w->fb.double_free + w->fb.bad_handle, 0);
	for (unsigned k = 0; k < 2; k++)
		twin_paths_free(w->pa[k], w->pb[k]);
	fk_fini(&w->fa);
	fk_fini(&w->fb);
}

#endif
