/* CoDel, written from RFC 8289 section 5's pseudo-code; see codel.h. */
#include "codel.h"

#include <math.h>
#include <string.h>

void le_codel_carry(struct le_codel_state *n, const struct le_codel_state *o, int both)
{
	if (both)
		*n = *o;
	else if (o->maxpacket > n->maxpacket)
		n->maxpacket = o->maxpacket;
}

void le_codel_init(struct le_codel_state *s)
{
	memset(s, 0, sizeof(*s));
}

le_ns_t le_codel_control_law(le_ns_t t, le_ns_t interval, uint32_t count)
{
	return t + (le_ns_t)((double)interval / sqrt((double)count));
}

/* RFC 8289 dodequeue: takes the head and says whether it may be dropped.
 * Only frames that arrived by `now` are in the queue at `now`. */
static int dodequeue(struct le_codel_state *s, const struct le_codel_config *c, struct le_queue *q,
		     le_ns_t now, struct le_frame *f, int *ok_to_drop)
{
	const struct le_frame *h = le_queue_head(q);

	*ok_to_drop = 0;
	if (h == NULL || h->arrival > now) {
		/* Queue empty at now: leave the above-target state. */
		s->first_above_time = 0;
		return -1;
	}
	le_queue_pop(q, f);
	if (now - f->arrival < c->target || q->bytes <= s->maxpacket) {
		/* Went below target, or too few bytes left to keep a queue. */
		s->first_above_time = 0;
	} else if (s->first_above_time == 0) {
		/* Just went above: wait an interval before dropping. */
		s->first_above_time = now + c->interval;
	} else if (now >= s->first_above_time) {
		*ok_to_drop = 1;
	}
	return 0;
}

int le_codel_dequeue(struct le_codel_state *s, const struct le_codel_config *c, struct le_queue *q,
		     le_ns_t now, const struct le_codel_io *io, struct le_frame *out)
{
	struct le_frame f;
	int ok, have = dodequeue(s, c, q, now, &f, &ok) == 0;

	if (!have) {
		s->dropping = 0;
		return -1;
	}
	if (s->dropping) {
		if (!ok) {
			/* Sojourn below target: leave the dropping state. */
			s->dropping = 0;
		} else {
			/* Time for the next drop(s): one per control-law step. */
			while (have && s->dropping && (int64_t)(now - s->drop_next) >= 0) {
				s->count++;
				if (c->ecn && io->mark(io->ctx, &f)) {
					/* Marked, not dropped: it leaves, and the
					 * schedule moves on (Linux codel). */
					s->drop_next = le_codel_control_law(s->drop_next, c->interval, s->count);
					break;
				}
				io->drop(io->ctx, &f);
				have = dodequeue(s, c, q, now, &f, &ok) == 0;
				if (!ok)
					s->dropping = 0;
				else
					s->drop_next = le_codel_control_law(s->drop_next, c->interval, s->count);
			}
		}
	} else if (ok) {
		uint32_t delta;

		/* Enter the dropping state: drop (or mark) this frame. */
		if (c->ecn && io->mark(io->ctx, &f)) {
			/* marked: it leaves */
		} else {
			io->drop(io->ctx, &f);
			have = dodequeue(s, c, q, now, &f, &ok) == 0;
		}
		s->dropping = 1;
		/* If we were dropping recently, resume at the rate that
		 * controlled the queue then (RFC 8289, the Linux variant). */
		delta = s->count - s->lastcount;
		s->count = 1;
		if (delta > 1 && (int64_t)(now - s->drop_next) < (int64_t)(16 * c->interval))
			s->count = delta;
		s->drop_next = le_codel_control_law(now, c->interval, s->count);
		s->lastcount = s->count;
	}
	if (!have)
		return -1;
	*out = f;
	return 0;
}
