#include "fastpath.h"

#include <rte_ethdev.h>

#include "compact_frames.h"
#include "drop_stash.h"
#include "frame_meta.h"

const char *dp_task_kind_name(enum dp_task_kind k)
{
	switch (k) {
	case DP_TASK_RUN_TO_COMPLETION: return "rtc";
	case DP_TASK_RX: return "rx";
	case DP_TASK_WORKER: return "worker";
	case DP_TASK_TX: return "tx";
	}
	return "?";
}

static inline struct frame_meta *meta_of(const struct dp_task *t, struct rte_mbuf *m)
{
	return frame_meta(m, t->ctx->meta_offset);
}

/* Counts received frames and keeps the usable ones at the front of pkts,
 * their lengths in lens (unless NULL): each mbuf's length read once, in
 * the pass that counts its bytes. */
static unsigned account_rx(struct dp_task *t, struct rte_mbuf **pkts, uint32_t *lens, unsigned n)
{
	unsigned kept = 0;
	uint64_t bytes = 0;
	t->ctr.rx += n;
	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		uint32_t len = m->pkt_len;
		bytes += len;
		if (unlikely(len < DP_MIN_FRAME)) {
			t->ctr.drop[DP_DROP_MALFORMED]++;
			rte_pktmbuf_free(m);
			continue;
		}
		if (lens) /* a constant at each (inlined) call */
			lens[kept] = len;
		pkts[kept++] = m;
	}
	t->ctr.rx_bytes += bytes;
	return kept;
}

/* Offers frames (and their lengths) to the model, which keeps them or
 * frees and counts them. */
static void offer_to_model(struct dp_task *t, struct rte_mbuf **pkts, const uint32_t *lens, unsigned n,
			   int use_meta_arrival, le_ns_t now)
{
	struct dp_model_slot *ms = &t->dir->models;
	struct le_compact_store *cs = t->dir->compact;
	/* Below compact_after held mbufs, frames keep them: no copies, and
	 * little memory. Past it, memory is what counts. The depth walks
	 * every class's link: read it once every DP_COMPACT_CHECK_FRAMES
	 * frames of full bursts only (~0.1 ms at 14.88 Mpps, a few thousand
	 * frames either side of the mark), whatever the burst. */
	struct dp_direction *dir = t->dir;
	if (cs && dir->compact_after && dir->compact_check-- == 0) {
		dir->compact_check = DP_COMPACT_CHECK_FRAMES / t->ctx->burst - 1;
		dir->compacting = (int64_t)le_swap_depth(&ms->swap) - cs->in_use >= (int64_t)dir->compact_after;
	}
	/* Class rules read each frame's first bytes (le_path_classify), and
	 * a compact copy reads them all: the data line of a recycled mbuf is
	 * cold (net_null, like a NIC's DMA, leaves it out of this CPU's
	 * cache), a miss per frame that stalls the parse. Asked for the
	 * whole burst first, the misses overlap. Unread otherwise: no
	 * prefetch, no memory traffic. */
	int compact = cs && !(dir->compact_after && !dir->compacting);
	if (ms->swap.active->nlinks > 1 || compact)
		for (unsigned i = 0; i < n; i++)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void *));
	void *handles[DP_BURST_MAX];
	struct rte_mbuf *copied[DP_BURST_MAX];
	unsigned ncopied = 0;
	le_ns_t arrival[DP_BURST_MAX];
	/* The pipeline's worker: each frame's arrival from its mbuf, read
	 * before a copied frame's mbuf goes back to the pool. */
	if (use_meta_arrival)
		for (unsigned i = 0; i < n; i++)
			arrival[i] = meta_of(t, pkts[i])->arrival;
	/* The model's handles: the mbufs themselves, or compact handles. */
	void *const *hs = (void *const *)pkts;
	if (compact) {
		/* Short frames go into the compact store and their mbufs
		 * straight back to the pool (in one bulk, below). */
		hs = handles;
		for (unsigned i = 0; i < n; i++) {
			struct rte_mbuf *m = pkts[i];
			void *h = dp_compact_take(cs, dir->id, m);
			if (!h)
				h = m;
			else if (likely(m->buf_len >= RTE_PKTMBUF_HEADROOM + LE_COMPACT_SLOT))
				copied[ncopied++] = m; /* can carry a compact frame out */
			else
				rte_pktmbuf_free(m);
			handles[i] = h;
		}
	}
	if (!use_meta_arrival) {
		dp_model_slot_offer_burst(ms, hs, lens, n, now);
	} else {
		/* Runs of one arrival (an RX burst each). */
		for (unsigned i = 0, j; i < n; i = j) {
			for (j = i + 1; j < n && arrival[j] == arrival[i]; j++)
				;
			dp_model_slot_offer_burst(ms, &hs[i], &lens[i], j - i, arrival[i]);
		}
	}
	if (!ncopied)
		return;
	/* Kept for the frames leaving next (take_due), the rest freed. */
	unsigned keep = RTE_DIM(dir->spare) - dir->nspare;
	if (keep > ncopied)
		keep = ncopied;
	memcpy(&dir->spare[dir->nspare], copied, keep * sizeof(copied[0]));
	dir->nspare += keep;
	if (ncopied > keep)
		rte_pktmbuf_free_bulk(&copied[keep], ncopied - keep);
}

