/* ttcp: memory-to-memory TCP throughput, after the long-fat-pipe study's
 * rttcp (python/linkemu/lab/published.py, LFP_SOURCE): one stream,
 * fixed-size writes, a window to enforce, and the sender's TCP_INFO
 * sampled over time.
 *
 *   ttcp recv --bind 198.18.0.2 [--port 5001] [--window 64k]
 *   ttcp send --dst 198.18.0.2 [--port 5001] [--len 4k] [--count 20000 | --seconds S]
 *             [--window 64k] [--cc reno] [--mss 1448] [--samples F] [--sample-ms 5]
 *
 * Start the receiver first and wait for its "ready" line on stdout. Both ends
 * print one summary (text, or one JSON line with --json): bytes, real
 * seconds, Mbit/s, CPU seconds, Mbit per CPU second, I/O calls and calls/s.
 *
 * Timing. The sender's clock starts when connect() returns and stops when the
 * receiver has closed its side, i.e. after every byte was delivered and read
 * (the sender shuts down its side after the last write, the receiver reads to
 * EOF and closes). rttcp stopped at its last write; on Linux the send buffer
 * can hold megabytes, so that would report the speed of filling a buffer.
 * The receiver times from accept() to EOF.
 *
 * Window. --window W enforces a window of W bytes on the data the sender may
 * have unacknowledged, by what the receiver advertises. Measured on Linux
 * 6.18 with tcpi_snd_wnd on the sender (docs/lab.md, "Enforcing a window"):
 * - TCP_WINDOW_CLAMP alone (--window-mode clamp-only) does NOT hold. The
 *   receive-buffer autotuning (tcp_rcv_space_adjust) raises window_clamp
 *   with sk_rcvbuf, and since Linux 6.8 tcp_measure_rcv_mss resets it to
 *   tcp_win_from_space(sk_rcvbuf) whenever its skb truesize ratio changes.
 *   64k gave an advertised window of 131,070 B (the 16-bit field at the
 *   window scale chosen from the clamp).
 * - SO_RCVBUF = W alone (--window-mode rcvbuf) locks the buffer (no
 *   autotuning), but the kernel doubles it and advertises the share its
 *   truesize ratio allows: 64k gave 80,480 B, 32k gave 39,096 B.
 * - The default, --window-mode clamp, does both on the listening socket
 *   (accepted sockets inherit them, so the SYN-ACK obeys): SO_RCVBUFFORCE
 *   = W (locked, so no autotuning; about 1.2 W of window at the ratios
 *   above) and TCP_WINDOW_CLAMP = W, which the receiver re-asserts after
 *   every read in which the kernel has reset it (once per connection, at
 *   the first data). The window is then W rounded down to the window-scale
 *   unit, and at most the ~1.2 W of the buffer in the moment between the
 *   reset and that read. Measured (tcpi_snd_wnd max / W): 16k 1.15,
 *   32k 0.97, 64k 1.03, 100k 1.16, 200k 1.00. A buffer of 4 W instead let
 *   the reset open the window to about 2 W (32k gave 60,816 B).
 * - both: clamp, plus a sender SO_SNDBUF of 2 W (rttcp's sockbufsize).
 *
 * Samples (--samples FILE, sender): CSV, one line every --sample-ms of the
 * sender's tcp_info from the start (the first read before any write, the
 * rest by a second thread):
 *   t_us,cwnd,ssthresh,mss,unacked,in_flight_bytes,rtt_us,rttvar_us,
 *   retransmits,total_retrans,lost,delivery_rate_bps,bytes_sent,
 *   bytes_retrans,bytes_acked,snd_wnd,ca_state
 * cwnd, ssthresh and unacked are in segments as the kernel keeps them;
 * in_flight_bytes = bytes_sent - bytes_retrans - (bytes_acked - 1), the
 * distance between the highest sequence number sent and the cumulative ACK
 * (bytes_acked counts the SYN as one byte, and the FIN at the end).
 *
 * Exit codes: 0 done, 1 a system call failed, 2 bad arguments.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <linux/tcp.h> /* the kernel's full struct tcp_info, not glibc's older copy */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PROG "ttcp"
#define TOOL_PROG PROG
#include "tool_args.h"
#define MAX_LEN (16u << 20)
#define MAX_WINDOW (1u << 30)
#define CC_NAME_MAX 16 /* TCP_CA_NAME_MAX */

