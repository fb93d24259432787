/* Live changes of one direction's model: the active path, a path staged
 * to take over at a model time, and the retiring paths still holding
 * frames that left their serializer before the change.
 *
 *   le_swap_stage(s, next, T)    next takes over at model time T (0: at
 *                                the next offer or dequeue)
 *   le_swap_offer(s, frame, t)   t < T: the old path; t >= T: the new one
 *   le_swap_dequeue(s, now, ...) due frames of every path, in deadline
 *                                order (ties: the older path first)
 *   le_swap_take_drained(s)      a retiring path that holds nothing more,
 *                                for the owner to free
 *
 * The switch happens exactly at T in model time, whenever the owner
 * calls: the first offer with arrival >= T, or dequeue with now >= T,
 * first brings the old path to T (its serializer works with the old
 * configuration until T), then hands it over (le_path_inherit_at): the
 * new path continues each class of the same name with its whole state
 * (random streams unless the new class sets another `seed`, queue and
 * serializer, loss chain, trace phase, counters). Frames already past
 * their serializer keep their deadlines and leave from the retiring path.
 * So a change to an identical path changes nothing, frame for frame,
 * and a change's effect depends only on T and the seed, never on when
 * the owner polls. The hand-over costs O(classes), whatever the queue
 * depth.
 *
 * Threading contract: a struct le_swap and every path in it belong to
 * ONE thread, the owner (the data plane's lcore). Every function here is
 * called by the owner only; none allocates, frees, blocks or reads a
 * clock. Paths are built (le_path_init: allocation, file reads) and freed
 * (le_path_free) by another thread (control): it hands a built path to
 * the owner (e.g. a mailbox), the owner stages it, and drained paths come
 * back through le_swap_take_drained (e.g. a ring). Readers on other
 * threads (stats) must not walk the struct: the owner publishes snapshots
 * (le_swap_counters, le_swap_depth) under whatever protocol the wrapper
 * chooses (a sequence lock).
 *
 * Accounting: counters move with a class to its successor, so over the
 * paths the struct holds plus `gone` (classes that ended, counted when
 * their path was handed back):
 *     rx + dup == tx + drops + le_swap_depth()        (le_swap_counters)
 * and a path handed back holds nothing and counts nothing any more. */
#ifndef LE_SWAP_H
#define LE_SWAP_H

#include <stdint.h>

#include "counters.h"
#include "frame.h"
#include "path.h"

#define LE_SWAP_RETIRING_MAX 8

struct le_swap {
	struct le_path *active;
	struct le_path *staged;                           /* waits for staged_at */
	le_ns_t staged_at;
	struct le_path *retiring[LE_SWAP_RETIRING_MAX];   /* oldest first */
	unsigned nretiring;
	struct le_path *drained[LE_SWAP_RETIRING_MAX + 1];
	unsigned ndrained;
	le_ns_t clock;                                    /* largest time seen */
	uint64_t swaps;                                   /* changes applied */
	le_ns_t swapped_at;                               /* model time of the last */
	struct le_counters gone;                          /* classes that ended */
};

/* `first` becomes the active path (not owned: the caller frees paths). */
void le_swap_init(struct le_swap *s, struct le_path *first);

/* Stages `next` (a fresh path, no frame offered yet) to take over at
 * model time `at` (0: at the next offer or dequeue). 0, or -1 when it
 * cannot be taken now (a path is staged already, or LE_SWAP_RETIRING_MAX
 * paths are retiring or drained but not taken): retry later. A time
 * already passed takes effect at the next offer or dequeue, at that
 * time. */
int le_swap_stage(struct le_swap *s, struct le_path *next, le_ns_t at);
/* Applies a staged path whose time is <= `now` (offer and dequeue do it
 * themselves; for an owner that wants the change visible at once). */
void le_swap_advance(struct le_swap *s, le_ns_t now);

/* Classifies and offers a frame to the path of its arrival time. */
void le_swap_offer(struct le_swap *s, void *handle, uint32_t len, le_ns_t arrival);
/* n frames that arrived together: le_swap_offer of each, in order. */
void le_swap_offer_burst(struct le_swap *s, void *const *handles, const uint32_t *lens, unsigned n,
			 le_ns_t arrival);
/* Due frames (deadline <= now) of every path, up to max, in deadline
 * order; equal deadlines: the older path first, then lower class. */
unsigned le_swap_dequeue(struct le_swap *s, le_ns_t now, struct le_frame *out, unsigned max);
/* The same into a sender's three arrays (frame.h): handle, length and
 * deadline of each frame, no le_frame built; at most LE_SPLIT_MAX. */
unsigned le_swap_dequeue_split(struct le_swap *s, le_ns_t now, const struct le_frame_split *out, unsigned max);
/* No later than the next departure or the staged change. */
le_ns_t le_swap_next_deadline(const struct le_swap *s);
/* Frames held by the active and retiring paths. */
uint32_t le_swap_depth(const struct le_swap *s);
/* Model counts of the direction: every path held plus `gone`, added to
 * *out (rx/tx included). */
void le_swap_counters(const struct le_swap *s, struct le_counters *out);
/* Counts of the active path's class `cls` including what its
 * predecessors of the same name still count, written to *out. */
void le_swap_class_counters(const struct le_swap *s, unsigned cls, struct le_counters *out);
/* Hop `hop`'s own counts (hand-overs included) of the active path's
 * class `cls`, with its predecessors', written to *out. */
void le_swap_hop_counters(const struct le_swap *s, unsigned cls, unsigned hop, struct le_counters *out);
/* Frames held by the active path's class `cls` and by its predecessors
 * of the same name (a live change leaves them serving what they held):
 * with le_swap_class_counters, the class's books balance during a change
 * too (rx + dup == tx + drops + depth). */
uint32_t le_swap_class_depth(const struct le_swap *s, unsigned cls);
/* The same for hop `hop` of the class (le_swap_hop_counters). */
uint32_t le_swap_hop_depth(const struct le_swap *s, unsigned cls, unsigned hop);
/* Restarts every count (`reset stats`): the paths' classes and `gone`. */
void le_swap_reset_counters(struct le_swap *s);

/* A retiring path that holds no frame any more, now out of the struct
 * (its counts were moved on); NULL when none. */
struct le_path *le_swap_take_drained(struct le_swap *s);
/* Shutdown: frees every frame still held (le_path_drain), counted as
 * `shutdown` drops. Returns how many. */
uint64_t le_swap_drain(struct le_swap *s);
/* Shutdown: every path still in the struct (active, staged, retiring,
 * drained), for the caller to free; the struct is empty afterwards.
 * Returns how many were written to out[LE_SWAP_RETIRING_MAX * 2 + 2]. */
unsigned le_swap_release(struct le_swap *s, struct le_path **out);

/* A frame a punted class's process returned or injected (path.h, `punt`):
 * into the active path's class called `name` (classes are carried by name
 * across live changes), skipping classification. *cache remembers the
 * lookup until the next change. -1 when the active path has no such
 * class: the frame is still the caller's. */
struct le_swap_class_cache {
	uint64_t valid;   /* swaps + 1 when looked up (0: never); a pointer could be reused */
	int cls;
};
int le_swap_offer_named(struct le_swap *s, const char *name, struct le_swap_class_cache *cache, void *handle,
			uint32_t len, le_ns_t arrival);

#endif
