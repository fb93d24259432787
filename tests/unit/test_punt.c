/* Punted classes (docs/punt.md): the grammar, the shared ring, the FIFO
 * framing, and a channel's books end to end, with this test playing the
 * external process over a real FIFO pair and a real segment. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "minitest.h"
#include "path.h"
#include "punt.h"
#include "punt_wire.h"
#include "swap.h"

/* --- grammar ---------------------------------------------------------------- */

static void expect_error(const char *text, const char *needle)
{
	struct le_path_config c;
	char err[LE_ERR_MAX] = "";

	CHECK(le_path_config_parse(text, &c, err, sizeof(err)) < 0, "'%s' parsed", text);
	CHECK(strstr(err, needle) != NULL, "'%s': error '%s' lacks '%s'", text, err, needle);
}

static void test_grammar(void)
{
	struct le_path_config c, back;
	char err[LE_ERR_MAX] = "", text[LE_PATH_TEXT_MAX];

	CHECK(le_path_config_parse("delay 1ms ; class ctl match proto tcp port 830 : punt fifo /tmp/x/p delay 2ms ; "
				   "class b match ether arp : punt shm le-b.1",
				   &c, err, sizeof(err)) == 0,
	      "%s", err);
	CHECK(c.nclasses == 2);
	CHECK(c.cls[0].punt.transport == LE_PUNT_FIFO && strcmp(c.cls[0].punt.name, "/tmp/x/p") == 0);
	CHECK(c.cls[0].link.delay == 2 * LE_NS_PER_MS);
	CHECK(c.cls[1].punt.transport == LE_PUNT_SHM && strcmp(c.cls[1].punt.name, "le-b.1") == 0);
	le_path_config_format(&c, text, sizeof(text));
	CHECK(strstr(text, "class ctl match proto tcp port 830 : punt fifo /tmp/x/p delay 2ms") != NULL, "%s", text);
	CHECK(strstr(text, "class b match ether arp : punt shm le-b.1") != NULL, "%s", text);
	CHECK(le_path_config_parse(text, &back, err, sizeof(err)) == 0, "%s", err);
	CHECK(le_path_config_equal(&c, &back), "round trip of '%s'", text);
	/* the channel is part of what a configuration means */
	CHECK(le_path_config_parse("; class b match ether arp : punt shm other", &back, err, sizeof(err)) == 0);
	CHECK(!le_path_config_equal(&c, &back));
	/* a punted chain */
	CHECK(le_path_config_parse("; class b match ether arp : punt fifo p rate 1mbit >> delay 1ms", &c, err,
				   sizeof(err)) == 0,
	      "%s", err);
	CHECK(c.cls[0].hops.more == 1 && c.cls[0].punt.transport == LE_PUNT_FIFO);

	expect_error("; class a match ether arp : punt", "punt: missing the transport");
	expect_error("; class a match ether arp : punt fifi p", "did you mean 'fifo'");
	expect_error("; class a match ether arp : punt pipe p", "'pipe' is not a transport");
	expect_error("; class a match ether arp : punt fifo", "punt fifo: missing PATH");
	expect_error("; class a match ether arp : punt shm", "punt shm: missing NAME");
	expect_error("; class a match ether arp : punt shm a/b", "'a/b' is not a shared-memory name");
	expect_error("; class a match ether arp : punt fifo /tmp/", "ends in '/'");
	expect_error("; class a match ether arp : delay 1ms punt fifo p", "must come right after ':'");
	expect_error("punt fifo p", "only a class can be punted");
	expect_error("; class a match ether arp : punt fifo p ; class b match vlan 3 : punt fifo p",
		     "already used by class a");
	expect_error("; class a match ether arp : punt fifo p dealy 1ms", "class a: unknown word 'dealy'");
}

/* --- the shared ring ---------------------------------------------------------- */

#define RING_SLOTS 8u

/* aligned_alloc wants a size that is a multiple of the alignment (C11;
 * ASan enforces it); the segment is mmapped in pages in real use anyway. */
static size_t page_round(size_t len)
{
	return (len + 4095) & ~(size_t)4095;
}