enum window_mode { WIN_CLAMP, WIN_CLAMP_ONLY, WIN_RCVBUF, WIN_BOTH };
static const char *const window_mode_names[] = {"clamp", "clamp-only", "rcvbuf", "both"};
/* Receive buffer per byte of window in clamp mode (see the top). */
#define CLAMP_RCVBUF_FACTOR 1


struct opts {
	int sender;
	const char *addr;
	uint64_t port;
	uint64_t len;
	uint64_t count;
	double seconds;           /* > 0: send for this long instead of --count */
	uint64_t window;          /* 0: the kernel's own */
	enum window_mode wmode;
	const char *cc;
	uint64_t mss;             /* 0: the kernel's own */
	const char *samples;
	double sample_ms;
	double timeout;           /* recv: give up waiting for a connection */
	int json;
	int nodelay;              /* send: TCP_NODELAY (no Nagle) */
	int quickack;             /* recv: TCP_QUICKACK after every read */
};

/* ------------------------------------------------------------------------ */
/* helpers                                                                  */

static void usage(FILE *f)
{
	fprintf(f,
		"usage:\n"
		"  " PROG " recv --bind ADDR [--port P] [--window SIZE] [--window-mode M]\n"
		"           [--mss N] [--timeout S] [--quickack] [--json]\n"
		"  " PROG " send --dst ADDR [--port P] [--len SIZE] (--count N | --seconds S)\n"
		"           [--window SIZE] [--window-mode M] [--cc NAME] [--mss N]\n"
		"           [--samples FILE] [--sample-ms MS] [--nodelay] [--json]\n"
		"\n"
		"  SIZE       bytes, with k/K = 1024, m/M = 1048576 (a trailing B is allowed)\n"
		"  --len      bytes per write (default 4k, the study's ~4 KB)\n"
		"  --count    writes (default 20000); --seconds sends for a time instead\n"
		"  --window   window to enforce (default: the kernel's autotuning)\n"
		"  --window-mode clamp (default: receiver TCP_WINDOW_CLAMP + locked SO_RCVBUF),\n"
		"             clamp-only, rcvbuf (SO_RCVBUF = SIZE), both (clamp + sender SO_SNDBUF)\n"
		"  --cc       congestion control (TCP_CONGESTION) of the sender\n"
		"  --mss      TCP_MAXSEG, 88 .. 65495\n"
		"  --samples  write the sender's TCP_INFO every --sample-ms (default 5) as CSV\n"
		"  --timeout  recv: seconds to wait for the connection (default 60)\n"
		"  --nodelay  send: TCP_NODELAY (Nagle off: the part of a window that is not a\n"
		"             whole segment goes at once, not after the rest is acknowledged)\n"
		"  --quickack recv: TCP_QUICKACK after every read (no delayed ACKs)\n");
}

static int sys_error(const char *what)
{
	fprintf(stderr, PROG ": %s: %s\n", what, strerror(errno));
	return 1;
}

static double cpu_seconds(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* "4096", "4k", "520KB", "1M": binary multiples, as socket buffer sizes are
 * quoted (the study's 4 KB window is BSD's 4,096 bytes). */
static int parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	uint64_t mul = 1;
	if (*end == 'k' || *end == 'K')
		mul = 1024, end++;
	else if (*end == 'm' || *end == 'M')
		mul = 1024 * 1024, end++;
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end || v > max / mul || v * mul < min || v * mul > max)
		return -1;
	*out = v * mul;
	return 0;
}

static int set_int(int fd, int level, int name, int v, const char *what)
{
	if (setsockopt(fd, level, name, &v, sizeof(v))) {
		fprintf(stderr, PROG ": %s = %d: %s\n", what, v, strerror(errno));
		return -1;
	}
	return 0;
}

static int get_int(int fd, int level, int name)
{
	int v = -1;
	socklen_t l = sizeof(v);
	if (getsockopt(fd, level, name, &v, &l))
		return -1;
	return v;
}

/* The list the kernel offers, for an error message that says what exists. */
static void print_available_cc(void)
{
	char buf[512] = "";
	FILE *f = fopen("/proc/sys/net/ipv4/tcp_available_congestion_control", "r");
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = 0;
	fprintf(stderr, PROG ": available here: %s\n", buf[0] ? buf : "(unknown)");
}

