#include "report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#define LINKEMUD_VERSION "0.1.0"

/* A hop's books: rx + dup (+ what it held at a reset) == tx + drops +
 * what it holds. */
static int hop_conserved(const struct dp_hop_report *h)
{
	return h->ctr.rx + h->ctr.dup + h->in_flight_base == h->ctr.tx + le_counters_dropped(&h->ctr) + h->in_flight;
}

void dp_report_add_models(struct dp_direction_report *out, const struct dp_model_slot_snapshot *m)
{
	if (!m->active)
		return;
	/* The models' own rx/tx are internal hand-overs, not port counts;
	 * only their drops, copies and events belong to the totals. */
	le_counters_add(&out->model, &m->ctr);
	out->model_held += m->depth;
	out->in_flight += m->depth;
	snprintf(out->config, sizeof(out->config), "%s", m->active->text);
	out->seed = m->active->path.link[0].seed;
	out->changes = m->changes;
	out->changed_at = m->changed_at;
	out->staged_at = m->staged_at;
	out->nclasses = m->nclasses;
	for (unsigned k = 0; k < m->nclasses; k++) {
		snprintf(out->cls[k].name, sizeof(out->cls[k].name), "%s", le_path_class_name(&m->active->path, k));
		out->cls[k].ctr = m->cls[k];
		out->cls[k].in_flight = m->cls_depth[k];
		out->cls[k].born = m->cls_born[k];
		out->cls[k].nhops = m->cls_hops[k];
		out->cls[k].first_hop = 0;
	}
	/* Hops (chained classes) in class order; one task holds the model. */
	out->nhops = 0;
	for (unsigned k = 0, h = 0; k < m->nclasses; k++) {
		if (m->cls_hops[k] <= 1)
			continue;
		out->cls[k].first_hop = out->nhops;
		for (unsigned j = 0; j < m->cls_hops[k]; j++, h++) {
			out->hop[out->nhops].ctr = m->hop[h];
			out->hop[out->nhops].born = m->hop_born[h];
			out->hop[out->nhops].in_flight_base = 0;
			out->hop[out->nhops++].in_flight = m->hop_depth[h];
		}
	}
}

static void port_subtract(struct dp_port_counters *c, const struct dp_port_counters *b)
{
	c->ipackets -= b->ipackets;
	c->opackets -= b->opackets;
	c->imissed -= b->imissed;
	c->ierrors -= b->ierrors;
	c->rx_nombuf -= b->rx_nombuf;
	c->oerrors -= b->oerrors;
}

static void hist_subtract(struct le_hist *h, const struct le_hist *base)
{
	h->count -= base->count;
	h->overflow -= base->overflow;
	h->sum -= base->sum;
	h->min = UINT64_MAX;
	h->max = 0;
	for (unsigned i = 0; i < LE_HIST_BUCKETS; i++) {
		h->bucket[i] -= base->bucket[i];
		if (h->bucket[i]) {
			if (h->min == UINT64_MAX)
				h->min = le_hist_bucket_low(i);
			h->max = le_hist_bucket_high(i);
		}
	}
}

/* A chained class's hops since a reset: hop by hop, as a live change
 * carries them, when the class had as many hops then (a chain that
 * changed length since is reported whole). A hop born since (a chain cut
 * short and grown again) has nothing to subtract, as a class born since. */
static void subtract_hops(struct dp_direction_report *x, const struct dp_class_report *c,
			  const struct dp_direction_report *base, const struct dp_class_report *b)
{
	if (c->nhops <= 1 || c->nhops != b->nhops)
		return;
	for (unsigned h = 0; h < c->nhops; h++) {
		struct dp_hop_report *now = &x->hop[c->first_hop + h];
		const struct dp_hop_report *then = &base->hop[b->first_hop + h];

		if (now->born != then->born)
			continue;
		le_counters_sub(&now->ctr, &then->ctr);
		now->in_flight_base = then->in_flight;
	}
}

