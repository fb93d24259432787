/* linkemuk: the kernel-socket data plane. The same link model, options,
 * control socket, live changes and reports as linkemud (src/plane), with
 * raw AF_PACKET sockets instead of DPDK ports: no hugepages, no EAL, runs
 * wherever two interfaces and CAP_NET_RAW are (docs/kernel-plane.md).
 *
 * Start-up order as linkemud's: options and grammar first, then memory,
 * sockets and models, then "linkemud: ready" (the same line, so the tools
 * that wait for it need not know which plane runs). */
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "ask.h"
#include "control.h"
#include "final.h"
#include "kbuf.h"
#include "kloop.h"
#include "kopts.h"
#include "options.h"
#include "pm_qos.h"
#include "report.h"
#include "state.h"

enum { EXIT_ENV = 1, EXIT_INPUT = 2 };

static volatile int g_stop;

struct kdaemon {
	struct kopts kopt;
	struct dp_options opt;
	uint64_t seed;
	struct kloop loop;
	struct le_frame_ops ops;
	struct dp_state state;
	struct dp_control *control;
	int state_ready;
};

static le_ns_t k_now(const struct dp_state *st)
{
	(void)st;
	return kclock_now();
}

/* The report from one snapshot of the forwarding thread (asked while it
 * runs, read directly after). */
static int k_collect(struct dp_state *st, struct dp_report *r, int live)
{
	struct kdaemon *dm = st->plane;
	struct kloop *l = &dm->loop;
	static struct kdir_snapshot snap[LE_DIRS]; /* large; one reader at a time (st->lock) */
	if (live) {
		if (dp_ask_wait(&l->snap_req, &l->snap_done, st->stop))
			return -1;
		memcpy(snap, l->snap, sizeof(snap));
	} else {
		kloop_snapshot(l, snap);
	}
	r->layout = dm->kopt.busy_poll ? "kernel-busy-poll" : "kernel";
	r->lcores = 1;
	r->tsc_hz = 1e9; /* the model's clock is CLOCK_MONOTONIC in ns */
	r->tsc_nominal_hz = 1e9;
	r->time_ns = kclock_now();
	r->mempool_size = l->pool.n;
	r->mempool_in_use = kbuf_in_use(&l->pool);
	for (int d = 0; d < LE_DIRS; d++) {
		struct dp_direction_report *x = &r->dir[d];
		memset(&x->model, 0, sizeof(x->model));
		x->dp = snap[d].ctr;
		x->in_flight = snap[d].held;
		x->in_flight_base = 0;
		x->error = snap[d].error;
		le_hist_init(&x->poll_gaps); /* not measured by the kernel plane's loop */
		x->has_paced = 0;
		x->poll_observed_ns = 0;
		x->port_in = snap[d].port_in;
		x->port_out = snap[d].port_out;
		x->npunt = snap[d].npunt;
		memcpy(x->punt, snap[d].punt, sizeof(x->punt));
		dp_report_add_models(x, &snap[d].models);
	}
	return 0;
}

/* Memory for every frame the models may hold (model_slot.h) and the
 * thread's batches: the same sum as linkemud's mbuf pool. */
