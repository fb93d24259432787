/* linkemud: a transparent two-port bridge through an emulated link.
 *
 * Start-up order matters for the user: grammar and options are checked
 * before EAL touches hugepages or ports, so mistakes are reported at once;
 * memory is sized from the configured limits and refused with numbers;
 * only then are ports started and "linkemud: ready" printed. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include <rte_pdump.h>

#include "control.h"
#include "final.h"
#include "fault.h"
#include "drop_stash.h"
#include "fastpath.h"
#include "compact_frames.h"
#include "frame_meta.h"
#include "layout.h"
#include "mbuf_ops.h"
#include "options.h"
#include "paced_source.h"
#include "pm_qos.h"
#include "ports.h"
#include "report.h"
#include "dpdk_state.h"
#include "state.h"
#include "telemetry.h"
#include "tsc_clock.h"
#include "wait.h"

/* Each lcore's mempool cache, DPDK's largest. A poll takes a burst from
 * the port and its send frees a burst, so the cache's level moves by
 * their difference; wherever that is not zero poll by poll (a duplicate
 * takes an mbuf a delay before its send frees one) the level wanders,
 * and at either end the cache spills to the pool's ring or refills from
 * it with mbufs freed long ago, cold. With bursts of 64, a cache of 256
 * (spilling at 384) left six bursts of room; 512 leaves twelve:
 * `duplicate 1%` 1.053 and 1.061 on net_null (5 of 5 rounds each),
 * the other rows within 1 % (docs/performance.md, "A larger mempool cache"). */
#define MBUF_CACHE RTE_MEMPOOL_CACHE_MAX_SIZE

/* Exit statuses: 0 done, 1 the environment failed (memory, ports, clock,
 * a socket), 2 bad input (options, grammar, a layout the lcores cannot
 * carry, a link that cannot be built from its files). */
enum { EXIT_ENV = 1, EXIT_INPUT = 2 };

/* The one piece of state a signal handler must reach (final.h). */
static volatile int g_stop;
/* --wait: how idle lcores wait; set before they are launched. */
static enum dp_wait_mode g_wait_mode;
static struct dp_wait_policy g_wait;

static void die(const char *fmt, const char *msg)
{
	fprintf(stderr, "linkemud: ");
	fprintf(stderr, fmt, msg);
	fputc('\n', stderr);
	fflush(stderr);
}

/* argv = [prog, EAL..., "--", app...]. Without "--" every argument is
 * EAL's, except when the first is one of our stand-alone options
 * (--help, --version, --check), which need no EAL at all. */
static void split_args(int argc, char **argv, int *eal_argc, int *app_first)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			*eal_argc = i;
			*app_first = i + 1;
			return;
		}
	}
	*eal_argc = argc;
	*app_first = argc;
	static const char *const standalone[] = {"--help", "-h", "--version", "--check"};
	for (size_t k = 0; argc > 1 && k < sizeof(standalone) / sizeof(standalone[0]); k++) {
		if (strcmp(argv[1], standalone[k]) == 0) {
			*eal_argc = 1;
			*app_first = 1;
		}
	}
}

/* Every mbuf that can be held at once, so the pool never runs dry while
 * the models still have room:
 *
 *   per direction  held frames                   models: the active one and
 *                                                those still draining
 *                                                (model_slot.h enforces it;
 *                                                `limit` counts duplicates):
 *                                                DP_MODEL_LIMITS x max_limit,
 *                                                or with the compact store
 *                                                only frames over 64 bytes,
 *                                                --held-mbufs (compact_frames.c)
 *                + 2 x ring_size                 pipeline rings
 *   + tasks x (DP_BURST_MAX + burst)             pending buffers + one burst
 *   + RX and TX descriptors of both ports
 *   + (lcores + 1) x 1.5 x MBUF_CACHE            per-lcore mempool caches
 *   + lcores x DP_DROP_STASH_MAX                 dropped mbufs not yet freed (the
 *                                                lcores that run whole polls:
 *                                                drop_stash.h)
 *   + 2 x DP_SPARE_MBUFS                         copied frames' mbufs kept for
 *                                                compact frames out (with the
 *                                                compact store: fastpath.h)
 *   + 1024                                       drivers that hold a few more
 *
 * If the pool runs dry anyway the driver drops at RX, counted as the
 * port's rx_nombuf/imissed in every report. */
