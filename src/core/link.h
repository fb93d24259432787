/* One direction of an emulated link: the stages of DESIGN.md §2 composed.
 *
 *   enqueue: loss -> queue limit -> delay -> delay line
 *   dequeue: frames whose deadline has come, in deadline order
 *
 * Pure C, no DPDK, no clock: the caller passes `now`/`arrival`. A link owns
 * a copy of its configuration and all model state; two links never share
 * anything, so each direction (and later each class) can run on its own
 * lcore without locks.
 *
 * Accounting inside the model: ctr.rx counts frames offered, ctr.tx frames
 * handed back by dequeue/drain, ctr.drop[LOSS] and ctr.drop[QUEUE_FULL] the
 * model's drops. Always: rx == tx + drops + le_link_depth(). */
#ifndef LE_LINK_H
#define LE_LINK_H

#include <stdint.h>

#include "config.h"
#include "counters.h"
#include "delay_line.h"
#include "loss.h"

enum le_direction { LE_DIR_A2B = 0, LE_DIR_B2A = 1, LE_DIRS = 2 };
const char *le_direction_name(enum le_direction d); /* "a2b", "b2a" */

struct le_link {
	struct le_link_config cfg;
	uint32_t direction;
	uint64_t seed;              /* effective seed (cfg.seed or the default given) */
	struct le_loss_state loss;
	struct le_delay_line line;
	struct le_counters ctr;
};

/* Sizes the delay line for `capacity` frames (>= cfg->limit; the data plane
 * passes the largest limit it will ever accept for this link). The seed is
 * cfg->seed when cfg->seed_set, else default_seed. -1 on allocation
 * failure, with a message. */
int le_link_init(struct le_link *l, const struct le_link_config *cfg, enum le_direction dir,
		 uint64_t default_seed, uint32_t capacity, char *err, size_t errlen);
void le_link_free(struct le_link *l);

/* Offers a frame that arrived at `arrival`. Returns 0 when the link keeps
 * it (its deadline is then known to the link), or -1 when it is dropped,
 * with *cause set (LE_DROP_LOSS or LE_DROP_QUEUE_FULL); the caller then
 * frees the frame. */
int le_link_enqueue(struct le_link *l, void *handle, uint32_t len, le_ns_t arrival,
		    enum le_drop_cause *cause);

/* Frames whose deadline <= now, up to max, in deadline order. */
unsigned le_link_dequeue(struct le_link *l, le_ns_t now, struct le_frame *out, unsigned max);

/* Everything still held, regardless of deadline (shutdown). */
unsigned le_link_drain(struct le_link *l, struct le_frame *out, unsigned max);

le_ns_t le_link_next_deadline(const struct le_link *l);
uint32_t le_link_depth(const struct le_link *l);

#endif
