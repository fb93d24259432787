/* One link's model frame by frame (link.h, link_stages.h): the frame's
 * fate (link_stages.h), queue admission, the serializers (rate, slot,
 * trace, with CoDel) that serve the queue, the deadline that puts a
 * frame on the delay line, and the loops that take a burst through them
 * one frame at a time. le_link_offer is the reference the burst paths of
 * link_burst.c are twins of. */
#include "link_stages.h"

#include "ecn.h"
#include "rate.h"

static uint8_t *frame_bytes(struct le_link *l, const struct le_frame *f, uint32_t *n)
{
	uint8_t *b;

	if (l->ops.bytes == NULL)
		return NULL;
	b = l->ops.bytes(l->ops.ctx, f->handle, n);
	if (b != NULL && *n > f->len)
		*n = f->len;
	return b;
}

int le_link_mark_ce(struct le_link *l, struct le_frame *f)
{
	uint32_t n = 0;
	uint8_t *b = frame_bytes(l, f, &n);

	return b != NULL && le_ecn_set_ce(b, n);
}

/* What `limit` counts: this link's frames and those its predecessors
 * (le_link_inherit) still hold, at the link's clock. */
static uint32_t held(struct le_link *l)
{
	uint32_t n = own_held(l);

	for (struct le_link *e = l->elder; e != NULL; e = e->elder) {
		le_delay_line_mark_due(&e->line, l->clock);
		n += own_held(e);
	}
	return n;
}

uint32_t le_link_depth(const struct le_link *l)
{
	return l->queue.count + (uint32_t)l->transit + le_delay_line_count(&l->line);
}

uint32_t le_link_held(const struct le_link *l)
{
	uint32_t n = own_held(l);

	for (const struct le_link *e = l->elder; e != NULL; e = e->elder)
		n += own_held(e);
	return n;
}

/* After the serializer: slot gate (behind a rate), delay with jitter, or
 * none for a frame `reorder` chose: the deadline of a frame of length
 * `len` that leaves the serializer at `out`, with the draws and state
 * this takes. deliver() puts the frame on the line with it. */
static inline __attribute__((always_inline)) le_ns_t deadline_after(struct le_link *l, uint32_t len, le_ns_t out)
{
	const struct le_link_config *c = &l->cfg;
	le_ns_t d, deadline;
	int reordered = 0;

	if (c->slot.enabled && c->rate.bps) {
		out = le_slot_when(&l->slot, &c->slot, out);
		le_slot_consume(&l->slot, &c->slot, len);
	}
	/* Drawn for every frame, reordered or not, so the jitter stream does
	 * not depend on reorder's choices. */
	d = c->jitter ? le_jitter_delay(&l->jitter, c) : c->delay;
	if (c->reorder_set && reorder_now(&l->reorder, c, &l->reorder_counter)) {
		reordered = 1;
		l->ctr.event[LE_EVENT_REORDERED]++;
	}
	deadline = reordered ? out : add_sat(out, d);
	if (c->noreorder && deadline < l->last_deadline)
		deadline = l->last_deadline;
	if (deadline > l->last_deadline)
		l->last_deadline = deadline;
	return deadline;
}

static void deliver(struct le_link *l, struct le_frame *f, le_ns_t out)
{
	f->deadline = deadline_after(l, f->len, out);
	if (le_delay_line_push(&l->line, f) < 0)
		drop_frame(l, f, LE_DROP_STALLED); /* cannot happen: admission keeps room */
}

static void codel_drop(void *ctx, struct le_frame *f)
{
	drop_frame(ctx, f, LE_DROP_CODEL);
}

static int codel_mark(void *ctx, struct le_frame *f)
{
	struct le_link *l = ctx;

	if (!le_link_mark_ce(l, f))
		return 0;
	l->ctr.event[LE_EVENT_CODEL_MARKED]++;
	return 1;
}

/* The queue's next frame for the serializer at virtual time `now`. */
static int take(struct le_link *l, le_ns_t now, struct le_frame *f)
{
	if (l->cfg.codel.enabled) {
		const struct le_codel_io io = { l, codel_drop, codel_mark };
		return le_codel_dequeue(&l->codel, &l->cfg.codel, &l->queue, now, &io, f);
	}
	return le_queue_pop(&l->queue, f);
}

/* The delay line has no room: only when a change lowered the limit below
 * what the old link had queued (admission keeps room otherwise). The
 * serializer then waits for the data plane to take due frames, rather
 * than drop frames already admitted. */
