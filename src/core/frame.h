/* A frame as the link model sees it, and the operations the model needs
 * from whoever owns frames (the data plane's mbufs, or a test's fakes).
 *
 * The model never allocates or frees frames itself and knows nothing of
 * DPDK: it calls these operations, supplied once at init. */
#ifndef LE_FRAME_H
#define LE_FRAME_H

#include <stdint.h>

#include "le_time.h"

struct le_path;

struct le_frame {
	void *handle;        /* opaque to the model: an mbuf for the data plane */
	uint32_t len;        /* frame length in bytes */
	uint16_t cls;        /* class index in the path (0 = default link) */
	uint16_t flags;      /* model-internal (LE_FRAME_*); undefined for callers */
	le_ns_t arrival;     /* when the link received it */
	le_ns_t deadline;    /* when the model says it must leave */
};

/* *dst = *f, field by field. A frame is mostly built field by field just
 * before it is stored (le_link's offer loops build it on the stack,
 * deliver() sets the deadline last); a struct copy would read it back in
 * 16-byte loads, which the CPU cannot forward from the narrower stores
 * still in its store buffer, and each would wait for them to reach the
 * cache. Loads of the stores' own widths are forwarded at once. The
 * empty asm takes the fields in registers, so no vectorizer can merge
 * the loads again, and the copy still inlines (a per-function optimize
 * attribute would stop that). Measured: the jitter row +15-17 % once the
 * timing wheel copied this way; the rate row's queue and line pushes,
 * once their rings stayed in cache (delay_line.c, rewind_if_empty). */
static inline void le_frame_copy(struct le_frame *dst, const struct le_frame *f)
{
	void *handle = f->handle;
	uint32_t len = f->len;
	uint16_t cls = f->cls, flags = f->flags;
	le_ns_t arrival = f->arrival, deadline = f->deadline;

	__asm__("" : "+r"(handle), "+r"(len), "+r"(cls), "+r"(flags), "+r"(arrival), "+r"(deadline));
	dst->handle = handle;
	dst->len = len;
	dst->cls = cls;
	dst->flags = flags;
	dst->arrival = arrival;
	dst->deadline = deadline;
}

/* Due frames as a sender takes them (le_swap_dequeue_split): handle,
 * length and deadline in three arrays of the caller's, at least `max`
 * long. A sender needs no more of a frame, and building a 32-byte
 * le_frame per frame only to read three fields back cost the data plane
 * about 15 instructions a frame (docs/performance.md, "The hold floor"). */
struct le_frame_split {
	void **handle;
	uint32_t *len;
	le_ns_t *deadline;
};

/* The most frames one split dequeue hands out: where the model cannot
 * fill the arrays directly, it takes the frames into a local buffer of
 * this many first. */
#define LE_SPLIT_MAX 512u

/* n frames taken as le_frames (a merge) into the arrays. */
static inline void le_frame_split_put(const struct le_frame_split *o, const struct le_frame *f, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		o->handle[i] = f[i].handle;
		o->len[i] = f[i].len;
		o->deadline[i] = f[i].deadline;
	}
}

/* Operations on frames, supplied by the caller.
 *
 * clone: a second frame with the same bytes that can be modified on its
 *        own (corrupt and ecn write into frames, so a copy that shares
 *        data with the original is wrong when either is configured).
 *        NULL when none can be made (counted, never fatal).
 * free:  releases a frame the model drops. After the call the handle is
 *        the caller's again; the model never touches it.
 * bytes: the frame's first contiguous bytes, with their number in
 *        *contiguous_len (may be less than the frame length, e.g. a
 *        chained mbuf; the model only reads/writes within it). NULL when
 *        there are none.
 * punt:  takes a frame of a punted class (`punt fifo|shm`, path.h)
 *        instead of its link: the callee owns it from then on (copies
 *        it out, frees it, counts it). NULL: punted classes are refused
 *        by le_path_init.
 * Any of them may be NULL when the configuration never needs it: clone is
 * needed by `duplicate`; bytes by `corrupt`, `ecn`, `codel ... ecn` and
 * class rules; free by every config that can drop frames. le_link_init /
 * le_path_init refuse a configuration whose operations are missing. */
struct le_frame_ops {
	void *ctx;
	void *(*clone)(void *ctx, void *handle);
	void (*free)(void *ctx, void *handle);
	uint8_t *(*bytes)(void *ctx, void *handle, uint32_t *contiguous_len);
	void (*punt)(void *punt_ctx, const struct le_path *p, unsigned cls, void *handle, uint32_t len,
		     le_ns_t arrival);
	void *punt_ctx;
};

#endif
