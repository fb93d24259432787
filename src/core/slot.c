/* Slots; see slot.h. */
#include "slot.h"

#include <string.h>

void le_slot_carry(struct le_slot_state *n, const struct le_slot_state *o, int streams, int phase)
{
	if (streams)
		n->rng = o->rng;
	if (phase) {
		n->next = o->next;
		n->packets_left = o->packets_left;
		n->bytes_left = o->bytes_left;
	}
}

static void reset_budget(struct le_slot_state *s, const struct le_slot_config *c)
{
	/* netem: 0 means no limit (INT_MAX) */
	s->packets_left = c->packets ? c->packets : INT32_MAX;
	s->bytes_left = c->bytes ? c->bytes : INT32_MAX;
}

int le_slot_init(struct le_slot_state *s, const struct le_slot_config *c, uint64_t seed,
		 uint32_t direction, uint32_t cls, char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	le_rng_seed_class(&s->rng, seed, direction, cls, LE_STREAM_SLOT);
	reset_budget(s, c);
	if (c->enabled && c->use_dist)
		return le_dist_table_init(&s->table, c->dist, c->dist_file, err, errlen);
	return 0;
}

void le_slot_free(struct le_slot_state *s)
{
	le_dist_table_free(&s->table);
}

/* netem get_slot_next: the gap to the next instant. */
static le_ns_t gap(struct le_slot_state *s, const struct le_slot_config *c)
{
	int64_t d;

	if (!c->use_dist)
		return c->max > c->min ? c->min + le_rng_below(&s->rng, c->max - c->min) : c->min;
	d = le_tabledist((int64_t)c->dist_delay, (int64_t)c->dist_jitter, le_rng_u64(&s->rng), &s->table);
	return d < 0 ? 0 : (le_ns_t)d;
}

le_ns_t le_slot_when(struct le_slot_state *s, const struct le_slot_config *c, le_ns_t ready)
{
	if (s->next < ready) {
		s->next = ready + gap(s, c);
		reset_budget(s, c);
	}
	return s->next;
}

void le_slot_consume(struct le_slot_state *s, const struct le_slot_config *c, uint32_t len)
{
	s->packets_left--;
	s->bytes_left -= len;
	if (s->packets_left <= 0 || s->bytes_left <= 0) {
		s->next += gap(s, c);
		reset_budget(s, c);
	}
}