/* ------------------------------------------------------------------------ */
/* socket set-up shared by both ends                                        */

static int apply_mss(int fd, const struct opts *o)
{
	return o->mss ? set_int(fd, IPPROTO_TCP, TCP_MAXSEG, (int)o->mss, "TCP_MAXSEG") : 0;
}

/* Receiver side of --window (on the listening socket: accepted sockets
 * inherit it, and the SYN-ACK's window is computed from it). */
static int apply_recv_window(int fd, const struct opts *o)
{
	if (!o->window)
		return 0;
	if (o->wmode == WIN_RCVBUF)
		return set_int(fd, SOL_SOCKET, SO_RCVBUF, (int)o->window, "SO_RCVBUF");
	if (o->wmode != WIN_CLAMP_ONLY) {
		int want = (int)(CLAMP_RCVBUF_FACTOR * o->window);
		/* FORCE ignores net.core.rmem_max (needs CAP_NET_ADMIN); the
		 * plain option is the fallback for an unprivileged user. */
		if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &want, sizeof(want)) &&
		    set_int(fd, SOL_SOCKET, SO_RCVBUF, want, "SO_RCVBUF"))
			return -1;
	}
	return set_int(fd, IPPROTO_TCP, TCP_WINDOW_CLAMP, (int)o->window, "TCP_WINDOW_CLAMP");
}

static int apply_send_window(int fd, const struct opts *o)
{
	if (!o->window || o->wmode != WIN_BOTH)
		return 0;
	return set_int(fd, SOL_SOCKET, SO_SNDBUF, (int)(2 * o->window), "SO_SNDBUF");
}

static int apply_cc(int fd, const char *cc)
{
	if (!cc)
		return 0;
	if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, strlen(cc))) {
		int e = errno;
		fprintf(stderr, PROG ": congestion control '%s': %s\n", cc,
			e == ENOENT ? "not available (not built in, not loaded)" : strerror(e));
		print_available_cc();
		return -1;
	}
	return 0;
}

static void cc_name(int fd, char out[CC_NAME_MAX + 1])
{
	socklen_t l = CC_NAME_MAX;
	memset(out, 0, CC_NAME_MAX + 1);
	if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, out, &l))
		strcpy(out, "?");
}

static int make_addr(const char *s, uint64_t port, struct sockaddr_in *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, s, &sa->sin_addr) == 1 ? 0 : -1;
}

/* ------------------------------------------------------------------------ */
/* the summary                                                              */

struct result {
	const char *role;
	uint64_t bytes;
	uint64_t calls;
	double real_s;
	double io_s;              /* time spent in the write/read loop */
	double cpu_s;
	char cc[CC_NAME_MAX + 1];
	int mss;
	int sndbuf, rcvbuf;
	uint64_t window;
	uint32_t snd_wnd_max;     /* sender: the largest window the peer advertised */
	uint32_t total_retrans;
	uint32_t min_rtt_us;
	uint64_t samples;
	uint64_t clamp_resets;    /* receiver: times the kernel replaced the clamp */
};

