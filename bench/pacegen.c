/* pacegen: a paced frame source for the forwarding benchmark.
 *
 * net_null offers frames as fast as they are polled, so a program that
 * forwards from it runs at overload and its frames wait. pacegen offers
 * them at a set rate instead, over two DPDK ports (memif servers, to which
 * linkemud or testpmd attach as clients), both directions: half the rate
 * into each port, bursts of --burst 64-byte UDP frames sent on a TSC
 * schedule (burst k of a port at t0 + k * burst / (rate / 2); a late burst
 * is sent at once, the schedule does not slip). What comes back on either
 * port is counted and freed. Each frame carries the TSC of its burst, so
 * pacegen also measures the one-way time through the program under test
 * (ports included).
 *
 * It reports, as one JSON line on stdout at exit:
 *  - what it offered: frames sent, frames the port refused (its ring was
 *    full: the program under test did not keep up), the rate achieved;
 *  - the source's own precision: each burst's lateness against its
 *    schedule (p50, p99, p99.9, max), so that an emulation error is not
 *    confused with the source's;
 *  - what came back, and the one-way time's quantiles.
 *
 * Phases: wait for both ports' links (the client attached), --warmup
 * seconds of paced traffic (not counted), a line "pacegen: measuring" on
 * stdout, --seconds of paced traffic (counted), a line "pacegen: done",
 * then it only drains the ports for --drain seconds (default 0.1: frames
 * still held by a delay line come back and are counted), prints the JSON,
 * stops polling (the clients may leave now) and exits on SIGINT/SIGTERM.
 *
 *   pacegen -l 0 --in-memory --no-pci \
 *     --vdev=net_memif0,role=server,socket=/tmp/pg.0.sock \
 *     --vdev=net_memif1,role=server,socket=/tmp/pg.1.sock \
 *     -- --rate 10e6 --seconds 3 --warmup 0.5
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_pause.h>

#define TOOL_PROG "pacegen"
#include "bench_args.h"
#include "dpdk_kit.h"
#include "pace_hist.h"

#define NPORTS 2
#define FRAME_LEN 64
#define STAMP_OFF 42 /* UDP payload: the burst's TSC */
#define RX_BURST 64

static struct hist lateness, oneway;

struct port {
	uint16_t id;
	uint64_t k;        /* bursts sent since t0 */
	uint64_t tx, refused, rx;           /* since the start */
	uint64_t tx0, refused0, rx0;        /* at the start of the measured window */
	uint8_t tmpl[FRAME_LEN];
};

static void build_frame(uint8_t *f, int dir)
{
	memset(f, 0, FRAME_LEN);
	/* Ethernet: locally administered MACs. */
	const uint8_t a[6] = {0x02, 0, 0, 0, 0, 0x01}, b[6] = {0x02, 0, 0, 0, 0, 0x02};
	memcpy(f, dir ? a : b, 6);
	memcpy(f + 6, dir ? b : a, 6);
	f[12] = 0x08;
	f[13] = 0x00;
	/* IPv4 198.18.0.1 <-> 198.18.0.2, UDP 5000 -> 5001 (no class rule of
	 * the benchmark matches it: every rule is tested). */
	uint8_t *ip = f + 14;
	ip[0] = 0x45;
	uint16_t tot = FRAME_LEN - 14;
	ip[2] = (uint8_t)(tot >> 8);
	ip[3] = (uint8_t)tot;
	ip[8] = 64;
	ip[9] = 17;
	uint8_t s[4] = {198, 18, 0, (uint8_t)(dir ? 2 : 1)}, d[4] = {198, 18, 0, (uint8_t)(dir ? 1 : 2)};
	memcpy(ip + 12, s, 4);
	memcpy(ip + 16, d, 4);
	uint32_t sum = 0;
	for (int i = 0; i < 20; i += 2)
		sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	sum = ~sum & 0xffff;
	ip[10] = (uint8_t)(sum >> 8);
	ip[11] = (uint8_t)sum;
	uint8_t *udp = ip + 20;
	udp[0] = 5000 >> 8;
	udp[1] = 5000 & 0xff;
	udp[2] = 5001 >> 8;
	udp[3] = 5001 & 0xff;
	uint16_t ul = tot - 20;
	udp[4] = (uint8_t)(ul >> 8);
	udp[5] = (uint8_t)ul;
}

