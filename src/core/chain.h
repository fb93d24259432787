/* A chain of links ("hops"): a class's link written `LINK >> LINK ...`.
 *
 * Each hop is a whole le_link (own loss, queue, serializer, delay and
 * counters). A frame offered to the chain enters hop 0; when it leaves
 * hop i at its deadline d there, it is offered to hop i+1 with arrival d
 * (model time, so departures do not depend on when dequeue is called);
 * it leaves the chain when it leaves the last hop. Hop i hands frames on
 * in its own deadline order, so a hop that does not reorder keeps the
 * order it was given.
 *
 * The chain is a view: it points at hops owned elsewhere (le_path holds
 * them), so a one-hop chain is just its link. Hand-overs between hops
 * are counted in the hops' counters (hop_out on the sender, hop_in on
 * the receiver) besides their tx and rx, so each hop keeps the link law
 *     rx + dup == tx + drops + depth
 * and the chain as a whole (le_chain_counters: rx of what entered, tx of
 * what left, every hop's drops and copies) keeps it with the chain's
 * depth, across live changes too.
 *
 * Live change: hop i of the new chain continues hop i of the old one
 * (le_link_inherit). A frame leaving an old hop after the change goes on
 * to the successor of the next old hop (its heir), so an identical chain
 * changes nothing, frame for frame; a frame an old last hop had served
 * (a chain made longer) leaves from it. Each old hop's frames are handed
 * on by one chain only, merged by deadline with the other hops bound for
 * the same next hop, so none of this depends on when dequeue is called.
 *
 * Threading: as le_link (one owner thread). */
#ifndef LE_CHAIN_H
#define LE_CHAIN_H

#include <stdint.h>

#include "counters.h"
#include "frame.h"
#include "link.h"

/* At most 8 hops: enough for an access link, a core and the far access
 * with room to spare (Mahimahi-style nesting rarely goes past 4), while
 * each hop costs its own rings (at least 64 KiB) and a frame crossing
 * the chain costs one offer and one dequeue per hop. */
#define LE_MAX_HOPS 8

struct le_chain {
	unsigned n;                       /* hops, 1 .. LE_MAX_HOPS */
	struct le_link *hop[LE_MAX_HOPS]; /* not owned */
};

/* The random streams of hop `hop` of class `cls`: hop 0 keeps the
 * class's own (a one-hop chain is exactly its link). */
uint32_t le_chain_stream(uint32_t cls, unsigned hop);

static inline void le_chain_offer(struct le_chain *c, void *handle, uint32_t len, le_ns_t arrival)
{
	le_link_offer(c->hop[0], handle, len, arrival);
}
/* n frames that arrived together, in order (le_link_offer_burst). */
static inline void le_chain_offer_burst(struct le_chain *c, void *const *handles, const uint32_t *lens, unsigned n,
					le_ns_t arrival)
{
	le_link_offer_burst(c->hop[0], handles, lens, n, arrival);
}

/* Hands every frame whose deadline at hop i is <= now on to hop i+1,
 * hop by hop, so the last hop then holds every frame that can leave the
 * chain by `now`. Nothing to do for one hop. */
void le_chain_move(struct le_chain *c, le_ns_t now);
/* Frames leaving the chain by `now` (le_chain_move, then the last
 * hop's due frames), up to max, in deadline order. */
unsigned le_chain_dequeue(struct le_chain *c, le_ns_t now, struct le_frame *out, unsigned max);
/* The earliest time any hop hands a frame on or out. */
le_ns_t le_chain_next_deadline(const struct le_chain *c);
/* Frames held by all hops. */
uint32_t le_chain_depth(const struct le_chain *c);
/* Shutdown: every hop frees what it holds (shutdown drops of that hop). */
uint64_t le_chain_drain(struct le_chain *c);
/* The chain's counts as one link: rx and rx_bytes of what entered, tx
 * and tx_bytes of what left, drops, copies and events of every hop;
 * the hand-overs between hops cancel out. Written to *out. */
void le_chain_counters(const struct le_chain *c, struct le_counters *out);
/* Live change at `at`: hop i of n continues hop i of o (hops beyond
 * the shorter chain start fresh, or keep serving what they hold). */
void le_chain_inherit(struct le_chain *n, struct le_chain *o, le_ns_t at);

#endif