static void test_ring_basic(void)
{
	size_t len = punt_shm_size(RING_SLOTS);
	uint8_t *seg = aligned_alloc(4096, page_round(len));
	struct punt_ring_view p, c;
	uint8_t *slot;
	struct punt_hdr h;

	memset(seg, 0, len);
	punt_ring_view_init(&p, seg, PUNT_SHM_HEAD, RING_SLOTS);
	punt_ring_view_init(&c, seg, PUNT_SHM_HEAD, RING_SLOTS);
	CHECK(punt_ring_peek(&c) == NULL);
	for (unsigned i = 0; i < RING_SLOTS; i++) {
		slot = punt_ring_reserve(&p);
		CHECK(slot != NULL, "slot %u", i);
		if (slot == NULL)
			break;
		punt_hdr_put(slot, i, 100 + i);
		punt_ring_push(&p);
	}
	CHECK(punt_ring_reserve(&p) == NULL, "a full ring takes no more");
	/* nothing visible before publish */
	CHECK(punt_ring_peek(&c) == NULL);
	CHECK(punt_ring_publish(&p) == 0, "nobody sleeps");
	for (unsigned i = 0; i < 3; i++) {
		slot = punt_ring_peek(&c);
		CHECK(slot != NULL);
		if (slot == NULL)
			break;
		punt_hdr_get(slot, &h);
		CHECK(h.len == i && h.seq == 100 + i && h.flags == 0);
		punt_ring_pop(&c);
	}
	CHECK(punt_ring_reserve(&p) == NULL, "slots are free only once released");
	punt_ring_release(&c);
	CHECK(punt_ring_reserve(&p) != NULL);
	/* a consumer about to sleep on an empty ring is woken by the next publish */
	while (punt_ring_peek(&c) != NULL)
		punt_ring_pop(&c);
	punt_ring_release(&c);
	uint32_t seen;
	CHECK(punt_ring_prepare_sleep(&c, &seen) == 1);
	punt_ring_push(&p);
	CHECK(punt_ring_publish(&p) == 1, "the producer sees the sleeper");
	CHECK(punt_ring_prepare_sleep(&c, &seen) == 0, "and the sleeper sees the slot");
	free(seg);
}

/* Two threads, many laps: every record arrives once, in order, whole. */
struct lap {
	struct punt_ring_view v;
	unsigned n;
	unsigned bad;
};

static void *producer(void *arg)
{
	struct lap *l = arg;

	for (unsigned i = 1; i <= l->n; i++) {
		uint8_t *slot;
		while ((slot = punt_ring_reserve(&l->v)) == NULL)
			;
		punt_hdr_put(slot, i % 64, i);
		memset(slot + PUNT_HDR_LEN, (int)(i & 0xff), i % 64);
		punt_ring_push(&l->v);
		if (i % 3 == 0 || i == l->n)
			punt_ring_publish(&l->v);
	}
	return NULL;
}

static void test_ring_threads(void)
{
	size_t len = punt_shm_size(RING_SLOTS);
	uint8_t *seg = aligned_alloc(4096, page_round(len));
	struct lap prod, cons;
	pthread_t t;

	memset(seg, 0, len);
	punt_ring_view_init(&prod.v, seg, PUNT_SHM_HEAD, RING_SLOTS);
	punt_ring_view_init(&cons.v, seg, PUNT_SHM_HEAD, RING_SLOTS);
	prod.n = cons.n = 200000;
	cons.bad = 0;
	pthread_create(&t, NULL, producer, &prod);
	for (unsigned i = 1; i <= cons.n; i++) {
		const uint8_t *slot;
		struct punt_hdr h;
		while ((slot = punt_ring_peek(&cons.v)) == NULL)
			;
		punt_hdr_get(slot, &h);
		if (h.seq != i || h.len != i % 64)
			cons.bad++;
		for (unsigned k = 0; k < h.len && k < 64; k++)
			if (slot[PUNT_HDR_LEN + k] != (uint8_t)(i & 0xff)) {
				cons.bad++;
				break;
			}
		punt_ring_pop(&cons.v);
		if (i % 5 == 0)
			punt_ring_release(&cons.v);
	}
	punt_ring_release(&cons.v);
	pthread_join(t, NULL);
	CHECK(cons.bad == 0, "%u records out of order or torn", cons.bad);
	free(seg);
}

/* --- FIFO framing ---------------------------------------------------------------- */

