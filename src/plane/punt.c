/* Punted classes' channels (see punt.h; the wire: punt_wire.h). */
#define _GNU_SOURCE /* F_OFD_SETLK, F_SETPIPE_SZ */
#include "punt.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "err.h"
#include "punt_wire.h"

/* How often a channel checks that its process is (still) there: a
 * syscall per channel every 10 ms, invisible beside the forwarding, and
 * a dead process costs at most 10 ms of frames counted punt_full. */
#define CHECK_NS (10 * LE_NS_PER_MS)
/* An idle FIFO (nothing awaiting an answer) is read this often, for
 * frames the process injects unasked; a busy one at every pass. */
#define IDLE_READ_NS LE_NS_PER_MS
/* Records go out in writes of up to PIPE_BUF bytes: POSIX makes such a
 * write to a pipe all or nothing, so a full pipe never leaves half a
 * record, and 64-byte frames cost a syscall per ~50 frames. */
#define PACK PIPE_BUF
/* Room in each pipe: ~3000 records of 64-byte frames (Linux's default
 * 64 KiB holds ~800). Best effort: an unprivileged process may be
 * refused more than /proc/sys/fs/pipe-max-size. */
#define PIPE_BYTES (256 * 1024)
/* Answers taken back per pass and channel: about a burst, so a process
 * that answers in big batches does not flood the class's link with more
 * due frames than the data plane sends per pass (the rest waits in the
 * pipe or ring: backpressure to the process, not drops here). */
#define TAKE_MAX 64u

struct chan {
	enum le_direction dir;
	struct le_punt_config cfg;
	struct dp_punt_status st;      /* counts; held is computed */
	uint64_t next_seq;             /* seq of the next frame sent (from 1) */
	uint64_t settled;              /* every seq <= this was answered or given up */
	uint64_t shutdown;             /* held when the daemon stopped */
	le_ns_t next_check, next_read;
	struct le_swap_class_cache cache;
	/* fifo */
	char out_path[LE_PUNT_NAME_MAX + 8], in_path[LE_PUNT_NAME_MAX + 8];
	int fd_out, fd_in;
	int broken;                    /* PATH.in carried something not the protocol */
	uint32_t wlen, wrec;
	uint32_t woff[PACK / PUNT_HDR_LEN + 1];
	uint8_t wbuf[PACK];
	struct punt_rbuf *rb;
	/* shm */
	int shm_fd;
	struct punt_shm_seg *seg;
	size_t seg_len;
	struct punt_ring_view out, in;
	uint32_t pushed;               /* slots pushed, not yet published */
};

struct dp_punt_set {
	unsigned n[LE_DIRS];
	struct chan *ch[LE_DIRS][DP_PUNT_MAX];
	struct le_frame_ops ops;
	dp_punt_make_fn make;
	void *make_ctx;
	/* Frames of a class punted to a channel that was not opened at start
	 * (a live change named a new one): counted punt_down. */
	uint64_t orphan[LE_DIRS];
	int orphan_said[LE_DIRS];
};

static void say(const struct chan *c, const char *what)
{
	fprintf(stderr, "punt %s class %s (%s %s): %s\n", le_direction_name(c->dir), c->st.cls,
		le_punt_transport_name(c->cfg.transport), c->cfg.name, what);
	fflush(stderr);
}

static uint64_t held(const struct chan *c)
{
	return c->next_seq - 1 - c->settled;
}

/* --- the books ------------------------------------------------------------ */

/* An answer (or notice) with seq `seq`: 1 when the frame answers one sent,
 * 0 when it is a new frame, -1 for a len-0 notice (no frame). Earlier
 * unanswered frames are the process's drops. */
static int settle(struct chan *c, uint64_t seq, uint32_t len)
{
	int in_window = seq > c->settled && seq < c->next_seq;

	if (len == 0) {
		if (in_window) {
			c->st.dropped += seq - c->settled;
			c->settled = seq;
		}
		return -1;
	}
	if (in_window) {
		c->st.dropped += seq - c->settled - 1;
		c->settled = seq;
		c->st.returned++;
		return 1;
	}
	c->st.injected++;
	return 0;
}