/* The baseline's class that c continues: same name and born equal, as a
 * live change carries a class with its counts (core: le_path_inherit_at).
 * NULL for a class created since, even under an old name (removed, then
 * added again): it counted from 0, and its namesake's counts since the
 * reset are the ended classes' (dp_report_ended_classes). */
static const struct dp_class_report *class_at_reset(const struct dp_direction_report *base,
						    const struct dp_class_report *c)
{
	for (unsigned j = 0; j < base->nclasses; j++)
		if (strcmp(c->name, base->cls[j].name) == 0)
			return c->born == base->cls[j].born ? &base->cls[j] : NULL;
	return NULL;
}

/* Class counts since a reset. A class created after the reset has
 * nothing to subtract and held nothing then. A class that was there: its
 * frames held at the reset were counted in by then, so they go into
 * in_flight_base. */
static void subtract_classes(struct dp_direction_report *x, const struct dp_direction_report *base)
{
	for (unsigned k = 0; k < x->nclasses; k++) {
		const struct dp_class_report *b = class_at_reset(base, &x->cls[k]);

		if (b == NULL)
			continue;
		le_counters_sub(&x->cls[k].ctr, &b->ctr);
		x->cls[k].in_flight_base = b->in_flight;
		subtract_hops(x, &x->cls[k], base, b);
	}
}

void dp_report_subtract(struct dp_report *r, const struct dp_report *base)
{
	for (int d = 0; d < LE_DIRS; d++) {
		dp_counters_sub(&r->dir[d].dp, &base->dir[d].dp);
		le_counters_sub(&r->dir[d].model, &base->dir[d].model);
		hist_subtract(&r->dir[d].error, &base->dir[d].error);
		hist_subtract(&r->dir[d].poll_gaps, &base->dir[d].poll_gaps);
		r->dir[d].poll_observed_ns -= base->dir[d].poll_observed_ns;
		port_subtract(&r->dir[d].port_in, &base->dir[d].port_in);
		if (r->dir[d].has_paced && base->dir[d].has_paced) {
			r->dir[d].paced.delivered -= base->dir[d].paced.delivered;
			r->dir[d].paced.missed -= base->dir[d].paced.missed;
			hist_subtract(&r->dir[d].paced.wait, &base->dir[d].paced.wait);
		}
		port_subtract(&r->dir[d].port_out, &base->dir[d].port_out);
		dp_xstats_subtract(&r->dir[d].xstats_in, &base->dir[d].xstats_in);
		dp_xstats_subtract(&r->dir[d].xstats_out, &base->dir[d].xstats_out);
		r->dir[d].in_flight_base = base->dir[d].in_flight;
		r->dir[d].model_held_base = base->dir[d].model_held;
		subtract_classes(&r->dir[d], &base->dir[d]);
	}
}

static unsigned add_named(const char **name, uint64_t *count, unsigned n, const char *what, uint64_t v)
{
	for (unsigned i = 0; i < n; i++)
		if (strcmp(name[i], what) == 0) {
			count[i] += v;
			return n;
		}
	name[n] = what;
	count[n] = v;
	return n + 1;
}

unsigned dp_report_drops(const struct dp_direction_report *d, const char **name, uint64_t *count, unsigned max)
{
	unsigned n = 0;
	for (int k = 0; k < LE_DROP_CAUSES && n < max; k++)
		n = add_named(name, count, n, le_drop_cause_name(k), d->model.drop[k]);
	for (int k = 0; k < DP_DROP_CAUSES && n < max; k++)
		n = add_named(name, count, n, dp_drop_cause_name(k), d->dp.drop[k]);
	return n;
}

uint64_t dp_report_dropped(const struct dp_direction_report *d)
{
	return le_counters_dropped(&d->model) + dp_counters_dropped(&d->dp);
}

