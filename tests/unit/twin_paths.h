/* Twin tests of paths (test_offer_burst.c, test_path_busy.c): two paths
 * of one configuration, each on its own pool of fake frames, driven
 * through the same schedule and compared. Include after fake.h and
 * minitest.h. */
#ifndef TWIN_PATHS_H
#define TWIN_PATHS_H

#include "path.h"

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

static void twin_paths_free(struct le_path *a, struct le_path *b)
{
	le_path_free(a);
	le_path_free(b);
	free(a);
	free(b);
}

#endif
