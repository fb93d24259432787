/* Handing a direction's link model from the control thread to the lcore
 * that runs it, without locks on the fast path.
 *
 *   control thread                      owning lcore (at a burst boundary)
 *   builds a new model off the fast
 *   path, then publish(new) --------->  poll(): active joins the retiring
 *                                       list, new becomes active,
 *   waits for applied_seq <-----------  applied_seq++
 *                                       retiring models are only dequeued;
 *                                       once empty they go to `retired`
 *   collect(): frees them          <-  (their counts were folded into
 *                                       `retired_ctr` by the lcore when
 *                                       they left the retiring list)
 *
 * Frames already in an old model keep their deadlines (they leave from
 * the retiring model); frames received after the swap enter the new one.
 * At the swap the new path inherits what must be continuous (serializer
 * busy time, trace position, loss-chain state: le_path_inherit).
 * Up to DP_RETIRING_MAX models may drain at once, and the lcore adopts a
 * new model only while the models hold at most (DP_MODEL_LIMITS - 1) x
 * max_limit frames, so that all of them together never hold more than
 * DP_MODEL_LIMITS x max_limit: the mbuf pool is sized for that (main.c).
 * A publish beyond either bound waits in the mailbox until enough drained.
 *
 * Readers outside the lcore do not read the models: they ask the lcore
 * for a snapshot (dp_model_slot_snapshot, called by the owning lcore at a
 * burst boundary, fastpath.h), so counters of a model that is leaving the
 * retiring list are counted exactly once.
 *
 * Every pointer hand-over is a release/acquire pair and every field has
 * one writer. Models are freed only by the control thread, which is also
 * the only reader of the retiring list outside the lcore, so a pointer it
 * reads stays valid while it reads. */
#ifndef DP_MODEL_SLOT_H
#define DP_MODEL_SLOT_H

#include <stdint.h>

#include <rte_ring.h>

#include "config.h"
#include "counters.h"
#include "frame.h"
#include "path.h"

#define DP_RETIRING_MAX 8
/* max_limit's worth of frames the models of one direction may hold at
 * once: the active model's limit plus two limits' worth still draining
 * from retired ones. */
#define DP_MODEL_LIMITS 3u

/* The model of one direction: its classes and their links. */
struct dp_model {
	struct le_path path;
	char text[LE_PATH_TEXT_MAX]; /* its grammar, formatted */
};

struct dp_model_slot {
	struct dp_model *active;                     /* lcore writes */
	struct dp_model *retiring[DP_RETIRING_MAX];  /* lcore writes */
	unsigned nretiring;                          /* lcore writes */
	struct dp_model *mailbox;                    /* control sets, lcore clears */
	struct rte_ring *retired;                    /* lcore -> control (SP/SC) */
	uint64_t applied_seq;                        /* lcore increments per swap */
	uint64_t applied_ns;                         /* model time of the last swap */
	uint64_t adopt_max_depth;                    /* adopt a new model only at or below */
	uint32_t waiting_depth;                      /* lcore: frames held when it last refused */
	struct le_counters retired_ctr;              /* lcore: counts of models that left */
};

/* What the models of a direction hold and counted, as of one instant. */
struct dp_model_slot_snapshot {
	const struct dp_model *active;   /* valid while the reader holds off collect() */
	struct le_counters ctr;          /* drops, dup, events of every model (not rx/tx) */
	uint32_t depth;                  /* frames held by active + retiring */
	unsigned nclasses;               /* of the active model */
	struct le_counters cls[LE_MAX_CLASSES + 1];
	uint32_t cls_depth[LE_MAX_CLASSES + 1];
};

/* Control side. */
/* ops must outlive the model. */
struct dp_model *dp_model_new(const struct le_path_config *cfg, enum le_direction dir, uint64_t default_seed,
			      const struct le_frame_ops *ops, char *err, size_t errlen);
void dp_model_free(struct dp_model *m);
/* max_limit: the frames memory was sized for per model (DP_MODEL_LIMITS). */
int dp_model_slot_init(struct dp_model_slot *s, struct dp_model *first, uint32_t max_limit, const char *name,
		       char *err, size_t errlen);
/* Frees every model the slot holds (after the lcores stopped). Safe on a
 * slot that was never set up (zeroed) or only partly. */
void dp_model_slot_fini(struct dp_model_slot *s);
/* Queues `m` for the lcore. -1 when a previous model still waits in the
 * mailbox (retry later). */
int dp_model_slot_publish(struct dp_model_slot *s, struct dp_model *m);
/* Frees models the lcore has finished with. */
void dp_model_slot_collect(struct dp_model_slot *s);

/* Lcore side: call at a burst boundary. Cheap when nothing is pending. */
void dp_model_slot_poll(struct dp_model_slot *s, le_ns_t now);

/* Owning lcore (or anyone once the lcores stopped): what the models
 * counted and hold. Model rx/tx are internal hand-overs and left out. */
void dp_model_slot_snapshot(const struct dp_model_slot *s, struct dp_model_slot_snapshot *out);

#endif