static void drain(struct port *ports, uint64_t hz, int count)
{
	struct rte_mbuf *m[RX_BURST];
	uint64_t now = rte_rdtsc();
	for (int p = 0; p < NPORTS; p++) {
		uint16_t n = rte_eth_rx_burst(ports[p].id, 0, m, RX_BURST);
		if (!n)
			continue;
		ports[p].rx += n;
		if (count)
			for (uint16_t i = 0; i < n; i++) {
				uint64_t st;
				memcpy(&st, rte_pktmbuf_mtod(m[i], uint8_t *) + STAMP_OFF, 8);
				if (m[i]->pkt_len >= STAMP_OFF + 8 && st && st <= now)
					hist_add(&oneway, (now - st) * 1000000000ull / hz);
			}
		rte_pktmbuf_free_bulk(m, n);
	}
}

static void usage(FILE *f)
{
	fprintf(f, "usage: pacegen EAL-ARGS -- [--rate PPS] [--seconds S] [--warmup S] [--drain S] [--burst N]\n"
		   "  --rate     frames/s over both ports, 1 .. 1e9 (default 1e6)\n"
		   "  --seconds  measured traffic, 0.001 .. 86400 (default 3)\n"
		   "  --warmup   traffic before it, 0 .. 3600 (default 0.5)\n"
		   "  --drain    what comes back after it is counted for, 0 .. 3600 (default 0.1)\n"
		   "  --burst    frames a burst, 1 .. 256 (default 32)\n");
}