static void test_framing(void)
{
	static struct punt_rbuf b;
	uint8_t stream[4096];
	size_t n = 0, fed = 0;
	unsigned got = 0, bad = 0;
	struct punt_hdr h;
	const uint8_t *frame;

	for (unsigned i = 1; i <= 40; i++) {
		punt_hdr_put(stream + n, (i * 7) % 60, i);
		memset(stream + n + PUNT_HDR_LEN, (int)i, (i * 7) % 60);
		n += PUNT_HDR_LEN + (i * 7) % 60;
	}
	/* fed in pieces of 1 .. 13 bytes: records come out whole, in order */
	memset(&b, 0, sizeof(b));
	for (unsigned piece = 1; fed < n; piece = piece % 13 + 1) {
		size_t k = piece < n - fed ? piece : n - fed;
		int r;

		punt_rbuf_compact(&b);
		memcpy(b.buf + b.have, stream + fed, k);
		b.have += k;
		fed += k;
		while ((r = punt_rbuf_next(&b, &h, &frame)) == 1) {
			got++;
			if (h.seq != got || h.len != (got * 7) % 60 || (h.len && frame[h.len - 1] != (uint8_t)got))
				bad++;
		}
		CHECK(r == 0);
	}
	CHECK(got == 40 && bad == 0, "got %u, bad %u", got, bad);
	/* not the protocol */
	memset(&b, 0, sizeof(b));
	punt_hdr_put(b.buf, PUNT_FRAME_MAX + 1, 1);
	b.have = PUNT_HDR_LEN;
	CHECK(punt_rbuf_next(&b, &h, &frame) == -1, "a length over the maximum");
	memset(&b, 0, sizeof(b));
	punt_hdr_put(b.buf, 0, 1);
	b.buf[4] = 1;
	b.have = PUNT_HDR_LEN;
	CHECK(punt_rbuf_next(&b, &h, &frame) == -1, "flags not 0");
}

/* --- a channel's books, end to end ------------------------------------------------- */

struct tframe {
	uint32_t len;
	uint8_t b[PUNT_FRAME_MAX];
};

static long live_frames;

static void t_free(void *ctx, void *h)
{
	(void)ctx;
	live_frames--;
	free(h);
}

static uint8_t *t_bytes(void *ctx, void *h, uint32_t *n)
{
	(void)ctx;
	*n = ((struct tframe *)h)->len;
	return ((struct tframe *)h)->b;
}

static void *t_make(void *ctx, const uint8_t *b, uint32_t len)
{
	struct tframe *f = malloc(sizeof(*f));
	(void)ctx;
	live_frames++;
	f->len = len;
	memcpy(f->b, b, len);
	return f;
}

/* An ARP frame (the punted class) or an IPv4-typed one (the default). */
static void *frame(int arp, uint8_t tag)
{
	uint8_t b[64];

	memset(b, tag, sizeof(b));
	b[12] = 0x08;
	b[13] = arp ? 0x06 : 0x00;
	return t_make(NULL, b, sizeof(b));
}

struct rig {
	struct le_path_config cfg[LE_DIRS];
	struct le_frame_ops ops;
	struct dp_punt_set *set;
	struct le_path *path;
	struct le_swap swap;
	le_ns_t now;
	uint64_t rx, tx;
};

static int rig_open(struct rig *r, const char *text)
{
	char err[LE_ERR_MAX] = "";

	memset(r, 0, sizeof(*r));
	r->ops = (struct le_frame_ops){.free = t_free, .bytes = t_bytes};
	if (le_path_config_parse(text, &r->cfg[0], err, sizeof(err)) < 0 ||
	    le_path_config_parse("", &r->cfg[1], err, sizeof(err)) < 0 ||
	    dp_punt_open(&r->set, r->cfg, &r->ops, t_make, NULL, err, sizeof(err)) < 0) {
		CHECK(0, "%s", err);
		return -1;
	}
	dp_punt_bind(r->set, &r->ops);
	r->path = malloc(sizeof(*r->path));
	if (le_path_init(r->path, &r->cfg[0], LE_DIR_A2B, 1, &r->ops, err, sizeof(err)) < 0) {
		CHECK(0, "%s", err);
		return -1;
	}
	le_swap_init(&r->swap, r->path);
	r->now = 1000;
	return 0;
}

static void rig_offer(struct rig *r, void *f)
{
	r->rx++;
	le_swap_offer(&r->swap, f, ((struct tframe *)f)->len, r->now);
}

/* One pass of the data plane at now (+ step): punt poll, then send what
 * is due. */
static void rig_pass(struct rig *r, le_ns_t step)
{
	struct le_frame out[64];
	unsigned k;

	r->now += step;
	dp_punt_poll(r->set, LE_DIR_A2B, &r->swap, r->now);
	while ((k = le_swap_dequeue(&r->swap, r->now, out, 64)) > 0)
		for (unsigned i = 0; i < k; i++) {
			r->tx++;
			t_free(NULL, out[i].handle);
		}
}

