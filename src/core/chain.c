/* Chains of links: hop-to-hop hand-over in model time; see chain.h. */
#include "chain.h"

#include <string.h>

uint32_t le_chain_stream(uint32_t cls, unsigned hop)
{
	/* Classes are < 2^16 (le_frame.cls), so hops never share a class's
	 * streams. */
	return cls + ((uint32_t)hop << 16);
}

/* Where a frame leaving hop l goes: its chain's next hop, or what
 * continues that after live changes (NULL: l is a last hop, frames leave
 * the chain from it). */
static struct le_link *dest(const struct le_link *l)
{
	struct le_link *t = l->next;

	while (t != NULL && t->heir != NULL)
		t = t->heir;
	return t;
}

#define MOVE_BATCH 32

static void hand_on(struct le_link *from, struct le_link *to, const struct le_frame *f)
{
	from->ctr.hop_out++;
	from->ctr.hop_out_bytes += f->len;
	to->ctr.hop_in++;
	to->ctr.hop_in_bytes += f->len;
	/* It arrives at the next hop when it left this one. */
	le_link_offer(to, f->handle, f->len, f->deadline);
}

/* After live changes, hop l and the hops it continues (elders, still
 * serving frames they had served) feed one next hop: merge their due
 * frames by deadline, the older hop first on ties, as one hop would.
 * Only the elders whose frames go where l's go (dest): an elder that
 * was its chain's last hop (a chain made longer) served its frames out
 * of the link, and they leave from its own path at their deadlines; an
 * elder whose next hop no change continued into l's (a chain made
 * shorter, then longer again) hands its frames on to that hop, as
 * before the later change. Merging those here sent them to l's next hop
 * instead, and only the frames the owner had not taken by the change:
 * its effect depended on when it polled. */
static void move_merged(struct le_link *l, struct le_link *to, le_ns_t now)
{
	struct le_frame f;

	for (struct le_link *e = l; e != NULL; e = e->elder)
		if (dest(e) == to)
			le_link_dequeue(e, now, &f, 0);
	for (;;) {
		struct le_link *best = NULL;
		le_ns_t best_d = UINT64_MAX;

		for (struct le_link *e = l; e != NULL; e = e->elder) {
			le_ns_t d = le_delay_line_next_deadline(&e->line);

			if (d <= now && d <= best_d && le_delay_line_count(&e->line) > le_delay_line_held(&e->line) &&
			    dest(e) == to) {
				best_d = d;
				best = e;
			}
		}
		if (best == NULL || le_link_dequeue(best, now, &f, 1) == 0)
			return;
		hand_on(best, to, &f);
	}
}

/* A hop continued by a later hop that hands frames on to the same next
 * hop: the newest such heir's chain hands this hop's frames on too
 * (move_merged walks its elders), so each hop's frames have exactly one
 * mover and are merged by deadline with the others bound there. Any
 * heir counts, not only the newest: after a later change made the chain
 * shorter (the newest heir a last hop), an heir in between still merges
 * this hop's frames with its own; this hop's chain moving them as well
 * handed them on first, unmerged, and a frame of the heir due earlier
 * reached the next hop late, behind them, when the owner polled after
 * both were due. */
static int moved_by_heir(const struct le_link *l)
{
	const struct le_link *to;

	if (l->heir == NULL)
		return 0;
	to = dest(l);
	for (const struct le_link *t = l->heir; t != NULL; t = t->heir)
		if (t->next != NULL && dest(t) == to)
			return 1;
	return 0;
}

void le_chain_move(struct le_chain *c, le_ns_t now)
{
	struct le_frame f[MOVE_BATCH];

	for (unsigned i = 0; i + 1 < c->n; i++) {
		struct le_link *from = c->hop[i];
		unsigned got;

		if (moved_by_heir(from))
			continue;
		if (from->elder != NULL) {
			move_merged(from, dest(from), now);
			continue;
		}
		do {
			struct le_link *to = dest(from);

			got = le_link_dequeue(from, now, f, MOVE_BATCH);
			for (unsigned k = 0; k < got; k++)
				hand_on(from, to, &f[k]);
		} while (got == MOVE_BATCH);
	}
}

unsigned le_chain_dequeue(struct le_chain *c, le_ns_t now, struct le_frame *out, unsigned max)
{
	le_chain_move(c, now);
	return le_link_dequeue(c->hop[c->n - 1], now, out, max);
}

le_ns_t le_chain_next_deadline(const struct le_chain *c)
{
	le_ns_t d = UINT64_MAX;

	for (unsigned i = 0; i < c->n; i++) {
		le_ns_t x = le_link_next_deadline(c->hop[i]);
		if (x < d)
			d = x;
	}
	return d;
}

uint32_t le_chain_depth(const struct le_chain *c)
{
	uint32_t n = 0;

	for (unsigned i = 0; i < c->n; i++)
		n += le_link_depth(c->hop[i]);
	return n;
}

uint64_t le_chain_drain(struct le_chain *c)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < c->n; i++)
		n += le_link_drain(c->hop[i]);
	return n;
}

void le_chain_counters(const struct le_chain *c, struct le_counters *out)
{
	memset(out, 0, sizeof(*out));
	for (unsigned i = 0; i < c->n; i++)
		le_counters_add(out, &c->hop[i]->ctr);
	le_counters_fold_hops(out);
}

void le_chain_inherit(struct le_chain *n, struct le_chain *o, le_ns_t at)
{
	/* Frames that leave an old hop by `at` reach the next old hop before
	 * that one works up to `at` (le_link_inherit). */
	le_chain_move(o, at);
	for (unsigned i = 0; i < n->n && i < o->n; i++)
		le_link_inherit(n->hop[i], o->hop[i], at);
}