static int line_full(const struct le_link *l)
{
	return le_delay_line_count(&l->line) >= l->line.capacity;
}

/* A rate serializer sends a frame of `len` bytes from `start`: it is busy
 * until the frame's end, which is returned. */
static inline __attribute__((always_inline)) le_ns_t serialize(struct le_link *l, le_ns_t start, uint32_t len)
{
	/* A 128-bit division per frame, unless the length repeats. */
	if (len != l->rate_len) {
		l->rate_len = len;
		l->rate_time = le_rate_packet_time(&l->cfg.rate, len);
	}
	l->busy = add_sat(start, l->rate_time);
	return l->busy;
}

enum { SERVE_BLOCK = 32 };

/* serve() of a rate serializer without CoDel, a block of frames at a
 * time: the frames whose service starts at or before t leave the queue
 * in order, each with the deadline deliver() would give it (the same
 * draws, in the same order), and go onto the line together, as many as
 * it has room for. Nothing marks the line between deliver()'s pushes
 * either (advance() marks after serve), so the line ends as it would
 * frame by frame, without the calls per frame: a rate queue's frames
 * all pass here, and with jitter the wheel's push inlined in a burst
 * costs less than one out-of-line push per frame. */
static void serve_rate_blocks(struct le_link *l, le_ns_t t)
{
	struct le_delay_line *d = &l->line;
	struct le_frame f[SERVE_BLOCK];

	for (;;) {
		const uint32_t count = le_delay_line_count(d);
		const uint32_t room = count < d->capacity ? d->capacity - count : 0;
		const unsigned max = room < SERVE_BLOCK ? room : SERVE_BLOCK;
		unsigned k = 0;

		for (const struct le_frame *h; k < max && (h = le_queue_head(&l->queue)) != NULL; k++) {
			const le_ns_t s = max_ns(max_ns(h->arrival, l->floor), l->busy);

			if (s > t)
				break;
			le_queue_pop_head(&l->queue, &f[k]);
			f[k].deadline = deadline_after(l, f[k].len, serialize(l, s, f[k].len));
		}
		if (k == 0)
			return;
		if (d->ordered)
			le_delay_line_push_ordered_burst(d, f, k); /* room checked */
		else
			for (unsigned i = 0; i < k; i++)
				le_delay_line_push_fifo(d, &f[i]);
		if (k < max || k == room)
			return; /* the queue's head starts later, or the line is full */
	}
}

/* Rate or slot serializer: serve every frame whose start is at or before t. */
static void serve(struct le_link *l, le_ns_t t)
{
	const struct le_link_config *c = &l->cfg;
	const struct le_frame *h;
	struct le_frame f;

	if (c->rate.bps && !c->codel.enabled) {
		serve_rate_blocks(l, t);
		return;
	}

	while ((h = le_queue_head(&l->queue)) != NULL && !line_full(l)) {
		le_ns_t s = max_ns(h->arrival, l->floor);

		if (c->rate.bps)
			s = max_ns(s, l->busy);
		else
			s = le_slot_when(&l->slot, &c->slot, s);
		if (s > t)
			break;
		if (take(l, s, &f) < 0)
			continue; /* CoDel dropped all it could take at s */
		if (c->rate.bps) {
			deliver(l, &f, serialize(l, s, f.len));
		} else {
			le_slot_consume(&l->slot, &c->slot, f.len);
			deliver(l, &f, s);
		}
	}
}

/* Trace serializer (Mahimahi's rationalize): every opportunity up to t. */
static void serve_trace(struct le_link *l, le_ns_t t)
{
	const int once = l->cfg.trace.once;

	if (!l->tpos.started)
		return;
	while (!l->tpos.ended && !line_full(l)) {
		le_ns_t when = le_trace_next(&l->trace, &l->tpos);
		uint32_t bytes = LE_TRACE_OPPORTUNITY;

		if (when > t)
			break;
		if (!l->transit && l->queue.count == 0) {
			/* Idle: the opportunities until t are lost unused. */
			le_trace_skip_after(&l->trace, &l->tpos, once, t);
			break;
		}
		le_trace_step(&l->trace, &l->tpos, once, 1);
		while (bytes > 0) {
			uint32_t use;

			if (!l->transit) {
				if (take(l, when, &l->tframe) < 0)
					break; /* the rest of this opportunity is lost */
				l->transit = 1;
				l->tleft = l->tframe.len;
			}
			use = bytes < l->tleft ? bytes : l->tleft;
			l->tleft -= use;
			bytes -= use;
			if (l->tleft == 0) {
				l->transit = 0;
				deliver(l, &l->tframe, when);
			}
		}
	}
}

