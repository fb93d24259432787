#include "report.h"

#include <inttypes.h>
#include <string.h>

#define LINKEMUD_VERSION "0.1.0"

void dp_report_collect(struct dp_report *r, const struct dp_plan *plan, const struct dp_direction dirs[LE_DIRS])
{
	for (int d = 0; d < LE_DIRS; d++) {
		struct dp_direction_report *out = &r->dir[d];
		const struct dp_direction *dir = &dirs[d];
		memset(&out->ctr, 0, sizeof(out->ctr));
		out->in_flight_base = 0;
		le_hist_init(&out->error);
		out->in_flight = dp_model_slot_depth(&dir->models);
		if (dir->rx_ring)
			out->in_flight += rte_ring_count(dir->rx_ring);
		if (dir->tx_ring)
			out->in_flight += rte_ring_count(dir->tx_ring);
		/* The model's own rx/tx are internal hand-overs, not port
		 * counts; only its drops belong to the direction's totals. */
		dp_model_slot_counters(&dir->models, &out->ctr);
		le_counters_add(&out->ctr, &dir->shutdown_ctr);
		const struct dp_model *m = __atomic_load_n(&dir->models.active, __ATOMIC_ACQUIRE);
		snprintf(out->config, sizeof(out->config), "%s", m->text);
		out->seed = m->path.link[0].seed;
		out->nclasses = le_path_classes(&m->path);
		for (unsigned k = 0; k < out->nclasses; k++) {
			snprintf(out->cls[k].name, sizeof(out->cls[k].name), "%s", le_path_class_name(&m->path, k));
			out->cls[k].ctr = *le_path_class_counters(&m->path, k);
			out->cls[k].in_flight = le_path_class_depth(&m->path, k);
		}
	}
	for (unsigned i = 0; i < plan->ntasks; i++) {
		const struct dp_task *t = plan->task[i];
		struct dp_direction_report *out = &r->dir[t->dir->id];
		le_counters_add(&out->ctr, &t->ctr);
		le_hist_merge(&out->error, &t->error);
		out->in_flight += dp_task_held(t);
	}
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

void dp_report_subtract(struct dp_report *r, const struct dp_report *base)
{
	for (int d = 0; d < LE_DIRS; d++) {
		struct le_counters *c = &r->dir[d].ctr;
		const struct le_counters *b = &base->dir[d].ctr;
		c->rx -= b->rx;
		c->dup -= b->dup;
		for (int k = 0; k < LE_EVENTS; k++)
			c->event[k] -= b->event[k];
		c->tx -= b->tx;
		c->rx_bytes -= b->rx_bytes;
		c->tx_bytes -= b->tx_bytes;
		for (int k = 0; k < LE_DROP_CAUSES; k++)
			c->drop[k] -= b->drop[k];
		hist_subtract(&r->dir[d].error, &base->dir[d].error);
		r->dir[d].in_flight_base = base->dir[d].in_flight;
	}
}

int dp_report_conserved(const struct dp_direction_report *d)
{
	/* Since a reset, the frames in flight at the reset were received
	 * before it but may leave after it. */
	return d->ctr.rx + d->ctr.dup + d->in_flight_base == d->ctr.tx + le_counters_dropped(&d->ctr) + d->in_flight;
}

void dp_report_print_human(FILE *f, const struct dp_report *r)
{
	fprintf(f, "linkemud: layout %s on %u lcore(s), seed %" PRIu64 ", TSC %.6f GHz (DPDK nominal %.6f), up %.3f s\n",
		r->layout, r->lcores, r->seed, r->tsc_hz / 1e9, r->tsc_nominal_hz / 1e9, r->uptime_s);
	for (int d = 0; d < LE_DIRS; d++) {
		const struct dp_direction_report *x = &r->dir[d];
		fprintf(f, "  %s [%s]: rx %" PRIu64 "  tx %" PRIu64 "  in flight %" PRIu64 "  dropped %" PRIu64,
			le_direction_name(d), x->config[0] ? x->config : "no impairment", x->ctr.rx, x->ctr.tx,
			x->in_flight, le_counters_dropped(&x->ctr));
		for (int c = 0; c < LE_DROP_CAUSES; c++)
			if (x->ctr.drop[c])
				fprintf(f, "  %s %" PRIu64, le_drop_cause_name(c), x->ctr.drop[c]);
		if (x->ctr.dup)
			fprintf(f, "  dup %" PRIu64, x->ctr.dup);
		for (int e = 0; e < LE_EVENTS; e++)
			if (x->ctr.event[e])
				fprintf(f, "  %s %" PRIu64, le_event_name(e), x->ctr.event[e]);
		fprintf(f, "  %s\n", dp_report_conserved(x) ? "(conserved)" : "(NOT CONSERVED)");
		for (unsigned k = 0; x->nclasses > 1 && k < x->nclasses; k++)
			fprintf(f, "    class %s: in %" PRIu64 "  out %" PRIu64 "  dropped %" PRIu64 "  held %u\n",
				x->cls[k].name, x->cls[k].ctr.rx, x->cls[k].ctr.tx,
				le_counters_dropped(&x->cls[k].ctr), x->cls[k].in_flight);
		if (x->error.count)
			fprintf(f, "    emulation error ns: p50 %" PRIu64 "  p99 %" PRIu64 "  p99.9 %" PRIu64
				   "  max %" PRIu64 "\n",
				le_hist_quantile(&x->error, 0.5), le_hist_quantile(&x->error, 0.99),
				le_hist_quantile(&x->error, 0.999), x->error.max);
	}
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void json_drops_body(FILE *f, const struct le_counters *c)
{
	for (int k = 0; k < LE_DROP_CAUSES; k++)
		fprintf(f, "%s\"%s\": %" PRIu64, k ? ", " : "", le_drop_cause_name(k), c->drop[k]);
}

static void json_drops(FILE *f, const struct le_counters *c)
{
	fputc('{', f);
	json_drops_body(f, c);
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

void dp_report_print_json(FILE *f, const struct dp_report *r)
{
	int all_conserved = 1;
	fprintf(f, "{\"version\": \"%s\", \"layout\": ", LINKEMUD_VERSION);
	json_string(f, r->layout);
	fprintf(f, ", \"lcores\": %u, \"seed\": %" PRIu64 ", \"tsc_hz\": %.1f, \"tsc_nominal_hz\": %.1f, "
		   "\"uptime_s\": %.6f, \"time_ns\": %" PRIu64 ", \"mempool_size\": %" PRIu64
		   ", \"mempool_in_use\": %" PRIu64 ", \"directions\": {",
		r->lcores, r->seed, r->tsc_hz, r->tsc_nominal_hz, r->uptime_s, r->time_ns, r->mempool_size,
		r->mempool_in_use);
	for (int d = 0; d < LE_DIRS; d++) {
		const struct dp_direction_report *x = &r->dir[d];
		all_conserved &= dp_report_conserved(x);
		fprintf(f, "%s\"%s\": {\"config\": ", d ? ", " : "", le_direction_name(d));
		json_string(f, x->config);
		fprintf(f, ", \"seed\": %" PRIu64 ", \"rx\": %" PRIu64 ", \"tx\": %" PRIu64 ", \"rx_bytes\": %" PRIu64
			   ", \"tx_bytes\": %" PRIu64 ", \"in_flight\": %" PRIu64 ", \"dropped\": {",
			x->seed, x->ctr.rx, x->ctr.tx, x->ctr.rx_bytes, x->ctr.tx_bytes, x->in_flight);
		json_drops_body(f, &x->ctr);
		fprintf(f, "}, \"dropped_total\": %" PRIu64 ", \"dup\": %" PRIu64 ", \"events\": ",
			le_counters_dropped(&x->ctr), x->ctr.dup);
		json_events(f, &x->ctr);
		fprintf(f, ", \"conserved\": %s, \"emulation_error_ns\": ", dp_report_conserved(x) ? "true" : "false");
		json_hist(f, &x->error);
		fputs(", \"classes\": [", f);
		for (unsigned k = 0; k < x->nclasses; k++) {
			const struct dp_class_report *c = &x->cls[k];
			fprintf(f, "%s{\"name\": ", k ? ", " : "");
			json_string(f, c->name);
			fprintf(f, ", \"rx\": %" PRIu64 ", \"tx\": %" PRIu64 ", \"dup\": %" PRIu64
				   ", \"in_flight\": %u, \"dropped\": ",
				c->ctr.rx, c->ctr.tx, c->ctr.dup, c->in_flight);
			json_drops(f, &c->ctr);
			fputs(", \"events\": ", f);
			json_events(f, &c->ctr);
			fputc('}', f);
		}
		fputs("]}", f);
	}
	fprintf(f, "}, \"conserved\": %s}\n", all_conserved ? "true" : "false");
}
