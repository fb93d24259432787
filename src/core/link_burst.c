/* A burst of frames offered to one link as a block (le_link_offer_burst):
 * a path for each kind of link whose frames can be taken together, each
 * a twin of le_link_offer frame by frame (the same draws in the same
 * order, the same decisions, counts and clock), which
 * tests/unit/test_offer_burst.c and test_offer_random.c check frame for
 * frame; the other links go frame by frame (link_stages.c). */
#include "link_stages.h"

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
			drop_frame(l, &f, cause);
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

enum { JITTER_BLOCK = 64 };

/* Frames into the line, in order: one call into the wheel of an ordered
 * line, a store or two each into a FIFO. Room checked. */
static inline __attribute__((always_inline)) void push_block(struct le_delay_line *d, const struct le_frame *f,
							     unsigned k, const int fifo)
{
	if (!fifo) {
		le_delay_line_push_ordered_burst(d, f, k);
		return;
	}
	for (unsigned i = 0; i < k; i++)
		le_delay_line_push_fifo(d, &f[i]);
}

/* le_link_offer of a link with no serializer and no per-frame chance but
 * `reorder`, whose delay is drawn per frame: on an ordered line
 * (reordering jitter, `reorder`, or both), or on a FIFO with `noreorder`
 * jitter (`fifo`), when the whole burst fits under the line's capacity
 * and the limit.
 * Then no frame's admission depends on another frame, and what is left
 * per frame is deliver()'s: the draws, the deadline, the push. The
 * deadlines are drawn first, a block at a time and in the frames' order
 * (the same draws as deadline_after's), then pushed with one call,
 * without the calls and checks per frame that were about a sixth of the
 * model's instructions on the jitter row (and 40 % of the `noreorder`
 * row's). A frame due at once (one that `reorder` sends at once, a zero
 * delay drawn, a late burst) is marked before the next one is pushed, as
 * frame by frame (stageless_frames), so the due frames leave in the same
 * order: the block goes in as bursts that end at its due frames.
 * `reorder` and `fifo` are constants at each call. */