static uint32_t buffers_needed(const struct dp_options *o)
{
	uint64_t n = (uint64_t)LE_DIRS * DP_MODEL_LIMITS * o->max_limit + (uint64_t)LE_DIRS * 2 * K_BURST_MAX;
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

static int start(struct kdaemon *dm)
{
	char err[LE_ERR_MAX + 128];
	struct kloop *l = &dm->loop;
	for (int s = 0; s < 2; s++) {
		if (ksock_open(&l->sock[s], dm->kopt.iface[s], err, sizeof(err))) {
			fprintf(stderr, "linkemuk: %s\n", err);
			return EXIT_ENV;
		}
		if (l->sock[s].mtu + 18 > (int)K_FRAME_MAX) {
			fprintf(stderr, "linkemuk: interface '%s': MTU %d is larger than linkemuk's frames (%u bytes)\n",
				l->sock[s].name, l->sock[s].mtu, K_FRAME_MAX - 18);
			return EXIT_INPUT;
		}
	}
	if (kbuf_pool_init(&l->pool, buffers_needed(&dm->opt), err, sizeof(err))) {
		fprintf(stderr, "linkemuk: %s; lower `limit`/--max-limit\n", err);
		return EXIT_ENV;
	}
	dm->ops = kbuf_frame_ops(&l->pool);
	/* Before the models: they hand punted frames to the channels. */
	if (dp_punt_open(&l->punt, dm->opt.path, &dm->ops, kbuf_make, &l->pool, err, sizeof(err))) {
		fprintf(stderr, "linkemuk: %s\n", err);
		return EXIT_INPUT;
	}
	dp_punt_bind(l->punt, &dm->ops);
	l->burst = dm->opt.burst > K_BURST_MAX ? K_BURST_MAX : dm->opt.burst;
	l->spin_auto = dm->opt.spin_auto;
	l->spin_ns = dp_options_spin_ns(&dm->opt);
	dp_spin_init(&l->spin, l->spin_ns);
	l->busy_poll = dm->kopt.busy_poll;
	l->stop = &g_stop;
	for (int d = 0; d < LE_DIRS; d++) {
		struct kdir *dir = &l->dir[d];
		dir->in = &l->sock[d == LE_DIR_A2B ? 0 : 1];
		dir->out = &l->sock[d == LE_DIR_A2B ? 1 : 0];
		le_hist_init(&dir->error);
		struct dp_model *m = dp_model_new(&dm->opt.path[d], (enum le_direction)d, dm->seed, &dm->ops, err,
						  sizeof(err));
		if (!m || dp_model_slot_init(&dir->models, m, dm->opt.max_limit, err, sizeof(err))) {
			fprintf(stderr, "linkemuk: %s: %s\n", le_direction_name(d), err);
			if (m)
				dp_model_free(m);
			return EXIT_INPUT;
		}
	}
	dm->state = (struct dp_state){
		.now = k_now, .collect = k_collect, .plane = dm, .seed = dm->seed, .started_ns = kclock_now(),
		.max_limit = dm->opt.max_limit, .ops = &dm->ops, .stop = &g_stop,
	};
	for (int d = 0; d < LE_DIRS; d++)
		dm->state.slot[d] = &l->dir[d].models;
	pthread_mutex_init(&dm->state.lock, NULL);
	dm->state_ready = 1;
	if (!dm->opt.no_control) {
		dm->control = dp_control_start(dm->opt.control_path, &dm->state, err, sizeof(err));
		if (!dm->control) {
			fprintf(stderr, "linkemuk: %s\n", err);
			return EXIT_ENV;
		}
	}
	return 0;
}

static void set_running(struct kdaemon *dm, int running)
{
	pthread_mutex_lock(&dm->state.lock);
	dm->state.lcores_running = running;
	pthread_mutex_unlock(&dm->state.lock);
}

static int serve(struct kdaemon *dm)
{
	int qos_fd = dm->opt.no_pm_qos ? -1 : pm_qos_hold_zero_latency();
	/* ppoll's wake-up is what the spin before a deadline must cover: the
	 * default 50 us of timer slack would be most of it. */
	(void)prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	printf("linkemud: ready layout=%s lcores=1 seed=%" PRIu64 " tsc_hz=1000000000 a2b=\"%s\" b2a=\"%s\" "
	       "io=kernel\n",
	       dm->kopt.busy_poll ? "kernel-busy-poll" : "kernel", dm->seed, dm->loop.dir[0].models.active->text,
	       dm->loop.dir[1].models.active->text);
	fflush(stdout);
	set_running(dm, 1);
	int lost = kloop_run(&dm->loop);
	set_running(dm, 0);
	if (lost) {
		/* An interface is gone for good (deleted; one that is merely down
		 * is waited for: kloop.h). Stop as on a signal, with the same
		 * final report (the frames held now counted as `shutdown`), but
		 * say why and exit non-zero: the run did not end as asked. */
		fprintf(stderr, "linkemuk: %s: stopping\n", dm->loop.lost);
		g_stop = 1; /* a control request waiting for the thread gives up now */
	}
	if (dm->loop.spin_auto && !dm->loop.busy_poll)
		dp_spin_report(&dm->loop.spin, stderr, "linkemuk: thread", 0);
	pm_qos_release(qos_fd);
	dp_control_stop(dm->control);
	dm->control = NULL;
	kloop_shutdown(&dm->loop, 50);
	return dp_final_reports(&dm->state, &dm->opt, "linkemuk") || lost ? EXIT_ENV : 0;
}

static void release(struct kdaemon *dm)
{
	dp_control_stop(dm->control);
	dm->control = NULL;
	for (int d = 0; d < LE_DIRS; d++)
		dp_model_slot_fini(&dm->loop.dir[d].models);
	for (int s = 0; s < 2; s++)
		ksock_close(&dm->loop.sock[s]);
	dp_punt_close(dm->loop.punt);
	dm->loop.punt = NULL;
	kbuf_pool_fini(&dm->loop.pool);
	free(dm->state.baseline);
	dm->state.baseline = NULL;
}

int main(int argc, char **argv)
{
	static struct kdaemon dm; /* large: keep it off the stack */
	char err[LE_ERR_MAX + 128];
	for (int s = 0; s < 2; s++)
		dm.loop.sock[s].fd = -1;
	int rc = kopts_parse(argc, argv, &dm.kopt, err, sizeof(err));
	if (rc == 0)
		rc = dp_options_parse(dm.kopt.argc, dm.kopt.argv, &dm.opt, err, sizeof(err));
	if (rc == 0 && dm.opt.wait_set) /* --wait, as linkemud takes it: busy = --busy-poll */
		dm.kopt.busy_poll = dm.opt.wait == DP_WAIT_BUSY;
	if (rc == 1)
		return 0;
	if (rc < 0) {
		fprintf(stderr, "linkemuk: %s\n", err);
		return EXIT_INPUT;
	}
	if (dm.opt.paced_pps) {
		fprintf(stderr, "linkemuk: --paced-source: only linkemud has it (it feeds DPDK net_null ports)\n");
		return EXIT_INPUT;
	}
	if (!dm.kopt.iface[0] || !dm.kopt.iface[1]) {
		fprintf(stderr, "linkemuk: --iface-a and --iface-b are required (see --help)\n");
		return EXIT_INPUT;
	}
	/* One interface on both sides would bridge it to itself: every frame
	 * it receives enters both directions and goes back out where it came
	 * from, twice. */
	unsigned ifa = if_nametoindex(dm.kopt.iface[0]), ifb = if_nametoindex(dm.kopt.iface[1]);
	if (strcmp(dm.kopt.iface[0], dm.kopt.iface[1]) == 0 || (ifa != 0 && ifa == ifb)) {
		fprintf(stderr, "linkemuk: --iface-a and --iface-b name the same interface ('%s'); give two\n",
			dm.kopt.iface[0]);
		return EXIT_INPUT;
	}
	dm.seed = dm.opt.seed_set ? dm.opt.seed : dp_random_seed();
	dp_stop_on_signals(&g_stop);
	rc = start(&dm);
	if (rc == 0)
		rc = serve(&dm);
	release(&dm);
	return rc;
}
