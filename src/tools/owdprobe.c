/* owdprobe: one-way delay, loss, reordering and duplicates of UDP frames.
 *
 *   owdprobe recv --bind 198.18.0.2 --port 9000 --count 100000 --samples s.owd
 *   owdprobe send --dst 198.18.0.2 --port 9000 --ip-len 46 --pps 100000 --count 100000
 *
 * Start the receiver first and wait for its "ready" line on stdout; it ends
 * when --count distinct frames arrived, after --idle seconds without one
 * (--start-timeout before the first; other runs' frames, frames out of
 * --count's range and foreign datagrams do not count), or on SIGINT/SIGTERM,
 * and prints one JSON summary line. The sender prints one
 * JSON line with the rate it really achieved (achieved_pps: the frames of
 * every send call but the last, over the time from the first call's start
 * to the last call's start; 0 when there was a single call, see
 * achieved_rate()).
 *
 * Frame: UDP payload = IP length - 28 (20 B IP header, 8 B UDP header).
 *   bytes 0..1   run id (u16, little endian): the receiver ignores other runs
 *   bytes 2..9   sequence number (u64 LE), 0, 1, 2, ...
 *   bytes 10..17 send time (u64 LE, ns of CLOCK_REALTIME)
 *   rest         zero
 * 18 bytes of header fit the smallest frame, IP length 46 (a 64-byte Ethernet
 * frame), so every size carries the same probe.
 *
 * Clock. Both ends run on one host, so they share one clock and the one-way
 * delay is simply receive time - send time. The receive time is the kernel's
 * software RX timestamp (SO_TIMESTAMPNS), taken when the frame enters the
 * receiving namespace's stack (on the test bed: inside linkemud's transmit
 * call, before any softirq or wake-up of the receiver), so the receiver's
 * scheduling does not show up as delay. Kernel RX timestamps are
 * CLOCK_REALTIME, so the sender stamps CLOCK_REALTIME too. CLOCK_REALTIME can
 * be stepped (settimeofday, NTP step); slewing changes its rate exactly as it
 * changes CLOCK_MONOTONIC's. The receiver therefore records REALTIME -
 * MONOTONIC at its start and end and reports the change: non-zero means the
 * clock was stepped during the run and the delays are invalid. Pacing uses
 * CLOCK_MONOTONIC. `--rx-clock user` stamps with clock_gettime(REALTIME)
 * after recvmmsg instead (includes the receiver's wake-up latency).
 *
 * Pacing. Frame i is due at t0 + i/rate (an absolute schedule: a late frame
 * does not push later ones back). The sender busy-waits on CLOCK_MONOTONIC
 * for the next due time, then sends every frame already due in one
 * sendmmsg (at most --batch): at moderate rates each frame goes alone and on
 * time; when the sender falls behind, the frames it owes go together. The
 * send stamp is taken just before the system call, so a frame later in a
 * batch carries the kernel's per-frame cost as extra delay (about a
 * microsecond each); --batch 1 avoids that at the cost of rate.
 *
 * Samples (--samples FILE): every frame of the run in arrival order,
 * duplicates included (flagged), either binary (default) or CSV
 * (--samples-format csv: seq,send_ns,rx_ns,delay_ns,tos,dup).
 * Binary layout, little endian:
 *   header 32 B: "LEOWD001", u32 version = 2, u32 record size = 32,
 *                u64 record count, u64 flags (bit 0: kernel RX timestamps)
 *   records:     u64 seq, i64 send_ns, i64 rx_ns (CLOCK_REALTIME ns),
 *                u8 tos (the IP TOS byte as received: DSCP and ECN),
 *                u8 flags (bit 0: a duplicate, an earlier copy arrived), 6 B zero
 *
 * Exit codes: 0 done, 1 a system call failed, 2 bad arguments.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hist.h"
#include "json.h"

#define PROG "owdprobe"
#define TOOL_PROG PROG
#include "tool_args.h"
#define IP_UDP_HDR 28
#define PROBE_HDR 18
#define MIN_IP_LEN (IP_UDP_HDR + PROBE_HDR) /* 46 */
#define MAX_IP_LEN 65535
#define MAX_BATCH 1024
#define RECV_BATCH 64
#define SAMPLES_MAGIC "LEOWD001"
#define SAMPLES_VERSION 2
#define SAMPLES_RECORD 32

/* ------------------------------------------------------------------------ */
/* helpers                                                                  */

static void usage(FILE *f)
{
	fprintf(f,
		"usage:\n"
		"  " PROG " send --dst ADDR [--port P] [--ip-len BYTES]\n"
		"           (--pps N | --bitrate N[k|M|G] | --max) (--count N | --duration SECONDS)\n"
		"           [--run-id 0..65535] [--batch 1..%d] [--spin-us US] [--cpu N] [--tos N]\n"
		"           [--sport P]\n"
		"  " PROG " recv --bind ADDR [--port P] [--count N] [--run-id N] [--idle S]\n"
		"           [--start-timeout S] [--samples FILE] [--samples-format bin|csv]\n"
		"           [--samples-max N] [--rx-clock kernel|user] [--rcvbuf BYTES] [--cpu N]\n"
		"\n"
		"  --ip-len   IP packet length, %d .. %d (46 = 64-byte Ethernet frame; above the\n"
		"             path MTU is refused); default 1500\n"
		"  --pps      frames per second; --bitrate: IP-layer bits per second\n"
		"             (ip-len x 8 x pps); --max: as fast as possible\n"
		"  --count    frames to send (send) / expected (recv; loss = count - received)\n"
		"  --spin-us  busy-wait only this long before a frame is due, sleep before that\n"
		"             (default 50; 0 = always busy-wait)\n",
		MAX_BATCH, MIN_IP_LEN, MAX_IP_LEN);
}