/* A link without serializer that took frames over at a change sends
 * them on at once, in order, before anything else. */
static void flush_carried(struct le_link *l)
{
	struct le_frame f;

	while (!line_full(l) && le_queue_pop(&l->queue, &f) == 0)
		deliver(l, &f, max_ns(f.arrival, l->floor));
}

static void advance(struct le_link *l, le_ns_t t)
{
	if (!l->has_queue && l->queue.count)
		flush_carried(l);
	if (l->has_queue) {
		if (l->cfg.trace.enabled)
			serve_trace(l, t);
		else
			serve(l, t);
	}
	le_delay_line_mark_due(&l->line, t);
	l->settled = 1;
}

/* Would the frame overflow a limit? */
static int over(struct le_link *l, const struct le_frame *f)
{
	const struct le_link_config *c = &l->cfg;

	return held(l) + 1 > c->limit || (c->limit_bytes && l->queue.bytes + f->len > c->limit_bytes) ||
	       (c->limit_queue && l->queue.count + 1 > c->limit_queue);
}

/* Queue admission; 0 when the frame is now the link's. */
static int admit(struct le_link *l, struct le_frame *f)
{
	if (le_link_depth(l) >= l->line.capacity) {
		drop_frame(l, f, LE_DROP_STALLED);
		return -1;
	}
	if (!l->has_queue) {
		if (held(l) + 1 > l->cfg.limit) {
			drop_frame(l, f, LE_DROP_QUEUE_FULL);
			return -1;
		}
		deliver(l, f, f->arrival);
		/* Due already (reorder, delay 0): the next advance marks it. */
		if (f->deadline <= l->clock)
			l->settled = 0;
		return 0;
	}
	while (over(l, f)) {
		struct le_frame head;

		if (l->cfg.drop_head && le_queue_pop(&l->queue, &head) == 0) {
			drop_frame(l, &head, LE_DROP_QUEUE_HEAD);
			continue;
		}
		drop_frame(l, f, LE_DROP_QUEUE_FULL);
		return -1;
	}
	/* held <= limit <= the ring's capacity, except behind a queue that
	 * took over LE_QUEUE_RINGS rings of frames: it pushes to the last
	 * of them, which can be smaller than the limit (le_queue_adopt).
	 * The queue is full then. */
	if (le_queue_push(&l->queue, f) < 0) {
		drop_frame(l, f, LE_DROP_QUEUE_FULL);
		return -1;
	}
	if (f->len > l->codel.maxpacket)
		l->codel.maxpacket = f->len;
	if (l->cfg.trace.enabled && !l->tpos.started) {
		/* The trace's time 0 is its first frame's arrival. Like every
		 * frame (and as in Mahimahi, which runs the link up to now
		 * before it queues a packet), it can only use opportunities
		 * after its arrival: those at time 0 go unused. */
		l->tpos.started = 1;
		l->tpos.base = max_ns(f->arrival, l->floor);
		l->tpos.k = 0;
		le_trace_skip_after(&l->trace, &l->tpos, l->cfg.trace.once, f->arrival);
	}
	/* An idle serializer starts the frame now. A rate serializer (never
	 * with a trace: check_config) busy past the clock starts nothing
	 * (every frame queued starts at or after `busy`), and a settled line
	 * has nothing new to mark: the advance would do nothing, and in a
	 * burst (one arrival time) that is every frame after the first. */
	if (!(l->settled && l->cfg.rate.bps && l->busy > l->clock))
		advance(l, l->clock);
	return 0;
}

void le_link_corrupt(struct le_link *l, struct le_frame *f)
{
	uint32_t n = 0;
	uint8_t *b = frame_bytes(l, f, &n);

	if (b == NULL || n == 0)
		return; /* netem: no linear bytes, nothing to flip */
	le_corrupt_bytes(&l->corrupt, b, n);
	l->ctr.event[LE_EVENT_CORRUPTED]++;
}

static void process(struct le_link *l, struct le_frame *f, int is_copy)
{
	void *copy;

	if (!fate(l, f, is_copy, &copy))
		return;
	if (admit(l, f) < 0) {
		drop_copy(l, f, copy);
		return;
	}
	if (copy != NULL) {
		/* The copy goes through the link again (loss, corrupt, queue),
		 * right behind the original, and is never copied itself. */
		struct le_frame cf = copy_of(f, copy);
		process(l, &cf, 1);
	}
}