int dp_report_conserved(const struct dp_direction_report *d)
{
	/* Since a reset, the frames in flight at the reset were received
	 * before it but may leave after it. */
	return d->dp.rx + d->model.dup + d->dp.injected + d->in_flight_base ==
	       d->dp.tx + dp_report_dropped(d) + d->in_flight;
}

void dp_report_ended_classes(const struct dp_direction_report *d, struct dp_class_report *out)
{
	uint64_t held = d->model_held, base = d->model_held_base;

	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", "(ended)");
	out->nhops = 1;
	out->ctr = d->model;
	for (unsigned k = 0; k < d->nclasses; k++) {
		le_counters_sub(&out->ctr, &d->cls[k].ctr);
		held -= d->cls[k].in_flight;
		base -= d->cls[k].in_flight_base;
	}
	out->in_flight = (uint32_t)held;
	out->in_flight_base = (uint32_t)base;
}

/* Any count at all: a direction whose classes were never removed shows
 * no line for them. */
static int ended_any(const struct dp_class_report *e)
{
	return e->ctr.rx || e->ctr.tx || e->ctr.dup || le_counters_dropped(&e->ctr) || e->in_flight ||
	       e->in_flight_base;
}

static void human_punt(FILE *f, const struct dp_direction_report *x);

void dp_report_print_human(FILE *f, const struct dp_report *r)
{
	fprintf(f, "linkemud: layout %s on %u lcore(s), seed %" PRIu64 ", TSC %.6f GHz (DPDK nominal %.6f), up %.3f s\n",
		r->layout, r->lcores, r->seed, r->tsc_hz / 1e9, r->tsc_nominal_hz / 1e9, r->uptime_s);
	for (int d = 0; d < LE_DIRS; d++) {
		const struct dp_direction_report *x = &r->dir[d];
		fprintf(f, "  %s [%s]: rx %" PRIu64 "  tx %" PRIu64 "  in flight %" PRIu64 "  dropped %" PRIu64,
			le_direction_name(d), x->config[0] ? x->config : "no impairment", x->dp.rx, x->dp.tx,
			x->in_flight, dp_report_dropped(x));
		const char *name[DP_REPORT_CAUSES_MAX];
		uint64_t count[DP_REPORT_CAUSES_MAX];
		unsigned n = dp_report_drops(x, name, count, DP_REPORT_CAUSES_MAX);
		for (unsigned c = 0; c < n; c++)
			if (count[c])
				fprintf(f, "  %s %" PRIu64, name[c], count[c]);
		if (x->model.dup)
			fprintf(f, "  dup %" PRIu64, x->model.dup);
		if (x->dp.injected)
			fprintf(f, "  injected %" PRIu64, x->dp.injected);
		for (int e = 0; e < LE_EVENTS; e++)
			if (x->model.event[e])
				fprintf(f, "  %s %" PRIu64, le_event_name(e), x->model.event[e]);
		fprintf(f, "  %s\n", dp_report_conserved(x) ? "(conserved)" : "(NOT CONSERVED)");
		fprintf(f, "    before linkemud (port %u): missed %" PRIu64 "  errors %" PRIu64 "  no mbuf %" PRIu64
			   ";  after (port %u): send errors %" PRIu64 "\n",
			d == LE_DIR_A2B ? 0u : 1u, x->port_in.imissed, x->port_in.ierrors, x->port_in.rx_nombuf,
			d == LE_DIR_A2B ? 1u : 0u, x->port_out.oerrors);
		if (x->has_paced)
			fprintf(f, "    paced source (port %u): %" PRIu64 " frames/s  delivered %" PRIu64 "  missed %" PRIu64
				   " (ring %u)  wait p99 %" PRIu64 " ns  max %" PRIu64 " ns\n",
				d == LE_DIR_A2B ? 0u : 1u, x->paced.pps, x->paced.delivered, x->paced.missed, x->paced.ring,
				le_hist_quantile(&x->paced.wait, 0.99), x->paced.wait.max);
		for (int io = 0; io < 2; io++) {
			const struct dp_port_xstats *s = io ? &x->xstats_out : &x->xstats_in;
			if (!s->n)
				continue;
			fprintf(f, "    port %u (%s) driver counts:", (d == LE_DIR_A2B) == !io ? 0u : 1u,
				io ? "out" : "in");
			for (unsigned i = 0; i < s->n; i++)
				fprintf(f, "  %s %" PRIu64, s->x[i].name, s->x[i].value);
			fputc('\n', f);
		}
		for (unsigned k = 0; k < x->nclasses; k++) {
			const struct dp_class_report *c = &x->cls[k];

			if (x->nclasses > 1 || c->nhops > 1)
				fprintf(f, "    class %s: in %" PRIu64 "  out %" PRIu64 "  dropped %" PRIu64 "  held %u\n",
					c->name, c->ctr.rx, c->ctr.tx, le_counters_dropped(&c->ctr), c->in_flight);
			for (unsigned h = 0; c->nhops > 1 && h < c->nhops; h++) {
				const struct dp_hop_report *hp = &x->hop[c->first_hop + h];

				fprintf(f, "      hop %u: in %" PRIu64 "  out %" PRIu64 "  dropped %" PRIu64 "  dup %" PRIu64
					   "  held %u  %s\n",
					h + 1, hp->ctr.rx, hp->ctr.tx, le_counters_dropped(&hp->ctr), hp->ctr.dup,
					hp->in_flight, hop_conserved(hp) ? "(conserved)"
												   : "(NOT CONSERVED)");
			}
		}
		struct dp_class_report ended;
		dp_report_ended_classes(x, &ended);
		if (ended_any(&ended))
			fprintf(f, "    classes removed by a live change: in %" PRIu64 "  out %" PRIu64 "  dropped %" PRIu64
				   "  held %u\n",
				ended.ctr.rx, ended.ctr.tx, le_counters_dropped(&ended.ctr), ended.in_flight);
		human_punt(f, x);
		if (x->error.count)
			fprintf(f, "    emulation error ns: p50 %" PRIu64 "  p99 %" PRIu64 "  p99.9 %" PRIu64
				   "  max %" PRIu64 "\n",
				le_hist_quantile(&x->error, 0.5), le_hist_quantile(&x->error, 0.99),
				le_hist_quantile(&x->error, 0.999), x->error.max);
		if (x->poll_gaps.count)
			fprintf(f, "    polls: %" PRIu64 " gaps over 1 us, max %" PRIu64 " ns; a deadline at a random "
				   "moment waits for the next poll: p99 %" PRIu64 "  p99.9 %" PRIu64 " ns\n",
				x->poll_gaps.count, x->poll_gaps.max,
				dp_poll_gaps_lateness(&x->poll_gaps, x->poll_observed_ns, 0.99),
				dp_poll_gaps_lateness(&x->poll_gaps, x->poll_observed_ns, 0.999));
	}
}