/* Takes one record the process sent into the class's link. */
static void deliver(struct dp_punt_set *s, struct chan *c, struct le_swap *swap, const struct punt_hdr *h,
		    const uint8_t *frame, le_ns_t now)
{
	void *m;

	if (settle(c, h->seq, h->len) < 0)
		return;
	m = s->make(s->make_ctx, frame, h->len);
	if (m == NULL) {
		c->st.full++;
		return;
	}
	if (le_swap_offer_named(swap, c->st.cls, &c->cache, m, h->len, now) < 0) {
		/* the class is gone (a live change removed it) */
		s->ops.free(s->ops.ctx, m);
		c->st.dropped++;
	}
}

/* The process went away: what it held is lost with it. */
static void lost(struct chan *c, const char *why)
{
	char msg[160];
	uint64_t n = held(c);

	c->st.down += n;
	c->settled = c->next_seq - 1;
	c->st.up = 0;
	c->st.peer_pid = 0;
	c->st.peers_lost++;
	snprintf(msg, sizeof(msg), "process went away (%s); %llu frame(s) lost with it; waiting for a new one", why,
		 (unsigned long long)n);
	say(c, msg);
}

/* --- fifo ----------------------------------------------------------------- */

/* Records one frame into the pack buffer (seq filled in at flush). */
static void fifo_queue(struct chan *c, const uint8_t *b, uint32_t len)
{
	c->woff[c->wrec++] = c->wlen;
	punt_hdr_put(c->wbuf + c->wlen, len, 0);
	memcpy(c->wbuf + c->wlen + PUNT_HDR_LEN, b, len);
	c->wlen += PUNT_HDR_LEN + len;
}

/* Writes the pack buffer: all at once, else record by record until the
 * pipe is full; what does not fit is punt_full. Seqs are given only to
 * records written, so they stay consecutive. 0, or -1 when the process is
 * gone (EPIPE). */
static int fifo_flush(struct chan *c)
{
	unsigned ok = 0;
	int e = 0;
	ssize_t w;

	if (c->wrec == 0)
		return 0;
	for (unsigned i = 0; i < c->wrec; i++) {
		uint32_t end = i + 1 < c->wrec ? c->woff[i + 1] : c->wlen;
		punt_hdr_put(c->wbuf + c->woff[i], end - c->woff[i] - PUNT_HDR_LEN, c->next_seq + i);
	}
	w = write(c->fd_out, c->wbuf, c->wlen);
	if (w == (ssize_t)c->wlen) {
		ok = c->wrec;
	} else if (w < 0 && errno == EAGAIN) {
		/* An atomic write of <= PIPE_BUF bytes never writes part; a
		 * pipe with less room may still take the first records. */
		for (ok = 0; ok < c->wrec; ok++) {
			uint32_t end = ok + 1 < c->wrec ? c->woff[ok + 1] : c->wlen;
			w = write(c->fd_out, c->wbuf + c->woff[ok], end - c->woff[ok]);
			if (w != (ssize_t)(end - c->woff[ok])) {
				e = w < 0 ? errno : EIO;
				break;
			}
		}
	} else {
		e = w < 0 ? errno : EIO; /* EIO: a part written, the stream is broken */
	}
	c->next_seq += ok;
	c->st.sent += ok;
	if (ok < c->wrec) {
		if (e == EPIPE || e == EIO)
			c->st.down += c->wrec - ok;
		else
			c->st.full += c->wrec - ok;
	}
	c->wlen = c->wrec = 0;
	return e == EPIPE || e == EIO ? -1 : 0;
}

/* Up to TAKE_MAX records into the link: those already read first, then
 * one read (when they were not enough) for more. */