static unsigned mbufs_needed(const struct dp_options *o, const struct dp_port_queues q[DP_PORTS],
			     const struct dp_plan *plan)
{
	uint64_t n = 0; /* held frames: dp_frames_plan() adds them */
	if (plan->kind == DP_LAYOUT_PIPELINE)
		n += (uint64_t)LE_DIRS * 2 * o->ring_size;
	n += (uint64_t)plan->ntasks * (DP_BURST_MAX + o->burst);
	for (int p = 0; p < DP_PORTS; p++)
		n += q[p].nb_rxd + q[p].nb_txd;
	n += (uint64_t)(plan->nlcores + 1) * MBUF_CACHE * 3 / 2;
	for (unsigned l = 0; l < plan->nlcores; l++)
		if (dp_lcore_runs_whole_polls(&plan->lcore[l]))
			n += DP_DROP_STASH_MAX;
	if (!o->no_compact)
		n += (uint64_t)LE_DIRS * DP_SPARE_MBUFS;
	n += 1024;
	if (n > UINT32_MAX)
		n = UINT32_MAX;
	return (unsigned)n;
}

/* The send pool: compact frames on their way out, at most what the
 * pending buffers, the pipeline's TX rings and the ports' TX descriptors
 * hold at once, plus the lcores' caches. */
static unsigned tx_mbufs_needed(const struct dp_options *o, const struct dp_port_queues q[DP_PORTS],
				const struct dp_plan *plan)
{
	uint64_t n = (uint64_t)plan->ntasks * DP_BURST_MAX;
	if (plan->kind == DP_LAYOUT_PIPELINE)
		n += (uint64_t)LE_DIRS * o->ring_size;
	for (int p = 0; p < DP_PORTS; p++)
		n += q[p].nb_txd;
	n += (uint64_t)(plan->nlcores + 1) * MBUF_CACHE * 3 / 2 + 1024;
	return (unsigned)n;
}

struct daemon {
	struct dp_options opt;
	struct tsc_clock clock;
	struct dp_context ctx;
	struct dp_direction dir[LE_DIRS];
	struct dp_plan plan;
	struct dp_port_queues queues[DP_PORTS];
	struct rte_mempool *pool;    /* frames.pool */
	struct dp_frames frames;     /* the pools and compact stores */
	struct le_frame_ops ops;     /* mbuf operations for the models; outlives them */
	struct dp_punt_set *punt;    /* punted classes' channels (NULL: none) */
	uint64_t seed;
	struct dp_dpdk_plane plane;  /* what the state's callbacks read */
	struct dp_state state;       /* what the control thread and telemetry see */
	struct dp_control *control;
	int pdump_ready;
	int state_ready;             /* state.lock initialised */
	unsigned ports_started;      /* bit p: port p runs */
	struct dp_paced_source paced[DP_PORTS]; /* --paced-source */
};

static int busy_loop(struct dp_lcore_work *w)
{
	const struct dp_context *ctx = w->task[0]->ctx;
	while (!__atomic_load_n(ctx->stop, __ATOMIC_RELAXED))
		for (unsigned i = 0; i < w->ntasks; i++) {
			dp_task_poll(w->task[i]);
			dp_task_serve_snapshot(w->task[i]);
		}
	return 0;
}

static int lcore_loop(void *arg)
{
	struct dp_lcore_work *w = arg;
	/* Only where each poll both receives and sends (drop_stash.h); the
	 * pool counts a stash for each such lcore (mbufs_needed). */
	dp_drop_stash_set(dp_lcore_runs_whole_polls(w));
	int rc = g_wait_mode == DP_WAIT_ADAPTIVE ? dp_wait_lcore_loop(w, &g_wait, stderr) : busy_loop(w);
	dp_drop_stash_set(0);
	return rc;
}

