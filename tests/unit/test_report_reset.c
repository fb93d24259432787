/* `reset stats` and live changes (report.c, dp_report_subtract): a class
 * is the baseline's class of its name only while live changes carried it
 * (born equal); one removed and added again since counts from 0, its
 * namesake's counts since the reset go to the ended classes, and every
 * book still balances. The same hop by hop for a chain. */
#include <stdlib.h>

#include "minitest.h"
#include "report.h"

/* A class of a report, counting rx in, tx out and holding `held`. */
static void put_class(struct dp_direction_report *d, const char *name, uint64_t born, uint64_t rx, uint64_t tx,
		      uint32_t held)
{
	struct dp_class_report *c = &d->cls[d->nclasses++];

	snprintf(c->name, sizeof(c->name), "%s", name);
	c->born = born;
	c->nhops = 1;
	c->ctr.rx = rx;
	c->ctr.tx = tx;
	c->in_flight = held;
}

/* The direction's totals as the models and the ports count them, with
 * what classes that are gone (no longer in d->cls) still add. */
static void put_totals(struct dp_direction_report *d, uint64_t gone_rx, uint64_t gone_tx, uint32_t gone_held)
{
	d->model.rx = gone_rx;
	d->model.tx = gone_tx;
	d->model_held = gone_held;
	for (unsigned k = 0; k < d->nclasses; k++) {
		d->model.rx += d->cls[k].ctr.rx;
		d->model.tx += d->cls[k].ctr.tx;
		d->model_held += d->cls[k].in_flight;
	}
	d->dp.rx = d->model.rx;
	d->dp.tx = d->model.tx;
	d->in_flight = d->model_held;
}

static int class_conserved(const struct dp_class_report *c)
{
	return c->ctr.rx + c->ctr.dup + c->in_flight_base == c->ctr.tx + le_counters_dropped(&c->ctr) + c->in_flight;
}

/* At the reset: default 10 in, 10 out; a 50 in, 40 out, 10 held. Then a
 * change removes a (it serves its 10 and ends) and a later one adds an a
 * again (born 2), which takes 7 and sends 5; default takes 10 more. */
static void removed_and_added_again(void)
{
	struct dp_report *base = calloc(1, sizeof(*base)), *r = calloc(1, sizeof(*r));
	struct dp_direction_report *b = &base->dir[LE_DIR_A2B], *x = &r->dir[LE_DIR_A2B];
	struct dp_class_report e;

	put_class(b, "default", 0, 10, 10, 0);
	put_class(b, "a", 0, 50, 40, 10);
	put_totals(b, 0, 0, 0);
	put_class(x, "default", 0, 20, 20, 0);
	put_class(x, "a", 2, 7, 5, 2);
	put_totals(x, 50, 50, 0); /* the old a, ended */
	dp_report_subtract(r, base);

	CHECK_EQ_U64(x->cls[0].ctr.rx, 10);
	CHECK_EQ_U64(x->cls[1].ctr.rx, 7);
	CHECK_EQ_U64(x->cls[1].ctr.tx, 5);
	CHECK_EQ_U64(x->cls[1].in_flight_base, 0);
	CHECK(class_conserved(&x->cls[1]));
	/* The old a since the reset: took nothing, sent the 10 it held. */
	dp_report_ended_classes(x, &e);
	CHECK_EQ_U64(e.ctr.rx, 0);
	CHECK_EQ_U64(e.ctr.tx, 10);
	CHECK_EQ_U64(e.in_flight, 0);
	CHECK_EQ_U64(e.in_flight_base, 10);
	CHECK(class_conserved(&e));
	CHECK(dp_report_conserved(x));
	free(base);
	free(r);
}

/* The same counts when a change carried a (born equal): since the reset
 * it took 7 and sent 15 (its 10 held then among them); nothing ended. */
static void carried(void)
{
	struct dp_report *base = calloc(1, sizeof(*base)), *r = calloc(1, sizeof(*r));
	struct dp_direction_report *b = &base->dir[LE_DIR_A2B], *x = &r->dir[LE_DIR_A2B];
	struct dp_class_report e;

	put_class(b, "default", 0, 10, 10, 0);
	put_class(b, "a", 1, 50, 40, 10);
	put_totals(b, 0, 0, 0);
	put_class(x, "a", 1, 57, 55, 2);       /* a rule order changed too */
	put_class(x, "default", 0, 20, 20, 0);
	put_totals(x, 0, 0, 0);
	dp_report_subtract(r, base);

	CHECK_EQ_U64(x->cls[0].ctr.rx, 7);
	CHECK_EQ_U64(x->cls[0].ctr.tx, 15);
	CHECK_EQ_U64(x->cls[0].in_flight_base, 10);
	CHECK(class_conserved(&x->cls[0]));
	CHECK_EQ_U64(x->cls[1].ctr.rx, 10);
	dp_report_ended_classes(x, &e);
	CHECK_EQ_U64(e.ctr.rx + e.ctr.tx + e.in_flight + e.in_flight_base, 0);
	CHECK(dp_report_conserved(x));
	free(base);
	free(r);
}

/* A chain of 2 hops; at the reset each had taken and sent 30 and the
 * second held 1. Since, the first took and sent 10 more; the second is
 * either the same hop (born 0) having sent 34 in all, or a new one (born
 * 3: the chain was cut to 1 hop and grown to 2 again) that sent 4. */
static void hops_since(uint64_t born, uint64_t second, uint64_t want, uint32_t want_base)
{
	struct dp_report *base = calloc(1, sizeof(*base)), *r = calloc(1, sizeof(*r));
	struct dp_direction_report *b = &base->dir[LE_DIR_A2B], *x = &r->dir[LE_DIR_A2B];

	put_class(b, "default", 0, 30, 30, 1);
	put_class(x, "default", 0, 40, second, 0);
	b->cls[0].nhops = x->cls[0].nhops = 2;
	b->nhops = x->nhops = 2;
	for (unsigned h = 0; h < 2; h++) {
		b->hop[h].ctr.rx = b->hop[h].ctr.tx = 30;
		x->hop[h].ctr.rx = x->hop[h].ctr.tx = h ? second : 40;
	}
	b->hop[1].in_flight = 1;
	x->hop[1].born = born;
	dp_report_subtract(r, base);

	CHECK_EQ_U64(x->hop[0].ctr.rx, 10);
	CHECK_EQ_U64(x->hop[1].ctr.rx, want);
	CHECK_EQ_U64(x->hop[1].ctr.tx, want);
	CHECK_EQ_U64(x->hop[1].in_flight_base, want_base);
	free(base);
	free(r);
}

int main(void)
{
	removed_and_added_again();
	carried();
	hops_since(0, 34, 4, 1);
	hops_since(3, 4, 4, 0);
	return mt_summary();
}