/* A spare mbuf ready for a compact frame's bytes: fields the frame's
 * bytes do not set are those of a fresh one. */
static inline struct rte_mbuf *spare_mbuf(struct dp_direction *dir)
{
	struct rte_mbuf *m = dir->spare[--dir->nspare];
	m->data_off = RTE_MIN(RTE_PKTMBUF_HEADROOM, m->buf_len);
	m->ol_flags &= RTE_MBUF_F_EXTERNAL;
	m->packet_type = 0;
	m->vlan_tci = m->vlan_tci_outer = 0;
	return m;
}

/* Pending frames [first, first + returned) have mbufs and may go out:
 * compact frames get theirs from the send pool, in order, until it is
 * empty (then the rest wait for the next pass: counted, never lost). The
 * pipeline's worker also stamps their deadline for the TX lcore. */
static unsigned pending_ready(struct dp_task *t, int stamp_mbuf)
{
	struct dp_pending *p = &t->pending;
	if (likely(p->unresolved == 0))
		return p->count;
	for (unsigned i = p->first; i < p->first + p->count; i++) {
		if (!dp_is_compact(p->m[i]))
			continue;
		struct rte_mbuf *m = rte_pktmbuf_alloc(t->ctx->tx_pool);
		if (!m) {
			t->dir->compact_tx_wait++;
			return i - p->first;
		}
		p->m[i] = dp_compact_give(t->dir->compact, p->m[i], m);
		if (stamp_mbuf)
			meta_of(t, m)->deadline = p->deadline[i];
		if (--p->unresolved == 0)
			break;
	}
	return p->count;
}

static void pending_set(struct dp_pending *p, unsigned i, struct rte_mbuf *m, uint32_t len, le_ns_t deadline)
{
	p->m[i] = m;
	p->len[i] = len;
	p->deadline[i] = deadline;
}

/* tx_burst frees each mbuf (net_null at once, a NIC's driver after the
 * send), touching both of its header lines. After the delay they are
 * cold, and once frames leave out of arrival order (jitter, reorder) the
 * mempool hands them out in no address order a hardware prefetcher could
 * follow: ask for them all now, so the misses overlap instead of stalling
 * the free loop one by one. Compact handles are not mbufs: skipped. */
static inline void prefetch_mbufs(void *const *h, unsigned k)
{
	for (unsigned i = 0; i < k; i++)
		if (!dp_is_compact(h[i])) {
			rte_prefetch0(h[i]);
			rte_prefetch0((char *)h[i] + RTE_CACHE_LINE_SIZE);
		}
}

/* A burst's due frames in one split dequeue (le_frame_split). */
_Static_assert(DP_BURST_MAX <= LE_SPLIT_MAX, "a burst of due frames must fit one split dequeue");

/* Moves due frames from the link into the (empty) pending buffer. Length
 * and deadline come from the delay line, not the mbuf: after a long delay
 * the mbuf is cold in cache, and touching it here would cost a miss per
 * frame. They go straight into the pending arrays (no le_frame per
 * frame); so do the handles while no compact frame is held, otherwise
 * they come through a local array, as the pending one holds mbuf
 * pointers and a compact handle is not one yet. Only the pipeline's
 * worker must write the deadline into the mbuf, for the TX lcore. */
