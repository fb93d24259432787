/* linkemuk's forwarding thread (src/kernel/kloop.c) over AF_UNIX
 * datagram pairs standing in for interfaces: ksock_recv/ksock_send work on
 * any datagram socket, and an AF_UNIX datagram keeps its boundaries and
 * reports its real length under MSG_TRUNC, as a packet socket does.
 *
 * - At its ending, the frames already due are sent in both directions,
 *   the rest counted as `shutdown`, even when one direction's output
 *   cannot take a frame (a pair whose reader never reads refuses the 11th
 *   datagram, EAGAIN, as a full send buffer does).
 * - A socket that can carry no more frames (here: shut down, so that it
 *   polls as hung up, as nothing else makes an AF_UNIX pair do) ends the
 *   loop by itself, without burning its CPU until then.
 * - A frame longer than a buffer is a `malformed` drop whose bytes are
 *   its real length; one that fills a buffer exactly is forwarded.
 * - An interface going down and coming back is told on stderr, one line
 *   per change (here the stand-in for A names `lo` of a network namespace
 *   of the test's own, which it takes down and up; the loop's thread asks
 *   in the namespace it runs in, as linkemuk does in its interfaces'). */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "kloop.h"
#include "minitest.h"

static struct kloop l; /* large */

static void test_shutdown_backpressure(void)
{
	char err[LE_ERR_MAX] = "";
	int stuck[2], free_[2];
	struct le_frame_ops ops;
	struct le_path_config cfg;

	CHECK(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, stuck) == 0);
	CHECK(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, free_) == 0);
	int small = 4096; /* a pair's datagrams wait in the sender's buffer */
	CHECK(setsockopt(stuck[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)) == 0);
	memset(&l, 0, sizeof(l));
	/* a2b goes out on "B" (never read: backpressure), b2a on "A" */
	l.sock[1].fd = stuck[0];
	l.sock[0].fd = free_[0];
	CHECK(kbuf_pool_init(&l.pool, 4096, err, sizeof(err)) == 0, "%s", err);
	ops = kbuf_frame_ops(&l.pool);
	l.burst = 32;
	CHECK(le_path_config_parse("delay 1ms", &cfg, err, sizeof(err)) == 0, "%s", err);
	for (int d = 0; d < LE_DIRS; d++) {
		struct kdir *dir = &l.dir[d];
		dir->in = &l.sock[d == LE_DIR_A2B ? 0 : 1];
		dir->out = &l.sock[d == LE_DIR_A2B ? 1 : 0];
		struct dp_model *m = dp_model_new(&cfg, (enum le_direction)d, 1, &ops, err, sizeof(err));
		CHECK(m != NULL && dp_model_slot_init(&dir->models, m, 1000, err, sizeof(err)) == 0, "%s", err);
		/* 100 frames, all due by the time the daemon stops */
		for (int i = 0; i < 100; i++) {
			uint8_t *b = kbuf_get(&l.pool);
			if (b == NULL)
				break;
			memset(kbuf_data(b), i, 64);
			*kbuf_len(b) = 64;
			dir->ctr.rx++;
			dp_model_slot_offer(&dir->models, b, 64, kclock_now() - 10 * LE_NS_PER_MS);
		}
	}
	kloop_shutdown(&l, 50);
	struct kdir_snapshot s[LE_DIRS];
	kloop_snapshot(&l, s);
	for (int d = 0; d < LE_DIRS; d++) {
		uint64_t shut = s[d].ctr.drop[DP_DROP_SHUTDOWN] + s[d].models.ctr.drop[LE_DROP_SHUTDOWN];
		printf("%s: tx %llu shutdown %llu held %u depth %u\n", le_direction_name(d),
		       (unsigned long long)s[d].ctr.tx, (unsigned long long)shut, s[d].held, s[d].models.depth);
		CHECK(s[d].ctr.tx + shut == 100 && s[d].held == 0 && s[d].models.depth == 0, "%s: books",
		      le_direction_name(d));
	}
	CHECK(s[LE_DIR_A2B].ctr.tx < 100, "a2b's output was stuck");
	CHECK(s[LE_DIR_B2A].ctr.tx == 100, "b2a's due frames leave though a2b's output is stuck: %llu sent",
	      (unsigned long long)s[LE_DIR_B2A].ctr.tx);
	CHECK(kbuf_in_use(&l.pool) == 0, "%u buffers not freed", kbuf_in_use(&l.pool));
	for (int d = 0; d < LE_DIRS; d++)
		dp_model_slot_fini(&l.dir[d].models);
	kbuf_pool_fini(&l.pool);
	close(stuck[0]);
	close(stuck[1]);
	close(free_[0]);
	close(free_[1]);
}

