#include "telemetry.h"

#include <stdlib.h>

#include <rte_telemetry.h>

/* The one state the callbacks may read; NULL when detached. Guarded by
 * its own lock because telemetry runs on its own thread. */
static struct dp_state *g_state;

static void add_xstats(struct rte_tel_data *d, const char *prefix, const struct dp_port_xstats *s)
{
	for (unsigned i = 0; i < s->n; i++) {
		char name[RTE_TEL_MAX_STRING_LEN];
		snprintf(name, sizeof(name), "%s%s", prefix, s->x[i].name);
		rte_tel_data_add_dict_u64(d, name, s->x[i].value);
	}
}

static void add_direction(struct rte_tel_data *d, const struct dp_direction_report *x)
{
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "config", x->config);
	rte_tel_data_add_dict_u64(d, "rx", x->dp.rx);
	rte_tel_data_add_dict_u64(d, "tx", x->dp.tx);
	rte_tel_data_add_dict_u64(d, "rx_bytes", x->dp.rx_bytes);
	rte_tel_data_add_dict_u64(d, "tx_bytes", x->dp.tx_bytes);
	rte_tel_data_add_dict_u64(d, "in_flight", x->in_flight);
	rte_tel_data_add_dict_u64(d, "dropped_total", dp_report_dropped(x));
	const char *cause[DP_REPORT_CAUSES_MAX];
	uint64_t count[DP_REPORT_CAUSES_MAX];
	unsigned n = dp_report_drops(x, cause, count, DP_REPORT_CAUSES_MAX);
	for (unsigned c = 0; c < n; c++) {
		char name[48];
		snprintf(name, sizeof(name), "dropped_%s", cause[c]);
		rte_tel_data_add_dict_u64(d, name, count[c]);
	}
	rte_tel_data_add_dict_u64(d, "error_count", x->error.count);
	rte_tel_data_add_dict_u64(d, "error_p50_ns", le_hist_quantile(&x->error, 0.5));
	rte_tel_data_add_dict_u64(d, "error_p99_ns", le_hist_quantile(&x->error, 0.99));
	rte_tel_data_add_dict_u64(d, "error_p999_ns", le_hist_quantile(&x->error, 0.999));
	rte_tel_data_add_dict_u64(d, "error_max_ns", x->error.max);
	/* What the ports counted before and after us (ports.h). */
	rte_tel_data_add_dict_u64(d, "port_in_imissed", x->port_in.imissed);
	rte_tel_data_add_dict_u64(d, "port_in_ierrors", x->port_in.ierrors);
	rte_tel_data_add_dict_u64(d, "port_in_rx_nombuf", x->port_in.rx_nombuf);
	rte_tel_data_add_dict_u64(d, "port_out_oerrors", x->port_out.oerrors);
	/* And where their drivers say they dropped: flat keys, as telemetry
	 * nests containers only one level deep. */
	add_xstats(d, "port_in_xstat_", &x->xstats_in);
	add_xstats(d, "port_out_xstat_", &x->xstats_out);
}

static int cb_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	struct dp_state *st = __atomic_load_n(&g_state, __ATOMIC_ACQUIRE);
	if (!st)
		return -1;
	struct dp_report *r = calloc(1, sizeof(*r));
	if (!r)
		return -1;
	/* Detach may have happened between the load and the lock; the lock
	 * itself outlives the state (release() frees under it). */
	pthread_mutex_lock(&st->lock);
	int rc = __atomic_load_n(&g_state, __ATOMIC_ACQUIRE) == st ? dp_state_report(st, r, 0) : -1;
	pthread_mutex_unlock(&st->lock);
	if (rc) {
		free(r);
		return -1;
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "uptime_ns", (uint64_t)(r->uptime_s * 1e9));
	rte_tel_data_add_dict_u64(d, "mempool_in_use", r->mempool_in_use);
	for (int k = 0; k < LE_DIRS; k++) {
		struct rte_tel_data *sub = rte_tel_data_alloc();
		if (!sub)
			break;
		add_direction(sub, &r->dir[k]);
		rte_tel_data_add_dict_container(d, le_direction_name(k), sub, 0);
	}
	free(r);
	return 0;
}

static int cb_config(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	struct dp_state *st = __atomic_load_n(&g_state, __ATOMIC_ACQUIRE);
	if (!st)
		return -1;
	rte_tel_data_start_dict(d);
	pthread_mutex_lock(&st->lock);
	if (__atomic_load_n(&g_state, __ATOMIC_ACQUIRE) != st) { /* detached meanwhile */
		pthread_mutex_unlock(&st->lock);
		return -1;
	}
	for (int k = 0; k < LE_DIRS; k++) {
		const struct dp_model *m = __atomic_load_n(&st->slot[k]->active, __ATOMIC_ACQUIRE);
		rte_tel_data_add_dict_string(d, le_direction_name(k), m->text);
	}
	pthread_mutex_unlock(&st->lock);
	return 0;
}

int dp_telemetry_attach(struct dp_state *st)
{
	__atomic_store_n(&g_state, st, __ATOMIC_RELEASE);
	if (rte_telemetry_register_cmd("/linkemu/stats", cb_stats,
				       "linkemu counters per direction. Takes no parameters") ||
	    rte_telemetry_register_cmd("/linkemu/config", cb_config,
				       "linkemu links as grammar text. Takes no parameters"))
		return -1;
	return 0;
}

void dp_telemetry_detach(void)
{
	/* Commands cannot be unregistered; they answer -1 from now on. A
	 * callback that loaded the state before this sees NULL once it holds
	 * the state's lock. One that holds it already, past that check, is
	 * waited for here: the caller goes on to shut down (the last sends,
	 * the ports, the flush), which moves the counters that callback is
	 * reading, and its reply could show a direction out of balance. */
	struct dp_state *st = __atomic_exchange_n(&g_state, NULL, __ATOMIC_ACQ_REL);

	if (st != NULL) {
		pthread_mutex_lock(&st->lock);
		pthread_mutex_unlock(&st->lock);
	}
}
