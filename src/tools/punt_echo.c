/* punt_echo: the reference control-plane process for punted classes
 * (docs/punt.md). It attaches to one channel of a running linkemud or
 * linkemuk and returns every frame unchanged, optionally after a fixed
 * amount of busy work per frame (--work-ns), the published study's
 * control-plane stand-in. --drop-every and --inject-every make it drop or
 * add frames, to exercise the daemon's books (punt_dropped, injected).
 *
 *   punt_echo --fifo PATH [--work-ns N] [--wait S]
 *   punt_echo --shm NAME  [--work-ns N] [--wait S]
 *
 * It waits up to --wait seconds (default 30) for the channel to appear,
 * and exits 0 when the daemon stops (FIFO: end of file; shm: the
 * segment's `closed` flag) or on SIGINT/SIGTERM, printing its counts to
 * stderr. Plain Linux: no DPDK, no root. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "punt_wire.h"

static volatile sig_atomic_t g_stop;

struct opts {
	const char *fifo, *shm;
	uint64_t work_ns;
	double wait_s;
	uint64_t drop_every, inject_every;
	uint64_t spin_us;
};

struct counts {
	uint64_t in, out, dropped, injected;
};

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The control plane's work on a frame: a busy wait, so the cost per frame
 * is the same whatever the CPU. */
static void work(uint64_t ns)
{
	if (ns == 0)
		return;
	uint64_t until = now_ns() + ns;
	while (now_ns() < until)
		;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: punt_echo (--fifo PATH | --shm NAME) [--work-ns N] [--wait SECONDS]\n"
		   "                 [--spin-us N] [--drop-every N] [--inject-every N]\n"
		   "Returns every frame of a punted class (`punt fifo PATH` / `punt shm NAME`) to linkemud.\n");
}

static int parse(int argc, char **argv, struct opts *o)
{
	memset(o, 0, sizeof(*o));
	o->wait_s = 30;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		char *end;

		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			exit(0);
		}
		if (v == NULL) {
			fprintf(stderr, "punt_echo: %s: missing value\n", a);
			return -1;
		}
		i++;
		errno = 0;
		if (strcmp(a, "--fifo") == 0) {
			o->fifo = v;
		} else if (strcmp(a, "--shm") == 0) {
			o->shm = v;
		} else if (strcmp(a, "--wait") == 0) {
			o->wait_s = strtod(v, &end);
			if (*end || o->wait_s < 0) {
				fprintf(stderr, "punt_echo: --wait: '%s' is not a number of seconds\n", v);
				return -1;
			}
		} else if (strcmp(a, "--work-ns") == 0 || strcmp(a, "--drop-every") == 0 ||
			   strcmp(a, "--inject-every") == 0 || strcmp(a, "--spin-us") == 0) {
			unsigned long long n = strtoull(v, &end, 10);
			if (*end || errno || v[0] == '-') {
				fprintf(stderr, "punt_echo: %s: '%s' is not a whole number\n", a, v);
				return -1;
			}
			*(a[2] == 'w' ? &o->work_ns : a[2] == 'd' ? &o->drop_every : a[2] == 's' ? &o->spin_us
											   : &o->inject_every) = n;
		} else {
			fprintf(stderr, "punt_echo: unknown option '%s'\n", a);
			return -1;
		}
	}
	if (!o->fifo == !o->shm) {
		fprintf(stderr, "punt_echo: give one of --fifo PATH or --shm NAME\n");
		return -1;
	}
	return 0;
}

/* What to send back for frame number n (from 1): 0 drop, 1 echo, 2 echo
 * and inject a copy. */
static int verdict(const struct opts *o, uint64_t n)
{
	if (o->drop_every && n % o->drop_every == 0)
		return 0;
	if (o->inject_every && n % o->inject_every == 0)
		return 2;
	return 1;
}

/* Waits for a path to exist: the daemon makes it when it starts. */
static int wait_for(const char *path, double wait_s)
{
	uint64_t until = now_ns() + (uint64_t)(wait_s * 1e9);
	struct stat st;

	while (stat(path, &st) < 0) {
		if (g_stop || now_ns() >= until) {
			fprintf(stderr, "punt_echo: %s did not appear within %.0f s (is linkemud running with this punt class?)\n",
				path, wait_s);
			return -1;
		}
		usleep(10000);
	}
	return 0;
}

/* --- fifo ------------------------------------------------------------------ */

static int write_all(int fd, const uint8_t *b, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, b, n);
		if (w < 0) {
			if (errno == EINTR && !g_stop)
				continue;
			return -1;
		}
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

