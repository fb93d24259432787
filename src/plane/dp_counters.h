/* What a data plane counts itself, apart from the link model's counts
 * (src/core/counters.h): frames received from and sent to the ports, and
 * the frames it drops for reasons of its own (rings, runts, shutdown).
 * No DPDK here: any data plane (DPDK or kernel sockets) keeps these.
 *
 * A direction's books (docs/control.md) join both:
 *
 *     rx + model dup + injected == tx + model drops + data-plane drops + in_flight
 *
 * `injected`: frames a punted class's process sent back that answer no
 * frame it was given (new frames; docs/punt.md). What the process holds
 * is in flight.
 *
 * Names are JSON and control vocabulary, merged by name with the model's
 * causes in the reports ("shutdown" is counted by both: the model for
 * what it held, the data plane for its rings and buffers). */
#ifndef DP_COUNTERS_H
#define DP_COUNTERS_H

#include <stdint.h>

enum dp_drop_cause {
	DP_DROP_RING_FULL = 0,  /* an inter-lcore ring was full (pipeline RX) */
	DP_DROP_MALFORMED,      /* frame unusable (shorter than an Ethernet header; linkemuk:
				 * or longer than its buffers, counted at its real length) */
	DP_DROP_SHUTDOWN,       /* in a ring or send buffer when the daemon stopped */
	/* Punted classes (docs/punt.md): */
	DP_DROP_PUNT_FULL,      /* the channel to the process was full (or no buffer for its answer) */
	DP_DROP_PUNT_DOWN,      /* no process attached, or lost with one that went away */
	DP_DROP_PUNT_DROPPED,   /* the process answered later frames, or said so, but not this one */
	DP_DROP_CAUSES
};

struct dp_counters {
	uint64_t rx;
	uint64_t tx;
	uint64_t rx_bytes;
	uint64_t tx_bytes;
	uint64_t drop[DP_DROP_CAUSES];
	uint64_t injected;      /* new frames from punted classes' processes */
};

const char *dp_drop_cause_name(enum dp_drop_cause c);
uint64_t dp_counters_dropped(const struct dp_counters *c);
/* dst += src, dst -= src */
void dp_counters_add(struct dp_counters *dst, const struct dp_counters *src);
void dp_counters_sub(struct dp_counters *dst, const struct dp_counters *src);

#endif