/* "10M", "1.5G", "64k", "2000000": SI multipliers, bits per second. */
static int parse_bitrate(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || !(v > 0))
		return -1;
	double mul = 1;
	if (*end == 'k' || *end == 'K')
		mul = 1e3, end++;
	else if (*end == 'M' || *end == 'm')
		mul = 1e6, end++;
	else if (*end == 'G' || *end == 'g')
		mul = 1e9, end++;
	if (*end == 'b' && end[1] == 'i' && end[2] == 't')
		end += 3;
	if (*end)
		return -1;
	*out = v * mul;
	return 0;
}

static int pin_cpu(long cpu)
{
	if (cpu < 0)
		return 0;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET((int)cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, PROG ": cannot pin to CPU %ld: %s\n", cpu, strerror(errno));
		return -1;
	}
	return 0;
}

static int parse_addr(const char *s, uint64_t port, struct sockaddr_in *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, s, &sa->sin_addr) == 1 ? 0 : -1;
}

static void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

static void install_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static void json_hist(FILE *f, const char *name, const struct le_hist *h)
{
	fprintf(f, "\"%s\": {\"count\": %" PRIu64 ", \"min\": %" PRIu64 ", \"mean\": %.1f, \"p50\": %" PRIu64
		   ", \"p99\": %" PRIu64 ", \"p999\": %" PRIu64 ", \"max\": %" PRIu64 "}",
		name, h->count, h->count ? h->min : 0, le_hist_mean(h), le_hist_quantile(h, 0.5),
		le_hist_quantile(h, 0.99), le_hist_quantile(h, 0.999), h->max);
}

/* ------------------------------------------------------------------------ */
/* send                                                                     */

struct send_opts {
	const char *dst, *bitrate_arg;
	uint64_t port, ip_len, count, run_id, batch, tos, sport;
	double pps, bitrate, duration;
	int max;
	long cpu;
	uint64_t spin_ns;
};

/* The rate the sender achieved, in frames per second: the frames handed to
 * the kernel before the last send call started, over the time from the
 * first call's start to the last call's start. Each call's frames thus
 * count against the time until the next call starts, which is when they
 * were really sent; the last call's frames, sent after the span ends, are
 * left out. Counting them too (the sent - 1 frames of a pacer whose every
 * call carries one frame) overstates a batched run: two calls of 64 frames
 * gave 127 frames over the span of one call, twice the real rate. For
 * single-frame calls this is the same (sent - 1) / span as before, so a
 * paced run at its schedule reports the requested rate. Ending the span at
 * the last call's end instead would overstate a paced run (2 frames at
 * 10 pps: 2 frames in 0.1 s = 20 pps). With one call there is no span
 * between call starts, so no rate: 0. */
static double achieved_rate(uint64_t frames_before_last_call, int64_t first_call_start_ns,
			    int64_t last_call_start_ns)
{
	const int64_t span_ns = last_call_start_ns - first_call_start_ns;

	if (span_ns <= 0 || frames_before_last_call == 0)
		return 0.0;
	return (double)frames_before_last_call * 1e9 / (double)span_ns;
}

