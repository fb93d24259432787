/* Live changes of a direction's model; see swap.h. */
#include "swap.h"

#include <string.h>

void le_swap_init(struct le_swap *s, struct le_path *first)
{
	memset(s, 0, sizeof(*s));
	s->active = first;
}

int le_swap_stage(struct le_swap *s, struct le_path *next, le_ns_t at)
{
	/* Room for the active path among the retiring ones when it applies
	 * (their number only falls meanwhile), so a change is never late. */
	if (s->staged != NULL || s->nretiring + s->ndrained >= LE_SWAP_RETIRING_MAX)
		return -1;
	s->staged = next;
	s->staged_at = at;
	return 0;
}

/* Retiring paths that hold nothing more go to the drained list, their
 * counts moved on (le_path_detach). */
static void collect(struct le_swap *s)
{
	unsigned kept = 0;

	for (unsigned i = 0; i < s->nretiring; i++) {
		struct le_path *p = s->retiring[i];

		if (le_path_depth(p) == 0) {
			le_path_detach(p, &s->gone);
			s->drained[s->ndrained++] = p;
		} else {
			s->retiring[kept++] = p;
		}
	}
	s->nretiring = kept;
}

static void apply(struct le_swap *s, le_ns_t at)
{
	struct le_path *next = s->staged;

	le_path_inherit_at(next, s->active, at);
	s->retiring[s->nretiring++] = s->active;
	s->active = next;
	s->staged = NULL;
	s->swaps++;
	s->swapped_at = at;
	collect(s);
}

/* Everything at model time t happens after a change due by t. */
static void reach(struct le_swap *s, le_ns_t t)
{
	if (t > s->clock)
		s->clock = t;
	if (s->staged != NULL && s->staged_at <= s->clock)
		apply(s, s->staged_at ? s->staged_at : s->clock);
}

void le_swap_advance(struct le_swap *s, le_ns_t now)
{
	reach(s, now);
}

void le_swap_offer(struct le_swap *s, void *handle, uint32_t len, le_ns_t arrival)
{
	reach(s, arrival);
	le_path_enqueue(s->active, handle, len, arrival);
}

void le_swap_offer_burst(struct le_swap *s, void *const *handles, const uint32_t *lens, unsigned n,
			 le_ns_t arrival)
{
	/* One arrival: one path takes them all. */
	reach(s, arrival);
	le_path_enqueue_burst(s->active, handles, lens, n, arrival);
}

int le_swap_offer_named(struct le_swap *s, const char *name, struct le_swap_class_cache *cache, void *handle,
			uint32_t len, le_ns_t arrival)
{
	reach(s, arrival);
	if (cache->valid != s->swaps + 1) {
		cache->valid = s->swaps + 1;
		cache->cls = le_path_class_index(s->active, name);
	}
	if (cache->cls < 0)
		return -1;
	le_path_offer_class(s->active, (unsigned)cache->cls, handle, len, arrival);
	return 0;
}

/* The earliest deadline among p's due frames (<= now), or UINT64_MAX. */
static le_ns_t due_deadline(const struct le_path *p, le_ns_t now)
{
	le_ns_t best = UINT64_MAX;

	for (unsigned k = 0; k < p->nlinks; k++) {
		const struct le_delay_line *d = &p->link[k].line;
		le_ns_t dl = le_delay_line_next_deadline(d);

		if (dl <= now && dl < best && le_delay_line_count(d) > le_delay_line_held(d))
			best = dl;
	}
	return best;
}

/* le_swap_dequeue with paths retiring, after reach(): every path brought
 * to now, then their due frames merged by deadline, the older path first
 * on ties. */
static unsigned dequeue_merged(struct le_swap *s, le_ns_t now, struct le_frame *out, unsigned max)
{
	unsigned n = 0;

	/* Frames moving between hops first, the newest path's first: a hop's
	 * `limit` counts its elders' frames (older paths) at each arrival,
	 * so no elder's line may be marked due past the arrivals a newer
	 * path still hands on to its heir. An older retiring path moved or
	 * dequeued before a newer one marked its frames due at `now`, and
	 * the heir then admitted frames that arrived before: `limit` then
	 * depended on when the owner polled. Within one path, le_chain_move
	 * hands on before its next hop is dequeued. */
	le_path_move(s->active, now);
	for (unsigned i = s->nretiring; i-- > 0;)
		le_path_move(s->retiring[i], now);
	for (unsigned i = 0; i < s->nretiring; i++)
		le_path_dequeue(s->retiring[i], now, out, 0);
	le_path_dequeue(s->active, now, out, 0);
	while (n < max) {
		struct le_path *best = NULL;
		le_ns_t best_d = UINT64_MAX;

		for (unsigned i = 0; i <= s->nretiring; i++) {
			struct le_path *p = i < s->nretiring ? s->retiring[i] : s->active;
			le_ns_t d = due_deadline(p, now);

			if (d < best_d) {
				best_d = d;
				best = p;
			}
		}
		if (best == NULL || le_path_dequeue(best, now, &out[n], 1) == 0)
			break;
		n++;
	}
	collect(s);
	return n;
}