static int setup_links(struct daemon *dm, char *err, size_t errlen)
{
	for (int d = 0; d < LE_DIRS; d++) {
		struct dp_direction *dir = &dm->dir[d];
		char sub[LE_ERR_MAX];
		dir->id = (enum le_direction)d;
		dir->port_in = d == LE_DIR_A2B ? 0 : 1;
		dir->port_out = d == LE_DIR_A2B ? 1 : 0;
		struct dp_model *m = NULL;
		if (d == LE_DIR_A2B && dp_test_fault("link"))
			snprintf(sub, sizeof(sub), "cannot build the link (test fault 'link')");
		else
			m = dp_model_new(&dm->opt.path[d], dir->id, dm->seed, &dm->ops, sub, sizeof(sub));
		if (!m) {
			snprintf(err, errlen, "%s: %s", le_direction_name(d), sub);
			return -1;
		}
		if (dp_model_slot_init(&dir->models, m, dm->opt.max_limit, err, errlen)) {
			dp_model_free(m);
			return -1;
		}
	}
	return 0;
}

static int setup_rings(struct daemon *dm, char *err, size_t errlen)
{
	if (dm->plan.kind != DP_LAYOUT_PIPELINE)
		return 0;
	for (int d = 0; d < LE_DIRS; d++) {
		char name[RTE_RING_NAMESIZE];
		struct rte_ring **r[2] = {&dm->dir[d].rx_ring, &dm->dir[d].tx_ring};
		for (int k = 0; k < 2; k++) {
			snprintf(name, sizeof(name), "le_%s_%s", le_direction_name(d), k ? "tx" : "rx");
			*r[k] = rte_ring_create(name, dm->opt.ring_size, (int)rte_socket_id(),
						RING_F_SP_ENQ | RING_F_SC_DEQ);
			if (!*r[k]) {
				snprintf(err, errlen, "cannot create ring %s (%u entries): %s", name,
					 dm->opt.ring_size, rte_strerror(rte_errno));
				return -1;
			}
		}
	}
	return 0;
}

static int setup_memory(struct daemon *dm, char *err, size_t errlen)
{
	for (uint16_t p = 0; p < DP_PORTS; p++)
		if (dp_port_queues(p, &dm->queues[p], err, errlen))
			return -1;
	struct dp_frames_plan fp;
	dp_frames_plan(&fp, &dm->opt, mbufs_needed(&dm->opt, dm->queues, &dm->plan),
		       tx_mbufs_needed(&dm->opt, dm->queues, &dm->plan));
	if (dp_frames_create(&dm->frames, &fp, MBUF_CACHE, err, errlen))
		return -1;
	dm->pool = dm->frames.pool;
	dm->ctx.tx_pool = dm->frames.tx_pool;
	for (int d = 0; d < LE_DIRS; d++)
	{
		dm->dir[d].compact = dm->frames.store[d];
		dm->dir[d].compact_after = fp.compact_after;
	}
	dm->ops = dp_mbuf_ops(&dm->frames);
	return 0;
}

static int start_ports(struct daemon *dm, char *err, size_t errlen)
{
	for (uint16_t p = 0; p < DP_PORTS; p++) {
		if (p == 1 && dp_test_fault("port-start")) {
			snprintf(err, errlen, "port 1: start failed (test fault 'port-start')");
			return -1;
		}
		if (dp_port_start(p, &dm->queues[p], dm->pool, err, errlen))
			return -1;
		dm->ports_started |= 1u << p;
	}
	return 0;
}

/* --paced-source: a paced wire into each port (paced_source.h). */
static int start_paced_sources(struct daemon *dm, char *err, size_t errlen)
{
	if (!dm->opt.paced_pps)
		return 0;
	for (uint16_t p = 0; p < DP_PORTS; p++) {
		uint32_t ring = dm->opt.paced_ring ? dm->opt.paced_ring : dm->queues[p].nb_rxd;
		if (dp_paced_source_start(&dm->paced[p], p, dm->opt.paced_pps, ring, &dm->clock, dm->pool, err,
					  errlen))
			return -1;
	}
	for (int d = 0; d < LE_DIRS; d++)
		dm->dir[d].paced = &dm->paced[dm->dir[d].port_in];
	return 0;
}

