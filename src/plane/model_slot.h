/* A direction's link model as the data plane runs it: the core's live
 * change machinery (le_swap, src/core/swap.h: active, staged and retiring
 * paths, the switch at a model time) wrapped for threads.
 *
 *   control thread                      owning lcore (at a burst boundary)
 *   builds a new model off the fast
 *   path, publish(model, at) -------->  poll(): stages it in le_swap
 *                                       (staged_seq++); le_swap switches
 *                                       exactly at model time `at` (0: at
 *                                       once), frames arriving before it
 *                                       still meet the old model
 *   waits for staged/applied_seq <----  applied_seq, applied_ns published
 *                                       drained paths -> `retired` ring
 *   collect(): frees them          <--
 *
 * Every pointer hand-over is a release/acquire pair and every field has
 * one writer. Models are freed only by the control thread. Nobody but the
 * lcore reads le_swap: readers ask it for a snapshot (snapshot.h), which
 * calls dp_model_slot_snapshot between two bursts.
 *
 * Memory: the mbuf pool holds DP_MODEL_LIMITS x max_limit frames for the
 * models of a direction (main.c). The lcore stages a new model only while
 * the retiring paths hold at most (DP_MODEL_LIMITS - 2) x max_limit, so the
 * old active path (<= max_limit) and the new one (<= max_limit) fit with
 * them. A publish beyond that, or while another change is staged, waits in
 * the mailbox. */
#ifndef DP_MODEL_SLOT_H
#define DP_MODEL_SLOT_H

#include <stdint.h>


#include "config.h"
#include "ptr_ring.h"
#include "counters.h"
#include "frame.h"
#include "path.h"
#include "swap.h"

#define DP_MODEL_LIMITS 3u

/* The retired ring has room for every path le_swap can hand back and the
 * active one, so the lcore's put never fails. */
_Static_assert(DP_PTR_RING_CAP >= 4 * LE_SWAP_RETIRING_MAX, "retired ring too small");

/* The model of one direction: its classes and their links. */
struct dp_model {
	struct le_path path;          /* first: le_swap hands back paths */
	char text[LE_PATH_TEXT_MAX];  /* its grammar, formatted */
};

struct dp_model_slot {
	struct le_swap swap;                 /* lcore only */
	struct dp_model *active;             /* lcore publishes after a change */
	struct dp_model *mailbox;            /* control sets, lcore clears */
	le_ns_t mailbox_at;                  /* written before mailbox: 0 = at once */
	uint64_t staged_seq;                 /* lcore: changes taken from the mailbox */
	uint64_t applied_seq;                /* lcore: changes applied */
	uint64_t applied_ns;                 /* model time of the last change */
	uint64_t max_retiring_depth;         /* stage only at or below */
	uint32_t waiting_depth;              /* lcore: retiring frames when it last waited */
	/* Last: touched only when a model retires, so the fields the lcore
	 * reads every poll keep the cache lines they had. */
	struct dp_ptr_ring retired;          /* lcore -> control (SP/SC) */
};

/* What the models of a direction hold and counted, as of one instant. */
struct dp_model_slot_snapshot {
	const struct dp_model *active;   /* valid while the reader holds off collect() */
	struct le_counters ctr;          /* drops, dup, events of every model (not rx/tx) */
	uint32_t depth;                  /* frames held by active + retiring */
	uint64_t changes;                /* applied since start */
	le_ns_t changed_at;              /* model time of the last, 0 if none */
	le_ns_t staged_at;               /* a staged change's time; UINT64_MAX if none */
	unsigned nclasses;               /* of the active model */
	struct le_counters cls[LE_MAX_CLASSES + 1];
	uint32_t cls_depth[LE_MAX_CLASSES + 1];
	uint64_t cls_born[LE_MAX_CLASSES + 1];   /* le_path_class_born */
	/* Chained classes (`LINK >> LINK`): cls_hops[k] hops (1: a plain
	 * link, not listed), listed class by class in hop[]. */
	uint8_t cls_hops[LE_MAX_CLASSES + 1];
	unsigned nhops;
	struct le_counters hop[LE_PATH_CHAIN_HOPS_MAX];
	uint32_t hop_depth[LE_PATH_CHAIN_HOPS_MAX];
	uint64_t hop_born[LE_PATH_CHAIN_HOPS_MAX];
};

/* Control side. */
/* ops must outlive the model. */
struct dp_model *dp_model_new(const struct le_path_config *cfg, enum le_direction dir, uint64_t default_seed,
			      const struct le_frame_ops *ops, char *err, size_t errlen);
void dp_model_free(struct dp_model *m);
/* max_limit: the frames memory was sized for per model (DP_MODEL_LIMITS). */
int dp_model_slot_init(struct dp_model_slot *s, struct dp_model *first, uint32_t max_limit, char *err,
		       size_t errlen);
/* Frees every model the slot holds (after the lcores stopped). Safe on a
 * slot that was never set up (zeroed) or only partly. */
void dp_model_slot_fini(struct dp_model_slot *s);
/* Queues `m` for the lcore, to take over at model time `at` (0: at once).
 * -1 when a previous model still waits in the mailbox (retry later). */
int dp_model_slot_publish(struct dp_model_slot *s, struct dp_model *m, le_ns_t at);
/* Frees models the lcore has finished with. */
void dp_model_slot_collect(struct dp_model_slot *s);

/* Lcore side, at a burst boundary; `now`: the model's clock (what the
 * next frame offered may carry as its arrival, no later). Cheap when
 * nothing is pending. */
void dp_model_slot_poll(struct dp_model_slot *s, le_ns_t now);
static inline void dp_model_slot_offer(struct dp_model_slot *s, void *handle, uint32_t len, le_ns_t arrival)
{
	le_swap_offer(&s->swap, handle, len, arrival);
}
static inline void dp_model_slot_offer_burst(struct dp_model_slot *s, void *const *handles, const uint32_t *lens,
					     unsigned n, le_ns_t arrival)
{
	le_swap_offer_burst(&s->swap, handles, lens, n, arrival);
}
static inline unsigned dp_model_slot_dequeue(struct dp_model_slot *s, le_ns_t now, struct le_frame *out,
					     unsigned max)
{
	return le_swap_dequeue(&s->swap, now, out, max);
}
/* The same into a sender's three arrays (le_frame_split, frame.h). */
static inline unsigned dp_model_slot_dequeue_split(struct dp_model_slot *s, le_ns_t now,
						   const struct le_frame_split *out, unsigned max)
{
	return le_swap_dequeue_split(&s->swap, now, out, max);
}
/* Shutdown, lcores stopped: frees every frame the models hold, counted as
 * their `shutdown` drops. */
void dp_model_slot_drain(struct dp_model_slot *s);

/* Owning lcore (or anyone once the lcores stopped): what the models
 * counted and hold. Model rx/tx are internal hand-overs and left out. */
void dp_model_slot_snapshot(const struct dp_model_slot *s, struct dp_model_slot_snapshot *out);

#endif