static void json_drops(FILE *f, const struct le_counters *c);
static void json_events(FILE *f, const struct le_counters *c);

/* Punted classes' channels: listed only when there are some, so reports
 * without punted classes are unchanged. */
static void json_punt(FILE *f, const struct dp_direction_report *x)
{
	if (x->npunt == 0)
		return;
	fputs(", \"punt\": [", f);
	for (unsigned i = 0; i < x->npunt; i++) {
		const struct dp_punt_status *p = &x->punt[i];

		fprintf(f, "%s{\"class\": ", i ? ", " : "");
		le_json_string(f, p->cls);
		fprintf(f, ", \"transport\": \"%s\", \"name\": ", le_punt_transport_name(p->transport));
		le_json_string(f, p->name);
		fprintf(f, ", \"up\": %s, \"peer_pid\": %d, \"sent\": %" PRIu64 ", \"returned\": %" PRIu64
			   ", \"injected\": %" PRIu64 ", \"punt_dropped\": %" PRIu64 ", \"punt_full\": %" PRIu64
			   ", \"punt_down\": %" PRIu64 ", \"held\": %" PRIu64 ", \"peers_lost\": %" PRIu64
			   ", \"protocol_errors\": %" PRIu64 "}",
			p->up ? "true" : "false", p->peer_pid, p->sent, p->returned, p->injected, p->dropped, p->full,
			p->down, p->held, p->peers_lost, p->protocol_errors);
	}
	fputc(']', f);
}

