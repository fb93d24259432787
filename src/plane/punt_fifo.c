/* The FIFO transport of punted classes: PATH.out and PATH.in (docs/punt.md). */
#define _GNU_SOURCE /* F_SETPIPE_SZ */
#include "punt_chan.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"

/* Room in each pipe: ~3000 records of 64-byte frames (Linux's default
 * 64 KiB holds ~800). Best effort: an unprivileged process may be
 * refused more than /proc/sys/fs/pipe-max-size. */
#define PIPE_BYTES (256 * 1024)

/* Records one frame into the pack buffer (seq filled in at flush). */
void punt_fifo_queue(struct chan *c, const uint8_t *b, uint32_t len)
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
int punt_fifo_flush(struct chan *c)
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
 * one read (when they were not enough) for more, of at most *budget bytes
 * when budget is given (then less by what was read). */
static unsigned fifo_read(struct dp_punt_set *s, struct chan *c, struct le_swap *swap, le_ns_t now, size_t *budget)
{
	struct punt_rbuf *b = c->rb;
	struct punt_hdr h;
	const uint8_t *frame;
	unsigned got = 0;
	int k = 0;

	for (int pass = 0; pass < 2 && got < TAKE_MAX && !c->broken; pass++) {
		if (pass == 1) {
			size_t room = punt_rbuf_compact(b);
			if (budget != NULL && room > *budget)
				room = *budget;
			ssize_t r = room ? read(c->fd_in, b->buf + b->have, room) : 0;
			if (r <= 0)
				break;
			b->have += (size_t)r;
			if (budget != NULL)
				*budget -= (size_t)r;
		}
		while (got < TAKE_MAX && (k = punt_rbuf_next(b, &h, &frame)) == 1) {
			punt_deliver(s, c, swap, &h, frame, now);
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

unsigned punt_fifo_read(struct dp_punt_set *s, struct chan *c, struct le_swap *swap, le_ns_t now)
{
	return fifo_read(s, c, swap, now, NULL);
}

void punt_fifo_gone(struct dp_punt_set *s, struct chan *c, struct le_swap *swap, le_ns_t now, int deliver_rest,
		      const char *why)
{
	/* Answers it wrote before it went are still good; a half-written
	 * record (or a broken stream) is thrown away, so the next process
	 * starts on a record boundary. PATH.in is ours (O_RDWR), its
	 * contents outlive the writer. */
	/* What PATH.in holds now, and no more: a peer that closed PATH.out
	 * but goes on writing PATH.in would otherwise keep the forwarding
	 * thread here, injecting, for as long as it writes. */
	int avail = 0;
	if (ioctl(c->fd_in, FIONREAD, &avail) < 0 || avail < 0)
		avail = 0;
	size_t budget = (size_t)avail;
	if (deliver_rest)
		while (!c->broken && fifo_read(s, c, swap, now, &budget) > 0)
			;
	c->broken = 0;
	while (budget > 0) {
		ssize_t r = read(c->fd_in, c->rb->buf, budget < sizeof(c->rb->buf) ? budget : sizeof(c->rb->buf));
		if (r <= 0)
			break;
		budget -= (size_t)r;
	}
	c->rb->off = c->rb->have = 0;
	if (c->fd_out >= 0)
		close(c->fd_out);
	c->fd_out = -1;
	c->wlen = c->wrec = 0;
	punt_lost(c, why);
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
	punt_say(c, "process attached");
}

void punt_fifo_check(struct dp_punt_set *s, struct chan *c, struct le_swap *swap, le_ns_t now)
{
	struct pollfd p = {.fd = c->fd_out, .events = POLLOUT};

	if (!c->st.up) {
		fifo_try_attach(c);
		return;
	}
	/* The write end of a pipe polls POLLERR once no reader is left. */
	if (poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP | POLLNVAL)))
		punt_fifo_gone(s, c, swap, now, 1, "PATH.out has no reader");
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

int punt_fifo_open(struct chan *c, char *err, size_t errlen)
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

void punt_fifo_close(struct chan *c)
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