static void print_result(const struct result *r, const struct opts *o)
{
	double mbps = r->real_s > 0 ? r->bytes * 8.0 / r->real_s / 1e6 : 0;
	double cpu_mbps = r->cpu_s > 0 ? r->bytes * 8.0 / r->cpu_s / 1e6 : 0;
	double cps = r->io_s > 0 ? r->calls / r->io_s : 0;
	const char *mode = window_mode_names[o->wmode];
	if (o->json) {
		printf("{\"role\":\"%s\",\"bytes\":%" PRIu64 ",\"real_s\":%.6f,\"mbps\":%.4f,"
		       "\"cpu_s\":%.4f,\"mbps_per_cpu_s\":%.3f,\"calls\":%" PRIu64 ",\"calls_per_s\":%.1f,"
		       "\"len\":%" PRIu64 ",\"window\":%" PRIu64 ",\"window_mode\":\"%s\",\"cc\":\"%s\","
		       "\"mss\":%d,\"sndbuf\":%d,\"rcvbuf\":%d,\"snd_wnd_max\":%u,"
		       "\"total_retrans\":%u,\"min_rtt_us\":%u,\"samples\":%" PRIu64 ","
		       "\"clamp_resets\":%" PRIu64 "}\n",
		       r->role, r->bytes, r->real_s, mbps, r->cpu_s, cpu_mbps, r->calls, cps, o->len,
		       r->window, mode, r->cc, r->mss, r->sndbuf, r->rcvbuf, r->snd_wnd_max,
		       r->total_retrans, r->min_rtt_us, r->samples, r->clamp_resets);
	} else {
		const char *t = r->role[0] == 's' ? "ttcp-t" : "ttcp-r";
		printf("%s: len=%" PRIu64 ", window=%" PRIu64 " (%s), cc=%s, mss=%d, "
		       "SO_SNDBUF=%d, SO_RCVBUF=%d\n",
		       t, o->len, r->window, mode, r->cc, r->mss, r->sndbuf, r->rcvbuf);
		printf("%s: %" PRIu64 " bytes in %.3f real seconds = %.3f Mbit/sec\n", t, r->bytes,
		       r->real_s, mbps);
		printf("%s: %" PRIu64 " bytes in %.3f CPU seconds = %.2f Mbit/cpu sec\n", t,
		       r->bytes, r->cpu_s, cpu_mbps);
		printf("%s: %" PRIu64 " I/O calls, msec/call = %.3f, calls/sec = %.1f\n", t, r->calls,
		       r->calls ? r->io_s * 1e3 / r->calls : 0, cps);
		if (r->role[0] == 's')
			printf("%s: peer window max %u B, retransmitted segments %u, min RTT %.3f ms, "
			       "%" PRIu64 " TCP_INFO samples\n",
			       t, r->snd_wnd_max, r->total_retrans, r->min_rtt_us / 1e3, r->samples);
	}
	fflush(stdout);
}

/* ------------------------------------------------------------------------ */
/* TCP_INFO sampler (a second thread; getsockopt on a shared fd is safe)    */

struct sampler {
	int fd;
	FILE *out;
	int64_t t0, period_ns;
	atomic_int stop;
	uint64_t n;
	uint32_t snd_wnd_max;
	pthread_t th;
};

static int read_info(int fd, struct tcp_info *ti)
{
	socklen_t l = sizeof(*ti);
	memset(ti, 0, sizeof(*ti));
	return getsockopt(fd, IPPROTO_TCP, TCP_INFO, ti, &l);
}

static void write_sample(struct sampler *s, const struct tcp_info *ti, int64_t now)
{
	uint64_t sent_new = ti->tcpi_bytes_sent - ti->tcpi_bytes_retrans;
	/* bytes_acked counts the SYN (and later the FIN) as one byte each */
	int64_t in_flight = (int64_t)(sent_new + 1 - ti->tcpi_bytes_acked);
	if (in_flight < 0)
		in_flight = 0;
	fprintf(s->out,
		"%" PRId64 ",%u,%u,%u,%u,%" PRId64 ",%u,%u,%u,%u,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64
		",%" PRIu64 ",%u,%u\n",
		(now - s->t0) / 1000, ti->tcpi_snd_cwnd, ti->tcpi_snd_ssthresh, ti->tcpi_snd_mss,
		ti->tcpi_unacked, in_flight, ti->tcpi_rtt, ti->tcpi_rttvar, ti->tcpi_retransmits,
		ti->tcpi_total_retrans, ti->tcpi_lost, (uint64_t)ti->tcpi_delivery_rate * 8,
		(uint64_t)ti->tcpi_bytes_sent, (uint64_t)ti->tcpi_bytes_retrans,
		(uint64_t)ti->tcpi_bytes_acked, ti->tcpi_snd_wnd, ti->tcpi_ca_state);
	s->n++;
}

/* One reading of tcp_info: the largest window, and a line when asked. */
static void sample_once(struct sampler *s)
{
	struct tcp_info ti;
	int64_t now = clock_ns(CLOCK_MONOTONIC);
	if (read_info(s->fd, &ti) == 0) {
		if (ti.tcpi_snd_wnd > s->snd_wnd_max)
			s->snd_wnd_max = ti.tcpi_snd_wnd;
		if (s->out)
			write_sample(s, &ti, now);
	}
}

