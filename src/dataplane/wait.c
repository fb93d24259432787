#define _GNU_SOURCE /* ppoll */
#include "wait.h"

#include "ports.h"
#include "spin_learn.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <linux/if_packet.h>
#include <linux/if_xdp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rte_devargs.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#ifndef AF_XDP
#define AF_XDP 44
#endif

#define WAIT_FDS_MAX 8

struct waiter {
	struct pollfd pfd[WAIT_FDS_MAX];
	unsigned nfds;
	le_ns_t max_nap_ns;
	uint64_t naps, woken_early;
	le_ns_t asleep_ns;
};

/* The host interface a port is attached to: the PMD's own answer, or the
 * `iface=` of its devargs (net_af_xdp in 22.11 leaves if_index at 0). */
static unsigned port_ifindex(uint16_t port)
{
	struct rte_eth_dev_info info;
	if (rte_eth_dev_info_get(port, &info) != 0)
		return 0;
	if (info.if_index)
		return info.if_index;
	const struct rte_devargs *da = info.device ? rte_dev_devargs(info.device) : NULL;
	const char *args = da ? da->args : NULL;
	const char *at = args ? strstr(args, "iface=") : NULL;
	if (!at)
		return 0;
	char name[IF_NAMESIZE];
	size_t n = strcspn(at + 6, ",");
	if (n == 0 || n >= sizeof(name))
		return 0;
	memcpy(name, at + 6, n);
	name[n] = 0;
	return if_nametoindex(name);
}

/* The receive sockets of the lcore's input ports. A packet socket tells
 * its interface (getsockname); an AF_XDP socket does not (nor does
 * sock_diag on kernels without CONFIG_XDP_SOCKETS_DIAG), so the ports
 * module noted which AF_XDP sockets each port's start opened
 * (dp_port_has_xsk). Returns a bit per input port that has a wake-up
 * source. */
static unsigned find_sockets(struct waiter *w, const uint16_t *ports, unsigned nports)
{
	unsigned ifindex[DP_TASKS_PER_LCORE_MAX], found = 0;
	for (unsigned i = 0; i < nports; i++)
		ifindex[i] = port_ifindex(ports[i]);
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL && w->nfds < WAIT_FDS_MAX) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);
		struct stat st;
		if (*end || fd == dirfd(d) || fstat((int)fd, &st) != 0 || !S_ISSOCK(st.st_mode))
			continue;
		int domain = 0;
		socklen_t len = sizeof(domain);
		if (getsockopt((int)fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0)
			continue;
		unsigned mine = 0;
		if (domain == AF_XDP) {
			for (unsigned i = 0; i < nports; i++)
				if (dp_port_has_xsk(ports[i], (int)fd))
					mine |= 1u << i;
		} else if (domain == AF_PACKET) {
			struct sockaddr_ll ll;
			len = sizeof(ll);
			memset(&ll, 0, sizeof(ll));
			if (getsockname((int)fd, (struct sockaddr *)&ll, &len) == 0)
				for (unsigned i = 0; i < nports; i++)
					if (ifindex[i] && (unsigned)ll.sll_ifindex == ifindex[i])
						mine |= 1u << i;
		}
		if (mine) {
			w->pfd[w->nfds++] = (struct pollfd){.fd = (int)fd, .events = POLLIN};
			found |= mine;
		}
	}
	closedir(d);
	return found;
}

int dp_wait_plan_check(const struct dp_plan *p, char *err, size_t errlen)
{
	for (unsigned i = 0; i < p->ntasks; i++) {
		if (p->task[i]->kind != DP_TASK_RUN_TO_COMPLETION) {
			snprintf(err, errlen,
				 "--wait adaptive needs the single or per-direction layout: the %s layout's "
				 "lcores hand frames over rings, which cannot wake a sleeping lcore",
				 dp_layout_name(p->kind));
			return -1;
		}
	}
	return 0;
}