/* --- a burst frame by frame ---------------------------------------------- */

/* How many of the next original frames (at most max) fate() would pass
 * untouched, none of its chances firing: no copy, no loss, no flip. Their
 * trials are taken here at once (each chance's quiet trials, rng.h
 * le_rng_chance_quiet), so the caller admits them without fate(): with
 * rare chances, most frames of a burst. 0 when the next frame may meet an
 * event (or a gap is still to be drawn): that one goes through fate(). */
static unsigned pass_quietly(struct le_link *l, unsigned max)
{
	const struct le_link_config *c = &l->cfg;
	uint64_t q = max, x;

	if (c->duplicate_set && (x = le_chance_quiet(&l->dup, &c->duplicate)) < q)
		q = x;
	if (c->loss.model != LE_LOSS_NONE && (x = le_loss_quiet(&l->loss, &c->loss)) < q)
		q = x;
	if (c->corrupt_set && (x = le_chance_quiet(&l->corrupt, &c->corrupt)) < q)
		q = x;
	if (q == 0)
		return 0;
	if (c->duplicate_set)
		le_chance_skip(&l->dup, &c->duplicate, q);
	if (c->loss.model != LE_LOSS_NONE)
		le_loss_skip(&l->loss, &c->loss, q);
	if (c->corrupt_set)
		le_chance_skip(&l->corrupt, &c->corrupt, q);
	return (unsigned)q;
}

/* le_link_offer of a link without per-frame stages or queue, frame by
 * frame, its arrival counted (arrive): advance() is the delay line's
 * mark, process() is admit(), and admit() is the limit and deliver()
 * (jitter, reorder). offer_framewise would do the same; these links
 * going through it instead measured 4-7 % slower (jitter, reorder,
 * noreorder jitter rows, 7 rounds). link_burst.c's offer_drawn falls
 * back on it when a burst does not fit. */
static void stageless_frames(struct le_link *l, void *const *handles, const uint32_t *lens, unsigned n,
			     le_ns_t arrival)
{
	struct le_delay_line *d = &l->line;
	int mark = 1;

	for (unsigned i = 0; i < n; i++) {
		struct le_frame f = { handles[i], lens[i], (uint16_t)l->cls, 0, arrival, 0 };

		l->ctr.rx_bytes += lens[i];
		/* The clock does not move inside a burst: a mark changes
		 * something only when the frame before became due (a frame
		 * `reorder` sends at once, or a late one). */
		if (mark)
			le_delay_line_mark_due(d, l->clock);
		mark = 0;
		if (le_delay_line_count(d) >= d->capacity) {
			drop_frame(l, &f, LE_DROP_STALLED);
		} else if (le_delay_line_held(d) + 1 > l->cfg.limit) {
			drop_frame(l, &f, LE_DROP_QUEUE_FULL);
		} else {
			deliver(l, &f, arrival);
			mark = f.deadline <= l->clock;
		}
	}
}

/* A frame of a burst offered frame by frame: the advance it needs first,
 * then all of process(), or admission alone for a frame no chance
 * touches (`quiet`, offer_framewise_quiet). */
static inline __attribute__((always_inline)) void offer_one(struct le_link *l, void *handle, uint32_t len,
							    le_ns_t arrival, int quiet)
{
	struct le_frame f = { handle, len, (uint16_t)l->cls, 0, arrival, 0 };

	l->ctr.rx_bytes += len;
	/* Everything up to now happens before this frame is there. */
	if (!l->settled)
		advance(l, l->clock);
	if (quiet)
		admit(l, &f);
	else
		process(l, &f, 0);
}

/* le_link_offer for each frame, without the advance before each: the
 * clock does not move inside a burst, and advance(clock) run twice gives
 * what it gave once (the serializers stop at a frame that starts after
 * the clock, the line is marked up to it) unless something changed in
 * between that an advance acts on. Queue admission ends with an advance;
 * a drop (loss, limit, drop-head) leaves nothing an advance would serve
 * sooner; only a frame put on the line due at once (no serializer:
 * reorder, a zero delay) needs the next advance's mark: `settled` says
 * so. */
static void offer_framewise(struct le_link *l, void *const *handles, const uint32_t *lens, unsigned n,
			    le_ns_t arrival)
{
	arrive(l, n, arrival);
	l->settled = 0;
	for (unsigned i = 0; i < n; i++)
		offer_one(l, handles[i], lens[i], arrival, 0);
}

