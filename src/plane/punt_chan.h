/* Punted classes' channels, inside (punt.h is the outside): a channel,
 * the set, and what the set's code (punt.c: the books, taking and
 * polling), the FIFO transport (punt_fifo.c) and the shared-memory one
 * (punt_shm.c) give each other. One thread per direction (punt.h). */
#ifndef DP_PUNT_CHAN_H
#define DP_PUNT_CHAN_H

#include <limits.h>
#include <stdint.h>

#include "punt.h"
#include "punt_wire.h"

/* How often a channel checks that its process is (still) there: a
 * syscall per channel every 10 ms, invisible beside the forwarding; the
 * frames sent to a process in the 10 ms before its death is noticed are
 * lost with it (punt_down). */
#define CHECK_NS (10 * LE_NS_PER_MS)
/* An idle FIFO (nothing awaiting an answer) is read this often, for
 * frames the process injects unasked; a busy one at every pass. */
#define IDLE_READ_NS LE_NS_PER_MS
/* Records go out in writes of up to PIPE_BUF bytes: POSIX makes such a
 * write to a pipe all or nothing, so a full pipe never leaves half a
 * record, and 64-byte frames cost a syscall per ~50 frames. */
#define PACK PIPE_BUF
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

/* punt_books.c: the books */
void punt_say(const struct chan *c, const char *what);
uint64_t punt_held(const struct chan *c);
void punt_deliver(struct dp_punt_set *s, struct chan *c, struct le_swap *swap, const struct punt_hdr *h,
		  const uint8_t *frame, le_ns_t now);
void punt_lost(struct chan *c, const char *why);

/* punt_fifo.c */
int punt_fifo_open(struct chan *c, char *err, size_t errlen);
void punt_fifo_close(struct chan *c);
void punt_fifo_queue(struct chan *c, const uint8_t *b, uint32_t len);
int punt_fifo_flush(struct chan *c);
unsigned punt_fifo_read(struct dp_punt_set *s, struct chan *c, struct le_swap *swap, le_ns_t now);
void punt_fifo_gone(struct dp_punt_set *s, struct chan *c, struct le_swap *swap, le_ns_t now, int deliver_rest,
		    const char *why);
void punt_fifo_check(struct dp_punt_set *s, struct chan *c, struct le_swap *swap, le_ns_t now);

/* punt_shm.c */
int punt_shm_open(struct chan *c, char *err, size_t errlen);
void punt_shm_close(struct chan *c);
int punt_shm_queue(struct chan *c, const uint8_t *b, uint32_t len); /* -1: ring full */
void punt_shm_publish(struct chan *c);
unsigned punt_shm_read(struct dp_punt_set *s, struct chan *c, struct le_swap *swap, le_ns_t now);
void punt_shm_check(struct dp_punt_set *s, struct chan *c, struct le_swap *swap, le_ns_t now);

#endif
