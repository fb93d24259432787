/* The punt wire protocol (docs/punt.md): what linkemud and an external
 * control-plane process exchange for a punted class (`punt fifo PATH`,
 * `punt shm NAME`). Header-only and libc-only, so the reference process
 * (src/tools/punt_echo.c), the unit tests and any C peer share it.
 *
 * A record is a 16-byte header, little-endian, then `len` frame bytes:
 *
 *     u32 len     frame bytes that follow (0 .. PUNT_FRAME_MAX)
 *     u32 flags   0 (anything else is a protocol error)
 *     u64 seq     linkemud -> process: 1, 2, 3 ... per channel, in order
 *                 process -> linkemud: the seq of the frame it answers,
 *                 or 0 for a new frame (counted `injected`)
 *
 * A process answers frames in the order it got them. An answer with seq
 * s also settles every earlier unanswered frame as dropped by the process
 * (`punt_dropped`); a record with len 0 and seq s says "dropped up to s"
 * without a frame. An answer that comes after a later one (out of order)
 * is taken as a new frame: the books still add up.
 *
 * FIFO: two named pipes, PATH.out (linkemud writes, the process reads)
 * and PATH.in (the process writes, linkemud reads), each a plain stream
 * of records.
 *
 * Shared memory: the segment /dev/shm/NAME holds a header (struct
 * punt_shm_seg) and two single-producer single-consumer rings of fixed
 * slots, ring 0 linkemud -> process, ring 1 process -> linkemud. A slot
 * holds one record (header, then the frame). head and tail count slots
 * written and read since the start (free-running u32, slots a power of
 * two); the producer writes the slot, then publishes head with a release
 * store; the consumer reads it after an acquire load of head, then
 * publishes tail. A consumer that wants to sleep sets `waiting`, checks
 * head again and sleeps in futex(FUTEX_WAIT) on head; the producer, after
 * publishing, wakes it when `waiting` is set (a syscall only then). The
 * process holds an fcntl write lock on the segment's byte 0 for as long
 * as it is attached: the kernel drops it when the process dies, which is
 * how linkemud tells a stalled process from a dead one. */
#ifndef PUNT_WIRE_H
#define PUNT_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PUNT_MAGIC 0x31544e50u    /* "PNT1" */
#define PUNT_VERSION 1u
#define PUNT_FRAME_MAX 2048u      /* an mbuf's data room (RTE_MBUF_DEFAULT_DATAROOM) */
#define PUNT_HDR_LEN 16u
#define PUNT_SLOT_SIZE (PUNT_HDR_LEN + PUNT_FRAME_MAX)
#define PUNT_SHM_SLOTS 4096u       /* per ring: about 8 MiB each, ~16 ms at 250 kpps */
#define PUNT_SHM_HEAD 4096u        /* the segment header's page */
#define PUNT_RING_CTL 256u         /* a ring's indices, before its slots */

struct punt_hdr {
	uint32_t len;
	uint32_t flags;
	uint64_t seq;
};
_Static_assert(sizeof(struct punt_hdr) == PUNT_HDR_LEN, "punt header is 16 bytes");

/* A ring's indices, each on its own cache line (the producer writes
 * head, the consumer tail and waiting). */
struct punt_shm_ring {
	_Alignas(64) uint32_t head;    /* producer: slots written */
	_Alignas(64) uint32_t tail;    /* consumer: slots read */
	_Alignas(64) uint32_t waiting; /* consumer: 1 while it (may) sleep on head */
};
_Static_assert(sizeof(struct punt_shm_ring) <= PUNT_RING_CTL, "ring indices fit");

struct punt_shm_seg {
	uint32_t magic;       /* PUNT_MAGIC, written last by linkemud */
	uint32_t version;     /* PUNT_VERSION */
	uint32_t slots;       /* per ring, a power of two */
	uint32_t slot_size;   /* PUNT_SLOT_SIZE */
	uint32_t closed;      /* 1: linkemud has stopped; the process may exit */
	int32_t daemon_pid;
	int32_t peer_pid;     /* written by the process when it attaches */
	uint32_t pad;
	uint64_t ring_off[2]; /* ring 0: to the process, ring 1: from it */
};

static inline size_t punt_shm_size(uint32_t slots)
{
	return PUNT_SHM_HEAD + 2 * ((size_t)PUNT_RING_CTL + (size_t)slots * PUNT_SLOT_SIZE);
}

/* Little-endian header access (x86 and most ARM are little-endian; the
 * copies keep unaligned buffers safe). */
static inline void punt_hdr_put(uint8_t *p, uint32_t len, uint64_t seq)
{
	struct punt_hdr h = {len, 0, seq};
	memcpy(p, &h, sizeof(h));
}