unsigned le_swap_dequeue(struct le_swap *s, le_ns_t now, struct le_frame *out, unsigned max)
{
	reach(s, now);
	if (s->nretiring == 0)
		return le_path_dequeue(s->active, now, out, max);
	return dequeue_merged(s, now, out, max);
}

unsigned le_swap_dequeue_split(struct le_swap *s, le_ns_t now, const struct le_frame_split *out, unsigned max)
{
	struct le_frame f[LE_SPLIT_MAX];
	unsigned n;

	if (max > LE_SPLIT_MAX)
		max = LE_SPLIT_MAX;
	reach(s, now);
	if (s->nretiring == 0)
		return le_path_dequeue_split(s->active, now, out, max);
	n = dequeue_merged(s, now, f, max);
	le_frame_split_put(out, f, n);
	return n;
}

le_ns_t le_swap_next_deadline(const struct le_swap *s)
{
	le_ns_t d = le_path_next_deadline(s->active);

	for (unsigned i = 0; i < s->nretiring; i++) {
		le_ns_t x = le_path_next_deadline(s->retiring[i]);
		if (x < d)
			d = x;
	}
	if (s->staged != NULL && s->staged_at < d)
		d = s->staged_at;
	return d;
}

uint32_t le_swap_depth(const struct le_swap *s)
{
	uint32_t n = le_path_depth(s->active);

	for (unsigned i = 0; i < s->nretiring; i++)
		n += le_path_depth(s->retiring[i]);
	return n;
}

void le_swap_counters(const struct le_swap *s, struct le_counters *out)
{
	struct le_counters c;

	le_path_counters(s->active, &c);
	le_counters_add(out, &c);
	for (unsigned i = 0; i < s->nretiring; i++) {
		le_path_counters(s->retiring[i], &c);
		le_counters_add(out, &c);
	}
	le_counters_add(out, &s->gone);
	/* `gone` holds ended hops' raw counts. */
	le_counters_fold_hops(out);
}

void le_swap_class_counters(const struct le_swap *s, unsigned cls, struct le_counters *out)
{
	memset(out, 0, sizeof(*out));
	if (cls >= le_path_classes(s->active))
		return;
	for (unsigned h = 0; h < s->active->chain[cls].n; h++)
		for (const struct le_link *l = s->active->chain[cls].hop[h]; l != NULL; l = l->elder)
			le_counters_add(out, &l->ctr);
	le_counters_fold_hops(out);
}

void le_swap_hop_counters(const struct le_swap *s, unsigned cls, unsigned hop, struct le_counters *out)
{
	memset(out, 0, sizeof(*out));
	if (cls >= le_path_classes(s->active) || hop >= s->active->chain[cls].n)
		return;
	for (const struct le_link *l = s->active->chain[cls].hop[hop]; l != NULL; l = l->elder)
		le_counters_add(out, &l->ctr);
}

uint32_t le_swap_hop_depth(const struct le_swap *s, unsigned cls, unsigned hop)
{
	uint32_t n = 0;

	if (cls >= le_path_classes(s->active) || hop >= s->active->chain[cls].n)
		return 0;
	for (const struct le_link *l = s->active->chain[cls].hop[hop]; l != NULL; l = l->elder)
		n += le_link_depth(l);
	return n;
}

uint32_t le_swap_class_depth(const struct le_swap *s, unsigned cls)
{
	uint32_t n = 0;

	if (cls >= le_path_classes(s->active))
		return 0;
	for (unsigned h = 0; h < s->active->chain[cls].n; h++)
		n += le_swap_hop_depth(s, cls, h);
	return n;
}

void le_swap_reset_counters(struct le_swap *s)
{
	le_path_reset_counters(s->active);
	for (unsigned i = 0; i < s->nretiring; i++)
		le_path_reset_counters(s->retiring[i]);
	memset(&s->gone, 0, sizeof(s->gone));
}

struct le_path *le_swap_take_drained(struct le_swap *s)
{
	struct le_path *p;

	if (s->ndrained == 0)
		return NULL;
	p = s->drained[0];
	memmove(&s->drained[0], &s->drained[1], --s->ndrained * sizeof(s->drained[0]));
	return p;
}

uint64_t le_swap_drain(struct le_swap *s)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < s->nretiring; i++)
		n += le_path_drain(s->retiring[i]);
	if (s->active != NULL)
		n += le_path_drain(s->active);
	return n;
}

unsigned le_swap_release(struct le_swap *s, struct le_path **out)
{
	unsigned n = 0;

	/* Oldest first, so each detaches onto a successor still linked. */
	for (unsigned i = 0; i < s->nretiring; i++) {
		le_path_detach(s->retiring[i], &s->gone);
		out[n++] = s->retiring[i];
	}
	for (unsigned i = 0; i < s->ndrained; i++)
		out[n++] = s->drained[i];
	if (s->active != NULL) {
		le_path_detach(s->active, &s->gone);
		out[n++] = s->active;
	}
	if (s->staged != NULL)
		out[n++] = s->staged;
	s->nretiring = s->ndrained = 0;
	s->active = s->staged = NULL;
	return n;
}
