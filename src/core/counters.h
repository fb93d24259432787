/* Per-direction frame accounting.
 *
 * The conservation law every part of linkemu keeps:
 *     rx == tx + sum(drop[cause]) + in_flight
 * Every frame that is freed without being sent is counted under exactly one
 * cause. Model causes are counted by the link (src/core); the others by the
 * data plane, which owns rings, ports and shutdown. */
#ifndef LE_COUNTERS_H
#define LE_COUNTERS_H

#include <stdint.h>

enum le_drop_cause {
	LE_DROP_LOSS = 0,       /* the loss model chose the frame */
	LE_DROP_QUEUE_FULL,     /* the link's queue limit (`limit`) was reached */
	LE_DROP_RING_FULL,      /* data plane: an inter-lcore ring was full */
	LE_DROP_TX_REFUSED,     /* data plane: the port did not take the frame */
	LE_DROP_SHUTDOWN,       /* data plane: still in flight at shutdown */
	LE_DROP_MALFORMED,      /* data plane: frame unusable (e.g. runt, chained beyond limits) */
	LE_DROP_CAUSES
};

/* Stable snake_case names used in JSON and the control protocol. */
const char *le_drop_cause_name(enum le_drop_cause c);

struct le_counters {
	uint64_t rx;
	uint64_t tx;
	uint64_t rx_bytes;
	uint64_t tx_bytes;
	uint64_t drop[LE_DROP_CAUSES];
};

uint64_t le_counters_dropped(const struct le_counters *c);
/* dst += src */
void le_counters_add(struct le_counters *dst, const struct le_counters *src);

#endif