static void take_due(struct dp_task *t, int stamp_mbuf, le_ns_t now)
{
	struct dp_pending *p = &t->pending;
	struct le_compact_store *cs = t->dir->compact;
	if (!stamp_mbuf && !(cs && cs->in_use)) {
		/* No slot in use, so no compact handle anywhere (a handle holds
		 * its slot until dp_compact_give): every handle is an mbuf and
		 * goes straight into the pending array, nothing to resolve or
		 * stamp. The common case, below compact_after. */
		const struct le_frame_split direct = { (void **)p->m, p->len, p->deadline };
		unsigned k = dp_model_slot_dequeue_split(&t->dir->models, now, &direct, t->ctx->burst);
		prefetch_mbufs((void *const *)p->m, k);
		p->first = 0;
		p->count = k;
		p->unresolved = 0;
		return;
	}
	void *h[DP_BURST_MAX];
	const struct le_frame_split out = { h, p->len, p->deadline };
	/* Every model's due frames, retiring ones included, by deadline. */
	unsigned k = dp_model_slot_dequeue_split(&t->dir->models, now, &out, t->ctx->burst);
	prefetch_mbufs(h, k);
	unsigned ncompact = 0;
	if (cs && cs->in_use) { /* no slot in use: no compact frame to find */
		/* Their slots are cold after the delay: ask for them all first. */
		for (unsigned i = 0; i < k; i++)
			if (dp_is_compact(h[i])) {
				rte_prefetch0(le_compact_data(cs, dp_compact_slot(h[i])));
				ncompact++;
			}
	}
	struct rte_mbuf *fresh[DP_BURST_MAX];
	unsigned nfresh = 0;
	if (ncompact) {
		struct dp_direction *dir = t->dir;
		while (nfresh < ncompact && dir->nspare)
			fresh[nfresh++] = spare_mbuf(dir);
		if (nfresh < ncompact &&
		    rte_pktmbuf_alloc_bulk(t->ctx->tx_pool, &fresh[nfresh], ncompact - nfresh) == 0)
			nfresh = ncompact;
	}
	int have_fresh = nfresh == ncompact;
	if (!have_fresh) /* the spare ones back; pending_ready() goes one by one */
		while (nfresh)
			t->dir->spare[t->dir->nspare++] = fresh[--nfresh];
	unsigned j = 0;
	for (unsigned i = 0; i < k; i++) {
		struct rte_mbuf *m = h[i];
		if (dp_is_compact(m)) {
			if (!have_fresh) { /* pending_ready() tries again, one by one */
				p->m[i] = m;
				continue;
			}
			m = dp_compact_give(cs, m, fresh[j++]);
		}
		if (stamp_mbuf)
			meta_of(t, m)->deadline = p->deadline[i];
		p->m[i] = m;
	}
	p->first = 0;
	p->count = k;
	p->unresolved = have_fresh ? 0 : ncompact;
}

/* Sends pending frames on the direction's output port, recording each
 * sent frame's emulation error. Returns frames sent. */
static unsigned send_pending(struct dp_task *t)
{
	struct dp_pending *p = &t->pending;
	if (p->count == 0)
		return 0;
	unsigned ready = pending_ready(t, 0);
	le_ns_t send_time = tsc_clock_now(t->ctx->clock);
	p->sent_at = send_time;
	uint16_t sent = rte_eth_tx_burst(t->dir->port_out, 0, &p->m[p->first], (uint16_t)ready);
	/* never negative: frames leave only once due */
	le_hist_record_lateness(&t->error, send_time, &p->deadline[p->first], sent);
	uint64_t bytes = 0;
	for (unsigned i = p->first, end = p->first + sent; i < end; i++)
		bytes += p->len[i];
	t->ctr.tx_bytes += bytes;
	p->first += sent;
	p->count -= sent;
	t->ctr.tx += sent;
	return sent;
}

static unsigned flush_to_ring(struct dp_task *t)
{
	struct dp_pending *p = &t->pending;
	if (p->count == 0)
		return 0;
	unsigned done = rte_ring_sp_enqueue_burst(t->dir->tx_ring, (void **)&p->m[p->first], pending_ready(t, 1),
						  NULL);
	p->first += done;
	p->count -= done;
	t->ring_out += done;
	return done;
}

/* Whether a poll that just sent (or queued) `out` frames takes a second
 * burst of due frames: a full burst went, all of it (full_burst_went),
 * and its last frame left more than DP_BEHIND_NS after its deadline
 * (left_late), so the loop is behind.
 * A link can send more frames than it receives (duplicate, a queue
 * draining after a pause), and at one burst out per burst in they would
 * pile up behind an input that fills every burst, until `limit` dropped
 * them; and after a stall, frames overdue would stay late by the stall
 * for as long as the input stayed full. Taking a second burst whenever
 * the first was full kept the loop within a poll of every deadline at
 * full input, but split its polls into some that sent nothing and some
 * that sent two bursts, and cost a fifth of the rate of `delay 1ms` on
 * net_null. Two tests, so that a caller reads the clock for the second
 * only when the first holds. */
static int full_burst_went(const struct dp_task *t, unsigned out)
{
	const struct dp_pending *p = &t->pending;

	return out == t->ctx->burst && p->count == 0 && p->first > 0;
}