static int run_fifo(const struct opts *o, struct counts *c)
{
	static struct punt_rbuf rb;
	static uint8_t wbuf[PUNT_RBUF_SIZE + 2 * PUNT_SLOT_SIZE];
	char out_path[PATH_MAX], in_path[PATH_MAX];
	int fd_out, fd_in;

	snprintf(out_path, sizeof(out_path), "%s.out", o->fifo);
	snprintf(in_path, sizeof(in_path), "%s.in", o->fifo);
	if (wait_for(out_path, o->wait_s) < 0 || wait_for(in_path, o->wait_s) < 0)
		return 1;
	/* PATH.out first: linkemud sees a reader and starts sending. */
	fd_out = open(out_path, O_RDONLY);
	fd_in = fd_out < 0 ? -1 : open(in_path, O_WRONLY);
	if (fd_out < 0 || fd_in < 0) {
		fprintf(stderr, "punt_echo: cannot open %s: %s\n", fd_out < 0 ? out_path : in_path, strerror(errno));
		return 1;
	}
	fprintf(stderr, "punt_echo: attached to fifo %s (pid %d)\n", o->fifo, (int)getpid());
	while (!g_stop) {
		struct punt_hdr h;
		const uint8_t *frame;
		size_t wlen = 0;
		uint64_t drop_seq = 0; /* a drop no later answer settles yet */
		ssize_t r = read(fd_out, rb.buf + rb.have, punt_rbuf_compact(&rb));
		int k;

		if (r == 0)
			break; /* linkemud closed PATH.out: it stopped */
		if (r < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "punt_echo: reading %s: %s\n", out_path, strerror(errno));
			return 1;
		}
		rb.have += (size_t)r;
		while ((k = punt_rbuf_next(&rb, &h, &frame)) == 1) {
			int v = verdict(o, ++c->in);

			work(o->work_ns);
			if (v == 0) {
				c->dropped++; /* settled by the next answer, or the notice below */
				drop_seq = h.seq;
				continue;
			}
			drop_seq = 0;
			for (int copy = 0; copy < v; copy++) {
				/* the copy is a new frame: seq 0 */
				punt_hdr_put(wbuf + wlen, h.len, copy ? 0 : h.seq);
				memcpy(wbuf + wlen + PUNT_HDR_LEN, frame, h.len);
				wlen += PUNT_HDR_LEN + h.len;
				*(copy ? &c->injected : &c->out) += 1;
			}
			if (wlen > PUNT_RBUF_SIZE) {
				if (write_all(fd_in, wbuf, wlen) < 0)
					goto gone;
				wlen = 0;
			}
		}
		if (k < 0) {
			fprintf(stderr, "punt_echo: %s does not carry the punt protocol\n", out_path);
			return 1;
		}
		if (drop_seq) {
			/* "dropped up to drop_seq": a record without a frame */
			punt_hdr_put(wbuf + wlen, 0, drop_seq);
			wlen += PUNT_HDR_LEN;
		}
		if (wlen && write_all(fd_in, wbuf, wlen) < 0)
			goto gone;
	}
	close(fd_in);
	close(fd_out);
	return 0;
gone:
	if (g_stop)
		return 0;
	fprintf(stderr, "punt_echo: writing %s: %s\n", in_path, strerror(errno));
	return 1;
}

/* --- shared memory ---------------------------------------------------------- */

static void futex_wait(uint32_t *addr, uint32_t val, long timeout_ns)
{
	struct timespec ts = {.tv_sec = timeout_ns / 1000000000L, .tv_nsec = timeout_ns % 1000000000L};
	(void)syscall(SYS_futex, addr, FUTEX_WAIT, val, &ts, NULL, 0);
}