/* The samples after the first (taken at t0 by the sender itself, before
 * this thread starts: a transfer shorter than the thread's start-up would
 * otherwise have none), one every period. */
static void *sampler_main(void *arg)
{
	struct sampler *s = arg;
	int64_t next = s->t0;
	for (;;) {
		int64_t now = clock_ns(CLOCK_MONOTONIC);
		next += s->period_ns;
		if (next < now)
			next = now + s->period_ns; /* late: skip, do not burst */
		struct timespec ts = {next / 1000000000ll, next % 1000000000ll};
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		if (atomic_load(&s->stop))
			return NULL;
		sample_once(s);
	}
}

/* ------------------------------------------------------------------------ */
/* sender                                                                   */

static int run_send(const struct opts *o)
{
	struct sockaddr_in sa;
	if (make_addr(o->addr, o->port, &sa))
		return usage_error("--dst '%s' is not an IPv4 address", o->addr);
	FILE *samples = NULL;
	if (o->samples && !(samples = fopen(o->samples, "w"))) {
		fprintf(stderr, PROG ": --samples %s: %s\n", o->samples, strerror(errno));
		return 1;
	}
	char *buf = malloc(o->len);
	if (!buf) {
		if (samples)
			fclose(samples);
		return sys_error("malloc");
	}
	memset(buf, 'x', o->len);
	int rc = 1;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0) {
		sys_error("socket");
		goto out;
	}
	if (apply_cc(fd, o->cc) || apply_mss(fd, o) || apply_send_window(fd, o) ||
	    (o->nodelay && set_int(fd, IPPROTO_TCP, TCP_NODELAY, 1, "TCP_NODELAY")))
		goto out;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr, PROG ": connect to %s:%" PRIu64 ": %s\n", o->addr, o->port,
			strerror(errno));
		goto out;
	}
	struct result r = {.role = "send", .window = o->window};
	double cpu0 = cpu_seconds();
	int64_t t0 = clock_ns(CLOCK_MONOTONIC);
	struct sampler smp = {.fd = fd, .out = samples, .t0 = t0,
			      .period_ns = (int64_t)(o->sample_ms * 1e6)};
	if (samples)
		fprintf(samples, "t_us,cwnd,ssthresh,mss,unacked,in_flight_bytes,rtt_us,rttvar_us,"
				 "retransmits,total_retrans,lost,delivery_rate_bps,bytes_sent,"
				 "bytes_retrans,bytes_acked,snd_wnd,ca_state\n");
	sample_once(&smp);
	if ((errno = pthread_create(&smp.th, NULL, sampler_main, &smp))) {
		sys_error("pthread_create");
		goto out;
	}
	int64_t deadline = o->seconds > 0 ? t0 + (int64_t)(o->seconds * 1e9) : INT64_MAX;
	int failed = 0;
	while (o->seconds > 0 ? clock_ns(CLOCK_MONOTONIC) < deadline : r.calls < o->count) {
		size_t off = 0;
		while (off < o->len) { /* blocking: a short write means a signal */
			ssize_t n = write(fd, buf + off, o->len - off);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				sys_error("write");
				failed = 1;
				break;
			}
			off += (size_t)n;
		}
		if (failed)
			break;
		r.bytes += o->len;
		r.calls++;
	}
	r.io_s = (clock_ns(CLOCK_MONOTONIC) - t0) / 1e9;
	/* Delivered means read: shut our side, wait for the receiver's close. */
	if (!failed && shutdown(fd, SHUT_WR) == 0) {
		char c;
		ssize_t n;
		while ((n = read(fd, &c, 1)) < 0 && errno == EINTR)
			;
		if (n < 0) {
			sys_error("waiting for the receiver's close");
			failed = 1;
		}
	}
	r.real_s = (clock_ns(CLOCK_MONOTONIC) - t0) / 1e9;
	atomic_store(&smp.stop, 1);
	pthread_join(smp.th, NULL);
	r.cpu_s = cpu_seconds() - cpu0;
	struct tcp_info ti;
	if (read_info(fd, &ti) == 0) {
		r.total_retrans = ti.tcpi_total_retrans;
		r.min_rtt_us = ti.tcpi_min_rtt;
		r.mss = (int)ti.tcpi_snd_mss;
	}
	r.snd_wnd_max = smp.snd_wnd_max;
	r.samples = smp.n;
	r.sndbuf = get_int(fd, SOL_SOCKET, SO_SNDBUF);
	r.rcvbuf = get_int(fd, SOL_SOCKET, SO_RCVBUF);
	cc_name(fd, r.cc);
	if (!failed) {
		print_result(&r, o);
		rc = 0;
	}