static inline __attribute__((always_inline)) void offer_drawn(struct le_link *l, void *const *handles,
							      const uint32_t *lens, unsigned n, le_ns_t arrival,
							      const int reorder, const int fifo)
{
	struct le_delay_line *d = &l->line;
	const struct le_link_config *c = &l->cfg;

	arrive(l, n, arrival);
	le_delay_line_mark_due(d, l->clock);
	if (n > d->capacity - le_delay_line_count(d) || le_delay_line_held(d) + n > c->limit) {
		le_link_stageless_frames(l, handles, lens, n, arrival);
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

			/* deadline_after's choice, and its noreorder clamp (the
			 * grammar refuses `reorder` with `noreorder`, and a line
			 * with noreorder is a FIFO). */
			if (reorder && reorder_now(&rs, c, &counter)) {
				deadline = arrival;
				reordered++;
			}
			if (fifo && deadline < last)
				deadline = last;
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
			push_block(d, f, k, fifo);
			continue;
		}
		for (unsigned i = 0, from = 0; i < k; i++) {
			const int mark = f[i].deadline <= l->clock && b + i + 1 < n;

			if (mark || i + 1 == k) {
				push_block(d, f + from, i + 1 - from, fifo);
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
	offer_drawn(l, handles, lens, n, arrival, 0, 0);
}

static void offer_reordered(struct le_link *l, void *const *handles, const uint32_t *lens, unsigned n,
			    le_ns_t arrival)
{
	offer_drawn(l, handles, lens, n, arrival, 1, 0);
}

static void offer_noreorder(struct le_link *l, void *const *handles, const uint32_t *lens, unsigned n,
			    le_ns_t arrival)
{
	offer_drawn(l, handles, lens, n, arrival, 0, 1);
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

/* What `limit` counts when one of offer_chances' frames is admitted
 * (see chances_loop): due at once, the frames of its own turn before it
 * (`of_turn`: none for an original, the original for its copy); not due,
 * every frame held, the batch not stored yet among them. */
static inline uint32_t counted(const struct le_link *l, const struct chance_batch *b, const int due, uint32_t of_turn)
{
	return due ? of_turn : l->line.count - l->line.due + b->n;
}

/* admit() for offer_chances' frames: the line's capacity, then `limit`
 * against `held`, the frames it would count (counted). */
static int batch_admit(struct le_link *l, struct chance_batch *b, const struct le_frame *f, uint32_t held)
{
	const struct le_delay_line *d = &l->line;

	if (d->count + b->n >= d->capacity) {
		drop_frame(l, f, LE_DROP_STALLED);
		return -1;
	}
	if (held + 1 > l->cfg.limit) {
		drop_frame(l, f, LE_DROP_QUEUE_FULL);
		return -1;
	}
	if (b->n == 64)
		batch_flush(l, b, f->arrival, f->deadline);
	b->handle[b->n] = f->handle;
	b->len[b->n++] = f->len;
	return 0;
}

/* k originals no chance touches, admitted as batch_admit would one by
 * one: the prefix the line's capacity and `limit` leave room for, stored
 * as one run behind the batch, the rest dropped for the reason the first
 * of them meets (each frame after a refused one meets the same: the count
 * does not move). Not due, `limit` counts one more for each admitted;
 * due at once, each of them counts none (counted), so only the capacity
 * cuts. */
static void admit_quiet(struct le_link *l, struct chance_batch *b, void *const *handles, const uint32_t *lens,
			unsigned k, le_ns_t arrival, le_ns_t deadline, const int due)
{
	struct le_delay_line *d = &l->line;
	const uint32_t used = d->count + b->n, held = counted(l, b, due, 0);
	const uint32_t room_cap = used < d->capacity ? d->capacity - used : 0;
	const uint32_t room_limit = due ? UINT32_MAX : held < l->cfg.limit ? l->cfg.limit - held : 0;
	unsigned adm = k < room_cap ? k : room_cap;

	if (adm > room_limit)
		adm = room_limit;
	batch_flush(l, b, arrival, deadline);
	if (adm)
		le_delay_line_push_run(d, handles, lens, adm, arrival, deadline, (uint16_t)l->cls);
	if (adm < k) {
		const enum le_drop_cause cause = adm == room_cap ? LE_DROP_STALLED : LE_DROP_QUEUE_FULL;

		for (unsigned j = adm; j < k; j++) {
			const struct le_frame f = { handles[j], lens[j], (uint16_t)l->cls, 0, arrival, deadline };
			drop_frame(l, &f, cause);
		}
	}
}

/* offer_chances' loop over the burst: fate() for each frame (or none for
 * the frames no chance touches), then admission into the batch. Returns
 * how many frames the last frame's turn admitted (it and its copy).
 *
 * What `limit` counts at each admission depends on `due` (a constant at
 * each call). Not due: every frame admitted before in the burst is still
 * held. Due at once (and nothing held before the burst): frame by frame
 * each turn starts with an advance that marks every frame before it due,
 * so only the frames of the turn itself are held: none for the original,
 * the original for its copy. The marks in between change nothing then
 * (they would only mark frames `limit` no longer counts), but the last
 * one, before the last frame's turn, is where frame by frame leaves the
 * line's due mark. */
static inline __attribute__((always_inline)) unsigned chances_loop(struct le_link *l, void *const *handles,
								   const uint32_t *lens, unsigned n, le_ns_t arrival,
								   le_ns_t deadline, struct chance_batch *b,
								   const int due)
{
	unsigned turn = 0;

	for (unsigned i = 0, quiet = 0; i < n; i++) {
		struct le_frame f = { handles[i], lens[i], (uint16_t)l->cls, 0, arrival, deadline };
		void *copy;

		l->ctr.rx_bytes += lens[i];
		turn = 0;
		if (due && i + 1 == n) { /* the last turn's advance */
			batch_flush(l, b, arrival, deadline);
			le_delay_line_mark_due(&l->line, l->clock);
		}
		/* Frames no chance touches are admitted without fate(). */
		if (quiet == 0 && l->fate_gaps)
			quiet = le_link_pass_quietly(l, n - i);
		if (quiet > 0) {
			/* A run of them at once; due, the last frame's turn
			 * apart (its mark comes first: so the run's `turn`
			 * never is the last). */
			unsigned k = due && i + quiet == n ? quiet - 1 : quiet;

			if (k > 1) {
				for (unsigned j = 1; j < k; j++)
					l->ctr.rx_bytes += lens[i + j];
				admit_quiet(l, b, handles + i, lens + i, k, arrival, deadline, due);
				quiet -= k;
				i += k - 1;
				continue;
			}
			quiet--;
			turn = batch_admit(l, b, &f, counted(l, b, due, 0)) == 0;
			continue;
		}
		if (!fate(l, &f, 0, &copy))
			continue;
		if (batch_admit(l, b, &f, counted(l, b, due, 0)) < 0) {
			drop_copy(l, &f, copy);
			continue;
		}
		turn = 1;
		if (copy != NULL) {
			struct le_frame cf = copy_of(&f, copy);
			void *none;

			if (fate(l, &cf, 1, &none))
				turn += batch_admit(l, b, &cf, counted(l, b, due, 1)) == 0;
		}
	}
	return turn;
}

/* le_link_offer of a fixed delay (0 too) with per-frame chances (loss,
 * duplicate, corrupt, ecn) and no serializer. Every frame that fate()
 * keeps gets the same deadline and leaves in arrival order, and is
 * stored in the runs form a batch at a time. Admission counts as admit()
 * would (chances_loop); the draws are fate()'s, in the same order, so the
 * link's streams are what frame by frame would make of them
 * (tests/unit/test_offer_burst.c, test_offer_random.c).
 *
 * Not due yet (a delay): none becomes due inside the burst, so advance()
 * is the one mark before the first frame. Due at once (delay 0, or a
 * late burst) on a line that holds nothing not yet due: frame by frame
 * each frame is marked due at the next frame's turn, so the line's due
 * mark ends on every frame but those of the last turn, which the next
 * advance marks (the link is not settled then). A late burst behind
 * frames still held goes frame by frame. */
static void offer_chances(struct le_link *l, void *const *handles, const uint32_t *lens, unsigned n,
			  le_ns_t arrival)
{
	struct le_delay_line *d = &l->line;
	const le_ns_t deadline = fixed_deadline(l, arrival);
	struct chance_batch b;
	const uint32_t count0 = d->count;

	/* the clock once the burst is there; frame by frame its advance
	 * marks the line up to it first */
	const le_ns_t now = max_ns(arrival, l->clock);
	const int due = deadline <= now;

	le_delay_line_mark_due(d, now);
	if (due && d->count != d->due) {
		le_link_offer_frames(l, handles, lens, n, arrival);
		return;
	}
	arrive(l, n, arrival);
	b.n = 0;
	if (due) { /* settled unless the last turn left frames to mark */
		l->settled = chances_loop(l, handles, lens, n, arrival, deadline, &b, 1) == 0;
	} else {
		chances_loop(l, handles, lens, n, arrival, deadline, &b, 0);
		l->settled = 1;
	}
	batch_flush(l, &b, arrival, deadline);
	if (d->count > count0 && deadline > l->last_deadline)
		l->last_deadline = deadline;
}

void le_link_offer_burst(struct le_link *l, void *const *handles, const uint32_t *lens, unsigned n,
			 le_ns_t arrival)
{
	/* A frame carried over at a change (queue), or a predecessor whose
	 * frames `limit` counts: frame by frame. */
	if (l->elder != NULL || l->queue.count || l->transit)
		le_link_offer_frames(l, handles, lens, n, arrival);
	else if (l->plain)
		offer_plain(l, handles, lens, n, arrival);
	else if (l->stageless && l->line.ordered && !l->cfg.reorder_set)
		offer_jittered(l, handles, lens, n, arrival);
	else if (l->stageless && l->line.ordered)
		offer_reordered(l, handles, lens, n, arrival);
	else if (l->stageless) /* noreorder jitter */
		offer_noreorder(l, handles, lens, n, arrival);
	else if (l->line.runs) /* a fixed delay (0 too) behind per-frame chances */
		offer_chances(l, handles, lens, n, arrival);
	else
		le_link_offer_frames(l, handles, lens, n, arrival);
}