static int run_shm(const struct opts *o, struct counts *c)
{
	char path[PATH_MAX];
	struct punt_shm_seg *seg;
	struct punt_ring_view in, out;
	struct stat st;
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
	unsigned unpublished = 0, unreleased = 0;
	uint64_t drop_seq = 0; /* a drop no later answer settles yet */
	int fd;

	snprintf(path, sizeof(path), "/dev/shm/%s", o->shm);
	if (wait_for(path, o->wait_s) < 0)
		return 1;
	snprintf(path, sizeof(path), "/%s", o->shm);
	fd = shm_open(path, O_RDWR, 0);
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "punt_echo: cannot open the segment %s: %s\n", o->shm, strerror(errno));
		return 1;
	}
	seg = (size_t)st.st_size >= PUNT_SHM_HEAD ? mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
						  : MAP_FAILED;
	if (seg == MAP_FAILED || __atomic_load_n(&seg->magic, __ATOMIC_ACQUIRE) != PUNT_MAGIC ||
	    seg->version != PUNT_VERSION || seg->slot_size != PUNT_SLOT_SIZE ||
	    (size_t)st.st_size < punt_shm_size(seg->slots)) {
		fprintf(stderr, "punt_echo: %s is not a punt segment of version %u\n", o->shm, PUNT_VERSION);
		return 1;
	}
	/* Attached while we hold the lock; the kernel drops it if we die. */
	while (fcntl(fd, F_SETLKW, &fl) < 0) {
		if (errno != EINTR || g_stop) {
			fprintf(stderr, "punt_echo: cannot lock %s: %s (another process attached?)\n", o->shm,
				strerror(errno));
			return 1;
		}
	}
	__atomic_store_n(&seg->peer_pid, (int32_t)getpid(), __ATOMIC_RELAXED);
	punt_ring_view_init(&in, seg, seg->ring_off[0], seg->slots);
	punt_ring_view_init(&out, seg, seg->ring_off[1], seg->slots);
	/* Start where the rings are: a process may follow another. */
	in.local = in.other = __atomic_load_n(&in.ctl->tail, __ATOMIC_ACQUIRE);
	out.local = __atomic_load_n(&out.ctl->head, __ATOMIC_ACQUIRE);
	out.other = __atomic_load_n(&out.ctl->tail, __ATOMIC_ACQUIRE);
	fprintf(stderr, "punt_echo: attached to shm %s (pid %d)\n", o->shm, (int)getpid());
	while (!g_stop && !__atomic_load_n(&seg->closed, __ATOMIC_ACQUIRE)) {
		const uint8_t *slot = punt_ring_peek(&in);
		struct punt_hdr h;
		int v;

		if (slot == NULL) {
			uint32_t seen;
			uint8_t *dst;

			if (drop_seq && (dst = punt_ring_reserve(&out)) != NULL) {
				punt_hdr_put(dst, 0, drop_seq); /* "dropped up to drop_seq" */
				punt_ring_push(&out);
				unpublished++;
				drop_seq = 0;
			}
			if (unpublished)
				punt_ring_publish(&out);
			if (unreleased)
				punt_ring_release(&in);
			unpublished = unreleased = 0;
			/* Spin a little if asked (--spin-us: saves a wake-up per
			 * batch when a CPU is free for it; on a shared machine
			 * the spin takes the CPU the daemon needs), then sleep
			 * until linkemud publishes more. */
			uint64_t spin_until = now_ns() + o->spin_us * 1000;
			while (o->spin_us && punt_ring_peek(&in) == NULL && now_ns() < spin_until)
				sched_yield(); /* a spin that gives way to whoever needs the CPU */
			if (punt_ring_peek(&in) == NULL && punt_ring_prepare_sleep(&in, &seen))
				futex_wait(&in.ctl->head, seen, 100000000L);
			__atomic_store_n(&in.ctl->waiting, 0, __ATOMIC_RELAXED);
			continue;
		}
		punt_hdr_get(slot, &h);
		v = verdict(o, ++c->in);
		work(o->work_ns);
		if (v == 0) {
			c->dropped++;
			drop_seq = h.seq;
		} else {
			drop_seq = 0;
		}
		for (int copy = 0; copy < v; copy++) {
			uint8_t *dst;

			while ((dst = punt_ring_reserve(&out)) == NULL) {
				/* linkemud polls ring 1 all the time: it frees up */
				if (unpublished)
					punt_ring_publish(&out);
				unpublished = 0;
				if (g_stop || __atomic_load_n(&seg->closed, __ATOMIC_ACQUIRE))
					goto done;
				sched_yield();
			}
			punt_hdr_put(dst, h.len <= PUNT_FRAME_MAX ? h.len : 0, copy ? 0 : h.seq);
			memcpy(dst + PUNT_HDR_LEN, slot + PUNT_HDR_LEN, h.len <= PUNT_FRAME_MAX ? h.len : 0);
			punt_ring_push(&out);
			unpublished++;
			*(copy ? &c->injected : &c->out) += 1;
		}
		punt_ring_pop(&in);
		unreleased++;
		if (unpublished >= 32) {
			punt_ring_publish(&out);
			unpublished = 0;
		}
		if (unreleased >= 32) {
			punt_ring_release(&in);
			unreleased = 0;
		}
	}
done:
	if (unpublished)
		punt_ring_publish(&out);
	punt_ring_release(&in);
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct counts c = {0, 0, 0, 0};
	struct sigaction sa;
	int rc;

	if (parse(argc, argv, &o) < 0) {
		usage(stderr);
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: blocking reads return */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	rc = o.fifo ? run_fifo(&o, &c) : run_shm(&o, &c);
	fprintf(stderr, "punt_echo: frames in %" PRIu64 ", returned %" PRIu64 ", dropped %" PRIu64 ", injected %" PRIu64 "\n",
		c.in, c.out, c.dropped, c.injected);
	return rc;
}
