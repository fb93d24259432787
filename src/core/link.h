/* One link: the stages of DESIGN.md section 2 composed, for one direction
 * (and, inside a le_path, one traffic class).
 *
 *   offer:   loss (+ecn) -> duplicate -> corrupt -> queue admission
 *            (limit, limit-bytes, limit-queue; drop-tail or drop-head)
 *   serve:   [CoDel] -> serializer (rate | trace | slot; slot after rate)
 *   deliver: delay + jitter (or reorder: no delay) -> delay line
 *   dequeue: frames whose deadline has come, in deadline order
 *
 * Pure C, no DPDK, no clock: the caller passes `arrival` and `now`. The
 * link keeps a virtual clock, the largest time it was given, and works
 * out every event (a serializer start, a trace opportunity, a CoDel
 * decision) at the virtual time it happens, computed from arrivals and
 * its own state; so departures and drops do not depend on when or how
 * often dequeue is called, provided frames are offered in arrival order
 * and each before the clock passes its arrival. A frame offered with an
 * arrival before the clock (e.g. it waited in a ring while another
 * dequeue moved the clock on) is still timed from its own arrival, but
 * cannot take part in what the link already decided at later times
 * (opportunities used or lost, CoDel and head drops, the limit count);
 * such frames are counted as the event `late_arrival`.
 *
 * Frames the link drops are freed through the caller's frame operations
 * (frame.h) and counted under their cause; the link never hands a dropped
 * frame back. Accounting (counters.h):
 *     ctr.rx + ctr.dup == ctr.tx + drops + le_link_depth()
 * where tx counts frames handed back by dequeue (drain counts what it
 * frees as `shutdown` drops). After a live change (le_link_inherit) the
 * counts and the frames not yet served move to the new link, so the law
 * holds for the new link and its elders together (le_swap_counters).
 *
 * Threading: one thread (the data plane's lcore) offers, dequeues and
 * inherits; init and free (allocation, file reads) happen on another
 * (control), before the link is handed over and after it is handed
 * back.
 *
 * Memory is allocated at init only, sized from `limit`:
 *   delay line  2^ceil(log2(limit + max(1024, limit/8))) frames x 32 B
 *               (x 2, plus 48 B per frame, when the line is ordered)
 *   queue       2^ceil(log2(limit)) x 32 B, only with a serializer (at a
 *               change the new link takes the old one's rings over)
 *   tables      <= 32 KiB per distribution, 8 B per trace line
 * e.g. limit 1000: 64 KiB (+ 32 KiB queue); limit 10^6: 36 MiB (+32 MiB);
 * the worst, limit 10^8: 4 GiB (+ 4 GiB, + 10 GiB ordered). */
#ifndef LE_LINK_H
#define LE_LINK_H

#include <stdint.h>

#include "codel.h"
#include "config.h"
#include "counters.h"
#include "delay_line.h"
#include "frame.h"
#include "jitter.h"
#include "loss.h"
#include "perframe.h"
#include "queue.h"
#include "slot.h"
#include "trace.h"

enum le_direction { LE_DIR_A2B = 0, LE_DIR_B2A = 1, LE_DIRS = 2 };
const char *le_direction_name(enum le_direction d); /* "a2b", "b2a" */

struct le_link {
	struct le_link_config cfg;
	uint32_t direction;
	uint32_t cls;
	uint64_t seed;              /* effective seed (cfg.seed or the default given) */
	struct le_frame_ops ops;

	/* per-frame stages */
	struct le_loss_state loss;
	struct le_chance_state dup, corrupt, reorder;
	struct le_jitter_state jitter;
	uint32_t reorder_counter;   /* netem's q->counter */

	/* queue and serializer */
	int has_queue;
	int plain;                  /* only a fixed delay: le_link_offer_burst's loop */
	int stageless;              /* delay, jitter, reorder only: le_link_offer_burst skips process() */
	int fate_gaps;              /* every chance before admission draws as gaps, or not at all
				     * (rng.h le_rng_chance_quiet): a burst passes quiet frames
				     * without their trials (link_stages.c, pass_quietly) */
	struct le_queue queue;
	struct le_codel_state codel;
	le_ns_t busy;               /* rate: the serializer is free from then */
	uint32_t rate_len;          /* rate: the last frame length timed, */
	le_ns_t rate_time;          /* and its time on the wire (a burst's frames share lengths) */
	le_ns_t floor;              /* no frame is served before (le_link_inherit) */
	struct le_trace trace;
	struct le_trace_pos tpos;
	int transit;                /* trace: a frame partly sent */
	struct le_frame tframe;
	uint32_t tleft;             /* its bytes still to send */
	struct le_slot_state slot;