static int cmd_send(int argc, char **argv)
{
	struct send_opts o = {.port = 9000, .ip_len = 1500, .batch = 64, .cpu = -1, .run_id = 0,
			      .spin_ns = 50000};
	int have_count = 0, have_duration = 0, rates = 0;

	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(a, "--max")) {
			o.max = 1;
			rates++;
			continue;
		}
		if (i + 1 >= argc)
			return usage_error("send: %s needs a value", a);
		const char *v = argv[++i];
		if (!strcmp(a, "--dst"))
			o.dst = v;
		else if (!strcmp(a, "--port")) {
			if (parse_u64(v, 1, 65535, &o.port))
				return usage_error("send: --port '%s' is not a port (1 .. 65535)", v);
		} else if (!strcmp(a, "--ip-len")) {
			if (parse_u64(v, 0, UINT64_MAX, &o.ip_len))
				return usage_error("send: --ip-len '%s' is not a number of bytes", v);
			if (o.ip_len < MIN_IP_LEN)
				return usage_error("send: --ip-len %s is below the minimum %d "
						   "(20 B IP + 8 B UDP + %d B probe header)",
						   v, MIN_IP_LEN, PROBE_HDR);
			if (o.ip_len > MAX_IP_LEN)
				return usage_error("send: --ip-len %s is above the IPv4 maximum %d", v,
						   MAX_IP_LEN);
		} else if (!strcmp(a, "--pps")) {
			if (parse_double_in(v, 1e-3, 1e9, &o.pps))
				return usage_error("send: --pps '%s' is not a rate (0.001 .. 1e9 frames/s)", v);
			rates++;
		} else if (!strcmp(a, "--bitrate")) {
			if (parse_bitrate(v, &o.bitrate) || o.bitrate > 1e12)
				return usage_error("send: --bitrate '%s' is not a bit rate (e.g. 100M, 1.5G)", v);
			o.bitrate_arg = v;
			rates++;
		} else if (!strcmp(a, "--count")) {
			if (parse_u64(v, 1, (uint64_t)1 << 40, &o.count))
				return usage_error("send: --count '%s' is out of range (1 .. 2^40)", v);
			have_count = 1;
		} else if (!strcmp(a, "--duration")) {
			if (parse_double_in(v, 1e-3, 86400, &o.duration))
				return usage_error("send: --duration '%s' is out of range (0.001 .. 86400 s)", v);
			have_duration = 1;
		} else if (!strcmp(a, "--run-id")) {
			if (parse_u64(v, 0, 65535, &o.run_id))
				return usage_error("send: --run-id '%s' is out of range (0 .. 65535)", v);
		} else if (!strcmp(a, "--batch")) {
			if (parse_u64(v, 1, MAX_BATCH, &o.batch))
				return usage_error("send: --batch '%s' is out of range (1 .. %d)", v, MAX_BATCH);
		} else if (!strcmp(a, "--spin-us")) {
			uint64_t us;
			if (parse_u64(v, 0, 1000000, &us))
				return usage_error("send: --spin-us '%s' is out of range (0 .. 1000000)", v);
			o.spin_ns = us * 1000;
		} else if (!strcmp(a, "--tos")) {
			if (parse_u64(v, 0, 255, &o.tos))
				return usage_error("send: --tos '%s' is out of range (0 .. 255)", v);
		} else if (!strcmp(a, "--sport")) {
			if (parse_u64(v, 1, 65535, &o.sport))
				return usage_error("send: --sport '%s' is not a port (1 .. 65535)", v);
		} else if (!strcmp(a, "--cpu")) {
			uint64_t c;
			if (parse_u64(v, 0, CPU_SETSIZE - 1, &c))
				return usage_error("send: --cpu '%s' is not a CPU number", v);
			o.cpu = (long)c;
		} else
			return usage_error("send: unknown option '%s'", a);
	}
	if (!o.dst)
		return usage_error("send: --dst ADDR is required");
	struct sockaddr_in dst;
	if (parse_addr(o.dst, o.port, &dst))
		return usage_error("send: --dst '%s' is not an IPv4 address", o.dst);
	if (rates != 1)
		return usage_error("send: give exactly one of --pps, --bitrate, --max (got %d)", rates);
	if (have_count == have_duration)
		return usage_error("send: give exactly one of --count, --duration");
	if (o.bitrate > 0) {
		/* The frame rate it means at this frame size, in --pps's range: far
		 * below it the interval in ns overflows the schedule's int64. */
		o.pps = o.bitrate / (8.0 * (double)o.ip_len);
		if (!(o.pps >= 1e-3 && o.pps <= 1e9))
			return usage_error("send: --bitrate '%s' at --ip-len %" PRIu64 " is %.3g frames/s, "
					   "out of range (0.001 .. 1e9 frames/s)",
					   o.bitrate_arg, o.ip_len, o.pps);
	}
	if (have_duration) {
		if (o.max)
			o.count = UINT64_MAX; /* until the duration ends */
		else {
			double c = ceil(o.duration * o.pps);
			if (c < 1 || c > (double)((uint64_t)1 << 40))
				return usage_error("send: --duration x rate = %.0f frames, out of range (1 .. 2^40)", c);
			o.count = (uint64_t)c;
		}
	}
	if (pin_cpu(o.cpu))
		return 1;
	/* Sleeps end when asked, not up to 50 us later (the default slack). */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0) {
		fprintf(stderr, PROG ": send: socket: %s\n", strerror(errno));
		return 1;
	}
	/* Never fragment: a frame above the MTU is an error, not two frames. */
	int pmtu = IP_PMTUDISC_DO, one = 1, tos = (int)o.tos;
	setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu));
	/* Report local drops (ENOBUFS) instead of counting them silently as sent. */
	setsockopt(fd, IPPROTO_IP, IP_RECVERR, &one, sizeof(one));
	if (tos)
		setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos));
	int sndbuf = 4 << 20;
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	if (o.sport) { /* a fixed source port, e.g. for a class that matches sport */
		struct sockaddr_in src = {.sin_family = AF_INET, .sin_port = htons((uint16_t)o.sport)};
		if (bind(fd, (struct sockaddr *)&src, sizeof(src))) {
			fprintf(stderr, PROG ": send: cannot bind source port %" PRIu64 ": %s\n", o.sport,
				strerror(errno));
			return 1;
		}
	}
	if (connect(fd, (struct sockaddr *)&dst, sizeof(dst))) {
		fprintf(stderr, PROG ": send: cannot reach %s:%" PRIu64 ": %s\n", o.dst, o.port, strerror(errno));
		return 1;
	}
	int mtu = 0;
	socklen_t ml = sizeof(mtu);
	if (!getsockopt(fd, IPPROTO_IP, IP_MTU, &mtu, &ml) && mtu > 0 && o.ip_len > (uint64_t)mtu) {
		fprintf(stderr,
			PROG ": send: --ip-len %" PRIu64 " exceeds the path MTU %d towards %s "
			"(jumbo frames need the interfaces' MTU raised; the af_xdp test bed carries at most 1500)\n",
			o.ip_len, mtu, o.dst);
		return 2;
	}

	const size_t payload = (size_t)o.ip_len - IP_UDP_HDR;
	const unsigned batch = (unsigned)o.batch;
	uint8_t *bufs = calloc(batch, payload);
	struct mmsghdr *msgs = calloc(batch, sizeof(*msgs));
	struct iovec *iov = calloc(batch, sizeof(*iov));
	if (!bufs || !msgs || !iov) {
		fprintf(stderr, PROG ": send: out of memory\n");
		return 1;
	}
	for (unsigned k = 0; k < batch; k++) {
		put_le16(bufs + k * payload, (uint16_t)o.run_id);
		iov[k].iov_base = bufs + k * payload;
		iov[k].iov_len = payload;
		msgs[k].msg_hdr.msg_iov = &iov[k];
		msgs[k].msg_hdr.msg_iovlen = 1;
	}
	install_signals();

	static struct le_hist late, per_call;
	le_hist_init(&late);
	le_hist_init(&per_call);
	const double interval = o.max ? 0.0 : 1e9 / o.pps;
	/* Start 1 ms from now so the first frames are not already late. */
	const int64_t t0 = clock_ns(CLOCK_MONOTONIC) + 1000000;
	const int64_t t_end = have_duration ? t0 + (int64_t)(o.duration * 1e9) : INT64_MAX;
	uint64_t seq = 0, calls = 0, enobufs = 0, eagain = 0;
	/* Where the achieved rate is measured: see achieved_rate(). */
	int64_t first_call_start = 0, last_call_start = 0;
	uint64_t frames_before_last_call = 0;
	int err = 0;
	const char *err_what = NULL;

	while (seq < o.count && !g_stop) {
		int64_t due = t0 + (int64_t)((double)seq * interval);
		int64_t now = clock_ns(CLOCK_MONOTONIC);
		if (due - now > (int64_t)o.spin_ns && o.spin_ns) {
			/* Far from due: sleep until spin_ns before it, so the
			 * kernel's softirq work and the receiver (which share this
			 * CPU on the test bed) get it; a busy-waiting sender would
			 * make them wait for a scheduler slice (milliseconds). */
			int64_t wake = due - (int64_t)o.spin_ns;
			struct timespec ts = {.tv_sec = wake / 1000000000ll, .tv_nsec = wake % 1000000000ll};
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
			now = clock_ns(CLOCK_MONOTONIC);
		}
		while (now < due) /* the last stretch: busy-wait, a sleep would overshoot */
			now = clock_ns(CLOCK_MONOTONIC);
		if (now >= t_end)
			break;
		unsigned n = 1;
		if (o.max)
			n = (unsigned)((o.count - seq) < batch ? (o.count - seq) : batch);
		else
			while (n < batch && seq + n < o.count && t0 + (int64_t)((double)(seq + n) * interval) <= now)
				n++;
		le_hist_record(&late, (uint64_t)(now - due));
		const int64_t stamp = clock_ns(CLOCK_REALTIME);
		for (unsigned k = 0; k < n; k++) {
			uint8_t *p = bufs + k * payload;
			put_le64(p + 2, seq + k);
			put_le64(p + 10, (uint64_t)stamp);
		}
		unsigned done = 0;
		while (done < n) {
			int r = sendmmsg(fd, msgs + done, n - done, 0);
			if (r > 0) {
				done += (unsigned)r;
				continue;
			}
			if (errno == ENOBUFS || errno == EAGAIN || errno == EINTR) {
				/* A local queue is full: the frame was not sent. Re-stamp
				 * and retry (the kernel frees room within microseconds). */
				if (errno == ENOBUFS)
					enobufs++;
				else if (errno == EAGAIN)
					eagain++;
				if (g_stop)
					break;
				const int64_t s2 = clock_ns(CLOCK_REALTIME);
				for (unsigned k = done; k < n; k++)
					put_le64(bufs + k * payload + 10, (uint64_t)s2);
				continue;
			}
			err = errno;
			err_what = "sendmmsg";
			break;
		}
		calls++;
		const int64_t after = clock_ns(CLOCK_MONOTONIC);
		le_hist_record(&per_call, (uint64_t)(after - now));
		if (calls == 1)
			first_call_start = now;
		last_call_start = now;
		frames_before_last_call = seq;
		seq += done;
		if (err || done < n)
			break;
	}
	const int64_t t_done = clock_ns(CLOCK_MONOTONIC);
	close(fd);

	if (err) {
		if (err == ECONNREFUSED)
			fprintf(stderr, PROG ": send: %s:%" PRIu64 " refused the frames (no receiver listening?)\n",
				o.dst, o.port);
		else if (err == EMSGSIZE)
			fprintf(stderr, PROG ": send: frames of %" PRIu64 " B exceed the path MTU\n", o.ip_len);
		else
			fprintf(stderr, PROG ": send: %s: %s\n", err_what, strerror(err));
	}
	const double span = (double)(last_call_start - first_call_start) / 1e9;
	const double achieved = achieved_rate(frames_before_last_call, first_call_start, last_call_start);
	printf("{\"tool\": \"owdprobe\", \"mode\": \"send\", \"dst\": \"%s\", \"port\": %" PRIu64
	       ", \"run_id\": %" PRIu64 ", \"ip_len\": %" PRIu64 ", \"udp_payload\": %zu, \"clock\": \"CLOCK_REALTIME\", "
	       "\"cpu\": %ld, \"batch_max\": %u, \"spin_ns\": %" PRIu64 ",\n",
	       o.dst, o.port, o.run_id, o.ip_len, payload, o.cpu, batch, o.spin_ns);
	if (o.max)
		printf(" \"requested\": {\"mode\": \"max\"},\n");
	else
		printf(" \"requested\": {\"mode\": \"paced\", \"pps\": %.3f, \"ip_bps\": %.0f},\n", o.pps,
		       o.pps * 8.0 * (double)o.ip_len);
	printf(" \"sent\": %" PRIu64 ", \"interrupted\": %s, \"duration_s\": %.6f, \"send_span_s\": %.6f, "
	       "\"achieved_pps\": %.1f, \"achieved_ip_bps\": %.0f, \"achieved_l1_bps\": %.0f,\n",
	       seq, g_stop ? "true" : "false", (double)(t_done - t0) / 1e9, span, achieved,
	       achieved * 8.0 * (double)o.ip_len, achieved * 8.0 * (double)(o.ip_len + 38));
	printf(" \"calls\": %" PRIu64 ", \"mean_batch\": %.2f, \"retries\": {\"enobufs\": %" PRIu64
	       ", \"eagain\": %" PRIu64 "}, ",
	       calls, calls ? (double)seq / (double)calls : 0.0, enobufs, eagain);
	json_hist(stdout, "lateness_ns", &late);
	printf(", ");
	json_hist(stdout, "call_ns", &per_call);
	printf(", \"error\": ");
	if (err)
		printf("\"%s: %s\"}\n", err_what, strerror(err));
	else
		printf("null}\n");
	fflush(stdout);
	return err ? 1 : 0;
}