static void human_punt(FILE *f, const struct dp_direction_report *x)
{
	for (unsigned i = 0; i < x->npunt; i++) {
		const struct dp_punt_status *p = &x->punt[i];

		fprintf(f, "    punt class %s (%s %s): %s  sent %" PRIu64 "  returned %" PRIu64 "  injected %" PRIu64
			   "  punt_dropped %" PRIu64 "  punt_full %" PRIu64 "  punt_down %" PRIu64 "  held %" PRIu64
			   "  processes lost %" PRIu64 "\n",
			p->cls, le_punt_transport_name(p->transport), p->name, p->up ? "attached" : "NO PROCESS", p->sent,
			p->returned, p->injected, p->dropped, p->full, p->down, p->held, p->peers_lost);
	}
}

/* A chained class's hops, in order: each hop's own counts (rx from the
 * previous hop or the class's input, tx to the next hop or out) and its
 * conservation. Only for a class with more than one hop, so reports of
 * plain links are unchanged. */
static void json_hops(FILE *f, const struct dp_direction_report *x, const struct dp_class_report *c)
{
	if (c->nhops <= 1)
		return;
	fputs(", \"hops\": [", f);
	for (unsigned h = 0; h < c->nhops; h++) {
		const struct dp_hop_report *hp = &x->hop[c->first_hop + h];

		fprintf(f, "%s{\"hop\": %u, \"rx\": %" PRIu64 ", \"tx\": %" PRIu64 ", \"rx_bytes\": %" PRIu64
			   ", \"tx_bytes\": %" PRIu64 ", \"dup\": %" PRIu64 ", \"in_flight\": %u"
			   ", \"in_flight_at_reset\": %u, \"from_previous_hop\": %" PRIu64 ", \"to_next_hop\": %" PRIu64
			   ", \"dropped\": ",
			h ? ", " : "", h + 1, hp->ctr.rx, hp->ctr.tx, hp->ctr.rx_bytes, hp->ctr.tx_bytes, hp->ctr.dup,
			hp->in_flight, hp->in_flight_base, hp->ctr.hop_in, hp->ctr.hop_out);
		json_drops(f, &hp->ctr);
		fputs(", \"events\": ", f);
		json_events(f, &hp->ctr);
		fprintf(f, ", \"conserved\": %s}", hop_conserved(hp) ? "true" : "false");
	}
	fputc(']', f);
}

/* A class's drops: the model's causes (the data plane's are not per class). */
static void json_drops(FILE *f, const struct le_counters *c)
{
	fputc('{', f);
	for (int k = 0; k < LE_DROP_CAUSES; k++)
		fprintf(f, "%s\"%s\": %" PRIu64, k ? ", " : "", le_drop_cause_name(k), c->drop[k]);
	fputc('}', f);
}

static void json_events(FILE *f, const struct le_counters *c)
{
	fputc('{', f);
	for (int k = 0; k < LE_EVENTS; k++)
		fprintf(f, "%s\"%s\": %" PRIu64, k ? ", " : "", le_event_name(k), c->event[k]);
	fputc('}', f);
}