/* admit() of quiet frames (pass_quietly) while a rate serializer is busy
 * past the clock and the link settled: then admit() queues each frame and
 * runs no advance (none could start before `busy`), so the frames the
 * limits leave room for are queued in one go, the checks once. Returns
 * how many of the n were queued (their bytes counted as received); the
 * next, if any, meets a limit, or the link is not in that state: it goes
 * through admit(). */
static unsigned queue_quietly(struct le_link *l, void *const *handles, const uint32_t *lens, unsigned n,
			      le_ns_t arrival)
{
	const struct le_link_config *c = &l->cfg;
	struct le_queue *q = &l->queue;
	const struct le_ring *r = &q->ring[q->nrings - 1];
	uint32_t room, x;
	uint64_t bytes = 0;
	unsigned k;

	if (!(l->settled && c->rate.bps && l->busy > l->clock) || l->elder != NULL)
		return 0;
	/* admit(): the line's capacity (le_link_depth), then over(): limit
	 * (held(), the link's own frames without an elder), limit-queue;
	 * and what the ring pushes go to can take. */
	x = le_link_depth(l);
	room = x < l->line.capacity ? l->line.capacity - x : 0;
	x = own_held(l);
	x = x < c->limit ? c->limit - x : 0;
	room = x < room ? x : room;
	if (c->limit_queue) {
		x = q->count < c->limit_queue ? c->limit_queue - q->count : 0;
		room = x < room ? x : room;
	}
	x = r->capacity - r->count;
	room = x < room ? x : room;
	for (k = 0; k < n && k < room; k++) {
		const struct le_frame f = { handles[k], lens[k], (uint16_t)l->cls, 0, arrival, 0 };

		if (c->limit_bytes && q->bytes + lens[k] > c->limit_bytes)
			break;
		le_queue_push(q, &f);
		if (lens[k] > l->codel.maxpacket)
			l->codel.maxpacket = lens[k];
		bytes += lens[k];
	}
	l->ctr.rx_bytes += bytes;
	return k;
}

/* offer_framewise for a burst on a link whose chances draw as gaps
 * (fate_gaps): the frames pass_quietly says meet no chance skip fate()
 * and go straight to admission, queued a block at a time where they
 * can be (queue_quietly); the others take process() as before. The
 * chances' trials are the same, frame for frame (le_link_offer, which
 * stays with offer_framewise, is the twin tests' reference). */
static void offer_framewise_quiet(struct le_link *l, void *const *handles, const uint32_t *lens, unsigned n,
				  le_ns_t arrival)
{
	arrive(l, n, arrival);
	l->settled = 0;
	for (unsigned i = 0; i < n;) {
		const unsigned end = i + pass_quietly(l, n - i);

		while (i < end) {
			i += queue_quietly(l, handles + i, lens + i, end - i, arrival);
			if (i < end) {
				offer_one(l, handles[i], lens[i], arrival, 1);
				i++;
			}
		}
		if (i < n) {
			offer_one(l, handles[i], lens[i], arrival, 0);
			i++;
		}
	}
}

/* A burst frame by frame: without fate() for the frames no chance
 * touches, where the chances allow. */
void le_link_offer_frames(struct le_link *l, void *const *handles, const uint32_t *lens, unsigned n,
			 le_ns_t arrival)
{
	if (l->fate_gaps)
		offer_framewise_quiet(l, handles, lens, n, arrival);
	else
		offer_framewise(l, handles, lens, n, arrival);
}

void le_link_offer(struct le_link *l, void *handle, uint32_t len, le_ns_t arrival)
{
	offer_framewise(l, &handle, &len, 1, arrival);
}

/* --- for the other files of the link ------------------------------------- */

/* The functions above stay static for the calls inside this file: the
 * compiler inlines and specializes a static function more freely, and
 * made extern they cost the rows that take them 9-13 instructions a frame
 * (cachegrind). */

void le_link_settle(struct le_link *l, le_ns_t t)
{
	advance(l, t);
}

void le_link_deliver(struct le_link *l, struct le_frame *f, le_ns_t out)
{
	deliver(l, f, out);
}

unsigned le_link_pass_quietly(struct le_link *l, unsigned max)
{
	return pass_quietly(l, max);
}

void le_link_stageless_frames(struct le_link *l, void *const *handles, const uint32_t *lens, unsigned n,
			      le_ns_t arrival)
{
	stageless_frames(l, handles, lens, n, arrival);
}