static unsigned fifo_read(struct dp_punt_set *s, struct chan *c, struct le_swap *swap, le_ns_t now)
{
	struct punt_rbuf *b = c->rb;
	struct punt_hdr h;
	const uint8_t *frame;
	unsigned got = 0;
	int k = 0;

	for (int pass = 0; pass < 2 && got < TAKE_MAX && !c->broken; pass++) {
		if (pass == 1) {
			size_t room = punt_rbuf_compact(b);
			ssize_t r = room ? read(c->fd_in, b->buf + b->have, room) : 0;
			if (r <= 0)
				break;
			b->have += (size_t)r;
		}
		while (got < TAKE_MAX && (k = punt_rbuf_next(b, &h, &frame)) == 1) {
			deliver(s, c, swap, &h, frame, now);
			got++;
		}
		if (k < 0)
			break;
	}
	if (k < 0 && !c->broken) {
		c->st.protocol_errors++;
		c->broken = 1; /* the caller drops the process */
	}
	return got;
}

static void fifo_gone(struct dp_punt_set *s, struct chan *c, struct le_swap *swap, le_ns_t now, int deliver_rest,
		      const char *why)
{
	/* Answers it wrote before it went are still good; a half-written
	 * record (or a broken stream) is thrown away, so the next process
	 * starts on a record boundary. PATH.in is ours (O_RDWR), its
	 * contents outlive the writer. */
	if (deliver_rest)
		while (!c->broken && fifo_read(s, c, swap, now) > 0)
			;
	c->broken = 0;
	while (read(c->fd_in, c->rb->buf, sizeof(c->rb->buf)) > 0)
		;
	c->rb->off = c->rb->have = 0;
	if (c->fd_out >= 0)
		close(c->fd_out);
	c->fd_out = -1;
	c->wlen = c->wrec = 0;
	lost(c, why);
}

/* A reader on PATH.out: the process is there (it opens PATH.out first). */
static void fifo_try_attach(struct chan *c)
{
	int fd = open(c->out_path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return; /* ENXIO: nobody reads it yet */
	(void)fcntl(fd, F_SETPIPE_SZ, PIPE_BYTES);
	c->fd_out = fd;
	c->st.up = 1;
	say(c, "process attached");
}

static void fifo_check(struct dp_punt_set *s, struct chan *c, struct le_swap *swap, le_ns_t now)
{
	struct pollfd p = {.fd = c->fd_out, .events = POLLOUT};

	if (!c->st.up) {
		fifo_try_attach(c);
		return;
	}
	/* The write end of a pipe polls POLLERR once no reader is left. */
	if (poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP | POLLNVAL)))
		fifo_gone(s, c, swap, now, 1, "PATH.out has no reader");
}

static int make_fifo(const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (lstat(path, &st) == 0) {
		if (!S_ISFIFO(st.st_mode))
			return le_err(err, errlen, "%s exists and is not a FIFO", path);
	} else if (mkfifo(path, 0666) < 0) {
		return le_err(err, errlen, "cannot make the FIFO %s: %s", path, strerror(errno));
	}
	(void)chmod(path, 0666); /* the process need not be root */
	return 0;
}