/* rx + injected == tx + drops + held (the direction's law, with the
 * model's own counts). */
static void rig_books(struct rig *r, const char *when)
{
	struct dp_counters c;
	struct le_counters m;
	uint64_t held = 0;

	memset(&c, 0, sizeof(c));
	dp_punt_counts(r->set, LE_DIR_A2B, &c, &held);
	le_path_counters(r->path, &m);
	uint64_t in = r->rx + c.injected + m.dup;
	uint64_t out = r->tx + dp_counters_dropped(&c) + le_counters_dropped(&m) + held + le_path_depth(r->path);
	CHECK(in == out, "%s: rx %llu + injected %llu != tx %llu + drops %llu + %llu + held %llu + depth %u", when,
	      (unsigned long long)r->rx, (unsigned long long)c.injected, (unsigned long long)r->tx,
	      (unsigned long long)dp_counters_dropped(&c), (unsigned long long)le_counters_dropped(&m),
	      (unsigned long long)held, le_path_depth(r->path));
}

static void rig_close(struct rig *r)
{
	struct le_frame out[64];

	while (le_swap_dequeue(&r->swap, UINT64_MAX / 2, out, 64) > 0)
		;
	le_path_drain(r->path);
	le_path_free(r->path);
	free(r->path);
	dp_punt_close(r->set);
}

static struct dp_punt_status status(struct rig *r)
{
	struct dp_punt_status st[DP_PUNT_MAX];
	CHECK(dp_punt_status(r->set, LE_DIR_A2B, st) == 1);
	return st[0];
}

/* The process's side of a FIFO: read what arrived, answer by `plan`. */
static unsigned peer_fifo(int rfd, int wfd, const char *plan)
{
	static struct punt_rbuf b;
	uint8_t out[8192];
	size_t n = 0;
	unsigned i = 0;
	struct punt_hdr h;
	const uint8_t *f;
	ssize_t r = read(rfd, b.buf + b.have, punt_rbuf_compact(&b));

	if (r > 0)
		b.have += (size_t)r;
	while (punt_rbuf_next(&b, &h, &f) == 1) {
		char what = plan[i % strlen(plan)];
		i++;
		if (what == 'd')
			continue; /* dropped: settled by the next answer */
		punt_hdr_put(out + n, h.len, h.seq);
		memcpy(out + n + PUNT_HDR_LEN, f, h.len);
		n += PUNT_HDR_LEN + h.len;
		if (what == 'i') { /* and a new frame */
			punt_hdr_put(out + n, h.len, 0);
			memcpy(out + n + PUNT_HDR_LEN, f, h.len);
			n += PUNT_HDR_LEN + h.len;
		}
	}
	if (n)
		CHECK(write(wfd, out, n) == (ssize_t)n);
	return i;
}

