/* One link: the stages of DESIGN.md section 2 in order, with the model's
 * own accounting and virtual clock; see link.h. */
#include "link.h"
#include "err.h"

#include <stdio.h>
#include <string.h>

#include "ecn.h"
#include "rate.h"

const char *le_direction_name(enum le_direction d)
{
	switch (d) {
	case LE_DIR_A2B:
		return "a2b";
	case LE_DIR_B2A:
		return "b2a";
	default:
		return "unknown";
	}
}

static le_ns_t max_ns(le_ns_t a, le_ns_t b)
{
	return a > b ? a : b;
}

static le_ns_t add_sat(le_ns_t a, le_ns_t b)
{
	/* A deadline that wrapped would send the frame at once. */
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Room the delay line needs: every held frame, plus due frames the data
 * plane has not taken yet (a poll's worth, normally). */
static uint64_t line_capacity(uint32_t limit)
{
	uint64_t slack = limit / 8 > 1024 ? limit / 8 : 1024;
	return (uint64_t)limit + slack;
}

/* A link without serializer or per-frame chance (offer_stageless). */
static int config_stageless(const struct le_link_config *cfg)
{
	return !le_config_has_queue(cfg) && !cfg->duplicate_set && cfg->loss.model == LE_LOSS_NONE && !cfg->corrupt_set;
}

/* ... and without jitter or reordering: a fixed delay, 0 too, and nothing
 * else (offer_plain). */
static int config_plain(const struct le_link_config *cfg)
{
	return config_stageless(cfg) && !cfg->jitter && !cfg->reorder_set;
}

/* An ordered line's wheel spans the delay and four jitters beyond it, so
 * only the rare tail of a jitter distribution waits in its overflow. */
static int init_line(struct le_delay_line *d, const struct le_link_config *cfg, uint32_t capacity)
{
	/* A fixed delay without serializer: frames arriving together share
	 * their deadline, and the runs form keeps them in a third of the
	 * bytes and moves them as blocks. Without delay, a plain link's
	 * burst is one run too (offer_plain: due at once), which cost the
	 * unimpaired link a fifth fewer instructions a frame than slots
	 * built and taken one by one; a link with chances and no delay
	 * offers frame by frame, and would make a run of each frame. */
	if (!le_config_has_queue(cfg) && !cfg->jitter && !cfg->reorder_set && (cfg->delay || config_plain(cfg)))
		return le_delay_line_init_runs(d, capacity);
	if (!le_config_reorders(cfg))
		return le_delay_line_init(d, capacity);
	return le_delay_line_init_ordered(d, capacity, add_sat(cfg->delay, 4 * cfg->jitter));
}

/* --- init ----------------------------------------------------------------- */

static int check_config(const struct le_link_config *cfg, char *err, size_t errlen)
{
	if (cfg->limit < 1 || cfg->limit > LE_MAX_LIMIT) {
		le_err(err, errlen, "limit %u is out of range (1 .. %u)", (unsigned)cfg->limit, LE_MAX_LIMIT);
		return -1;
	}
	if (cfg->delay > LE_MAX_DELAY_NS || cfg->jitter > LE_MAX_DELAY_NS) {
		le_err(err, errlen, "delay %llu ns is out of range (max 3600s)",
			(unsigned long long)(cfg->delay > cfg->jitter ? cfg->delay : cfg->jitter));
		return -1;
	}
	if (cfg->trace.enabled && cfg->rate.bps) {
		le_err(err, errlen, "trace and rate both set the link's serializer: give one");
		return -1;
	}
	return 0;
}

static int check_ops(const struct le_link_config *c, const struct le_frame_ops *ops, char *err,
		     size_t errlen)
{
	const char *what = NULL;

	if (ops == NULL || ops->free == NULL)
		what = "free (every link can drop frames)";
	else if (c->duplicate_set && ops->clone == NULL)
		what = "clone (duplicate)";
	else if ((c->corrupt_set || c->ecn || (c->codel.enabled && c->codel.ecn)) && ops->bytes == NULL)
		what = "bytes (corrupt, ecn)";
	if (what == NULL)
		return 0;
	le_err(err, errlen, "the frame operations lack %s", what);
	return -1;
}

static int init_common(struct le_link *l, const struct le_link_config *cfg, enum le_direction dir,
		       uint32_t cls, uint64_t default_seed, uint64_t capacity, char *err, size_t errlen)
{
	char sub[LE_ERR_MAX];

	l->cfg = *cfg;
	l->direction = (uint32_t)dir;
	l->cls = cls;
	l->seed = cfg->seed_set ? cfg->seed : default_seed;
	le_loss_init_class(&l->loss, l->seed, l->direction, cls);
	le_chance_init(&l->dup, l->seed, l->direction, cls, LE_STREAM_DUPLICATE);
	le_chance_init(&l->corrupt, l->seed, l->direction, cls, LE_STREAM_CORRUPT);
	le_chance_init(&l->reorder, l->seed, l->direction, cls, LE_STREAM_REORDER);
	le_codel_init(&l->codel);
	l->has_queue = le_config_has_queue(cfg);
	l->stageless = config_stageless(cfg);
	l->plain = config_plain(cfg);
	l->fate_gaps = (!cfg->duplicate_set || le_corr_none(cfg->duplicate.corr)) &&
		       (!cfg->corrupt_set || le_corr_none(cfg->corrupt.corr)) &&
		       (cfg->loss.model == LE_LOSS_NONE || cfg->loss.model == LE_LOSS_GEMODEL ||
			(cfg->loss.model == LE_LOSS_RANDOM && le_corr_none(cfg->loss.corr)));
	l->rate_len = UINT32_MAX; /* no frame is that long: nothing timed yet */
	l->settled = 0;
	if (capacity > (1u << 31)) {
		le_err(err, errlen, "limit %u needs more than 2^31 frames of storage", (unsigned)cfg->limit);
		return -1;
	}
	if (le_jitter_init(&l->jitter, cfg, l->seed, l->direction, cls, sub, sizeof(sub)) < 0 ||
	    le_slot_init(&l->slot, &cfg->slot, l->seed, l->direction, cls, sub, sizeof(sub)) < 0) {
		le_err(err, errlen, "distribution: %s", sub);
		return -1;
	}
	if (cfg->trace.enabled &&
	    le_trace_load(cfg->trace.file, cfg->trace.us, &l->trace, sub, sizeof(sub)) < 0) {
		le_err(err, errlen, "%s: %s", cfg->trace.us ? "trace-us" : "trace", sub);
		return -1;
	}
	if (le_queue_init(&l->queue, l->has_queue ? cfg->limit : 0) < 0 ||
	    init_line(&l->line, cfg, (uint32_t)capacity) < 0) {
		le_err(err, errlen, "cannot allocate storage for %llu frames (limit %u)",
			(unsigned long long)capacity, (unsigned)cfg->limit);
		return -1;
	}
	return 0;
}

int le_link_init_ops(struct le_link *l, const struct le_link_config *cfg, enum le_direction dir,
		     uint32_t cls, uint64_t default_seed, const struct le_frame_ops *ops, char *err,
		     size_t errlen)
{
	memset(l, 0, sizeof(*l));
	if (check_config(cfg, err, errlen) < 0 || check_ops(cfg, ops, err, errlen) < 0)
		return -1;
	l->ops = *ops;
	if (init_common(l, cfg, dir, cls, default_seed, line_capacity(cfg->limit), err, errlen) < 0) {
		le_link_free(l);
		return -1;
	}
	return 0;
}

void le_link_free(struct le_link *l)
{
	le_delay_line_free(&l->line);
	le_queue_free(&l->queue);
	le_trace_free(&l->trace);
	le_jitter_free(&l->jitter);
	le_slot_free(&l->slot);
}

/* --- frames ---------------------------------------------------------------- */

static void drop(struct le_link *l, const struct le_frame *f, enum le_drop_cause cause)
{
	l->ctr.drop[cause]++;
	l->ops.free(l->ops.ctx, f->handle);
}

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

static int mark_ce(struct le_link *l, struct le_frame *f)
{
	uint32_t n = 0;
	uint8_t *b = frame_bytes(l, f, &n);

	return b != NULL && le_ecn_set_ce(b, n);
}

static uint32_t own_held(const struct le_link *l)
{
	return l->queue.count + (uint32_t)l->transit + le_delay_line_held(&l->line);
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

/* `reorder`'s choice for one frame (netem_enqueue): within `gap` frames
 * of the last reordered one a frame is delayed without a draw; after,
 * with probability P it skips the delay. 1 when it does. The state is the
 * caller's, so a burst loop can keep it in locals (offer_ordered). */
static inline __attribute__((always_inline)) int reorder_now(struct le_chance_state *s,
							     const struct le_link_config *c, uint32_t *counter)
{
	if (*counter + 1 >= c->gap && le_chance_draw(s, &c->reorder)) {
		*counter = 0;
		return 1;
	}
	(*counter)++;
	return 0;
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
		drop(l, f, LE_DROP_STALLED); /* cannot happen: admission keeps room */
}

static void codel_drop(void *ctx, struct le_frame *f)
{
	drop(ctx, f, LE_DROP_CODEL);
}

static int codel_mark(void *ctx, struct le_frame *f)
{
	struct le_link *l = ctx;

	if (!mark_ce(l, f))
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
		drop(l, f, LE_DROP_STALLED);
		return -1;
	}
	if (!l->has_queue) {
		if (held(l) + 1 > l->cfg.limit) {
			drop(l, f, LE_DROP_QUEUE_FULL);
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
			drop(l, &head, LE_DROP_QUEUE_HEAD);
			continue;
		}
		drop(l, f, LE_DROP_QUEUE_FULL);
		return -1;
	}
	/* held <= limit <= the ring's capacity, except behind a queue that
	 * took over LE_QUEUE_RINGS rings of frames: it pushes to the last
	 * of them, which can be smaller than the limit (le_queue_adopt).
	 * The queue is full then. */
	if (le_queue_push(&l->queue, f) < 0) {
		drop(l, f, LE_DROP_QUEUE_FULL);
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

static void corrupt(struct le_link *l, struct le_frame *f)
{
	uint32_t n = 0;
	uint8_t *b = frame_bytes(l, f, &n);

	if (b == NULL || n == 0)
		return; /* netem: no linear bytes, nothing to flip */
	le_corrupt_bytes(&l->corrupt, b, n);
	l->ctr.event[LE_EVENT_CORRUPTED]++;
}

/* The stages before admission, in netem_enqueue's order: duplicate draw,
 * loss draw (a frame both lost and duplicated goes through once), ecn
 * instead of loss, the copy, then corrupt. Returns 0 when the frame was
 * lost (and dropped), else 1, with *copy the duplicate to admit right
 * behind it (NULL when none). */
static inline __attribute__((always_inline)) int fate(struct le_link *l, struct le_frame *f, int is_copy,
							void **copy)
{
	const struct le_link_config *c = &l->cfg;
	int count = 1, lost;

	*copy = NULL;
	if (!is_copy && c->duplicate_set && le_chance_draw(&l->dup, &c->duplicate))
		count++;
	lost = c->loss.model != LE_LOSS_NONE && le_loss_decide(&l->loss, &c->loss);
	if (lost && c->ecn && mark_ce(l, f)) {
		l->ctr.event[LE_EVENT_ECN_MARKED]++;
		lost = 0;
	}
	count -= lost;
	if (count == 0) {
		drop(l, f, LE_DROP_LOSS);
		return 0;
	}
	if (count == 2) {
		/* Copy before corrupting, as netem (skb_clone before the flip). */
		*copy = l->ops.clone(l->ops.ctx, f->handle);
		if (*copy == NULL)
			l->ctr.event[LE_EVENT_DUP_FAILED]++;
		else
			l->ctr.dup++;
	}
	if (c->corrupt_set && le_chance_draw(&l->corrupt, &c->corrupt))
		corrupt(l, f);
	return 1;
}

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

/* The frame with `copy`'s handle: the duplicate, right behind it. */
static struct le_frame copy_of(const struct le_frame *f, void *copy)
{
	struct le_frame cf = *f;

	cf.handle = copy;
	return cf;
}

/* The original f was refused at the limit: netem drops its copy with it. */
static void drop_copy(struct le_link *l, const struct le_frame *f, void *copy)
{
	if (copy != NULL) {
		struct le_frame cf = copy_of(f, copy);
		drop(l, &cf, LE_DROP_QUEUE_FULL);
	}
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

/* n frames arriving at `arrival`: counted (bytes apart), and the clock
 * moved to them, or each counted late when it is already past. */
static void arrive(struct le_link *l, unsigned n, le_ns_t arrival)
{
	l->ctr.rx += n;
	if (arrival < l->clock)
		l->ctr.event[LE_EVENT_LATE_ARRIVAL] += n;
	else
		l->clock = arrival;
}

/* offer_plain in the runs form. When no frame of the burst is due yet
 * (deadline > clock), none becomes due between two of them, and the
 * frames admitted are a prefix, as many as the line's capacity and the
 * limit leave room for; the same when they are due but the line holds
 * frames that are not (a late burst: the line marks in order, so the
 * burst stays held behind them). When all are due at once and nothing
 * is held (delay 0, a late burst on an idle line), frame by frame each
 * would be marked due before the next is admitted, so `limit` never
 * sees the burst's own frames: all or none pass it (limit 0), and the
 * capacity alone cuts the prefix. Either way the rest are dropped, all
 * for the reason the first of them meets, and the admitted ones form
 * one run. Due at once, the line's due mark ends where frame by frame
 * leaves it: on every admitted frame but the last, which the next
 * advance marks; on all of them when a drop followed (the dropped
 * frame's turn marked the one before it). */
static void offer_run(struct le_link *l, void *const *handles, const uint32_t *lens, unsigned n,
		      le_ns_t arrival, le_ns_t deadline)
{
	struct le_delay_line *d = &l->line;
	uint32_t held = d->count - d->due;
	uint32_t room_cap = d->capacity - d->count;
	/* due at once, and marked so: a FIFO line marks in order, so not
	 * behind a frame still held (a late burst) */
	const int due_now = deadline <= l->clock && held == 0;
	uint32_t room_limit = held >= l->cfg.limit ? 0 : due_now ? UINT32_MAX : l->cfg.limit - held;
	uint32_t k = n < room_cap ? n : room_cap;
	uint64_t bytes = 0;

	if (k > room_limit)
		k = room_limit;
	for (unsigned i = 0; i < n; i++)
		bytes += lens[i];
	l->ctr.rx_bytes += bytes;
	if (k && due_now) {
		const unsigned marked = k == n ? k - 1 : k;

		if (marked) {
			le_delay_line_push_run(d, handles, lens, marked, arrival, deadline, (uint16_t)l->cls);
			le_delay_line_mark_due(d, l->clock);
		}
		if (marked < k) /* a run of its own: the one before is due */
			le_delay_line_push_run(d, handles + marked, lens + marked, 1, arrival, deadline,
					       (uint16_t)l->cls);
	} else if (k) {
		le_delay_line_push_run(d, handles, lens, k, arrival, deadline, (uint16_t)l->cls);
	}
	if (k && deadline > l->last_deadline)
		l->last_deadline = deadline;
	if (k < n) {
		enum le_drop_cause cause = d->count >= d->capacity ? LE_DROP_STALLED : LE_DROP_QUEUE_FULL;
		for (unsigned i = k; i < n; i++) {
			struct le_frame f = { handles[i], lens[i], (uint16_t)l->cls, 0, arrival, deadline };
			drop(l, &f, cause);
		}
	}
}

/* The deadline of a burst arriving at `arrival` on a link with a fixed
 * delay. `noreorder` without jitter: it never falls below the largest
 * given (a late arrival's would). */
static le_ns_t fixed_deadline(const struct le_link *l, le_ns_t arrival)
{
	le_ns_t deadline = add_sat(arrival, l->cfg.delay);

	return l->cfg.noreorder && deadline < l->last_deadline ? l->last_deadline : deadline;
}

/* le_link_offer of a plain link (a fixed delay, 0 too, and nothing
 * else): its line is in the runs form (init_line), and the burst, one
 * arrival and one deadline, is one run (offer_run), after the one mark
 * the clock's move needs. */
static void offer_plain(struct le_link *l, void *const *handles, const uint32_t *lens, unsigned n,
			le_ns_t arrival)
{
	struct le_delay_line *d = &l->line;
	const le_ns_t deadline = fixed_deadline(l, arrival);

	arrive(l, n, arrival);
	le_delay_line_mark_due(d, l->clock);
	le_delay_line_prefetch_tail(d, n);
	offer_run(l, handles, lens, n, arrival, deadline);
}

/* le_link_offer of a link without per-frame stages or queue, frame by
 * frame: advance() is the delay line's mark, process() is admit(), and
 * admit() is the limit and deliver() (jitter, reorder). offer_framewise
 * would do the same; these links going through it instead measured 4-7 %
 * slower (jitter, reorder, noreorder jitter rows, 7 rounds). */
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
			drop(l, &f, LE_DROP_STALLED);
		} else if (le_delay_line_held(d) + 1 > l->cfg.limit) {
			drop(l, &f, LE_DROP_QUEUE_FULL);
		} else {
			deliver(l, &f, arrival);
			mark = f.deadline <= l->clock;
		}
	}
}

static void offer_stageless(struct le_link *l, void *const *handles, const uint32_t *lens, unsigned n,
			    le_ns_t arrival)
{
	arrive(l, n, arrival);
	stageless_frames(l, handles, lens, n, arrival);
}

enum { JITTER_BLOCK = 64 };

/* offer_stageless of a link on an ordered line with no serializer and no
 * per-frame chance but `reorder` (reordering jitter, `reorder`, or both),
 * when the whole burst fits under the line's capacity and the limit.
 * Then no frame's admission depends on another frame, and what is left
 * per frame is deliver()'s: the draws, the deadline, the push. The
 * deadlines are drawn first, a block at a time and in the frames' order
 * (the same draws as deadline_after's), then pushed with one call,
 * without the calls and checks per frame that were about a sixth of the
 * model's instructions on the jitter row. A frame due at once (one that
 * `reorder` sends at once, a zero delay drawn, a late burst) is marked
 * before the next one is pushed, as offer_stageless does, so the due
 * frames leave in the same order: the block goes in as bursts that end
 * at its due frames. `reorder` is a constant at each call. */
static inline __attribute__((always_inline)) void offer_ordered(struct le_link *l, void *const *handles,
								const uint32_t *lens, unsigned n, le_ns_t arrival,
								const int reorder)
{
	struct le_delay_line *d = &l->line;
	const struct le_link_config *c = &l->cfg;

	arrive(l, n, arrival);
	le_delay_line_mark_due(d, l->clock);
	if (n > d->capacity - le_delay_line_count(d) || le_delay_line_held(d) + n > c->limit) {
		stageless_frames(l, handles, lens, n, arrival);
		return;
	}
	for (unsigned b = 0; b < n; b += JITTER_BLOCK) {
		const unsigned k = n - b < JITTER_BLOCK ? n - b : JITTER_BLOCK;
		struct le_frame f[JITTER_BLOCK];
		/* The streams and the link's sums in locals: stores through l
		 * could alias them, and would make the draws reload their state
		 * from memory each frame. */
		struct le_jitter_state js = l->jitter;
		struct le_chance_state rs;
		uint32_t counter = 0;
		uint64_t reordered = 0;
		le_ns_t last = l->last_deadline, clock = l->clock;
		uint64_t bytes = 0;
		int due_now = 0;

		if (reorder) {
			rs = l->reorder;
			counter = l->reorder_counter;
		}
		for (unsigned i = 0; i < k; i++) {
			le_ns_t deadline = add_sat(arrival, le_jitter_delay(&js, c));

			/* deadline_after's choice. No noreorder clamp: the grammar
			 * refuses `reorder` with `noreorder`, and without `reorder`
			 * an ordered line has no noreorder either. */
			if (reorder && reorder_now(&rs, c, &counter)) {
				deadline = arrival;
				reordered++;
			}
			bytes += lens[b + i];
			f[i].handle = handles[b + i];
			f[i].len = lens[b + i];
			f[i].cls = (uint16_t)l->cls;
			f[i].flags = 0;
			f[i].arrival = arrival;
			f[i].deadline = deadline;
			last = deadline > last ? deadline : last;
			due_now |= deadline <= clock;
		}
		l->jitter = js;
		if (reorder) {
			l->reorder = rs;
			l->reorder_counter = counter;
			l->ctr.event[LE_EVENT_REORDERED] += reordered;
		}
		l->last_deadline = last;
		l->ctr.rx_bytes += bytes;
		if (!due_now) {
			le_delay_line_push_ordered_burst(d, f, k); /* cannot fail: room checked */
			continue;
		}
		for (unsigned i = 0, from = 0; i < k; i++) {
			const int mark = f[i].deadline <= l->clock && b + i + 1 < n;

			if (mark || i + 1 == k) {
				le_delay_line_push_ordered_burst(d, f + from, i + 1 - from);
				from = i + 1;
			}
			if (mark)
				le_delay_line_mark_due(d, l->clock);
		}
	}
}

static void offer_jittered(struct le_link *l, void *const *handles, const uint32_t *lens, unsigned n,
			   le_ns_t arrival)
{
	offer_ordered(l, handles, lens, n, arrival, 0);
}

static void offer_reordered(struct le_link *l, void *const *handles, const uint32_t *lens, unsigned n,
			    le_ns_t arrival)
{
	offer_ordered(l, handles, lens, n, arrival, 1);
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
static void offer_frames(struct le_link *l, void *const *handles, const uint32_t *lens, unsigned n,
			 le_ns_t arrival)
{
	if (l->fate_gaps)
		offer_framewise_quiet(l, handles, lens, n, arrival);
	else
		offer_framewise(l, handles, lens, n, arrival);
}

/* Frames offer_chances has admitted, stored a batch at a time: they all
 * share one arrival, deadline and class. */
struct chance_batch {
	void *handle[64];
	uint32_t len[64];
	unsigned n;
};

static void batch_flush(struct le_link *l, struct chance_batch *b, le_ns_t arrival, le_ns_t deadline)
{
	if (b->n == 0)
		return;
	le_delay_line_push_run(&l->line, b->handle, b->len, b->n, arrival, deadline, (uint16_t)l->cls);
	b->n = 0;
}

/* admit() for offer_chances' frames: the line's capacity, then `limit`,
 * counting the batch not stored yet (none of the burst is due). */
static int batch_admit(struct le_link *l, struct chance_batch *b, const struct le_frame *f)
{
	const struct le_delay_line *d = &l->line;

	if (d->count + b->n >= d->capacity) {
		drop(l, f, LE_DROP_STALLED);
		return -1;
	}
	if (d->count - d->due + b->n + 1 > l->cfg.limit) {
		drop(l, f, LE_DROP_QUEUE_FULL);
		return -1;
	}
	if (b->n == 64)
		batch_flush(l, b, f->arrival, f->deadline);
	b->handle[b->n] = f->handle;
	b->len[b->n++] = f->len;
	return 0;
}

/* le_link_offer of a fixed delay with per-frame chances (loss, duplicate,
 * corrupt, ecn) and no serializer, when the burst's frames are not due
 * yet. Then none becomes due inside the burst, so advance() is the one
 * mark before the first frame; every frame that fate() keeps gets the
 * same deadline and leaves in arrival order, and is stored in the runs
 * form a batch at a time. Admission counts as admit() would; the draws
 * are fate()'s, in the same order, so the link's streams are what frame
 * by frame would make of them (tests/unit/test_offer_burst.c). */
static void offer_chances(struct le_link *l, void *const *handles, const uint32_t *lens, unsigned n,
			  le_ns_t arrival)
{
	struct le_delay_line *d = &l->line;
	le_ns_t deadline = fixed_deadline(l, arrival);
	struct chance_batch b;
	int pushed = 0;

	if (deadline <= max_ns(arrival, l->clock)) { /* a late burst: some frames are due at once */
		offer_frames(l, handles, lens, n, arrival);
		return;
	}
	arrive(l, n, arrival);
	le_delay_line_mark_due(d, l->clock);
	l->settled = 1;
	b.n = 0;
	for (unsigned i = 0, quiet = 0; i < n; i++) {
		struct le_frame f = { handles[i], lens[i], (uint16_t)l->cls, 0, arrival, deadline };
		void *copy;

		l->ctr.rx_bytes += lens[i];
		/* Frames no chance touches are admitted without fate(). */
		if (quiet == 0 && l->fate_gaps)
			quiet = pass_quietly(l, n - i);
		if (quiet > 0) {
			quiet--;
			if (batch_admit(l, &b, &f) == 0)
				pushed = 1;
			continue;
		}
		if (!fate(l, &f, 0, &copy))
			continue;
		if (batch_admit(l, &b, &f) < 0) {
			drop_copy(l, &f, copy);
			continue;
		}
		pushed = 1;
		if (copy != NULL) {
			struct le_frame cf = copy_of(&f, copy);
			void *none;

			if (fate(l, &cf, 1, &none))
				batch_admit(l, &b, &cf);
		}
	}
	batch_flush(l, &b, arrival, deadline);
	if (pushed && deadline > l->last_deadline)
		l->last_deadline = deadline;
}

void le_link_offer(struct le_link *l, void *handle, uint32_t len, le_ns_t arrival)
{
	offer_framewise(l, &handle, &len, 1, arrival);
}

void le_link_offer_burst(struct le_link *l, void *const *handles, const uint32_t *lens, unsigned n,
			 le_ns_t arrival)
{
	/* A frame carried over at a change (queue), or a predecessor whose
	 * frames `limit` counts: frame by frame. */
	if (l->elder != NULL || l->queue.count || l->transit)
		offer_frames(l, handles, lens, n, arrival);
	else if (l->plain)
		offer_plain(l, handles, lens, n, arrival);
	else if (l->stageless && l->line.ordered && !l->cfg.reorder_set)
		offer_jittered(l, handles, lens, n, arrival);
	else if (l->stageless && l->line.ordered)
		offer_reordered(l, handles, lens, n, arrival);
	else if (l->stageless)
		offer_stageless(l, handles, lens, n, arrival);
	else if (l->line.runs) /* a fixed delay behind per-frame chances */
		offer_chances(l, handles, lens, n, arrival);
	else
		offer_frames(l, handles, lens, n, arrival);
}

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
	advance(l, l->clock);
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
	advance(l, l->clock);
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
			drop(l, &f[i], LE_DROP_SHUTDOWN);
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

/* --- live reconfiguration ---------------------------------------------------- */

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
		deliver(n, &o->tframe, n->clock);
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
	advance(o, o->clock);
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