/* ------------------------------------------------------------------------ */
/* recv                                                                     */

/* CLOCK_REALTIME - CLOCK_MONOTONIC, read so that a preemption between the
 * two reads cannot skew it: of a few (MONOTONIC, REALTIME, MONOTONIC)
 * triples, the one whose MONOTONIC reads lie closest together, REALTIME
 * against their midpoint (off by at most half their distance). A single
 * pair is normally tens of ns apart, but one split by the scheduler or a
 * stalled vCPU is off by the stall: 7.3 us in a slow spell of the test
 * VM, which the tests took for a step of the clock (their bound: 5 us). */
static int64_t realtime_offset(void)
{
	int64_t best = 0, width = INT64_MAX;

	for (int i = 0; i < 8; i++) {
		const int64_t m1 = clock_ns(CLOCK_MONOTONIC);
		const int64_t r = clock_ns(CLOCK_REALTIME);
		const int64_t m2 = clock_ns(CLOCK_MONOTONIC);

		if (m2 - m1 < width) {
			width = m2 - m1;
			best = r - (m1 + (m2 - m1) / 2);
		}
	}
	return best;
}

struct u64vec {
	uint64_t *v;
	size_t n, cap;
};

static int vec_push(struct u64vec *a, uint64_t x)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 4096;
		uint64_t *v = realloc(a->v, cap * sizeof(*v));
		if (!v)
			return -1;
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n++] = x;
	return 0;
}