	le_ns_t last_deadline;      /* largest deadline given (noreorder) */
	le_ns_t clock;
	int settled;                /* advance(clock) ran and nothing since would change another */
	struct le_delay_line line;
	struct le_counters ctr;

	/* live changes (le_link_inherit): the link this one continues while
	 * it still holds frames, and the one continuing this */
	struct le_link *elder, *heir;
	struct le_link *next;       /* the next hop of its chain (chain.h); NULL: frames leave */
	/* Which link of its class (or hop) this is: the generation of the
	 * path that created it (le_path.generation), carried by
	 * le_link_inherit with the counters. Counts read before a live change
	 * (a `reset stats` baseline) belong to a link of the same name only
	 * when this matches: a class removed and added again counts anew. */
	uint64_t born;
};

/* Sets up a link for `cfg`; the seed is cfg->seed when cfg->seed_set,
 * else default_seed; `cls` selects the class's random streams (0 for a
 * link on its own). Loads the files the configuration names. -1 with a
 * message on a bad configuration, missing frame operations, or
 * allocation failure. */
int le_link_init_ops(struct le_link *l, const struct le_link_config *cfg, enum le_direction dir,
		     uint32_t cls, uint64_t default_seed, const struct le_frame_ops *ops, char *err,
		     size_t errlen);
void le_link_free(struct le_link *l);

/* Offers a frame that arrived at `arrival`. The link keeps it or frees it
 * (ops->free), counting why. */
void le_link_offer(struct le_link *l, void *handle, uint32_t len, le_ns_t arrival);
/* The same for n frames that arrived together, in order: exactly n calls
 * of le_link_offer (same decisions, counts and clock), in a loop of a few
 * instructions per frame when the link only delays (no loss, duplicate,
 * corrupt, jitter, reorder, queue, and no predecessor still holding), and
 * without the per-frame stages' calls when it only delays, jitters and
 * reorders. */
void le_link_offer_burst(struct le_link *l, void *const *handles, const uint32_t *lens, unsigned n,
			 le_ns_t arrival);

/* Frames whose deadline <= now, up to max, in deadline order. */
unsigned le_link_dequeue(struct le_link *l, le_ns_t now, struct le_frame *out, unsigned max);
/* The same into a sender's three arrays (frame.h). */
unsigned le_link_dequeue_split(struct le_link *l, le_ns_t now, const struct le_frame_split *out, unsigned max);

/* Everything still held, regardless of deadline (shutdown): the delay
 * line in deadline order, then the frame being sent, then the queue
 * (whose frames have no deadline yet: theirs is set to their arrival). */
/* Shutdown: frees every frame still held (queued, serializing or
 * delayed) through ops->free and counts each as a `shutdown` drop of this
 * link, so class counters say what really happened to them. Returns how
 * many. */
uint64_t le_link_drain(struct le_link *l);

/* A time no later than the next departure: the earliest deadline held,
 * or the serializer's next event while frames wait. UINT64_MAX when the
 * link holds nothing. */
le_ns_t le_link_next_deadline(const struct le_link *l);
/* Frames the link holds (queue, serializer, delay line, due or not). */
uint32_t le_link_depth(const struct le_link *l);
/* Frames the link holds that have not left by its clock: what `limit`
 * counts. */
uint32_t le_link_held(const struct le_link *l);
/* Brings the link's serializer to `t` (what offer and dequeue do first). */
void le_link_advance(struct le_link *l, le_ns_t t);

/* Live change: `n` (fresh, no frame offered yet) continues `o` from
 * model time `at` (>= what o was given). First o's serializer works up to
 * `at` with o's configuration; then n takes over, each stage with its
 * carry function: the random streams (unless n sets a `seed` other than
 * o's, when n's start from that seed), correlated memories, loss chain
 * (same model), slot phase, CoDel state, trace position (exact with the
 * same trace file), the serializer's busy time, reorder's counter,
 * noreorder's last deadline, the clock and the counters (o's restart
 * from 0: what happens to the frames o keeps) with `born`. The frames o
 * had not served yet (queue, and a frame partly sent by a trace) move to
 * n in O(1) and are served by n's serializer from `at` on (without one,
 * they leave it at `at`); frames o had served stay in o with their
 * deadlines.
 * With n->elder = o, n's limit counts the frames o still holds, and n's
 * counts are the class's whole history: so a change to an identical
 * link changes nothing. n->elder stays set until le_link_detach(o). */
void le_link_inherit(struct le_link *n, struct le_link *o, le_ns_t at);
/* Before `o` is freed: its successor (if any) takes o's counts and
 * links to o's own predecessor; a link without successor adds its counts
 * to *gone. */
void le_link_detach(struct le_link *o, struct le_counters *gone);

#endif