static int fifo_open(struct chan *c, char *err, size_t errlen)
{
	snprintf(c->out_path, sizeof(c->out_path), "%s.out", c->cfg.name);
	snprintf(c->in_path, sizeof(c->in_path), "%s.in", c->cfg.name);
	c->fd_out = c->fd_in = -1;
	c->rb = calloc(1, sizeof(*c->rb));
	if (c->rb == NULL)
		return le_err(err, errlen, "out of memory");
	if (make_fifo(c->out_path, err, errlen) < 0 || make_fifo(c->in_path, err, errlen) < 0)
		return -1;
	/* Read and write: PATH.in then never reads as end-of-file while no
	 * process writes it (a process's death shows on PATH.out instead). */
	c->fd_in = open(c->in_path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (c->fd_in < 0)
		return le_err(err, errlen, "cannot open %s: %s", c->in_path, strerror(errno));
	(void)fcntl(c->fd_in, F_SETPIPE_SZ, PIPE_BYTES);
	fifo_try_attach(c);
	return 0;
}

static void fifo_close(struct chan *c)
{
	if (c->fd_out >= 0)
		close(c->fd_out);
	if (c->fd_in >= 0)
		close(c->fd_in);
	c->fd_out = c->fd_in = -1;
	if (c->out_path[0]) {
		unlink(c->out_path);
		unlink(c->in_path);
	}
	free(c->rb);
	c->rb = NULL;
}

/* --- shared memory --------------------------------------------------------- */

static void futex_wake(uint32_t *addr)
{
	(void)syscall(SYS_futex, addr, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static unsigned shm_read(struct dp_punt_set *s, struct chan *c, struct le_swap *swap, le_ns_t now)
{
	unsigned got = 0;
	const uint8_t *slot;
	struct punt_hdr h;

	while (got < TAKE_MAX && (slot = punt_ring_peek(&c->in)) != NULL) {
		punt_hdr_get(slot, &h);
		if (h.len > PUNT_FRAME_MAX || h.flags != 0)
			c->st.protocol_errors++; /* a slot stands alone: skip it */
		else
			deliver(s, c, swap, &h, slot + PUNT_HDR_LEN, now);
		punt_ring_pop(&c->in);
		got++;
	}
	if (got)
		punt_ring_release(&c->in);
	return got;
}

/* The process holds a write lock on byte 0 while attached. Trying to take
 * it tells whether one is there; when none is, we hold it for the
 * moment, so no process attaches while the rings are reset (a process
 * waits for the lock: F_SETLKW). */
static void shm_check(struct dp_punt_set *s, struct chan *c, struct le_swap *swap, le_ns_t now)
{
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};

	if (fcntl(c->shm_fd, F_OFD_SETLK, &fl) == 0) {
		if (c->st.up) {
			while (shm_read(s, c, swap, now) > 0)
				;
			/* Ring 0 has no consumer now: empty it. */
			__atomic_store_n(&c->out.ctl->tail, c->out.local, __ATOMIC_RELEASE);
			__atomic_store_n(&c->out.ctl->waiting, 0, __ATOMIC_RELAXED);
			c->out.other = c->out.local;
			c->seg->peer_pid = 0;
			lost(c, "its lock on the segment is free");
		}
		fl.l_type = F_UNLCK;
		(void)fcntl(c->shm_fd, F_OFD_SETLK, &fl);
		return;
	}
	if (!c->st.up) {
		c->st.up = 1;
		say(c, "process attached");
	}
	c->st.peer_pid = __atomic_load_n(&c->seg->peer_pid, __ATOMIC_RELAXED);
}

static int shm_open_chan(struct chan *c, char *err, size_t errlen)
{
	char name[LE_PUNT_NAME_MAX + 2];
	size_t len = punt_shm_size(PUNT_SHM_SLOTS);

	c->shm_fd = -1;
	snprintf(name, sizeof(name), "/%s", c->cfg.name);
	/* A segment left by a daemon that did not stop cleanly is replaced. */
	(void)shm_unlink(name);
	c->shm_fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (c->shm_fd < 0)
		return le_err(err, errlen, "cannot create the segment /dev/shm/%s: %s", c->cfg.name, strerror(errno));
	(void)fchmod(c->shm_fd, 0666);
	if (ftruncate(c->shm_fd, (off_t)len) < 0)
		return le_err(err, errlen, "cannot size /dev/shm/%s to %zu bytes: %s", c->cfg.name, len, strerror(errno));
	c->seg = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, c->shm_fd, 0);
	if (c->seg == MAP_FAILED) {
		c->seg = NULL;
		return le_err(err, errlen, "cannot map /dev/shm/%s: %s", c->cfg.name, strerror(errno));
	}
	c->seg_len = len;
	c->seg->version = PUNT_VERSION;
	c->seg->slots = PUNT_SHM_SLOTS;
	c->seg->slot_size = PUNT_SLOT_SIZE;
	c->seg->daemon_pid = (int32_t)getpid();
	c->seg->ring_off[0] = PUNT_SHM_HEAD;
	c->seg->ring_off[1] = PUNT_SHM_HEAD + PUNT_RING_CTL + (uint64_t)PUNT_SHM_SLOTS * PUNT_SLOT_SIZE;
	punt_ring_view_init(&c->out, c->seg, c->seg->ring_off[0], PUNT_SHM_SLOTS);
	punt_ring_view_init(&c->in, c->seg, c->seg->ring_off[1], PUNT_SHM_SLOTS);
	__atomic_store_n(&c->seg->magic, PUNT_MAGIC, __ATOMIC_RELEASE);
	return 0;
}

static void shm_close_chan(struct chan *c)
{
	char name[LE_PUNT_NAME_MAX + 2];

	if (c->seg) {
		__atomic_store_n(&c->seg->closed, 1, __ATOMIC_RELEASE);
		/* a process asleep on ring 0 wakes, sees `closed` and may exit */
		futex_wake(&c->out.ctl->head);
		munmap(c->seg, c->seg_len);
		c->seg = NULL;
	}
	if (c->shm_fd >= 0) {
		close(c->shm_fd);
		c->shm_fd = -1;
		snprintf(name, sizeof(name), "/%s", c->cfg.name);
		(void)shm_unlink(name);
	}
}

/* --- the set --------------------------------------------------------------- */

static void chan_free(struct chan *c)
{
	if (c == NULL)
		return;
	if (c->cfg.transport == LE_PUNT_FIFO)
		fifo_close(c);
	else
		shm_close_chan(c);
	free(c);
}

void dp_punt_close(struct dp_punt_set *s)
{
	if (s == NULL)
		return;
	for (int d = 0; d < LE_DIRS; d++)
		for (unsigned i = 0; i < s->n[d]; i++)
			chan_free(s->ch[d][i]);
	free(s);
}

int dp_punt_open(struct dp_punt_set **out, const struct le_path_config cfg[LE_DIRS], const struct le_frame_ops *ops,
		 dp_punt_make_fn make, void *make_ctx, char *err, size_t errlen)
{
	struct dp_punt_set *s;
	char sub[LE_ERR_MAX];

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return le_err(err, errlen, "out of memory");
	s->ops = *ops;
	s->make = make;
	s->make_ctx = make_ctx;
	for (int d = 0; d < LE_DIRS; d++)
		for (unsigned k = 0; k < cfg[d].nclasses; k++) {
			const struct le_class_config *cc = &cfg[d].cls[k];
			struct chan *c;

			if (cc->punt.transport == LE_PUNT_NONE)
				continue;
			for (int e = 0; e <= d; e++)
				for (unsigned i = 0; i < s->n[e]; i++)
					if (s->ch[e][i]->cfg.transport == cc->punt.transport &&
					    strcmp(s->ch[e][i]->cfg.name, cc->punt.name) == 0) {
						le_err(err, errlen, "%s class %s: punt %s %s is used by %s class %s too; give each its own",
						       le_direction_name(d), cc->name, le_punt_transport_name(cc->punt.transport),
						       cc->punt.name, le_direction_name(e), s->ch[e][i]->st.cls);
						goto fail;
					}
			if (s->n[d] == DP_PUNT_MAX) {
				le_err(err, errlen, "%s class %s: more than %d punted classes in a direction",
				       le_direction_name(d), cc->name, DP_PUNT_MAX);
				goto fail;
			}
			c = calloc(1, sizeof(*c));
			if (c == NULL) {
				le_err(err, errlen, "out of memory");
				goto fail;
			}
			s->ch[d][s->n[d]++] = c;
			c->dir = (enum le_direction)d;
			c->cfg = cc->punt;
			c->next_seq = 1;
			c->shm_fd = c->fd_in = c->fd_out = -1;
			snprintf(c->st.cls, sizeof(c->st.cls), "%s", cc->name);
			c->st.transport = cc->punt.transport;
			snprintf(c->st.name, sizeof(c->st.name), "%s", cc->punt.name);
			if ((c->cfg.transport == LE_PUNT_FIFO ? fifo_open(c, sub, sizeof(sub))
							      : shm_open_chan(c, sub, sizeof(sub))) < 0) {
				le_err(err, errlen, "%s class %s: punt %s %s: %s", le_direction_name(d), cc->name,
				       le_punt_transport_name(cc->punt.transport), cc->punt.name, sub);
				goto fail;
			}
		}
	if (s->n[0] + s->n[1] == 0) {
		free(s);
		return 0;
	}
	/* A process that closes its end must not kill the daemon: writes
	 * then fail with EPIPE, which is how we notice. */
	signal(SIGPIPE, SIG_IGN);
	*out = s;
	return 0;
fail:
	dp_punt_close(s);
	return -1;
}

int dp_punt_accepts(const struct dp_punt_set *s, enum le_direction dir, const struct le_path_config *cfg,
		    char *err, size_t errlen)
{
	for (unsigned k = 0; k < cfg->nclasses; k++) {
		const struct le_class_config *cc = &cfg->cls[k];
		const struct chan *c = NULL;

		if (cc->punt.transport == LE_PUNT_NONE)
			continue;
		for (unsigned i = 0; s != NULL && i < s->n[dir] && c == NULL; i++)
			if (s->ch[dir][i]->cfg.transport == cc->punt.transport &&
			    strcmp(s->ch[dir][i]->cfg.name, cc->punt.name) == 0)
				c = s->ch[dir][i];
		if (c == NULL)
			return le_err(err, errlen,
				      "class %s: punt %s %s: no such channel was opened at start (channels are made "
				      "when linkemud starts: restart it to add one)",
				      cc->name, le_punt_transport_name(cc->punt.transport), cc->punt.name);
		if (strcmp(c->st.cls, cc->name) != 0)
			return le_err(err, errlen, "class %s: punt %s %s: the channel belongs to class %s",
				      cc->name, le_punt_transport_name(cc->punt.transport), cc->punt.name, c->st.cls);
	}
	return 0;
}

void dp_punt_bind(struct dp_punt_set *s, struct le_frame_ops *ops)
{
	if (s == NULL)
		return;
	ops->punt = dp_punt_take;
	ops->punt_ctx = s;
}

static struct chan *find(struct dp_punt_set *s, enum le_direction dir, const struct le_punt_config *pc)
{
	for (unsigned i = 0; i < s->n[dir]; i++) {
		struct chan *c = s->ch[dir][i];
		if (c->cfg.transport == pc->transport && strcmp(c->cfg.name, pc->name) == 0)
			return c;
	}
	return NULL;
}

void dp_punt_take(void *sv, const struct le_path *p, unsigned cls, void *handle, uint32_t len, le_ns_t arrival)
{
	struct dp_punt_set *s = sv;
	struct chan *c = find(s, p->dir, &p->cfg.cls[cls - 1].punt);
	uint32_t clen = 0;
	const uint8_t *b;

	(void)arrival;
	if (c == NULL) {
		if (!s->orphan_said[p->dir]++)
			fprintf(stderr, "punt %s class %s: no channel %s %s was opened at start; its frames are counted punt_down\n",
				le_direction_name(p->dir), p->cfg.cls[cls - 1].name,
				le_punt_transport_name(p->cfg.cls[cls - 1].punt.transport), p->cfg.cls[cls - 1].punt.name);
		s->orphan[p->dir]++;
		goto drop;
	}
	if (!c->st.up) {
		c->st.down++;
		goto drop;
	}
	b = s->ops.bytes(s->ops.ctx, handle, &clen);
	if (b == NULL || clen < len || len > PUNT_FRAME_MAX) {
		c->st.full++; /* a frame the channel cannot carry in one piece */
		goto drop;
	}
	if (c->cfg.transport == LE_PUNT_FIFO) {
		if (c->wlen + PUNT_HDR_LEN + len > PACK && fifo_flush(c) < 0) {
			c->st.down++;
			goto drop; /* gone: noticed at the next check */
		}
		fifo_queue(c, b, len);
	} else {
		uint8_t *slot = punt_ring_reserve(&c->out);
		if (slot == NULL) {
			c->st.full++;
			goto drop;
		}
		punt_hdr_put(slot, len, c->next_seq++);
		memcpy(slot + PUNT_HDR_LEN, b, len);
		punt_ring_push(&c->out);
		c->pushed++;
		c->st.sent++;
	}
drop:
	s->ops.free(s->ops.ctx, handle); /* copied out, or dropped and counted */
}

unsigned dp_punt_poll(struct dp_punt_set *s, enum le_direction dir, struct le_swap *swap, le_ns_t now)
{
	unsigned got = 0;

	for (unsigned i = 0; i < s->n[dir]; i++) {
		struct chan *c = s->ch[dir][i];

		if (c->cfg.transport == LE_PUNT_FIFO) {
			if (c->st.up && fifo_flush(c) < 0)
				fifo_gone(s, c, swap, now, 1, "writing PATH.out failed: EPIPE");
		} else if (c->pushed) {
			if (punt_ring_publish(&c->out))
				futex_wake(&c->out.ctl->head);
			c->pushed = 0;
		}
		if (now >= c->next_check) {
			c->next_check = now + CHECK_NS;
			if (c->cfg.transport == LE_PUNT_FIFO)
				fifo_check(s, c, swap, now);
			else
				shm_check(s, c, swap, now);
		}
		if (!c->st.up)
			continue;
		if (c->cfg.transport == LE_PUNT_SHM) {
			got += shm_read(s, c, swap, now);
		} else if (held(c) || c->rb->have > c->rb->off || now >= c->next_read) {
			c->next_read = now + IDLE_READ_NS;
			got += fifo_read(s, c, swap, now);
			if (c->broken)
				fifo_gone(s, c, swap, now, 0, "it sent a record that is not the protocol");
		}
	}
	return got;
}

void dp_punt_counts(const struct dp_punt_set *s, enum le_direction dir, struct dp_counters *ctr, uint64_t *held_out)
{
	uint64_t h = 0;

	if (s == NULL)
		return;
	ctr->drop[DP_DROP_PUNT_DOWN] += s->orphan[dir];
	for (unsigned i = 0; i < s->n[dir]; i++) {
		const struct chan *c = s->ch[dir][i];

		ctr->drop[DP_DROP_PUNT_FULL] += c->st.full;
		ctr->drop[DP_DROP_PUNT_DOWN] += c->st.down;
		ctr->drop[DP_DROP_PUNT_DROPPED] += c->st.dropped;
		ctr->drop[DP_DROP_SHUTDOWN] += c->shutdown;
		ctr->injected += c->st.injected;
		h += held(c);
	}
	*held_out += h;
}

uint64_t dp_punt_held(const struct dp_punt_set *s, enum le_direction dir)
{
	uint64_t h = 0;

	for (unsigned i = 0; s != NULL && i < s->n[dir]; i++)
		h += held(s->ch[dir][i]);
	return h;
}

unsigned dp_punt_status(const struct dp_punt_set *s, enum le_direction dir, struct dp_punt_status *out)
{
	if (s == NULL)
		return 0;
	for (unsigned i = 0; i < s->n[dir]; i++) {
		out[i] = s->ch[dir][i]->st;
		out[i].held = held(s->ch[dir][i]);
	}
	return s->n[dir];
}

void dp_punt_drain(struct dp_punt_set *s, enum le_direction dir)
{
	if (s == NULL)
		return;
	for (unsigned i = 0; i < s->n[dir]; i++) {
		struct chan *c = s->ch[dir][i];

		c->shutdown += held(c);
		c->settled = c->next_seq - 1;
	}
}