static void json_hist(FILE *f, const struct le_hist *h)
{
	fprintf(f, "{\"count\": %" PRIu64 ", \"min\": %" PRIu64 ", \"mean\": %.1f, \"p50\": %" PRIu64
		   ", \"p90\": %" PRIu64 ", \"p99\": %" PRIu64 ", \"p999\": %" PRIu64 ", \"max\": %" PRIu64 "}",
		h->count, h->count ? h->min : 0, le_hist_mean(h), le_hist_quantile(h, 0.5), le_hist_quantile(h, 0.9),
		le_hist_quantile(h, 0.99), le_hist_quantile(h, 0.999), h->max);
}

static void json_xstats(FILE *f, const struct dp_port_xstats *s)
{
	fputc('{', f);
	for (unsigned i = 0; i < s->n; i++) {
		fputs(i ? ", " : "", f);
		le_json_string(f, s->x[i].name);
		fprintf(f, ": %" PRIu64, s->x[i].value);
	}
	fputc('}', f);
}

void dp_report_print_json(FILE *f, const struct dp_report *r)
{
	int all_conserved = 1;
	fprintf(f, "{\"version\": \"%s\", \"layout\": ", LINKEMUD_VERSION);
	le_json_string(f, r->layout);
	fprintf(f, ", \"lcores\": %u, \"seed\": %" PRIu64 ", \"tsc_hz\": %.1f, \"tsc_nominal_hz\": %.1f, "
		   "\"uptime_s\": %.6f, \"time_ns\": %" PRIu64 ", \"mempool_size\": %" PRIu64
		   ", \"mempool_in_use\": %" PRIu64 ", ",
		r->lcores, r->seed, r->tsc_hz, r->tsc_nominal_hz, r->uptime_s, r->time_ns, r->mempool_size,
		r->mempool_in_use);
	if (r->has_compact) {
		fputs("\"compact\": {", f);
		for (int d = 0; d < LE_DIRS; d++) {
			const struct dp_compact_report *c = &r->compact[d];
			fprintf(f, "%s\"%s\": {\"slots\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"in_use\": %" PRIu64
				   ", \"high_water\": %" PRIu64 ", \"stored\": %" PRIu64 ", \"full\": %" PRIu64
				   ", \"send_waits\": %" PRIu64 "}",
				d ? ", " : "", le_direction_name(d), c->slots, c->bytes, c->in_use, c->high_water,
				c->stored, c->full, c->send_waits);
		}
		fputs("}, ", f);
	}
	fputs("\"directions\": {", f);
	for (int d = 0; d < LE_DIRS; d++) {
		const struct dp_direction_report *x = &r->dir[d];
		all_conserved &= dp_report_conserved(x);
		fprintf(f, "%s\"%s\": {\"config\": ", d ? ", " : "", le_direction_name(d));
		le_json_string(f, x->config);
		fprintf(f, ", \"changes\": %" PRIu64 ", \"changed_at_ns\": %" PRIu64 ", \"staged_at_ns\": ",
			x->changes, x->changed_at);
		if (x->staged_at == UINT64_MAX)
			fputs("null", f);
		else
			fprintf(f, "%" PRIu64, x->staged_at);
		fprintf(f, ", \"seed\": %" PRIu64 ", \"rx\": %" PRIu64 ", \"tx\": %" PRIu64 ", \"rx_bytes\": %" PRIu64
			   ", \"tx_bytes\": %" PRIu64 ", \"in_flight\": %" PRIu64 ", \"in_flight_at_reset\": %" PRIu64
			   ", \"dropped\": {",
			x->seed, x->dp.rx, x->dp.tx, x->dp.rx_bytes, x->dp.tx_bytes, x->in_flight, x->in_flight_base);
		const char *name[DP_REPORT_CAUSES_MAX];
		uint64_t count[DP_REPORT_CAUSES_MAX];
		unsigned n = dp_report_drops(x, name, count, DP_REPORT_CAUSES_MAX);
		for (unsigned k = 0; k < n; k++)
			fprintf(f, "%s\"%s\": %" PRIu64, k ? ", " : "", name[k], count[k]);
		fprintf(f, "}, \"dropped_total\": %" PRIu64 ", \"dup\": %" PRIu64 ", \"injected\": %" PRIu64
			   ", \"events\": ",
			dp_report_dropped(x), x->model.dup, x->dp.injected);
		json_events(f, &x->model);
		fprintf(f, ", \"conserved\": %s, \"emulation_error_ns\": ", dp_report_conserved(x) ? "true" : "false");
		json_hist(f, &x->error);
		fprintf(f, ", \"poll_gaps\": {\"observed_s\": %.6f, \"over_1us\": ", (double)x->poll_observed_ns / 1e9);
		json_hist(f, &x->poll_gaps);
		fprintf(f, ", \"lateness_ns\": {\"p99\": %" PRIu64 ", \"p999\": %" PRIu64 "}}",
			dp_poll_gaps_lateness(&x->poll_gaps, x->poll_observed_ns, 0.99),
			dp_poll_gaps_lateness(&x->poll_gaps, x->poll_observed_ns, 0.999));
		fprintf(f, ", \"before_rx\": {\"imissed\": %" PRIu64 ", \"ierrors\": %" PRIu64 ", \"rx_nombuf\": %" PRIu64
			   ", \"total\": %" PRIu64 "}, \"after_tx\": {\"oerrors\": %" PRIu64 "}",
			x->port_in.imissed, x->port_in.ierrors, x->port_in.rx_nombuf, dp_port_lost_before_rx(&x->port_in),
			x->port_out.oerrors);
		if (x->has_paced) {
			fprintf(f, ", \"paced_source\": {\"pps\": %" PRIu64 ", \"ring\": %u, \"delivered\": %" PRIu64
				   ", \"missed\": %" PRIu64 ", \"wait_ns\": ",
				x->paced.pps, x->paced.ring, x->paced.delivered, x->paced.missed);
			json_hist(f, &x->paced.wait);
			fputc('}', f);
		}
		fputs(", \"port_xstats\": {\"in\": ", f);
		json_xstats(f, &x->xstats_in);
		fputs(", \"out\": ", f);
		json_xstats(f, &x->xstats_out);
		fputs(", \"not_shown\": ", f);
		fprintf(f, "%u}", x->xstats_in.more + x->xstats_out.more);
		fputs(", \"classes\": [", f);
		for (unsigned k = 0; k < x->nclasses; k++) {
			const struct dp_class_report *c = &x->cls[k];
			fprintf(f, "%s{\"name\": ", k ? ", " : "");
			le_json_string(f, c->name);
			fprintf(f, ", \"rx\": %" PRIu64 ", \"tx\": %" PRIu64 ", \"dup\": %" PRIu64
				   ", \"in_flight\": %u, \"in_flight_at_reset\": %u, \"dropped\": ",
				c->ctr.rx, c->ctr.tx, c->ctr.dup, c->in_flight, c->in_flight_base);
			json_drops(f, &c->ctr);
			fputs(", \"events\": ", f);
			json_events(f, &c->ctr);
			json_hops(f, x, c);
			fputc('}', f);
		}
		fputc(']', f);
		{
			struct dp_class_report e;

			dp_report_ended_classes(x, &e);
			fprintf(f, ", \"ended_classes\": {\"rx\": %" PRIu64 ", \"tx\": %" PRIu64 ", \"dup\": %" PRIu64
				   ", \"in_flight\": %u, \"in_flight_at_reset\": %u, \"dropped\": ",
				e.ctr.rx, e.ctr.tx, e.ctr.dup, e.in_flight, e.in_flight_base);
			json_drops(f, &e.ctr);
			fputs(", \"events\": ", f);
			json_events(f, &e.ctr);
			fputc('}', f);
		}
		json_punt(f, x);
		fputc('}', f);
	}
	fprintf(f, "}, \"conserved\": %s}\n", all_conserved ? "true" : "false");
}
