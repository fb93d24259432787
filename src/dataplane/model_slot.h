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
 *   collect(): folds their counters <-
 *   into `retired_ctr`, frees them
 *
 * Frames already in an old model keep their deadlines (they leave from
 * the retiring model); frames received after the swap enter the new one.
 * At the swap the new path inherits what must be continuous (serializer
 * busy time, trace position, loss-chain state: le_path_inherit).
 * Up to DP_RETIRING_MAX models may drain at once; a publish beyond that
 * waits in the mailbox until one has drained.
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
	struct le_counters retired_ctr;              /* control: model counts of freed models */
};

/* Control side. */
/* ops must outlive the model. */
struct dp_model *dp_model_new(const struct le_path_config *cfg, enum le_direction dir, uint64_t default_seed,
			      const struct le_frame_ops *ops, char *err, size_t errlen);
void dp_model_free(struct dp_model *m);
int dp_model_slot_init(struct dp_model_slot *s, struct dp_model *first, const char *name, char *err,
		       size_t errlen);
/* Frees every model the slot holds (after the lcores stopped). */
void dp_model_slot_fini(struct dp_model_slot *s);
/* Queues `m` for the lcore. -1 when a previous model still waits in the
 * mailbox (retry later). */
int dp_model_slot_publish(struct dp_model_slot *s, struct dp_model *m);
/* Frees models the lcore has finished with, keeping their drop counts. */
void dp_model_slot_collect(struct dp_model_slot *s);
/* What the models of the direction counted (drops by model causes, dup,
 * events; not rx/tx, which are internal hand-overs): active + retiring +
 * freed models, added to *out. */
void dp_model_slot_counters(const struct dp_model_slot *s, struct le_counters *out);

/* Lcore side: call at a burst boundary. Cheap when nothing is pending. */
void dp_model_slot_poll(struct dp_model_slot *s, le_ns_t now);

/* Frames held by the active and retiring models. */
uint32_t dp_model_slot_depth(const struct dp_model_slot *s);

#endif