/* Sparse histogram of run lengths: lengths < DENSE counted in an array,
 * longer ones kept as a list (there are few of them). */
#define DENSE 65536
struct runs {
	uint64_t dense[DENSE];
	struct u64vec longer;
	uint64_t total;
};

static int runs_add(struct runs *r, uint64_t len)
{
	r->total++;
	if (len < DENSE) {
		r->dense[len]++;
		return 0;
	}
	return vec_push(&r->longer, len);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static void json_runs(FILE *f, const char *name, struct runs *r)
{
	fprintf(f, "\"%s\": [", name);
	int first = 1;
	for (uint64_t i = 0; i < DENSE; i++)
		if (r->dense[i]) {
			fprintf(f, "%s[%" PRIu64 ", %" PRIu64 "]", first ? "" : ", ", i, r->dense[i]);
			first = 0;
		}
	qsort(r->longer.v, r->longer.n, sizeof(uint64_t), cmp_u64);
	for (size_t i = 0; i < r->longer.n;) {
		size_t j = i;
		while (j < r->longer.n && r->longer.v[j] == r->longer.v[i])
			j++;
		fprintf(f, "%s[%" PRIu64 ", %zu]", first ? "" : ", ", r->longer.v[i], j - i);
		first = 0;
		i = j;
	}
	fprintf(f, "]");
}

/* Exact quantile of a sorted sample: linear interpolation between order
 * statistics (numpy's default), so the Python side can reproduce it. */
static double quantile_sorted(const int64_t *s, size_t n, double q)
{
	if (!n)
		return 0;
	double pos = (double)(n - 1) * q;
	size_t lo = (size_t)pos;
	size_t hi = lo + 1 < n ? lo + 1 : n - 1;
	return (double)s[lo] + ((double)s[hi] - (double)s[lo]) * (pos - (double)lo);
}

/* One record of the samples file (none when sf is NULL or max is reached). */
static int write_sample(FILE *sf, int csv, uint64_t *written, uint64_t max, uint64_t seq,
			int64_t sent, int64_t rx, uint8_t tos, int dup)
{
	if (!sf || *written >= max)
		return 0;
	if (csv)
		fprintf(sf, "%" PRIu64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%u,%d\n", seq, sent, rx,
			rx - sent, tos, dup);
	else {
		uint8_t rec[SAMPLES_RECORD] = {0};
		put_le64(rec, seq);
		put_le64(rec + 8, (uint64_t)sent);
		put_le64(rec + 16, (uint64_t)rx);
		rec[24] = tos;
		rec[25] = (uint8_t)dup;
		if (fwrite(rec, 1, sizeof(rec), sf) != sizeof(rec))
			return -1;
	}
	(*written)++;
	return 0;
}

struct recv_opts {
	const char *bind, *samples, *samples_format;
	uint64_t port, count, run_id, samples_max, rcvbuf;
	int have_run_id, user_clock;
	double idle, start_timeout;
	long cpu;
};

static int cmd_recv(int argc, char **argv)
{
	struct recv_opts o = {.port = 9000, .idle = 2.0, .start_timeout = 10.0, .samples_format = "bin",
			      .samples_max = UINT64_MAX, .rcvbuf = 64 << 20, .cpu = -1};

	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		}
		if (i + 1 >= argc)
			return usage_error("recv: %s needs a value", a);
		const char *v = argv[++i];
		if (!strcmp(a, "--bind"))
			o.bind = v;
		else if (!strcmp(a, "--port")) {
			if (parse_u64(v, 1, 65535, &o.port))
				return usage_error("recv: --port '%s' is not a port (1 .. 65535)", v);
		} else if (!strcmp(a, "--count")) {
			if (parse_u64(v, 1, (uint64_t)1 << 36, &o.count))
				return usage_error("recv: --count '%s' is out of range (1 .. 2^36)", v);
		} else if (!strcmp(a, "--run-id")) {
			if (parse_u64(v, 0, 65535, &o.run_id))
				return usage_error("recv: --run-id '%s' is out of range (0 .. 65535)", v);
			o.have_run_id = 1;
		} else if (!strcmp(a, "--idle")) {
			if (parse_double_in(v, 0.01, 86400, &o.idle))
				return usage_error("recv: --idle '%s' is out of range (0.01 .. 86400 s)", v);
		} else if (!strcmp(a, "--start-timeout")) {
			if (parse_double_in(v, 0.01, 86400, &o.start_timeout))
				return usage_error("recv: --start-timeout '%s' is out of range (0.01 .. 86400 s)", v);
		} else if (!strcmp(a, "--samples"))
			o.samples = v;
		else if (!strcmp(a, "--samples-format")) {
			if (strcmp(v, "bin") && strcmp(v, "csv"))
				return usage_error("recv: --samples-format '%s' (expected bin or csv)", v);
			o.samples_format = v;
		} else if (!strcmp(a, "--samples-max")) {
			if (parse_u64(v, 0, UINT64_MAX, &o.samples_max))
				return usage_error("recv: --samples-max '%s' is not a count", v);
		} else if (!strcmp(a, "--rx-clock")) {
			if (!strcmp(v, "kernel"))
				o.user_clock = 0;
			else if (!strcmp(v, "user"))
				o.user_clock = 1;
			else
				return usage_error("recv: --rx-clock '%s' (expected kernel or user)", v);
		} else if (!strcmp(a, "--rcvbuf")) {
			if (parse_u64(v, 4096, (uint64_t)1 << 30, &o.rcvbuf))
				return usage_error("recv: --rcvbuf '%s' is out of range (4096 .. 2^30)", v);
		} else if (!strcmp(a, "--cpu")) {
			uint64_t c;
			if (parse_u64(v, 0, CPU_SETSIZE - 1, &c))
				return usage_error("recv: --cpu '%s' is not a CPU number", v);
			o.cpu = (long)c;
		} else
			return usage_error("recv: unknown option '%s'", a);
	}
	if (!o.bind)
		return usage_error("recv: --bind ADDR is required");
	struct sockaddr_in sa;
	if (parse_addr(o.bind, o.port, &sa))
		return usage_error("recv: --bind '%s' is not an IPv4 address", o.bind);
	if (pin_cpu(o.cpu))
		return 1;

	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0) {
		fprintf(stderr, PROG ": recv: socket: %s\n", strerror(errno));
		return 1;
	}
	/* A large buffer: frames waiting while the receiver is off the CPU must
	 * not be dropped in the socket (that would look like link loss). FORCE
	 * ignores rmem_max (root). SO_RXQ_OVFL reports the drops that happen. */
	int rb = (int)o.rcvbuf, one = 1;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rb, sizeof(rb)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rb, sizeof(rb));
	setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one));
	setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &one, sizeof(one));
	int kernel_ts = 0;
	if (!o.user_clock && !setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)))
		kernel_ts = 1;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr, PROG ": recv: cannot bind %s:%" PRIu64 ": %s\n", o.bind, o.port, strerror(errno));
		return 1;
	}

	FILE *sf = NULL;
	int csv = !strcmp(o.samples_format, "csv");
	if (o.samples) {
		sf = fopen(o.samples, "wb");
		if (!sf) {
			fprintf(stderr, PROG ": recv: cannot write samples to %s: %s\n", o.samples, strerror(errno));
			return 1;
		}
		setvbuf(sf, NULL, _IOFBF, 1 << 20);
		if (csv)
			fprintf(sf, "seq,send_ns,rx_ns,delay_ns,tos,dup\n");
		else {
			uint8_t hdr[32] = {0};
			memcpy(hdr, SAMPLES_MAGIC, 8);
			hdr[8] = SAMPLES_VERSION;
			hdr[12] = SAMPLES_RECORD;
			hdr[24] = (uint8_t)kernel_ts;
			fwrite(hdr, 1, sizeof(hdr), sf);
		}
	}

	/* Seen bitmap, grown as sequence numbers arrive. */
	uint64_t bm_bits = o.count ? o.count : (1u << 20);
	uint8_t *seen = calloc((bm_bits + 7) / 8, 1);
	struct u64vec delays = {0};
	static struct le_hist wake;
	le_hist_init(&wake);
	if (!seen) {
		fprintf(stderr, PROG ": recv: out of memory\n");
		return 1;
	}
	static uint8_t bufs[RECV_BATCH][65536];
	static char ctrl[RECV_BATCH][256];
	struct mmsghdr msgs[RECV_BATCH];
	struct iovec iov[RECV_BATCH];

	uint64_t received = 0, duplicates = 0, reordered = 0, foreign = 0, out_of_range = 0, max_reorder = 0;
	uint64_t written = 0, no_kernel_ts = 0, socket_drops = 0, neg_delay = 0;
	int64_t max_seq = -1;
	int64_t first_rx = 0, last_rx = 0;
	int err = 0;
	const int64_t off_start = realtime_offset();

	install_signals();
	printf("ready %s:%" PRIu64 "\n", o.bind, o.port);
	fflush(stdout);

	/* The start timeout and the idle time run from the last frame of this
	 * run (run id, sequence number in range), or from the start: stray
	 * traffic (another run, a short or foreign datagram) must not keep
	 * the receiver waiting for frames that will never come. */
	int64_t last_activity = clock_ns(CLOCK_MONOTONIC);
	int got_any = 0;
	while (!g_stop && !(o.count && received >= o.count)) {
		double limit_s = got_any ? o.idle : o.start_timeout;
		int64_t left_ns = last_activity + (int64_t)(limit_s * 1e9) - clock_ns(CLOCK_MONOTONIC);
		if (left_ns <= 0)
			break;
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		int pr = poll(&pfd, 1, (int)(left_ns / 1000000 + 1 < 200 ? left_ns / 1000000 + 1 : 200));
		if (pr < 0) {
			if (errno == EINTR)
				continue;
			err = errno;
			break;
		}
		if (pr == 0)
			continue;
		for (int k = 0; k < RECV_BATCH; k++) {
			iov[k].iov_base = bufs[k];
			iov[k].iov_len = sizeof(bufs[k]);
			memset(&msgs[k], 0, sizeof(msgs[k]));
			msgs[k].msg_hdr.msg_iov = &iov[k];
			msgs[k].msg_hdr.msg_iovlen = 1;
			msgs[k].msg_hdr.msg_control = ctrl[k];
			msgs[k].msg_hdr.msg_controllen = sizeof(ctrl[k]);
		}
		int n = recvmmsg(fd, msgs, RECV_BATCH, MSG_DONTWAIT, NULL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			err = errno;
			break;
		}
		const int64_t user_now = clock_ns(CLOCK_REALTIME);
		const int64_t batch_read_at = clock_ns(CLOCK_MONOTONIC);
		for (int k = 0; k < n; k++) {
			const uint8_t *p = bufs[k];
			int64_t rx = user_now, kts = 0;
			uint8_t tos = 0;
			for (struct cmsghdr *c = CMSG_FIRSTHDR(&msgs[k].msg_hdr); c;
			     c = CMSG_NXTHDR(&msgs[k].msg_hdr, c)) {
				if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS) {
					memcpy(&tos, CMSG_DATA(c), 1);
					continue;
				}
				if (c->cmsg_level != SOL_SOCKET)
					continue;
				if (c->cmsg_type == SCM_TIMESTAMPNS) {
					struct timespec ts;
					memcpy(&ts, CMSG_DATA(c), sizeof(ts));
					kts = (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
				} else if (c->cmsg_type == SO_RXQ_OVFL) {
					uint32_t d;
					memcpy(&d, CMSG_DATA(c), sizeof(d));
					socket_drops = d; /* cumulative */
				}
			}
			if (kernel_ts) {
				if (kts) {
					rx = kts;
					le_hist_record(&wake, (uint64_t)(user_now > kts ? user_now - kts : 0));
				} else
					no_kernel_ts++;
			}
			if (msgs[k].msg_len < PROBE_HDR ||
			    (o.have_run_id && get_le16(p) != (uint16_t)o.run_id)) {
				foreign++;
				continue;
			}
			if (!o.have_run_id) { /* lock on to the first run heard */
				o.run_id = get_le16(p);
				o.have_run_id = 1;
			}
			const uint64_t seq = get_le64(p + 2);
			const int64_t sent = (int64_t)get_le64(p + 10);
			if ((o.count && seq >= o.count) || seq >= ((uint64_t)1 << 36)) {
				out_of_range++;
				continue;
			}
			last_activity = batch_read_at; /* a frame of this run, new or a copy */
			if (seq >= bm_bits) {
				uint64_t nb = bm_bits;
				while (nb <= seq)
					nb *= 2;
				uint8_t *s2 = realloc(seen, (nb + 7) / 8);
				if (!s2) {
					err = ENOMEM;
					break;
				}
				memset(s2 + (bm_bits + 7) / 8, 0, (nb + 7) / 8 - (bm_bits + 7) / 8);
				seen = s2;
				bm_bits = nb;
			}
			if (seen[seq >> 3] & (1u << (seq & 7))) {
				duplicates++;
				if (write_sample(sf, csv, &written, o.samples_max, seq, sent, rx, tos, 1))
					err = EIO;
				continue;
			}
			seen[seq >> 3] |= (uint8_t)(1u << (seq & 7));
			received++;
			if ((int64_t)seq < max_seq) {
				reordered++;
				if ((uint64_t)max_seq - seq > max_reorder)
					max_reorder = (uint64_t)max_seq - seq;
			} else
				max_seq = (int64_t)seq;
			const int64_t d = rx - sent;
			if (d < 0)
				neg_delay++;
			if (vec_push(&delays, (uint64_t)d)) {
				err = ENOMEM;
				break;
			}
			if (!got_any)
				first_rx = rx;
			got_any = 1;
			last_rx = rx;
			if (write_sample(sf, csv, &written, o.samples_max, seq, sent, rx, tos, 0))
				err = EIO;
		}
		if (err)
			break;
	}
	const int64_t off_end = realtime_offset();
	close(fd);
	if (sf) {
		if (!csv) {
			uint8_t cnt[8];
			put_le64(cnt, written);
			fseek(sf, 16, SEEK_SET);
			fwrite(cnt, 1, 8, sf);
		}
		if (fclose(sf)) {
			fprintf(stderr, PROG ": recv: writing %s: %s\n", o.samples, strerror(errno));
			err = err ? err : EIO;
		}
	}

	/* Loss: the frames of 0 .. expected-1 never seen; runs of lost and of
	 * received frames in sequence order. The first and the last run are cut
	 * by the start and end of the run (censored), so they are left out of
	 * the run-length histograms. */
	uint64_t expected = o.count ? o.count : (uint64_t)(max_seq + 1);
	static struct runs loss_runs, good_runs;
	uint64_t nruns = 0, cur_len = 0;
	int cur_state = -1;
	for (uint64_t s = 0; s < expected; s++) {
		int st = (seen[s >> 3] >> (s & 7)) & 1;
		if (st == cur_state) {
			cur_len++;
			continue;
		}
		if (cur_state >= 0 && nruns > 0)
			runs_add(cur_state ? &good_runs : &loss_runs, cur_len);
		if (cur_state >= 0)
			nruns++;
		cur_state = st;
		cur_len = 1;
	}
	/* the final run (cur_state, cur_len) is censored: dropped */
	uint64_t lost = expected >= received ? expected - received : 0;

	int64_t *sd = (int64_t *)delays.v;
	size_t nd = delays.n;
	double mean = 0, m2 = 0;
	for (size_t i = 0; i < nd; i++) { /* Welford */
		double x = (double)sd[i], dlt = x - mean;
		mean += dlt / (double)(i + 1);
		m2 += dlt * (x - mean);
	}
	double sdev = nd > 1 ? sqrt(m2 / (double)(nd - 1)) : 0.0;
	qsort(sd, nd, sizeof(int64_t), cmp_i64);

	printf("{\"tool\": \"owdprobe\", \"mode\": \"recv\", \"bind\": \"%s\", \"port\": %" PRIu64
	       ", \"run_id\": %" PRIu64 ", \"clock\": \"CLOCK_REALTIME\", \"rx_timestamp\": \"%s\",\n",
	       o.bind, o.port, o.run_id,
	       kernel_ts ? "kernel (SO_TIMESTAMPNS)" : "user (clock_gettime after recvmmsg)");
	printf(" \"expected\": %" PRIu64 ", \"expected_from\": \"%s\", \"received\": %" PRIu64 ", \"lost\": %" PRIu64
	       ", \"loss_rate\": %.10g, \"duplicates\": %" PRIu64 ", \"reordered\": %" PRIu64
	       ", \"max_reorder_distance\": %" PRIu64 ", \"foreign\": %" PRIu64 ", \"out_of_range\": %" PRIu64
	       ", \"socket_drops\": %" PRIu64 ", \"no_kernel_timestamp\": %" PRIu64 ", \"negative_delays\": %" PRIu64
	       ",\n",
	       expected, o.count ? "count" : "max_seq", received, lost, expected ? (double)lost / (double)expected : 0.0,
	       duplicates, reordered, max_reorder, foreign, out_of_range, socket_drops, no_kernel_ts, neg_delay);
	const double span = (double)(last_rx - first_rx) / 1e9;
	printf(" \"rx_span_s\": %.6f, \"rx_pps\": %.1f, \"clock_step_ns\": %" PRId64 ",\n", span,
	       received > 1 && span > 0 ? (double)(received - 1) / span : 0.0, off_end - off_start);
	printf(" \"delay_ns\": {\"count\": %zu, \"min\": %" PRId64 ", \"max\": %" PRId64
	       ", \"mean\": %.3f, \"sd\": %.3f, \"p50\": %.1f, \"p90\": %.1f, \"p99\": %.1f, \"p999\": %.1f, "
	       "\"p9999\": %.1f},\n",
	       nd, nd ? sd[0] : 0, nd ? sd[nd - 1] : 0, mean, sdev, quantile_sorted(sd, nd, 0.5),
	       quantile_sorted(sd, nd, 0.9), quantile_sorted(sd, nd, 0.99), quantile_sorted(sd, nd, 0.999),
	       quantile_sorted(sd, nd, 0.9999));
	printf(" ");
	json_hist(stdout, "rx_wakeup_ns", &wake);
	printf(",\n \"samples\": ");
	if (o.samples) {
		printf("{\"file\": ");
		le_json_string(stdout, o.samples);
		printf(", \"format\": \"%s\", \"written\": %" PRIu64 "}", o.samples_format, written);
	} else
		printf("null");
	printf(",\n ");
	json_runs(stdout, "loss_runs", &loss_runs);
	printf(",\n ");
	json_runs(stdout, "good_runs", &good_runs);
	printf(",\n \"error\": ");
	if (err)
		printf("\"%s\"}\n", strerror(err));
	else
		printf("null}\n");
	fflush(stdout);
	if (err)
		fprintf(stderr, PROG ": recv: %s\n", strerror(err));
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "send"))
		return cmd_send(argc - 2, argv + 2);
	if (!strcmp(argv[1], "recv"))
		return cmd_recv(argc - 2, argv + 2);
	return usage_error("unknown mode '%s' (expected send or recv)", argv[1]);
}
