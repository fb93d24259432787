#include "fastpath.h"

#include <rte_ethdev.h>

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

/* Counts received frames and keeps the usable ones at the front of pkts. */
static unsigned account_rx(struct dp_task *t, struct rte_mbuf **pkts, unsigned n)
{
	unsigned kept = 0;
	t->ctr.rx += n;
	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		t->ctr.rx_bytes += m->pkt_len;
		if (unlikely(m->pkt_len < DP_MIN_FRAME)) {
			t->ctr.drop[DP_DROP_MALFORMED]++;
			rte_pktmbuf_free(m);
			continue;
		}
		pkts[kept++] = m;
	}
	return kept;
}

/* Offers frames to the model, which keeps them or frees and counts them. */
static void offer_to_model(struct dp_task *t, struct rte_mbuf **pkts, unsigned n, int use_meta_arrival,
			   le_ns_t now)
{
	struct dp_model_slot *ms = &t->dir->models;
	for (unsigned i = 0; i < n; i++) {
		le_ns_t arrival = use_meta_arrival ? meta_of(t, pkts[i])->arrival : now;
		dp_model_slot_offer(ms, pkts[i], pkts[i]->pkt_len, arrival);
	}
}

static void pending_set(struct dp_pending *p, unsigned i, struct rte_mbuf *m, uint32_t len, le_ns_t deadline)
{
	p->m[i] = m;
	p->len[i] = len;
	p->deadline[i] = deadline;
}

/* Moves due frames from the link into the (empty) pending buffer. Length
 * and deadline come from the delay line's entry, not the mbuf: after a
 * long delay the mbuf is cold in cache, and touching it here would cost a
 * miss per frame. Only the pipeline's worker must write the deadline into
 * the mbuf, for the TX lcore. */
static void take_due(struct dp_task *t, int stamp_mbuf, le_ns_t now)
{
	struct le_frame frames[DP_BURST_MAX];
	/* Every model's due frames, retiring ones included, by deadline. */
	unsigned k = dp_model_slot_dequeue(&t->dir->models, now, frames, t->ctx->burst);
	for (unsigned i = 0; i < k; i++) {
		struct rte_mbuf *m = frames[i].handle;
		if (stamp_mbuf)
			meta_of(t, m)->deadline = frames[i].deadline;
		pending_set(&t->pending, i, m, frames[i].len, frames[i].deadline);
	}
	t->pending.first = 0;
	t->pending.count = k;
}

/* Sends pending frames on the direction's output port, recording each
 * sent frame's emulation error. Returns frames sent. */
static unsigned send_pending(struct dp_task *t)
{
	struct dp_pending *p = &t->pending;
	if (p->count == 0)
		return 0;
	le_ns_t send_time = tsc_clock_now(t->ctx->clock);
	uint16_t sent = rte_eth_tx_burst(t->dir->port_out, 0, &p->m[p->first], (uint16_t)p->count);
	for (unsigned i = p->first; i < p->first + sent; i++) {
		/* never negative: frames leave only once due */
		le_ns_t d = p->deadline[i];
		le_hist_record(&t->error, send_time >= d ? send_time - d : 0);
		t->ctr.tx_bytes += p->len[i];
	}
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
	unsigned done = rte_ring_sp_enqueue_burst(t->dir->tx_ring, (void **)&p->m[p->first], p->count, NULL);
	p->first += done;
	p->count -= done;
	t->ring_out += done;
	return done;
}

static unsigned poll_run_to_completion(struct dp_task *t)
{
	struct rte_mbuf *pkts[DP_BURST_MAX];
	dp_model_slot_poll(&t->dir->models, tsc_clock_now(t->ctx->clock));
	unsigned n = rte_eth_rx_burst(t->dir->port_in, 0, pkts, (uint16_t)t->ctx->burst);
	if (n) {
		le_ns_t now = tsc_clock_now(t->ctx->clock);
		unsigned kept = account_rx(t, pkts, n);
		offer_to_model(t, pkts, kept, 0, now);
	}
	unsigned moved = n;
	/* Punted frames out, and what their processes returned into the
	 * model, before the model's due frames are taken. */
	if (unlikely(t->dir->punt != NULL))
		moved += dp_punt_poll(t->dir->punt, t->dir->id, &t->dir->models.swap, tsc_clock_now(t->ctx->clock));
	if (t->pending.count == 0)
		take_due(t, 0, tsc_clock_now(t->ctx->clock));
	moved += send_pending(t);
	return moved;
}

static unsigned poll_rx(struct dp_task *t)
{
	struct rte_mbuf *pkts[DP_BURST_MAX];
	/* Read before the burst: every frame this or a later burst brings is
	 * stamped at or after it. */
	le_ns_t now = tsc_clock_now(t->ctx->clock);
	unsigned n = rte_eth_rx_burst(t->dir->port_in, 0, pkts, (uint16_t)t->ctx->burst);
	if (!n) {
		__atomic_store_n(&t->dir->rx_watermark, now, __ATOMIC_RELEASE);
		return 0;
	}
	unsigned kept = account_rx(t, pkts, n);
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
	/* Not past the horizon either: a change at T must still send frames
	 * that arrived before T, but wait in the ring, to the old model. */
	dp_model_slot_poll(&t->dir->models, now < horizon ? now : horizon);
	unsigned n = rte_ring_sc_dequeue_burst(t->dir->rx_ring, (void **)pkts, t->ctx->burst, &left);
	t->ring_in += n;
	if (n) {
		/* Before offering: the model may free a frame it drops. */
		if (left)
			horizon = meta_of(t, pkts[n - 1])->arrival;
		offer_to_model(t, pkts, n, 1, 0);
	}
	/* Answers arrive at most at the horizon: the model's clock must not
	 * pass frames still in the RX ring. */
	if (unlikely(t->dir->punt != NULL))
		n += dp_punt_poll(t->dir->punt, t->dir->id, &t->dir->models.swap, now < horizon ? now : horizon);
	if (t->pending.count == 0)
		take_due(t, 1, now < horizon ? now : horizon);
	return n + flush_to_ring(t);
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
		rte_pktmbuf_free(p->m[p->first + i]);
	t->dir->shutdown_ctr.drop[DP_DROP_SHUTDOWN] += p->count;
	p->first = 0;
	p->count = 0;
}