/* `now`: when the burst went. */
static int left_late(const struct dp_task *t, le_ns_t now)
{
	const struct dp_pending *p = &t->pending;

	return now > p->deadline[p->first - 1] + DP_BEHIND_NS;
}

static unsigned poll_run_to_completion(struct dp_task *t)
{
	struct rte_mbuf *pkts[DP_BURST_MAX];
	uint32_t lens[DP_BURST_MAX];
	le_ns_t top = tsc_clock_now(t->ctx->clock);
	dp_poll_gaps_note(&t->gaps, top);
	dp_model_slot_poll(&t->dir->models, top);
	unsigned n = rte_eth_rx_burst(t->dir->port_in, 0, pkts, (uint16_t)t->ctx->burst);
	if (n) {
		/* Read after the burst: a frame can reach the port between `top`
		 * and the call that takes it, and stamped with `top` it would
		 * leave early by up to the call (tests/lab: never early). */
		le_ns_t now = tsc_clock_now(t->ctx->clock);
		unsigned kept = account_rx(t, pkts, lens, n);
		offer_to_model(t, pkts, lens, kept, 0, now);
	}
	unsigned moved = n;
	/* Punted frames out, and what their processes returned into the
	 * model, before the model's due frames are taken. */
	if (unlikely(t->dir->punt != NULL))
		moved += dp_punt_poll(t->dir->punt, t->dir->id, &t->dir->models.swap, tsc_clock_now(t->ctx->clock));
	if (t->pending.count == 0)
		take_due(t, 0, tsc_clock_now(t->ctx->clock));
	/* Late or not is judged at the send time just read: a clock read
	 * costs ~11 ns on these VMs, a fifth of a poll's five. */
	unsigned sent = send_pending(t);
	if (full_burst_went(t, sent) && left_late(t, t->pending.sent_at)) {
		take_due(t, 0, tsc_clock_now(t->ctx->clock));
		sent += send_pending(t);
	}
	/* The port took n mbufs from the cache and the send gave back `sent`:
	 * dropped ones make up the difference; an idle poll frees them all. */
	dp_drop_stash_release(n == 0 ? DP_DROP_STASH_MAX : n > sent ? n - sent : 0);
	return moved + sent;
}

static unsigned poll_rx(struct dp_task *t)
{
	struct rte_mbuf *pkts[DP_BURST_MAX];
	unsigned n = rte_eth_rx_burst(t->dir->port_in, 0, pkts, (uint16_t)t->ctx->burst);
	/* Read after the burst, as run to completion does: a frame can reach
	 * the port during the call that takes it, and stamped with a read
	 * from before the call it would leave early by up to the call. A
	 * frame a later call takes is stamped by a later read, so the
	 * watermark below still holds: every frame stamped before it is in
	 * the ring, every one to come is stamped at or after it. */
	le_ns_t now = tsc_clock_now(t->ctx->clock);
	if (!n) {
		__atomic_store_n(&t->dir->rx_watermark, now, __ATOMIC_RELEASE);
		return 0;
	}
	unsigned kept = account_rx(t, pkts, NULL, n); /* the worker reads the lengths */
	for (unsigned i = 0; i < kept; i++)
		meta_of(t, pkts[i])->arrival = now;
	unsigned done = rte_ring_sp_enqueue_burst(t->dir->rx_ring, (void **)pkts, kept, NULL);
	t->ring_out += done;
	/* DEMU's choice: a full ring drops at RX, which bounds the delay the
	 * ring itself could add; counted, never silent. */
	for (unsigned i = done; i < kept; i++) {
		t->ctr.drop[DP_DROP_RING_FULL]++;
		rte_pktmbuf_free(pkts[i]);
	}
	/* Published after the enqueue: a frame stamped before the watermark
	 * is already in the ring. */
	__atomic_store_n(&t->dir->rx_watermark, now, __ATOMIC_RELEASE);
	return n;
}