static void test_fifo_books(const char *dir)
{
	struct rig r;
	char text[512], path[256];
	int rfd, wfd;

	snprintf(text, sizeof(text), "delay 1ms ; class ctl match ether arp : punt fifo %s/p delay 2ms", dir);
	if (rig_open(&r, text) < 0)
		return;
	/* no process yet: the class's frames are punt_down, others forward */
	rig_offer(&r, frame(1, 1));
	rig_offer(&r, frame(0, 2));
	rig_pass(&r, 5 * LE_NS_PER_MS);
	CHECK(status(&r).down == 1 && !status(&r).up);
	rig_books(&r, "no process");

	snprintf(path, sizeof(path), "%s/p.out", dir);
	rfd = open(path, O_RDONLY | O_NONBLOCK);
	snprintf(path, sizeof(path), "%s/p.in", dir);
	wfd = open(path, O_WRONLY | O_NONBLOCK);
	CHECK(rfd >= 0 && wfd >= 0, "the process's ends: %s", strerror(errno));
	rig_pass(&r, 11 * LE_NS_PER_MS); /* the next check sees the reader */
	CHECK(status(&r).up);

	/* 10 frames: the process echoes, drops one, injects one */
	for (int i = 0; i < 10; i++)
		rig_offer(&r, frame(1, (uint8_t)i));
	rig_pass(&r, 1000);
	CHECK(status(&r).sent == 10 && status(&r).held == 10);
	rig_books(&r, "sent");
	CHECK(peer_fifo(rfd, wfd, "eedeeeeeie") == 10);
	rig_pass(&r, 1000);
	struct dp_punt_status st = status(&r);
	CHECK(st.returned == 9 && st.dropped == 1 && st.injected == 1 && st.held == 0,
	      "returned %llu dropped %llu injected %llu held %llu", (unsigned long long)st.returned,
	      (unsigned long long)st.dropped, (unsigned long long)st.injected, (unsigned long long)st.held);
	rig_books(&r, "answered");
	/* returned frames go through the class's link: 2 ms later */
	uint64_t tx = r.tx;
	rig_pass(&r, LE_NS_PER_MS);
	CHECK(r.tx == tx, "not before the class's delay");
	rig_pass(&r, 2 * LE_NS_PER_MS);
	CHECK(r.tx == tx + 10, "the answers and the injected frame leave: %llu", (unsigned long long)(r.tx - tx));

	/* the process dies holding 3 frames: lost with it, counted */
	for (int i = 0; i < 3; i++)
		rig_offer(&r, frame(1, (uint8_t)i));
	rig_pass(&r, 1000);
	close(rfd);
	close(wfd);
	rig_pass(&r, 11 * LE_NS_PER_MS);
	st = status(&r);
	CHECK(!st.up && st.peers_lost == 1 && st.down == 1 + 3, "down %llu", (unsigned long long)st.down);
	rig_books(&r, "process gone");
	/* a live change may keep the channel, not add one or move it */
	{
		struct le_path_config live;
		char err[LE_ERR_MAX] = "";

		snprintf(text, sizeof(text), "; class ctl match ether arp : punt fifo %s/p delay 9ms", dir);
		CHECK(le_path_config_parse(text, &live, err, sizeof(err)) == 0);
		CHECK(dp_punt_accepts(r.set, LE_DIR_A2B, &live, err, sizeof(err)) == 0, "%s", err);
		CHECK(dp_punt_accepts(r.set, LE_DIR_B2A, &live, err, sizeof(err)) < 0 &&
		      strstr(err, "no such channel was opened at start") != NULL, "%s", err);
		snprintf(text, sizeof(text), "; class other match ether arp : punt fifo %s/p", dir);
		CHECK(le_path_config_parse(text, &live, err, sizeof(err)) == 0);
		CHECK(dp_punt_accepts(r.set, LE_DIR_A2B, &live, err, sizeof(err)) < 0 &&
		      strstr(err, "belongs to class ctl") != NULL, "%s", err);
		CHECK(le_path_config_parse("; class ctl match ether arp : punt shm x", &live, err, sizeof(err)) == 0);
		CHECK(dp_punt_accepts(NULL, LE_DIR_A2B, &live, err, sizeof(err)) < 0);
	}
	rig_offer(&r, frame(0, 9)); /* the rest still forwards */
	rig_pass(&r, 2 * LE_NS_PER_MS);
	rig_books(&r, "after");
	rig_close(&r);
	CHECK(live_frames == 0, "%ld frames leaked", live_frames);
	snprintf(path, sizeof(path), "%s/p.out", dir);
	CHECK(access(path, F_OK) < 0, "the FIFOs are removed at close");
}

/* A full pipe: what does not fit is punt_full, the rest goes. */
static void test_fifo_full(const char *dir)
{
	struct rig r;
	char text[512], path[256];
	int rfd;

	snprintf(text, sizeof(text), "; class ctl match ether arp : punt fifo %s/f", dir);
	if (rig_open(&r, text) < 0)
		return;
	snprintf(path, sizeof(path), "%s/f.out", dir);
	rfd = open(path, O_RDONLY | O_NONBLOCK);
	rig_pass(&r, 11 * LE_NS_PER_MS);
	/* a stalled process: nothing read */
	for (int i = 0; i < 20000; i++) {
		rig_offer(&r, frame(1, (uint8_t)i));
		if (i % 32 == 31)
			rig_pass(&r, 1000);
	}
	rig_pass(&r, 1000);
	struct dp_punt_status st = status(&r);
	CHECK(st.full > 0 && st.sent > 0 && st.sent + st.full == 20000, "sent %llu full %llu",
	      (unsigned long long)st.sent, (unsigned long long)st.full);
	rig_books(&r, "full");
	close(rfd);
	rig_close(&r);
	CHECK(live_frames == 0, "%ld frames leaked", live_frames);
}

/* The process's side of a shm class, as a process attaches: the
 * segment mapped, then its lock taken (shm_peer_lock). */
