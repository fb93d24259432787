/* What the files of one link share (link.h is the interface):
 *   link.c         set-up;
 *   link_stages.c  the model frame by frame: the stages in netem's order,
 *                  admission, the serializers, the deadline, and the
 *                  loops that take a burst through them one frame at a
 *                  time;
 *   link_burst.c   the paths that take a burst as a block, each a twin
 *                  of the frame by frame one (same draws, decisions and
 *                  counts);
 *   link_take.c    the due frames taken;
 *   link_change.c  live changes.
 * The small helpers the hot loops of both need are inline here; the rest
 * are functions of link_stages.c. Private to those files. */
#ifndef LE_LINK_STAGES_H
#define LE_LINK_STAGES_H

#include "link.h"

static inline le_ns_t max_ns(le_ns_t a, le_ns_t b)
{
	return a > b ? a : b;
}

static inline le_ns_t add_sat(le_ns_t a, le_ns_t b)
{
	/* A deadline that wrapped would send the frame at once. */
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static inline void drop_frame(struct le_link *l, const struct le_frame *f, enum le_drop_cause cause)
{
	l->ctr.drop[cause]++;
	l->ops.free(l->ops.ctx, f->handle);
}

static inline uint32_t own_held(const struct le_link *l)
{
	return l->queue.count + (uint32_t)l->transit + le_delay_line_held(&l->line);
}

/* n frames arriving at `arrival`: counted (bytes apart), and the clock
 * moved to them, or each counted late when it is already past. */
static inline void arrive(struct le_link *l, unsigned n, le_ns_t arrival)
{
	l->ctr.rx += n;
	if (arrival < l->clock)
		l->ctr.event[LE_EVENT_LATE_ARRIVAL] += n;
	else
		l->clock = arrival;
}

/* The stages, frame by frame (link_stages.c). */

/* Marks the frame CE; 1 when it is (now) CE, 0 when it is not
 * ECN-capable (no bytes, not IP, Not-ECT). */
int le_link_mark_ce(struct le_link *l, struct le_frame *f);
/* Flips one random bit of the frame's bytes (netem's corrupt) and counts
 * it; nothing without bytes. */
void le_link_corrupt(struct le_link *l, struct le_frame *f);
/* Puts the frame on the delay line with its deadline, the frame having
 * left the serializer (or arrived, without one) at `out`. */
void le_link_deliver(struct le_link *l, struct le_frame *f, le_ns_t out);
/* Serves the queue up to virtual time t and marks the line's due frames:
 * the link is then settled at t. */
void le_link_settle(struct le_link *l, le_ns_t t);
/* How many of the next frames (at most max) meet no chance; their trials
 * are taken (link_stages.c). */
unsigned le_link_pass_quietly(struct le_link *l, unsigned max);
/* A burst frame by frame, on any link (le_link_offer for each frame,
 * without the advances it can skip). */
void le_link_offer_frames(struct le_link *l, void *const *handles, const uint32_t *lens, unsigned n,
			  le_ns_t arrival);
/* A link without per-frame stages or queue, frame by frame, the frames'
 * arrival counted (arrive). */
void le_link_stageless_frames(struct le_link *l, void *const *handles, const uint32_t *lens, unsigned n,
			      le_ns_t arrival);

/* `reorder`'s choice for one frame (netem_enqueue): within `gap` frames
 * of the last reordered one a frame is delayed without a draw; after,
 * with probability P it skips the delay. 1 when it does. The state is the
 * caller's, so a burst loop can keep it in locals (offer_drawn). */
static inline __attribute__((always_inline)) int reorder_now(struct le_chance_state *s,
							     const struct le_link_config *c, uint32_t *counter)
{
	/* netem's `counter < gap - 1` (gap >= 1), the sum in 64 bits: in 32
	 * it wrapped to 0 at counter 2^32 - 1 and skipped that frame's draw,
	 * where netem draws for it (at every gap, 1 too). */
	if ((uint64_t)*counter + 1 >= c->gap && le_chance_draw(s, &c->reorder)) {
		*counter = 0;
		return 1;
	}
	(*counter)++;
	return 0;
}

/* The frame with `copy`'s handle: the duplicate, right behind it. */
static inline struct le_frame copy_of(const struct le_frame *f, void *copy)
{
	struct le_frame cf = *f;

	cf.handle = copy;
	return cf;
}

/* The original f was refused at the limit: netem drops its copy with it. */
static inline void drop_copy(struct le_link *l, const struct le_frame *f, void *copy)
{
	if (copy != NULL) {
		struct le_frame cf = copy_of(f, copy);
		drop_frame(l, &cf, LE_DROP_QUEUE_FULL);
	}
}

/* The stages before admission, in netem_enqueue's order: duplicate draw,
 * loss draw (a frame both lost and duplicated goes through once), ecn
 * instead of loss, the copy, then corrupt. Returns 0 when the frame was
 * lost (and dropped), else 1, with *copy the duplicate to admit right
 * behind it (NULL when none). */
static inline __attribute__((always_inline)) int fate(struct le_link *l, struct le_frame *f, int is_copy,
							void **copy)
{
	const struct le_link_config *c = &l->cfg;
	int count = 1, lost;

	*copy = NULL;
	if (!is_copy && c->duplicate_set && le_chance_draw(&l->dup, &c->duplicate))
		count++;
	lost = c->loss.model != LE_LOSS_NONE && le_loss_decide(&l->loss, &c->loss);
	if (lost && c->ecn && le_link_mark_ce(l, f)) {
		l->ctr.event[LE_EVENT_ECN_MARKED]++;
		lost = 0;
	}
	count -= lost;
	if (count == 0) {
		drop_frame(l, f, LE_DROP_LOSS);
		return 0;
	}
	if (count == 2) {
		/* Copy before corrupting, as netem (skb_clone before the flip). */
		*copy = l->ops.clone(l->ops.ctx, f->handle);
		if (*copy == NULL)
			l->ctr.event[LE_EVENT_DUP_FAILED]++;
		else
			l->ctr.dup++;
	}
	if (c->corrupt_set && le_chance_draw(&l->corrupt, &c->corrupt))
		le_link_corrupt(l, f);
	return 1;
}

#endif