static unsigned poll_worker(struct dp_task *t)
{
	struct rte_mbuf *pkts[DP_BURST_MAX];
	unsigned left;
	/* The model's clock must not pass a frame still in the RX ring, or
	 * that frame would arrive "in the past" (late_arrival) and queue,
	 * trace and CoDel decisions would shift by the ring's latency. So
	 * time advances to the RX lcore's watermark (all frames stamped
	 * earlier are in the ring), or to the last arrival taken when the
	 * ring still holds frames. */
	le_ns_t horizon = __atomic_load_n(&t->dir->rx_watermark, __ATOMIC_ACQUIRE);
	le_ns_t now = tsc_clock_now(t->ctx->clock);
	dp_poll_gaps_note(&t->gaps, now);
	/* Not past the horizon either: a change at T must still send frames
	 * that arrived before T, but wait in the ring, to the old model. */
	dp_model_slot_poll(&t->dir->models, now < horizon ? now : horizon);
	unsigned n = rte_ring_sc_dequeue_burst(t->dir->rx_ring, (void **)pkts, t->ctx->burst, &left);
	t->ring_in += n;
	if (n) {
		/* Before offering: the model may free a frame it drops. */
		if (left)
			horizon = meta_of(t, pkts[n - 1])->arrival;
		uint32_t lens[DP_BURST_MAX];
		for (unsigned i = 0; i < n; i++)
			lens[i] = pkts[i]->pkt_len;
		offer_to_model(t, pkts, lens, n, 1, 0);
	}
	/* Answers arrive at most at the horizon: the model's clock must not
	 * pass frames still in the RX ring. */
	if (unlikely(t->dir->punt != NULL))
		n += dp_punt_poll(t->dir->punt, t->dir->id, &t->dir->models.swap, now < horizon ? now : horizon);
	if (t->pending.count == 0)
		take_due(t, 1, now < horizon ? now : horizon);
	unsigned out = flush_to_ring(t);
	if (full_burst_went(t, out) && left_late(t, tsc_clock_now(t->ctx->clock))) {
		take_due(t, 1, now < horizon ? now : horizon);
		out += flush_to_ring(t);
	}
	return n + out;
}

static unsigned poll_tx(struct dp_task *t)
{
	struct dp_pending *p = &t->pending;
	if (p->count == 0) {
		unsigned n = rte_ring_sc_dequeue_burst(t->dir->tx_ring, (void **)p->m, t->ctx->burst, NULL);
		t->ring_in += n;
		for (unsigned i = 0; i < n; i++)
			pending_set(p, i, p->m[i], p->m[i]->pkt_len, meta_of(t, p->m[i])->deadline);
		p->first = 0;
		p->count = n;
	}
	return send_pending(t);
}

unsigned dp_task_poll(struct dp_task *t)
{
	switch (t->kind) {
	case DP_TASK_RUN_TO_COMPLETION: return poll_run_to_completion(t);
	case DP_TASK_RX: return poll_rx(t);
	case DP_TASK_WORKER: return poll_worker(t);
	case DP_TASK_TX: return poll_tx(t);
	}
	return 0;
}

void dp_task_snapshot(const struct dp_task *t, struct dp_task_snapshot *out)
{
	out->ctr = t->ctr;
	out->ring_in = t->ring_in;
	out->ring_out = t->ring_out;
	out->held = t->pending.count;
	if (t->kind == DP_TASK_RUN_TO_COMPLETION || t->kind == DP_TASK_WORKER) {
		uint64_t punt_held = 0;
		dp_model_slot_snapshot(&t->dir->models, &out->models);
		/* the channels belong to the task that runs the model */
		dp_punt_counts(t->dir->punt, t->dir->id, &out->ctr, &punt_held);
		out->held += (unsigned)punt_held;
	} else
		out->models = (struct dp_model_slot_snapshot){0};
}

void dp_task_send_due_at_shutdown(struct dp_task *t)
{
	const struct tsc_clock *clk = t->ctx->clock;
	le_ns_t give_up = tsc_clock_now(clk) + 5 * LE_NS_PER_MS;
	for (;;) {
		switch (t->kind) {
		case DP_TASK_RUN_TO_COMPLETION:
			send_pending(t);
			break;
		case DP_TASK_WORKER:
			flush_to_ring(t);
			break;
		case DP_TASK_TX:
			poll_tx(t);
			break;
		case DP_TASK_RX:
			return; /* its frames never reached the model */
		}
		int empty = t->pending.count == 0 &&
			    (t->kind != DP_TASK_TX || rte_ring_count(t->dir->tx_ring) == 0);
		if (empty || tsc_clock_now(clk) > give_up)
			return;
	}
}

void dp_task_flush_at_shutdown(struct dp_task *t)
{
	struct dp_pending *p = &t->pending;
	for (unsigned i = 0; i < p->count; i++)
		dp_frame_free(t->dir->compact, p->m[p->first + i]);
	p->unresolved = 0;
	rte_pktmbuf_free_bulk(t->dir->spare, t->dir->nspare);
	t->dir->nspare = 0;
	t->dir->shutdown_ctr.drop[DP_DROP_SHUTDOWN] += p->count;
	p->first = 0;
	p->count = 0;
}