static void stop_paced_sources(struct daemon *dm)
{
	for (uint16_t p = 0; p < DP_PORTS; p++)
		dp_paced_source_stop(&dm->paced[p]);
}

/* After the lcores stopped: frames already due are sent while the ports
 * still run (workers before TX tasks, the plan's order); everything else
 * is freed and counted as `shutdown`: by the model for what it held (in
 * the frame's class), by the direction for rings and pending buffers. */
static void shutdown_send_due(struct daemon *dm)
{
	for (unsigned i = 0; i < dm->plan.ntasks; i++)
		dp_task_send_due_at_shutdown(dm->plan.task[i]);
}

static void shutdown_flush(struct daemon *dm)
{
	struct rte_mbuf *m[DP_BURST_MAX];
	for (unsigned i = 0; i < dm->plan.ntasks; i++)
		dp_task_flush_at_shutdown(dm->plan.task[i]);
	for (int d = 0; d < LE_DIRS; d++) {
		struct dp_direction *dir = &dm->dir[d];
		uint64_t *count = &dir->shutdown_ctr.drop[DP_DROP_SHUTDOWN];
		unsigned k;
		dp_model_slot_drain(&dir->models);
		dp_punt_drain(dir->punt, dir->id);
		struct rte_ring *rings[2] = {dir->rx_ring, dir->tx_ring};
		for (int r = 0; r < 2; r++) {
			if (!rings[r])
				continue;
			while ((k = rte_ring_dequeue_burst(rings[r], (void **)m, DP_BURST_MAX, NULL)) > 0) {
				rte_pktmbuf_free_bulk(m, k);
				*count += k;
				dir->ring_flushed[r] += k;
			}
		}
	}
}

/* Control socket, telemetry and capture: the ways to watch and steer a
 * running daemon. Only the control socket is essential enough to refuse
 * start-up without (when asked for). */
static int start_observers(struct daemon *dm, char *err, size_t errlen)
{
	dm->plane = (struct dp_dpdk_plane){.dir = dm->dir, .plan = &dm->plan, .clock = &dm->clock, .pool = dm->pool};
	dm->state = (struct dp_state){
		.seed = dm->seed, .started_ns = tsc_clock_now(&dm->clock), .max_limit = dm->opt.max_limit,
		.ops = &dm->ops, .stop = &g_stop,
	};
	dp_dpdk_state_bind(&dm->state, &dm->plane);
	pthread_mutex_init(&dm->state.lock, NULL);
	dm->state_ready = 1;
	if (dp_telemetry_attach(&dm->state))
		fprintf(stderr, "linkemud: note: telemetry commands not registered\n");
	/* rte_pdump needs the multi-process channel (absent with --in-memory). */
	if (rte_pdump_init() == 0)
		dm->pdump_ready = 1;
	else
		fprintf(stderr, "linkemud: note: capture (rte_pdump) unavailable: %s\n", rte_strerror(rte_errno));
	if (!dm->opt.no_control) {
		dm->control = dp_control_start(dm->opt.control_path, &dm->state, err, errlen);
		if (!dm->control)
			return -1;
	}
	return 0;
}

static void stop_observers(struct daemon *dm)
{
	dp_control_stop(dm->control);
	dm->control = NULL;
	dp_telemetry_detach();
	if (dm->pdump_ready)
		rte_pdump_uninit();
	dm->pdump_ready = 0;
}

static void print_ready(const struct daemon *dm)
{
	printf("linkemud: ready layout=%s lcores=%u wait=%s seed=%" PRIu64 " tsc_hz=%.0f a2b=\"%s\" b2a=\"%s\"\n",
	       dp_layout_name(dm->plan.kind), dm->plan.nlcores, dp_wait_mode_name(dm->opt.wait), dm->seed, dm->clock.hz,
	       dm->dir[0].models.active->text, dm->dir[1].models.active->text);
	fflush(stdout);
}

