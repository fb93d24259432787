/* A link's frames leaving it (link.h): the due frames taken, in order,
 * the link brought to the time they are taken at, the next deadline the
 * data plane waits for, and every frame freed at shutdown. */
#include "link_stages.h"

static void count_tx(struct le_link *l, const struct le_frame *out, unsigned n)
{
	l->ctr.tx += n;
	for (unsigned i = 0; i < n; i++)
		l->ctr.tx_bytes += out[i].len;
}

void le_link_advance(struct le_link *l, le_ns_t t)
{
	if (t > l->clock)
		l->clock = t;
	le_link_settle(l, l->clock);
}

/* The link brought to `now` before its due frames are taken; 0 when it
 * has nothing to take. */
static int ready_to_take(struct le_link *l, le_ns_t now)
{
	if (now > l->clock)
		l->clock = now;
	/* An empty link has nothing to advance (a trace's position moves
	 * even when idle, so not for a trace): a path with many classes asks
	 * every one of them on every burst. */
	if (le_link_depth(l) == 0 && !l->cfg.trace.enabled)
		return 0;
	le_link_settle(l, l->clock);
	return 1;
}

unsigned le_link_dequeue(struct le_link *l, le_ns_t now, struct le_frame *out, unsigned max)
{
	unsigned n;

	if (!ready_to_take(l, now))
		return 0;
	n = le_delay_line_pop_due(&l->line, now, out, max);
	count_tx(l, out, n);
	return n;
}

unsigned le_link_dequeue_split(struct le_link *l, le_ns_t now, const struct le_frame_split *out, unsigned max)
{
	unsigned n;

	if (!ready_to_take(l, now))
		return 0;
	n = le_delay_line_pop_due_split(&l->line, now, out, max);
	l->ctr.tx += n;
	for (unsigned i = 0; i < n; i++)
		l->ctr.tx_bytes += out->len[i];
	return n;
}

uint64_t le_link_drain(struct le_link *l)
{
	struct le_frame f[64];
	uint64_t total = 0;
	unsigned n;

	do {
		n = le_delay_line_pop_any(&l->line, f, 64);
		if (n < 64 && l->transit) {
			f[n++] = l->tframe;
			l->transit = 0;
		}
		while (n < 64 && le_queue_pop(&l->queue, &f[n]) == 0)
			n++;
		for (unsigned i = 0; i < n; i++)
			drop_frame(l, &f[i], LE_DROP_SHUTDOWN);
		total += n;
	} while (n > 0);
	return total;
}

le_ns_t le_link_next_deadline(const struct le_link *l)
{
	const struct le_link_config *c = &l->cfg;
	le_ns_t d = le_delay_line_next_deadline(&l->line), s = UINT64_MAX;
	const struct le_frame *h = le_queue_head(&l->queue);

	if (c->trace.enabled) {
		if ((l->transit || h != NULL) && l->tpos.started)
			s = le_trace_next(&l->trace, &l->tpos);
	} else if (h != NULL) {
		/* A lower bound: the frame cannot start earlier. */
		s = max_ns(h->arrival, l->floor);
		s = max_ns(s, c->rate.bps ? l->busy : l->slot.next);
	}
	return s < d ? s : d;
}