out:
	if (fd >= 0)
		close(fd);
	if (samples && fclose(samples)) {
		fprintf(stderr, PROG ": --samples %s: %s\n", o->samples, strerror(errno));
		rc = 1;
	}
	free(buf);
	return rc;
}

/* The kernel may have replaced our clamp (see the top of the file): put it
 * back. Returns 1 when it had to. */
static int reassert_clamp(int fd, int window)
{
	int now = get_int(fd, IPPROTO_TCP, TCP_WINDOW_CLAMP);
	if (now <= window)
		return 0;
	setsockopt(fd, IPPROTO_TCP, TCP_WINDOW_CLAMP, &window, sizeof(window));
	return 1;
}

/* ------------------------------------------------------------------------ */
/* receiver                                                                 */

static int run_recv(const struct opts *o)
{
	struct sockaddr_in sa;
	if (make_addr(o->addr, o->port, &sa))
		return usage_error("--bind '%s' is not an IPv4 address", o->addr);
	size_t blen = o->len > 65536 ? o->len : 65536;
	char *buf = malloc(blen);
	if (!buf)
		return sys_error("malloc");
	int rc = 1, fd = -1;
	int lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0) {
		sys_error("socket");
		goto out;
	}
	set_int(lfd, SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR");
	if (apply_recv_window(lfd, o) || apply_mss(lfd, o))
		goto out;
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr, PROG ": bind %s:%" PRIu64 ": %s\n", o->addr, o->port,
			strerror(errno));
		goto out;
	}
	if (listen(lfd, 1)) {
		sys_error("listen");
		goto out;
	}
	printf("ready %s:%" PRIu64 "\n", o->addr, o->port);
	fflush(stdout);
	struct pollfd pfd = {.fd = lfd, .events = POLLIN};
	int pr;
	while ((pr = poll(&pfd, 1, (int)(o->timeout * 1000))) < 0 && errno == EINTR)
		;
	if (pr <= 0) {
		if (pr == 0)
			fprintf(stderr, PROG ": no connection within %.0f s\n", o->timeout);
		else
			sys_error("poll");
		goto out;
	}
	fd = accept(lfd, NULL, NULL);
	if (fd < 0) {
		sys_error("accept");
		goto out;
	}
	struct result r = {.role = "recv", .window = o->window};
	double cpu0 = cpu_seconds();
	int64_t t0 = clock_ns(CLOCK_MONOTONIC);
	for (;;) {
		ssize_t n = read(fd, buf, blen);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			sys_error("read");
			goto out;
		}
		if (n == 0)
			break;
		r.bytes += (uint64_t)n;
		r.calls++;
		if (o->window && (o->wmode == WIN_CLAMP || o->wmode == WIN_BOTH))
			r.clamp_resets += reassert_clamp(fd, (int)o->window);
		if (o->quickack) /* the kernel clears it again: re-arm on every read */
			set_int(fd, IPPROTO_TCP, TCP_QUICKACK, 1, "TCP_QUICKACK");
	}
	r.real_s = r.io_s = (clock_ns(CLOCK_MONOTONIC) - t0) / 1e9;
	r.cpu_s = cpu_seconds() - cpu0;
	r.sndbuf = get_int(fd, SOL_SOCKET, SO_SNDBUF);
	r.rcvbuf = get_int(fd, SOL_SOCKET, SO_RCVBUF);
	struct tcp_info ti;
	if (read_info(fd, &ti) == 0)
		r.mss = (int)ti.tcpi_rcv_mss;
	cc_name(fd, r.cc);
	print_result(&r, o);
	rc = 0;
out:
	if (fd >= 0)
		close(fd); /* the sender waits for this close */
	if (lfd >= 0)
		close(lfd);
	free(buf);
	return rc;
}