static void stop_ports(struct daemon *dm)
{
	for (uint16_t p = 0; p < DP_PORTS; p++)
		if (dm->ports_started & (1u << p))
			(void)rte_eth_dev_stop(p);
	dm->ports_started = 0;
}

static void set_lcores_running(struct daemon *dm, int running)
{
	pthread_mutex_lock(&dm->state.lock);
	dm->state.lcores_running = running;
	pthread_mutex_unlock(&dm->state.lock);
}

/* Everything up to "ready". 0, or the exit status after printing why;
 * release() undoes whatever part was done. */
static int start(struct daemon *dm)
{
	char err[LE_ERR_MAX + 128];
	unsigned ids[RTE_MAX_LCORE], nlcores = 0, lc;

	ids[nlcores++] = rte_get_main_lcore();
	RTE_LCORE_FOREACH_WORKER(lc)
		ids[nlcores++] = lc;

	if (dp_test_fault("tsc") || tsc_clock_calibrate(&dm->clock, 200)) {
		die("%s", "TSC calibration failed: the TSC and CLOCK_MONOTONIC_RAW disagree by > 5 %");
		return EXIT_ENV;
	}
	dm->ctx = (struct dp_context){
		.clock = &dm->clock, .burst = dm->opt.burst, .stop = &g_stop,
	};
	dm->ctx.meta_offset = frame_meta_register();
	if (dm->ctx.meta_offset < 0) {
		die("cannot register the mbuf dynamic field: %s", rte_strerror(rte_errno));
		return EXIT_ENV;
	}
	if (dp_ports_check(err, sizeof(err))) {
		die("%s", err);
		return EXIT_INPUT;
	}
	int rc = dp_plan_build(&dm->plan, dm->opt.layout, ids, nlcores, dm->dir, &dm->ctx, err, sizeof(err));
	if (rc) {
		die("%s", err);
		return rc == -2 ? EXIT_INPUT : EXIT_ENV;
	}
	if (dm->opt.wait == DP_WAIT_ADAPTIVE && dp_wait_plan_check(&dm->plan, err, sizeof(err))) {
		die("%s", err);
		return EXIT_INPUT;
	}
	if (setup_memory(dm, err, sizeof(err))) {
		die("%s", err);
		return EXIT_ENV;
	}
	/* Before the models: they hand punted frames to the channels. */
	if (dp_punt_open(&dm->punt, dm->opt.path, &dm->ops, dp_mbuf_make, dm->pool, err, sizeof(err))) {
		die("%s", err);
		return EXIT_INPUT;
	}
	dp_punt_bind(dm->punt, &dm->ops);
	for (int d = 0; d < LE_DIRS; d++)
		dm->dir[d].punt = dm->punt;
	if (setup_links(dm, err, sizeof(err))) {
		die("%s", err);
		return EXIT_INPUT;
	}
	if (setup_rings(dm, err, sizeof(err)) || start_ports(dm, err, sizeof(err))) {
		die("%s", err);
		return EXIT_ENV;
	}
	if (start_paced_sources(dm, err, sizeof(err))) {
		die("%s", err);
		return EXIT_INPUT;
	}
	if (nlcores > dm->plan.nlcores)
		fprintf(stderr, "linkemud: note: %u lcore(s) given, layout %s uses %u; the rest stay idle\n",
			nlcores, dp_layout_name(dm->plan.kind), dm->plan.nlcores);
	if (start_observers(dm, err, sizeof(err))) {
		die("%s", err);
		return EXIT_ENV;
	}
	return 0;
}

/* Forwards until a signal, then ends faithfully: due frames sent, the
 * rest counted, reports written. */