struct shm_peer {
	int fd;
	struct punt_shm_seg *seg;
	struct flock fl;
	char path[80];
};

/* A rig whose class `ctl` is punted to the shm segment
 * le-test-punt<tag>-PID (`extra` after its name), and that segment
 * mapped; not locked yet. 0 on success. */
static int shm_rig_open(struct rig *r, struct shm_peer *p, const char *tag, const char *extra)
{
	char name[64], text[256];

	snprintf(name, sizeof(name), "le-test-punt%s-%d", tag, (int)getpid());
	snprintf(text, sizeof(text), "; class ctl match ether arp : punt shm %s%s", name, extra);
	if (rig_open(r, text) < 0)
		return -1;
	snprintf(p->path, sizeof(p->path), "/%s", name);
	p->fd = shm_open(p->path, O_RDWR, 0);
	CHECK(p->fd >= 0);
	p->seg = mmap(NULL, punt_shm_size(PUNT_SHM_SLOTS), PROT_READ | PROT_WRITE, MAP_SHARED, p->fd, 0);
	CHECK(p->seg != MAP_FAILED);
	p->fl = (struct flock){.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
	return 0;
}

/* Takes (the process attaches) or drops (it is gone) the segment's lock:
 * a POSIX lock conflicts with the daemon's OFD lock, even in one
 * process. */
static void shm_peer_lock(struct shm_peer *p, int take)
{
	p->fl.l_type = take ? F_WRLCK : F_UNLCK;
	CHECK(fcntl(p->fd, F_SETLK, &p->fl) == 0, "%s", strerror(errno));
}

/* The mapping and the rig gone, and no frame left alive. */
static void shm_rig_close(struct rig *r, struct shm_peer *p)
{
	munmap(p->seg, punt_shm_size(PUNT_SHM_SLOTS));
	close(p->fd);
	rig_close(r);
	CHECK(live_frames == 0, "%ld frames leaked", live_frames);
}

/* Shared memory: attach (lock), echo through the rings, full ring, death. */
static void test_shm_books(void)
{
	struct rig r;
	struct shm_peer p;
	struct punt_ring_view in, out;

	if (shm_rig_open(&r, &p, "", "") < 0)
		return;
	CHECK(p.seg->magic == PUNT_MAGIC && p.seg->slots == PUNT_SHM_SLOTS);
	rig_offer(&r, frame(1, 1));
	rig_pass(&r, 11 * LE_NS_PER_MS);
	CHECK(status(&r).down == 1 && !status(&r).up, "no lock: no process");
	shm_peer_lock(&p, 1);
	p.seg->peer_pid = 4242;
	rig_pass(&r, 11 * LE_NS_PER_MS);
	CHECK(status(&r).up && status(&r).peer_pid == 4242);
	punt_ring_view_init(&in, p.seg, p.seg->ring_off[0], p.seg->slots);
	punt_ring_view_init(&out, p.seg, p.seg->ring_off[1], p.seg->slots);
	for (unsigned i = 0; i < PUNT_SHM_SLOTS + 5; i++)
		rig_offer(&r, frame(1, (uint8_t)i));
	rig_pass(&r, 1000);
	CHECK(status(&r).sent == PUNT_SHM_SLOTS && status(&r).full == 5);
	/* echo the first 100, drop the 101st by a len-0 notice */
	for (int i = 0; i < 101; i++) {
		const uint8_t *s = punt_ring_peek(&in);
		struct punt_hdr h;
		uint8_t *d = punt_ring_reserve(&out);
		punt_hdr_get(s, &h);
		punt_hdr_put(d, i < 100 ? h.len : 0, h.seq);
		memcpy(d + PUNT_HDR_LEN, s + PUNT_HDR_LEN, i < 100 ? h.len : 0);
		punt_ring_push(&out);
		punt_ring_pop(&in);
	}
	punt_ring_publish(&out);
	punt_ring_release(&in);
	for (int i = 0; i < 3; i++) /* up to a burst of answers per pass */
		rig_pass(&r, 1000);
	struct dp_punt_status st = status(&r);
	CHECK(st.returned == 100 && st.dropped == 1 && st.held == PUNT_SHM_SLOTS - 101, "returned %llu held %llu",
	      (unsigned long long)st.returned, (unsigned long long)st.held);
	rig_books(&r, "shm answered");
	/* the process dies (its lock goes): what it held is lost, the ring is
	 * emptied for the next one */
	shm_peer_lock(&p, 0);
	rig_pass(&r, 11 * LE_NS_PER_MS);
	st = status(&r);
	CHECK(!st.up && st.peers_lost == 1 && st.held == 0 && st.down == 1 + PUNT_SHM_SLOTS - 101);
	rig_books(&r, "shm process gone");
	shm_rig_close(&r, &p);
	CHECK(shm_open(p.path, O_RDWR, 0) < 0, "the segment is removed at close");
}

/* A process that publishes a head more than a ring's slots ahead of the
 * daemon's tail (garbage, or a bug): no such slots can exist. Read on, the
 * daemon would take stale slots for new frames (injected) lap after lap,
 * and on the process's death it would read them all, up to 2^32, in the
 * forwarding thread. It is a protocol error: skipped, once. */
static void test_shm_bad_head(void)
{
	struct rig r;
	struct shm_peer p;
	struct punt_ring_view in, out;

	if (shm_rig_open(&r, &p, "-head", "") < 0)
		return;
	shm_peer_lock(&p, 1);
	rig_pass(&r, 11 * LE_NS_PER_MS);
	CHECK(status(&r).up);
	punt_ring_view_init(&in, p.seg, p.seg->ring_off[0], p.seg->slots);
	punt_ring_view_init(&out, p.seg, p.seg->ring_off[1], p.seg->slots);
	/* one frame, answered properly: slot 0 of ring 1 now holds a record */
	rig_offer(&r, frame(1, 1));
	rig_pass(&r, 1000);
	{
		const uint8_t *s = punt_ring_peek(&in);
		struct punt_hdr h;
		uint8_t *d = punt_ring_reserve(&out);
		punt_hdr_get(s, &h);
		memcpy(d, s, PUNT_HDR_LEN + h.len);
		punt_ring_push(&out);
		punt_ring_pop(&in);
		punt_ring_publish(&out);
		punt_ring_release(&in);
	}
	rig_pass(&r, 1000);
	CHECK(status(&r).returned == 1 && status(&r).held == 0);
	/* then a head three laps ahead */
	__atomic_store_n(&out.ctl->head, out.local + 3 * PUNT_SHM_SLOTS, __ATOMIC_RELEASE);
	for (int i = 0; i < 200; i++)
		rig_pass(&r, 1000);
	struct dp_punt_status st = status(&r);
	CHECK(st.injected == 0 && st.protocol_errors == 1, "a head beyond the ring: injected %llu, protocol errors %llu",
	      (unsigned long long)st.injected, (unsigned long long)st.protocol_errors);
	rig_books(&r, "shm bad head");
	/* and a head 2^31 ahead when the process dies: the check returns */
	__atomic_store_n(&out.ctl->head, out.local + 3 * PUNT_SHM_SLOTS + 0x80000000u, __ATOMIC_RELEASE);
	shm_peer_lock(&p, 0);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rig_pass(&r, 11 * LE_NS_PER_MS);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	st = status(&r);
	CHECK(!st.up && st.injected == 0 && s < 1.0, "death with a bad head: %.2f s, injected %llu", s,
	      (unsigned long long)st.injected);
	rig_books(&r, "shm bad head, gone");
	shm_rig_close(&r, &p);
}

/* A peer that closes PATH.out (gone, as the daemon sees it) but goes on
 * writing PATH.in: the daemon takes what was there when it noticed, not
 * whatever the peer writes for as long as it writes, in its forwarding
 * thread. */
struct flood {
	int fd;
	volatile int stop;
	unsigned long records;
};

static void *flooder(void *arg)
{
	struct flood *f = arg;
	enum { REC = PUNT_HDR_LEN + 64, N = 4096 / REC };
	static uint8_t rec[N * REC];
	struct timespec t0, t;

	memset(rec, 0, sizeof(rec));
	for (int i = 0; i < N; i++) {
		punt_hdr_put(rec + i * REC, 64, 0); /* injected frames */
		rec[i * REC + PUNT_HDR_LEN + 12] = 0x08;
		rec[i * REC + PUNT_HDR_LEN + 13] = 0x06;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!f->stop) {
		if (write(f->fd, rec, sizeof(rec)) == (ssize_t)sizeof(rec))
			f->records += N;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec >= 3) /* a bound for the test itself */
			break;
	}
	return NULL;
}