static void waiter_init(struct waiter *w, const struct dp_lcore_work *work, FILE *log)
{
	memset(w, 0, sizeof(*w));
	uint16_t ports[DP_TASKS_PER_LCORE_MAX];
	for (unsigned i = 0; i < work->ntasks; i++)
		ports[i] = work->task[i]->dir->port_in;
	unsigned found = find_sockets(w, ports, work->ntasks);
	for (unsigned i = 0; i < work->ntasks; i++) {
		char name[RTE_ETH_NAME_MAX_LEN] = "?";
		(void)rte_eth_dev_get_name_by_port(ports[i], name);
		fprintf(log, "linkemud: lcore %u: --wait adaptive: port %u (%s): %s\n", work->lcore_id, ports[i],
			name, (found >> i & 1) ? "wakes on a frame (its receive socket)"
					       : "no wake-up source, naps of at most 50 us");
	}
	fprintf(log, "linkemud: lcore %u: --wait adaptive: %u socket(s) to wake on\n", work->lcore_id, w->nfds);
	int all = found == (1u << work->ntasks) - 1;
	w->max_nap_ns = all ? DP_WAIT_WAKE_MAX_NAP_NS : DP_WAIT_BLIND_NAP_NS;
	/* The default slack (50 us) would add itself to every wake-up. */
	(void)prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
}

/* The earliest deadline of the lcore's models; 0 when a task must not
 * sleep (frames the port did not take). */
static le_ns_t next_deadline(const struct dp_lcore_work *work)
{
	le_ns_t next = UINT64_MAX;
	for (unsigned i = 0; i < work->ntasks; i++) {
		const struct dp_task *t = work->task[i];
		if (t->pending.count)
			return 0;
		le_ns_t x = le_swap_next_deadline(&t->dir->models.swap);
		if (x < next)
			next = x;
	}
	return next;
}

/* 1 when the nap ended by its timer (not by a frame or a signal). */
static int sleep_for(struct waiter *w, le_ns_t nap)
{
	struct timespec ts = {.tv_sec = (time_t)(nap / LE_NS_PER_S), .tv_nsec = (long)(nap % LE_NS_PER_S)};
	int r = ppoll(w->nfds ? w->pfd : NULL, w->nfds, &ts, NULL);
	w->naps++;
	w->woken_early += r > 0;
	return r == 0;
}

int dp_wait_lcore_loop(struct dp_lcore_work *work, const struct dp_wait_policy *pol, FILE *log)
{
	const struct dp_context *ctx = work->task[0]->ctx;
	const struct tsc_clock *clk = ctx->clock;
	struct waiter w;
	struct dp_wait_policy p = *pol;
	struct dp_spin_learner spin;
	dp_spin_init(&spin, p.spin_ns);
	waiter_init(&w, work, log);
	if (p.max_nap_ns > w.max_nap_ns)
		p.max_nap_ns = w.max_nap_ns;
	le_ns_t last_busy = tsc_clock_now(clk);
	while (!__atomic_load_n(ctx->stop, __ATOMIC_RELAXED)) {
		unsigned moved = 0;
		for (unsigned i = 0; i < work->ntasks; i++) {
			moved += dp_task_poll(work->task[i]);
			dp_task_serve_snapshot(work->task[i]);
		}
		le_ns_t now = tsc_clock_now(clk);
		if (moved) {
			last_busy = now;
			continue;
		}
		le_ns_t next = next_deadline(work);
		le_ns_t nap = next == 0 ? 0 : dp_wait_nap(&p, now, next, last_busy);
		if (nap == 0)
			continue;
		int timed_out = sleep_for(&w, nap);
		le_ns_t woke = tsc_clock_now(clk);
		w.asleep_ns += woke - now;
		if (p.spin_auto && timed_out) {
			dp_spin_observe(&spin, woke > now + nap ? woke - now - nap : 0);
			p.spin_ns = spin.spin_ns;
		}
		for (unsigned i = 0; i < work->ntasks; i++)
			dp_poll_gaps_resume(&work->task[i]->gaps, woke);
	}
	fprintf(log, "linkemud: lcore %u: --wait adaptive: %" PRIu64 " naps (%" PRIu64 " ended by a frame), "
		"%.3f s asleep\n", work->lcore_id, w.naps, w.woken_early, (double)w.asleep_ns / 1e9);
	if (p.spin_auto)
		dp_spin_report(&spin, log, "linkemud: lcore", work->lcore_id);
	else
		fprintf(log, "linkemud: lcore %u: --wait adaptive: spin %.1f us (fixed)\n", work->lcore_id,
			(double)p.spin_ns / 1e3);
	fflush(log);
	return 0;
}