static int serve(struct daemon *dm)
{
	/* An adaptive lcore sleeps: held at 0, the guest's idle loop would
	 * poll instead of halting and the vCPU would stay busy all the same
	 * (docs/performance.md "Waiting"). */
	int hold_qos = !dm->opt.no_pm_qos && dm->opt.wait == DP_WAIT_BUSY;
	int qos_fd = hold_qos ? pm_qos_hold_zero_latency() : -1;
	if (hold_qos && qos_fd < 0)
		fprintf(stderr, "linkemud: note: cannot hold /dev/cpu_dma_latency at 0 (%s); "
				"CPU wake-ups may add latency\n", strerror(errno));
	print_ready(dm);

	g_wait_mode = dm->opt.wait;
	g_wait = (struct dp_wait_policy){.spin_ns = dp_options_spin_ns(&dm->opt),
					 .spin_auto = dm->opt.spin_auto,
					 .idle_ns = dm->opt.idle_us * LE_NS_PER_US,
					 .max_nap_ns = DP_WAIT_WAKE_MAX_NAP_NS};
	set_lcores_running(dm, 1);
	for (unsigned s = 1; s < dm->plan.nlcores; s++)
		rte_eal_remote_launch(lcore_loop, &dm->plan.lcore[s], dm->plan.lcore[s].lcore_id);
	lcore_loop(&dm->plan.lcore[0]);
	rte_eal_mp_wait_lcore();
	stop_paced_sources(dm);
	set_lcores_running(dm, 0);
	pm_qos_release(qos_fd);
	stop_observers(dm);

	shutdown_send_due(dm);
	stop_ports(dm);
	shutdown_flush(dm);
	return dp_final_reports(&dm->state, &dm->opt, "linkemud") ? EXIT_ENV : 0;
}

/* Undoes what start() and serve() did, whatever part of it that was:
 * every step tolerates a piece that was never set up. */
static void release(struct daemon *dm)
{
	stop_observers(dm); /* when start() failed half-way */
	stop_paced_sources(dm);
	if (dm->state_ready)
		pthread_mutex_lock(&dm->state.lock); /* telemetry may still be in a callback */
	/* Ports first: they hold mbufs of the pool in their rings. */
	stop_ports(dm);
	uint16_t p;
	RTE_ETH_FOREACH_DEV(p)
		(void)rte_eth_dev_close(p);
	for (int d = 0; d < LE_DIRS; d++) {
		dp_model_slot_fini(&dm->dir[d].models);
		rte_ring_free(dm->dir[d].rx_ring);
		rte_ring_free(dm->dir[d].tx_ring);
		dm->dir[d].rx_ring = dm->dir[d].tx_ring = NULL;
	}
	dp_punt_close(dm->punt);
	dm->punt = NULL;
	dp_plan_free(&dm->plan);
	dp_frames_free(&dm->frames);
	dm->pool = NULL;
	free(dm->state.baseline);
	dm->state.baseline = NULL;
	if (dm->state_ready)
		pthread_mutex_unlock(&dm->state.lock);
}

int main(int argc, char **argv)
{
	static struct daemon dm; /* large (histograms live in tasks, but keep it off the stack) */
	char err[LE_ERR_MAX + 128];
	int eal_argc, app_first;

	split_args(argc, argv, &eal_argc, &app_first);
	int rc = dp_options_parse(argc - app_first, argv + app_first, &dm.opt, err, sizeof(err));
	if (rc == 1)
		return 0;
	if (rc < 0) {
		die("%s", err);
		return 2;
	}
	if (!dm.opt.burst_set)
		dm.opt.burst = DP_DATAPLANE_BURST;
	dm.seed = dm.opt.seed_set ? dm.opt.seed : dp_random_seed();

	dp_stop_on_signals(&g_stop);
	if (rte_eal_init(eal_argc, argv) < 0) {
		char why[512];
		snprintf(why, sizeof(why), "%s (check hugepages and the EAL options)%s", rte_strerror(rte_errno),
			 rte_errno == ENODEV ? dp_drivers_hint() : "");
		die("EAL initialisation failed: %s", why);
		return 1;
	}
	/* EAL installs no SIGINT/SIGTERM handlers of its own; ours stand. */
	rc = start(&dm);
	if (rc == 0)
		rc = serve(&dm);
	release(&dm);
	rte_eal_cleanup();
	return rc;
}