int main(int argc, char **argv)
{
	double rate = 1e6, seconds = 3, warmup = 0.5, drain_s = 0.1;
	unsigned burst = 32;
	const struct {
		const char *name;
		double *v, min, max;
		const char *what;
	} opts[] = {
		{"--rate", &rate, 1, 1e9, "frames/s, 1 .. 1e9"},
		{"--seconds", &seconds, 0.001, 86400, "seconds, 0.001 .. 86400"},
		{"--warmup", &warmup, 0, 3600, "seconds, 0 .. 3600"},
		{"--drain", &drain_s, 0, 3600, "seconds, 0 .. 3600"},
	};
	/* Read before EAL starts. atof took "10M" for 10 frames/s, and a
	 * negative --seconds went through an undefined cast into the TSC. */
	for (int i = bench_own_args(argc, argv); i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		}
		unsigned o = 0;
		while (o < sizeof(opts) / sizeof(opts[0]) && strcmp(a, opts[o].name))
			o++;
		if (o == sizeof(opts) / sizeof(opts[0]) && strcmp(a, "--burst"))
			return usage_error("unknown argument '%s'", a);
		if (i + 1 >= argc)
			return usage_error("%s needs a value", a);
		const char *v = argv[++i];
		if (o < sizeof(opts) / sizeof(opts[0])) {
			if (parse_double_in(v, opts[o].min, opts[o].max, opts[o].v))
				return usage_error("%s '%s': %s", a, v, opts[o].what);
		} else {
			uint64_t b;
			if (parse_u64(v, 1, 256, &b))
				return usage_error("--burst '%s': frames a burst, 1 .. 256", v);
			burst = (unsigned)b;
		}
	}
	int n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "pacegen: EAL init failed\n");
		return 1;
	}
	bench_catch_stop();
	if (rte_eth_dev_count_avail() != NPORTS) {
		fprintf(stderr, "pacegen: needs exactly 2 ports\n");
		return 2;
	}
	struct rte_mempool *pool = rte_pktmbuf_pool_create("pacegen", 16383, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
	if (!pool) {
		fprintf(stderr, "pacegen: no mbuf pool\n");
		return 1;
	}
	struct port ports[NPORTS];
	uint16_t pid, k = 0;
	RTE_ETH_FOREACH_DEV(pid)
	{
		memset(&ports[k], 0, sizeof(ports[k]));
		ports[k].id = pid;
		build_frame(ports[k].tmpl, k);
		if (bench_port_init(pid, pool)) {
			fprintf(stderr, "pacegen: port %u setup failed\n", pid);
			return 1;
		}
		k++;
	}
	uint64_t hz = rte_get_tsc_hz();
	printf("pacegen: waiting for the clients\n");
	fflush(stdout);
	for (;;) {
		int up = 0;
		for (int p = 0; p < NPORTS; p++) {
			struct rte_eth_link l;
			if (rte_eth_link_get_nowait(ports[p].id, &l) == 0 && l.link_status)
				up++;
		}
		if (up == NPORTS)
			break;
		if (bench_stop)
			return 3;
		rte_delay_ms(1);
	}
	printf("pacegen: linked\n");
	fflush(stdout);

	/* Per port: half the rate; one burst every `interval` cycles. */
	double interval = (double)burst * (double)hz / (rate / NPORTS);
	uint64_t t0 = rte_rdtsc() + hz / 1000;
	uint64_t t_measure = t0 + (uint64_t)(warmup * (double)hz);
	uint64_t t_end = t_measure + (uint64_t)(seconds * (double)hz);
	int measuring = 0;
	uint64_t measure_start_tsc = 0;
	struct rte_mbuf *m[256];
	for (;;) {
		uint64_t now = rte_rdtsc();
		if (!measuring && now >= t_measure) {
			measuring = 1;
			for (int p = 0; p < NPORTS; p++) {
				ports[p].tx0 = ports[p].tx;
				ports[p].refused0 = ports[p].refused;
				ports[p].rx0 = ports[p].rx;
			}
			memset(&lateness, 0, sizeof(lateness));
			memset(&oneway, 0, sizeof(oneway));
			measure_start_tsc = now;
			printf("pacegen: measuring\n");
			fflush(stdout);
		}
		if (now >= t_end || bench_stop)
			break;
		for (int p = 0; p < NPORTS; p++) {
			struct port *pt = &ports[p];
			uint64_t due = t0 + (uint64_t)((double)pt->k * interval);
			if (now < due)
				continue;
			if (rte_pktmbuf_alloc_bulk(pool, m, burst) != 0) {
				pt->refused += burst; /* counted as not offered: should not happen */
				pt->k++;
				continue;
			}
			uint64_t stamp = rte_rdtsc();
			for (unsigned i = 0; i < burst; i++) {
				uint8_t *d = (uint8_t *)rte_pktmbuf_append(m[i], FRAME_LEN);
				memcpy(d, pt->tmpl, FRAME_LEN);
				memcpy(d + STAMP_OFF, &stamp, 8);
			}
			uint16_t sent = rte_eth_tx_burst(pt->id, 0, m, (uint16_t)burst);
			if (sent < burst)
				rte_pktmbuf_free_bulk(&m[sent], burst - sent);
			hist_add(&lateness, (stamp - due) * 1000000000ull / hz);
			pt->tx += sent;
			pt->refused += burst - sent;
			pt->k++;
		}
		drain(ports, hz, measuring);
	}
	uint64_t measured_cycles = rte_rdtsc() - measure_start_tsc;
	uint64_t tx = 0, refused = 0, rx_measured = 0;
	for (int p = 0; p < NPORTS; p++) {
		tx += ports[p].tx - ports[p].tx0;
		refused += ports[p].refused - ports[p].refused0;
		rx_measured += ports[p].rx - ports[p].rx0;
	}
	printf("pacegen: done\n");
	fflush(stdout);
	/* Frames still held come back: count them for --drain seconds. */
	uint64_t t_drained = rte_rdtsc() + (uint64_t)(drain_s * (double)hz);
	while (!bench_stop && rte_rdtsc() < t_drained)
		drain(ports, hz, 1);
	uint64_t rx_all = 0, tx_all = 0, refused_all = 0, rx_since = 0;
	for (int p = 0; p < NPORTS; p++) {
		rx_since += ports[p].rx - ports[p].rx0;
		rx_all += ports[p].rx;
		tx_all += ports[p].tx;
		refused_all += ports[p].refused;
	}
	double secs = (double)measured_cycles / (double)hz;
	printf("{\"rate_asked\": %.0f, \"burst\": %u, \"seconds\": %.3f, \"tx\": %" PRIu64 ", \"refused\": %" PRIu64
	       ", \"offered_pps\": %.0f, \"sent_pps\": %.0f, \"rx_in_window\": %" PRIu64
	       ", \"tx_all\": %" PRIu64 ", \"refused_all\": %" PRIu64 ", \"rx_all\": %" PRIu64 ", \"rx_since_window\": %" PRIu64 ", ",
	       rate, burst, secs, tx, refused, (double)(tx + refused) / secs, (double)tx / secs, rx_measured,
	       tx_all, refused_all, rx_all, rx_since);
	hist_json("burst_lateness_ns", &lateness);
	printf(", ");
	hist_json("oneway_ns", &oneway);
	printf(", \"ports\": [");
	for (int p = 0; p < NPORTS; p++)
		printf("%s{\"tx\": %" PRIu64 ", \"refused\": %" PRIu64 ", \"rx\": %" PRIu64 "}", p ? ", " : "",
		       ports[p].tx, ports[p].refused, ports[p].rx);
	printf("]}\n");
	fflush(stdout);
	/* No more polling: the client may now go (a memif port polled while
	 * its peer disconnects can touch memory the control thread unmaps).
	 * Wait for the signal before closing the ports. */
	while (!bench_stop)
		rte_delay_us_sleep(10000);
	for (int p = 0; p < NPORTS; p++) {
		rte_eth_dev_stop(ports[p].id);
		rte_eth_dev_close(ports[p].id);
	}
	rte_eal_cleanup();
	return 0;
}
