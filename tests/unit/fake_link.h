/* A link built from its text over fake frames, for the model's tests in
 * virtual time: one place that parses, initialises (direction a2b, link
 * index 0, seed 1) and reports a text that fails as a test failure
 * naming it. The including test provides fake.h, link.h and minitest.h. */
#ifndef FAKE_LINK_H
#define FAKE_LINK_H

static int fk_make_link(struct le_link *l, const char *text, struct fakes *fk)
{
	struct le_link_config c;
	char err[LE_ERR_MAX] = "";

	if (le_config_parse(text, &c, err, sizeof(err)) != 0 ||
	    le_link_init_ops(l, &c, LE_DIR_A2B, 0, 1, &fk->ops, err, sizeof(err)) != 0) {
		CHECK(0, "'%s': %s", text, err);
		return -1;
	}
	return 0;
}

#endif
