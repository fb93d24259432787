/* Slots: a link that delivers in bursts (netem `slot`, sch_netem.c
 * get_slot_next and the slot handling in netem_dequeue).
 *
 * Slots open at instants; at an instant the frames ready by then leave
 * together, up to `packets` frames and `bytes` bytes (netem: the slot
 * closes once either budget reaches 0 or below, so the last frame may
 * overrun the byte budget). The next instant is the previous one plus a
 * gap drawn uniformly in [MIN, MAX) (or from DIST with DELAY, JITTER).
 * A frame that becomes ready after the open instant has passed makes
 * netem draw a fresh slot from that moment (`slot_next < time_to_send`):
 * here, from the frame's ready time. Ready is the frame's arrival (slot
 * alone) or the end of its serialization (with rate). */
#ifndef LE_SLOT_H
#define LE_SLOT_H

#include <stdint.h>

#include "config.h"
#include "dist_table.h"
#include "rng.h"

struct le_slot_state {
	struct le_rng rng;
	struct le_dist_table table;
	le_ns_t next;          /* the open (or next) instant; 0 before the first frame */
	int64_t packets_left;
	int64_t bytes_left;
};

int le_slot_init(struct le_slot_state *s, const struct le_slot_config *c, uint64_t seed,
		 uint32_t direction, uint32_t cls, char *err, size_t errlen);
void le_slot_free(struct le_slot_state *s);
/* Live change: streams: n continues o's stream; phase: n continues o's
 * open instant and budgets (both links have slots). */
void le_slot_carry(struct le_slot_state *n, const struct le_slot_state *o, int streams, int phase);
/* The instant a frame ready at `ready` leaves (without consuming budget;
 * may draw a fresh slot, which later calls then keep). */
le_ns_t le_slot_when(struct le_slot_state *s, const struct le_slot_config *c, le_ns_t ready);
/* Records that a frame of len bytes left at the current instant. */
void le_slot_consume(struct le_slot_state *s, const struct le_slot_config *c, uint32_t len);

#endif