/* The pass that finds the peer gone, while `flood` (a thread started 20
 * ms before) writes on; then the thread stopped (*stop). Its seconds. */
static double pass_under_flood(struct rig *r, void *(*flood)(void *), void *arg, volatile int *stop)
{
	pthread_t th;
	struct timespec t0, t1;

	pthread_create(&th, NULL, flood, arg);
	usleep(20000);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rig_pass(r, 11 * LE_NS_PER_MS);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*stop = 1;
	pthread_join(th, NULL);
	return (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
}

static void test_fifo_gone_flood(const char *dir)
{
	struct rig r;
	char text[512], path[256];
	int rfd;
	struct flood f = {0};

	snprintf(text, sizeof(text), "; class ctl match ether arp : punt fifo %s/g limit 100", dir);
	if (rig_open(&r, text) < 0)
		return;
	snprintf(path, sizeof(path), "%s/g.out", dir);
	rfd = open(path, O_RDONLY | O_NONBLOCK);
	snprintf(path, sizeof(path), "%s/g.in", dir);
	f.fd = open(path, O_WRONLY | O_NONBLOCK);
	CHECK(rfd >= 0 && f.fd >= 0);
	rig_pass(&r, 11 * LE_NS_PER_MS);
	CHECK(status(&r).up);
	close(rfd); /* gone, as the daemon will see at its next check */
	double sec = pass_under_flood(&r, flooder, &f, &f.stop);
	/* at most what the pipe and the daemon's read buffer held */
	long cap = (fcntl(f.fd, F_GETPIPE_SZ) + (long)PUNT_RBUF_SIZE) / (PUNT_HDR_LEN + 64);
	struct dp_punt_status st = status(&r);
	CHECK(!st.up && (long)st.injected <= cap && sec < 2.0,
	      "the pass that found the peer gone took %.3f s and %llu injected frames (the pipe held %ld at most; "
	      "%lu written)", sec, (unsigned long long)st.injected, cap, f.records);
	rig_books(&r, "gone, flooding");
	close(f.fd);
	rig_close(&r);
	CHECK(live_frames == 0, "%ld frames leaked", live_frames);
}

/* The same over shared memory: a peer that lets its lock go but goes on
 * producing on ring 1. */
struct shm_flood {
	struct punt_ring_view out;
	volatile int stop;
	unsigned long records;
};

static void *shm_flooder(void *arg)
{
	struct shm_flood *f = arg;
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!f->stop) {
		uint8_t *d = punt_ring_reserve(&f->out);
		if (d != NULL) {
			memset(d, 0, PUNT_HDR_LEN + 64);
			punt_hdr_put(d, 64, 0);
			d[PUNT_HDR_LEN + 12] = 0x08;
			d[PUNT_HDR_LEN + 13] = 0x06;
			punt_ring_push(&f->out);
			punt_ring_publish(&f->out);
			f->records++;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec >= 3)
			break;
	}
	return NULL;
}