/* ------------------------------------------------------------------------ */

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	struct opts o = {.port = 5001, .len = 4096, .count = 20000, .sample_ms = 5,
			 .timeout = 60, .wmode = WIN_CLAMP};
	if (!strcmp(argv[1], "send"))
		o.sender = 1;
	else if (strcmp(argv[1], "recv"))
		return usage_error("first argument must be 'send' or 'recv', not '%s'", argv[1]);
	int have_count = 0, have_sample_ms = 0, have_timeout = 0;
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--json")) {
			o.json = 1;
			continue;
		}
		if (!strcmp(a, "--nodelay") || !strcmp(a, "--quickack")) {
			if (o.sender != (a[2] == 'n'))
				return usage_error("%s is an option of '%s'", a,
						   a[2] == 'n' ? "send" : "recv");
			*(a[2] == 'n' ? &o.nodelay : &o.quickack) = 1;
			continue;
		}
		if (i + 1 >= argc)
			return usage_error("%s needs a value", a);
		const char *v = argv[++i];
		if (!strcmp(a, "--dst") || !strcmp(a, "--bind")) {
			if ((o.sender && a[2] != 'd') || (!o.sender && a[2] != 'b'))
				return usage_error("%s is not an option of '%s'", a, argv[1]);
			o.addr = v;
		} else if (!strcmp(a, "--port")) {
			if (parse_u64(v, 1, 65535, &o.port))
				return usage_error("--port '%s': must be 1 .. 65535", v);
		} else if (!strcmp(a, "--len")) {
			if (parse_size(v, 1, MAX_LEN, &o.len))
				return usage_error("--len '%s': must be 1 .. 16M bytes", v);
		} else if (!strcmp(a, "--count")) {
			if (parse_u64(v, 1, UINT64_MAX / MAX_LEN, &o.count))
				return usage_error("--count '%s': must be a positive integer", v);
			have_count = 1;
		} else if (!strcmp(a, "--seconds")) {
			if (parse_double_in(v, 0.01, 86400, &o.seconds))
				return usage_error("--seconds '%s': must be 0.01 .. 86400", v);
		} else if (!strcmp(a, "--window")) {
			if (parse_size(v, 2048, MAX_WINDOW, &o.window))
				return usage_error("--window '%s': must be 2k .. 1G bytes (e.g. 64k)", v);
		} else if (!strcmp(a, "--window-mode")) {
			int m = 0;
			while (m <= WIN_BOTH && strcmp(v, window_mode_names[m]))
				m++;
			if (m > WIN_BOTH)
				return usage_error("--window-mode '%s': clamp, clamp-only, rcvbuf or both",
						   v);
			o.wmode = (enum window_mode)m;
		} else if (!strcmp(a, "--cc")) {
			if (!*v || strlen(v) > CC_NAME_MAX - 1)
				return usage_error("--cc '%s': a name of 1 .. %d characters", v,
						   CC_NAME_MAX - 1);
			o.cc = v;
		} else if (!strcmp(a, "--mss")) {
			if (parse_u64(v, 88, 65495, &o.mss))
				return usage_error("--mss '%s': must be 88 .. 65495", v);
		} else if (!strcmp(a, "--samples")) {
			o.samples = v;
		} else if (!strcmp(a, "--sample-ms")) {
			if (parse_double_in(v, 0.1, 10000, &o.sample_ms))
				return usage_error("--sample-ms '%s': must be 0.1 .. 10000", v);
			have_sample_ms = 1;
		} else if (!strcmp(a, "--timeout")) {
			if (parse_double_in(v, 0.1, 86400, &o.timeout))
				return usage_error("--timeout '%s': must be 0.1 .. 86400", v);
			have_timeout = 1;
		} else {
			return usage_error("unknown option '%s'", a);
		}
	}
	if (!o.addr)
		return usage_error("%s needs %s ADDR", argv[1], o.sender ? "--dst" : "--bind");
	if (o.sender && have_count && o.seconds > 0)
		return usage_error("--count and --seconds exclude each other");
	if (!o.sender && (o.cc || o.samples || o.seconds > 0 || have_count))
		return usage_error("--cc, --samples, --count and --seconds are options of 'send'");
	if (!o.sender && have_sample_ms)
		return usage_error("--sample-ms is an option of 'send'");
	if (o.sender && have_timeout)
		return usage_error("--timeout is an option of 'recv'");
	signal(SIGPIPE, SIG_IGN);
	return o.sender ? run_send(&o) : run_recv(&o);
}
