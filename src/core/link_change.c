/* A live change (link.h, le_link_inherit): the new link continues the
 * old one, each stage's state carried over, and the old link's frames
 * and counts handed on when it is freed (le_link_detach). */
#include "link_stages.h"

#include <string.h>

/* The serializer's state: busy time, trace position, a frame partly
 * sent, and the frames not served yet. */
static void carry_serializer(struct le_link *n, struct le_link *o)
{
	const struct le_link_config *nc = &n->cfg, *oc = &o->cfg;
	int both_trace = nc->trace.enabled && oc->trace.enabled;

	n->busy = o->busy;
	if (both_trace)
		le_trace_carry(&n->trace, &n->tpos, nc->trace.once, &o->trace, &o->tpos,
			       le_trace_same(&n->trace, &o->trace) && nc->trace.once == oc->trace.once);
	le_queue_adopt(&n->queue, &o->queue);
	if (o->transit && nc->trace.enabled) {
		n->transit = 1;
		n->tframe = o->tframe;
		n->tleft = o->tleft;
	} else if (o->transit) {
		/* Another serializer cannot finish a trace's opportunity: the
		 * frame partly sent leaves it at the change. */
		le_link_deliver(n, &o->tframe, n->clock);
	}
	o->transit = 0;
	if (nc->trace.enabled && !n->tpos.started && (n->queue.count || n->transit)) {
		/* A trace taking over frames starts at the change (its time 0),
		 * as it would at a first frame arriving then. */
		n->tpos.started = 1;
		n->tpos.base = n->clock;
		le_trace_skip_after(&n->trace, &n->tpos, nc->trace.once, n->clock);
	}
}

void le_link_inherit(struct le_link *n, struct le_link *o, le_ns_t at)
{
	const struct le_link_config *nc = &n->cfg, *oc = &o->cfg;
	/* An explicit other seed starts the streams anew from it. */
	int streams = !nc->seed_set || n->seed == o->seed;

	/* Until the change, the old configuration serves. */
	if (at > o->clock)
		o->clock = at;
	le_link_settle(o, o->clock);
	n->clock = o->clock;
	n->floor = n->clock; /* n's serializer starts nothing before the change */
	if (streams) {
		n->seed = o->seed;
		le_chance_carry(&n->dup, &o->dup, &nc->duplicate, &oc->duplicate);
		le_chance_carry(&n->corrupt, &o->corrupt, &nc->corrupt, &oc->corrupt);
		le_chance_carry(&n->reorder, &o->reorder, &nc->reorder, &oc->reorder);
		le_jitter_carry(&n->jitter, &o->jitter);
	}
	le_loss_carry(&n->loss, &o->loss, streams, &nc->loss, &oc->loss);
	le_slot_carry(&n->slot, &o->slot, streams, nc->slot.enabled && oc->slot.enabled);
	le_codel_carry(&n->codel, &o->codel, nc->codel.enabled && oc->codel.enabled);
	n->reorder_counter = o->reorder_counter;
	n->last_deadline = max_ns(n->last_deadline, o->last_deadline);
	n->born = o->born; /* its counts go on: the same link for the books */
	n->ctr = o->ctr;
	memset(&o->ctr, 0, sizeof(o->ctr));
	carry_serializer(n, o);
	n->elder = o;
	o->heir = n;
}

void le_link_detach(struct le_link *o, struct le_counters *gone)
{
	if (o->heir != NULL) {
		le_counters_add(&o->heir->ctr, &o->ctr);
		o->heir->elder = o->elder;
	} else {
		le_counters_add(gone, &o->ctr);
	}
	if (o->elder != NULL)
		o->elder->heir = o->heir;
	memset(&o->ctr, 0, sizeof(o->ctr));
	o->elder = o->heir = NULL;
}