static void test_shm_gone_flood(void)
{
	struct rig r;
	struct shm_peer p;
	struct shm_flood f = {0};

	if (shm_rig_open(&r, &p, "-flood", " limit 100") < 0)
		return;
	shm_peer_lock(&p, 1);
	rig_pass(&r, 11 * LE_NS_PER_MS);
	CHECK(status(&r).up);
	punt_ring_view_init(&f.out, p.seg, p.seg->ring_off[1], p.seg->slots);
	shm_peer_lock(&p, 0);
	double sec = pass_under_flood(&r, shm_flooder, &f, &f.stop);
	struct dp_punt_status st = status(&r);
	/* the pass's own read (TAKE_MAX) and at most a ring's worth at the check */
	CHECK(!st.up && st.injected <= PUNT_SHM_SLOTS + 64 && sec < 2.0,
	      "the pass that found the peer gone took %.3f s and %llu injected frames (%lu written)", sec,
	      (unsigned long long)st.injected, f.records);
	rig_books(&r, "shm gone, flooding");
	shm_rig_close(&r, &p);
}

int main(void)
{
	char dir[] = "/tmp/le-test-punt-XXXXXX";

	test_grammar();
	test_ring_basic();
	test_ring_threads();
	test_framing();
	if (mkdtemp(dir) == NULL) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
	} else {
		test_fifo_books(dir);
		test_fifo_full(dir);
		test_fifo_gone_flood(dir);
		rmdir(dir);
	}
	test_shm_books();
	test_shm_bad_head();
	test_shm_gone_flood();
	printf("test_punt: %u passed, %u failed\n", mt_passed, mt_failed);
	return mt_failed ? 1 : 0;
}