/* A loop over two fresh pairs: l.sock[0] ("A") is pair a[0], l.sock[1]
 * ("B") is b[0]; the test writes frames into a[1]/b[1] and reads what
 * the loop sends there. */
static int a[2], b[2];
static volatile int stop;

static void setup(const char *link)
{
	char err[LE_ERR_MAX] = "";
	static struct le_frame_ops ops;
	struct le_path_config cfg;

	CHECK(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, a) == 0);
	CHECK(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, b) == 0);
	memset(&l, 0, sizeof(l));
	l.sock[0] = (struct ksock){.fd = a[0], .name = "lk-a"};
	l.sock[1] = (struct ksock){.fd = b[0], .name = "lk-b"};
	CHECK(kbuf_pool_init(&l.pool, 4096, err, sizeof(err)) == 0, "%s", err);
	ops = kbuf_frame_ops(&l.pool);
	l.burst = 32;
	l.spin_ns = 50000;
	stop = 0;
	l.stop = &stop;
	CHECK(le_path_config_parse(link, &cfg, err, sizeof(err)) == 0, "%s", err);
	for (int d = 0; d < LE_DIRS; d++) {
		struct kdir *dir = &l.dir[d];
		dir->in = &l.sock[d == LE_DIR_A2B ? 0 : 1];
		dir->out = &l.sock[d == LE_DIR_A2B ? 1 : 0];
		le_hist_init(&dir->error);
		struct dp_model *m = dp_model_new(&cfg, (enum le_direction)d, 1, &ops, err, sizeof(err));
		CHECK(m != NULL && dp_model_slot_init(&dir->models, m, 1000, err, sizeof(err)) == 0, "%s", err);
	}
}

static void teardown(void)
{
	for (int d = 0; d < LE_DIRS; d++)
		dp_model_slot_fini(&l.dir[d].models);
	kbuf_pool_fini(&l.pool);
	close(a[0]);
	close(a[1]);
	close(b[0]);
	close(b[1]);
}

/* Writes an Ethernet-looking frame of len bytes into fd. */
static void put_frame(int fd, size_t len)
{
	static uint8_t f[4096];
	memset(f, 0xab, len);
	CHECK(send(fd, f, len, 0) == (ssize_t)len, "send %zu bytes", len);
}

static le_ns_t thread_cpu_ns(pthread_t t)
{
	clockid_t c;
	struct timespec ts = {0};
	if (pthread_getcpuclockid(t, &c) == 0)
		clock_gettime(c, &ts);
	return (le_ns_t)ts.tv_sec * 1000000000ull + (le_ns_t)ts.tv_nsec;
}

static volatile int loop_returned;
static int loop_rc;
static le_ns_t loop_cpu_at_return; /* the thread's own: its clock ends with it */