static inline void punt_hdr_get(const uint8_t *p, struct punt_hdr *h)
{
	memcpy(h, p, sizeof(*h));
}

/* --- one side of a shared ring, in the user's own memory -------------- */

struct punt_ring_view {
	struct punt_shm_ring *ctl;
	uint8_t *slots;
	uint32_t mask;
	uint32_t local;   /* producer: next head; consumer: next tail */
	uint32_t other;   /* the other side's index as last read */
};

static inline void punt_ring_view_init(struct punt_ring_view *v, void *seg, uint64_t off, uint32_t slots)
{
	v->ctl = (struct punt_shm_ring *)((uint8_t *)seg + off);
	v->slots = (uint8_t *)seg + off + PUNT_RING_CTL;
	v->mask = slots - 1;
	v->local = 0;
	v->other = 0;
}

static inline uint8_t *punt_ring_slot(const struct punt_ring_view *v, uint32_t i)
{
	return v->slots + (size_t)(i & v->mask) * PUNT_SLOT_SIZE;
}

/* Producer: the next free slot, or NULL when the ring is full. */
static inline uint8_t *punt_ring_reserve(struct punt_ring_view *v)
{
	if (v->local - v->other > v->mask) {
		v->other = __atomic_load_n(&v->ctl->tail, __ATOMIC_ACQUIRE);
		if (v->local - v->other > v->mask)
			return NULL;
	}
	return punt_ring_slot(v, v->local);
}

static inline void punt_ring_push(struct punt_ring_view *v)
{
	v->local++;
}

/* Producer: makes the pushed slots visible. Returns 1 when the consumer
 * said it sleeps (the caller then wakes it: futex on &ctl->head). */
static inline int punt_ring_publish(struct punt_ring_view *v)
{
	__atomic_store_n(&v->ctl->head, v->local, __ATOMIC_RELEASE);
	/* Orders the head store before the waiting load (the consumer does
	 * the reverse), so one of the two always sees the other. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&v->ctl->waiting, __ATOMIC_RELAXED)) {
		__atomic_store_n(&v->ctl->waiting, 0, __ATOMIC_RELAXED);
		return 1;
	}
	return 0;
}

/* Consumer: the next full slot, or NULL when the ring is empty. */
static inline uint8_t *punt_ring_peek(struct punt_ring_view *v)
{
	if (v->local == v->other) {
		v->other = __atomic_load_n(&v->ctl->head, __ATOMIC_ACQUIRE);
		if (v->local == v->other)
			return NULL;
	}
	return punt_ring_slot(v, v->local);
}

static inline void punt_ring_pop(struct punt_ring_view *v)
{
	v->local++;
}

/* Consumer: hands the popped slots back to the producer. */
static inline void punt_ring_release(struct punt_ring_view *v)
{
	__atomic_store_n(&v->ctl->tail, v->local, __ATOMIC_RELEASE);
}

/* Consumer about to sleep: 1 when it may (head unchanged after setting
 * waiting), then futex-wait on &ctl->head for the value in *seen. */
static inline int punt_ring_prepare_sleep(struct punt_ring_view *v, uint32_t *seen)
{
	__atomic_store_n(&v->ctl->waiting, 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	*seen = __atomic_load_n(&v->ctl->head, __ATOMIC_ACQUIRE);
	return *seen == v->local;
}

/* --- a byte stream of records (FIFO), reassembled --------------------- */

#define PUNT_RBUF_SIZE 65536u

struct punt_rbuf {
	uint8_t buf[PUNT_RBUF_SIZE];
	size_t off;    /* first unparsed byte */
	size_t have;   /* bytes in buf */
};

/* The next complete record: 1 (header in *h, frame at *frame), 0 when more
 * bytes are needed, -1 when the stream is not the protocol (a length over
 * PUNT_FRAME_MAX or nonzero flags): the reader should drop the peer. */
static inline int punt_rbuf_next(struct punt_rbuf *b, struct punt_hdr *h, const uint8_t **frame)
{
	if (b->have - b->off < PUNT_HDR_LEN)
		return 0;
	punt_hdr_get(b->buf + b->off, h);
	if (h->len > PUNT_FRAME_MAX || h->flags != 0)
		return -1;
	if (b->have - b->off < PUNT_HDR_LEN + h->len)
		return 0;
	*frame = b->buf + b->off + PUNT_HDR_LEN;
	b->off += PUNT_HDR_LEN + h->len;
	return 1;
}

/* Moves the unparsed tail to the front; returns room for reading. */
static inline size_t punt_rbuf_compact(struct punt_rbuf *b)
{
	if (b->off) {
		memmove(b->buf, b->buf + b->off, b->have - b->off);
		b->have -= b->off;
		b->off = 0;
	}
	return sizeof(b->buf) - b->have;
}

#endif
