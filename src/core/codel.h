/* CoDel (RFC 8289) on the bottleneck queue, in front of the serializer.
 *
 * The serializer asks for its next frame at a virtual time `now` (when it
 * becomes free, or when a frame arrives at an idle one); CoDel then
 * decides, from the head frame's sojourn time (now - its arrival), whether
 * to drop it, exactly as RFC 8289's dequeue pseudo-code: it enters the
 * dropping state once sojourn times stayed >= target for a whole
 * interval, drops then at intervals of interval / sqrt(count), and leaves
 * it when a sojourn falls below target or the queue holds at most one
 * maximum-size frame. With `ecn`, an ECN-capable frame is marked CE
 * instead of dropped (Linux codel_impl.h does the same; RFC 8289 leaves
 * it to implementations). */
#ifndef LE_CODEL_H
#define LE_CODEL_H

#include <stdint.h>

#include "config.h"
#include "frame.h"
#include "queue.h"

struct le_codel_state {
	le_ns_t first_above_time;   /* 0: sojourn below target */
	le_ns_t drop_next;
	uint32_t count;
	uint32_t lastcount;
	int dropping;
	uint32_t maxpacket;         /* largest frame seen (RFC: MAXPACKET, the MTU) */
};

/* What CoDel does to frames it does not pass on. */
struct le_codel_io {
	void *ctx;
	void (*drop)(void *ctx, struct le_frame *f);      /* frees and counts */
	int (*mark)(void *ctx, struct le_frame *f);       /* 1 when marked CE */
};

void le_codel_init(struct le_codel_state *s);
/* Live change: both: n continues o's control state (both links run
 * CoDel); the largest frame seen carries over in any case. */
void le_codel_carry(struct le_codel_state *n, const struct le_codel_state *o, int both);
/* The next frame for the serializer at `now`, after CoDel's drops: 0 and
 * *out, or -1 when none (the queue holds no frame that arrived by now). */
int le_codel_dequeue(struct le_codel_state *s, const struct le_codel_config *c, struct le_queue *q,
		     le_ns_t now, const struct le_codel_io *io, struct le_frame *out);
/* RFC 8289 control_law: t + interval / sqrt(count). */
le_ns_t le_codel_control_law(le_ns_t t, le_ns_t interval, uint32_t count);

#endif