static void *run_loop(void *arg)
{
	(void)arg;
	loop_rc = kloop_run(&l);
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	loop_cpu_at_return = (le_ns_t)ts.tv_sec * 1000000000ull + (le_ns_t)ts.tv_nsec;
	__atomic_store_n(&loop_returned, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Waits up to ms for the loop to return by itself; 1 if it did. */
static int wait_return(unsigned ms)
{
	for (unsigned i = 0; i < ms && !loop_returned; i++)
		usleep(1000);
	return loop_returned;
}

static void test_lost_interface_ends_the_loop(void)
{
	setup("delay 10s");            /* every frame still held when B goes */
	for (int i = 0; i < 5; i++)
		put_frame(a[1], 64);
	pthread_t t;
	loop_returned = 0;
	CHECK(pthread_create(&t, NULL, run_loop, NULL) == 0);
	usleep(100000);                /* it took the frames and sleeps */
	le_ns_t cpu0 = thread_cpu_ns(t), wall0 = kclock_now();
	/* B can carry nothing any more: it polls as hung up from now on. */
	CHECK(shutdown(b[0], SHUT_RDWR) == 0);
	int by_itself = wait_return(1000);
	le_ns_t cpu = (by_itself ? loop_cpu_at_return : thread_cpu_ns(t)) - cpu0, wall = kclock_now() - wall0;
	CHECK(by_itself, "the loop still ran %.0f ms after B hung up (it used %.0f ms of CPU meanwhile)",
	      (double)wall / 1e6, (double)cpu / 1e6);
	CHECK(cpu * 2 < wall || cpu < 20 * LE_NS_PER_MS, "the loop burnt %.0f ms of CPU in %.0f ms after B hung up",
	      (double)cpu / 1e6, (double)wall / 1e6);
	stop = 1;                      /* in case it did not stop by itself */
	pthread_join(t, NULL);
	CHECK(loop_rc == -1 && strcmp(l.lost, "interface 'lk-b' hung up") == 0, "returned %d, lost: '%s'", loop_rc,
	      l.lost);
	/* The frames it held are counted when it shuts down, as for a signal. */
	kloop_shutdown(&l, 50);
	struct kdir_snapshot s[LE_DIRS];
	kloop_snapshot(&l, s);
	uint64_t shut = s[LE_DIR_A2B].ctr.drop[DP_DROP_SHUTDOWN] + s[LE_DIR_A2B].models.ctr.drop[LE_DROP_SHUTDOWN];
	CHECK(s[LE_DIR_A2B].ctr.rx == 5 && s[LE_DIR_A2B].ctr.tx == 0 && shut == 5 && s[LE_DIR_A2B].held == 0,
	      "a2b books: rx %llu tx %llu shutdown %llu held %u", (unsigned long long)s[LE_DIR_A2B].ctr.rx,
	      (unsigned long long)s[LE_DIR_A2B].ctr.tx, (unsigned long long)shut, s[LE_DIR_A2B].held);
	CHECK(kbuf_in_use(&l.pool) == 0, "%u buffers not freed", kbuf_in_use(&l.pool));
	teardown();
}

static void test_oversize_frame_counts_its_length(void)
{
	setup("delay 1ms");
	/* a frame, one that fills a buffer exactly, and one that does not fit */
	put_frame(a[1], 64);
	put_frame(a[1], K_FRAME_MAX);
	put_frame(a[1], 3000);
	pthread_t t;
	loop_returned = 0;
	CHECK(pthread_create(&t, NULL, run_loop, NULL) == 0);
	usleep(50000);
	stop = 1;
	pthread_join(t, NULL);
	kloop_shutdown(&l, 50);
	struct kdir_snapshot s[LE_DIRS];
	kloop_snapshot(&l, s);
	const struct dp_counters *c = &s[LE_DIR_A2B].ctr;
	printf("a2b: rx %llu rx_bytes %llu tx %llu tx_bytes %llu malformed %llu\n", (unsigned long long)c->rx,
	       (unsigned long long)c->rx_bytes, (unsigned long long)c->tx, (unsigned long long)c->tx_bytes,
	       (unsigned long long)c->drop[DP_DROP_MALFORMED]);
	CHECK(c->rx == 3 && c->rx_bytes == 64 + K_FRAME_MAX + 3000, "rx %llu, rx_bytes %llu (want 3, %u)",
	      (unsigned long long)c->rx, (unsigned long long)c->rx_bytes, 64 + K_FRAME_MAX + 3000);
	CHECK(c->drop[DP_DROP_MALFORMED] == 1, "malformed %llu (want 1: the 3000-byte frame)",
	      (unsigned long long)c->drop[DP_DROP_MALFORMED]);
	CHECK(c->tx == 2 && c->tx_bytes == 64 + K_FRAME_MAX, "tx %llu, tx_bytes %llu (want 2, %u)",
	      (unsigned long long)c->tx, (unsigned long long)c->tx_bytes, 64 + K_FRAME_MAX);
	uint8_t got[4096];
	ssize_t n1 = recv(b[1], got, sizeof(got), MSG_DONTWAIT), n2 = recv(b[1], got, sizeof(got), MSG_DONTWAIT);
	CHECK(n1 == 64 && n2 == (ssize_t)K_FRAME_MAX, "B's side got %zd and %zd bytes", n1, n2);
	CHECK(kbuf_in_use(&l.pool) == 0, "%u buffers not freed", kbuf_in_use(&l.pool));
	teardown();
}

static void test_blocked_output_sleeps(void)
{
	setup("delay 1ms");
	int small = 4096; /* B's reader never reads: its output takes ~10 frames, then EAGAIN */
	CHECK(setsockopt(b[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)) == 0);
	for (int i = 0; i < 100; i++)
		put_frame(a[1], 64);
	pthread_t t;
	loop_returned = 0;
	CHECK(pthread_create(&t, NULL, run_loop, NULL) == 0);
	usleep(50000);                 /* every frame due, most stuck behind B's output */
	le_ns_t cpu0 = thread_cpu_ns(t), wall0 = kclock_now();
	usleep(300000);
	le_ns_t cpu = thread_cpu_ns(t) - cpu0, wall = kclock_now() - wall0;
	stop = 1;
	pthread_join(t, NULL);
	printf("blocked output: %.0f ms of CPU in %.0f ms\n", (double)cpu / 1e6, (double)wall / 1e6);
	CHECK(cpu * 4 < wall, "the loop burnt %.0f ms of CPU in %.0f ms waiting for B's output to take a frame",
	      (double)cpu / 1e6, (double)wall / 1e6);
	kloop_shutdown(&l, 50);
	struct kdir_snapshot s[LE_DIRS];
	kloop_snapshot(&l, s);
	const struct kdir_snapshot *x = &s[LE_DIR_A2B];
	uint64_t shut = x->ctr.drop[DP_DROP_SHUTDOWN] + x->models.ctr.drop[LE_DROP_SHUTDOWN];
	CHECK(x->ctr.rx == 100 && x->ctr.tx + shut == 100 && x->ctr.tx < 100, "a2b: rx %llu tx %llu shutdown %llu",
	      (unsigned long long)x->ctr.rx, (unsigned long long)x->ctr.tx, (unsigned long long)shut);
	CHECK(kbuf_in_use(&l.pool) == 0, "%u buffers not freed", kbuf_in_use(&l.pool));
	teardown();
}

/* Sets `lo` of the test's namespace up or down. */
static void lo_set(int up)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	struct ifreq ifr = {0};
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	CHECK(fd >= 0 && ioctl(fd, SIOCGIFFLAGS, &ifr) == 0, "lo's flags: %s", strerror(errno));
	ifr.ifr_flags = (short)(up ? ifr.ifr_flags | IFF_UP : ifr.ifr_flags & ~IFF_UP);
	CHECK(ioctl(fd, SIOCSIFFLAGS, &ifr) == 0, "lo %s: %s", up ? "up" : "down", strerror(errno));
	close(fd);
}

static void test_down_and_up_are_told_once_each(void)
{
	/* A namespace of its own, whose `lo` starts down and is ours to
	 * change (root, or an unprivileged user namespace). */
	if (unshare(CLONE_NEWNET) != 0 && unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) {
		/* CI runs as root, where a namespace can always be made: there
		 * a missing one is a failure, not a skip (tests/kit/need.py). */
		const char *ci = getenv("CI");
		CHECK(!(ci && (!strcasecmp(ci, "1") || !strcasecmp(ci, "true") || !strcasecmp(ci, "yes"))),
		      "down/up: no network namespace of our own under CI: %s", strerror(errno));
		printf("down/up: skipped (no network namespace of our own: %s)\n", strerror(errno));
		return;
	}
	setup("delay 1ms");
	l.sock[0].ifindex = (int)if_nametoindex("lo");
	snprintf(l.sock[0].name, sizeof(l.sock[0].name), "lo");
	CHECK(l.sock[0].ifindex > 0);
	/* What the loop says goes to a file for the test to read. */
	FILE *said = tmpfile();
	CHECK(said != NULL);
	fflush(stderr);
	int saved = dup(2);
	dup2(fileno(said), 2);
	pthread_t t;
	loop_returned = 0;
	le_ns_t t0 = kclock_now();
	CHECK(pthread_create(&t, NULL, run_loop, NULL) == 0);
	usleep(300000);                /* down from the start */
	lo_set(1);
	le_ns_t t_up = kclock_now();
	for (int i = 0; i < 5; i++)    /* frames keep flowing meanwhile */
		put_frame(a[1], 64);
	usleep(300000);
	lo_set(0);
	usleep(300000);
	stop = 1;
	pthread_join(t, NULL);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	char text[2048] = "";
	rewind(said);
	size_t n = fread(text, 1, sizeof(text) - 1, said);
	text[n] = '\0';
	fclose(said);
	printf("down/up said:\n%s", text);
	/* One line per change: down, up again (with how long it was down), down. */
	char *line[8];
	unsigned k = 0;
	for (char *save = NULL, *s = strtok_r(text, "\n", &save); s && k < 8; s = strtok_r(NULL, "\n", &save))
		line[k++] = s;
	CHECK(k == 3, "%u lines, want 3 (down, up, down)", k);
	if (k == 3) {
		CHECK(strstr(line[0], "interface 'lo' is down") != NULL, "first: %s", line[0]);
		CHECK(strstr(line[1], "interface 'lo' is up again") != NULL, "second: %s", line[1]);
		CHECK(strstr(line[2], "interface 'lo' is down") != NULL, "third: %s", line[2]);
		const char *f = strstr(line[1], "down for ");
		double s = f ? strtod(f + 9, NULL) : -1;
		/* Seen within a check (100 ms) of each change. */
		double most = (double)(t_up - t0) / 1e9 + 0.2;
		CHECK(s >= 0.05 && s <= most, "down for %.2f s, want 0.05 .. %.2f", s, most);
	}
	kloop_shutdown(&l, 50);
	CHECK(kbuf_in_use(&l.pool) == 0, "%u buffers not freed", kbuf_in_use(&l.pool));
	teardown();
}

int main(void)
{
	test_shutdown_backpressure();
	test_lost_interface_ends_the_loop();
	test_oversize_frame_counts_its_length();
	test_blocked_output_sleeps();
	test_down_and_up_are_told_once_each();
	printf("test_kloop: %u passed, %u failed\n", mt_passed, mt_failed);
	return mt_failed ? 1 : 0;
}
