// SPDX-License-Identifier: GPL-2.0
/* The long-fat-pipe study's congestion avoidance (Amagai et al., NTT:
 * python/linkemu/lab/published.py, LFP_SOURCE) as a BPF struct_ops TCP
 * congestion control. One source, two algorithms:
 *
 *   lfp_fixed  (-DLFP_ADAPTIVE=0)  x = 2, y = 8 always: 4.3BSD-Reno's rules
 *   lfp_adapt  (-DLFP_ADAPTIVE=1)  x and y steered by the stall measure S
 *
 * The study's rules, in segments (Linux keeps cwnd in segments, so MSS = 1):
 *   on loss         ssthresh = max(min(cwnd / x, window), 2); cwnd = 1
 *   slow start      cwnd += 1 per segment acknowledged, up to ssthresh
 *   avoidance       cwnd += 1/cwnd + 1/y per segment acknowledged
 * window is the peer's advertised window (tp->snd_wnd / mss).
 *
 * "cwnd = 1" on a loss. Linux itself sets cwnd to 1 on a retransmission
 * timeout. On a fast retransmit it runs its own recovery (PRR) down to
 * ssthresh and only then hands cwnd back to cong_avoid; so the reset to one
 * segment happens at the first cong_avoid after the loss (pending_reset),
 * unless the loss is undone as spurious (undo_cwnd clears it). From there
 * slow start climbs to ssthresh, as in BSD Tahoe/Reno after a timeout.
 *
 * S, the stall measure (lfp_adapt). The study defines S as the share of the
 * elapsed time during which sending was stalled. Here: the sender is
 * stalled while nothing comes back from the receiver for longer than a
 * round trip. For every ACK the gap g since the previous ACK is taken, and
 * max(0, g - srtt) counts as stalled time (a window-limited sender waits up
 * to one RTT for ACKs in normal operation, which is not a stall; a sender
 * waiting for a retransmission timeout, as in the study's Fig. 4, stalls
 * for RTO - RTT and more). An epoch runs from one loss to the next; at each
 * loss S = stalled time / epoch duration, and then:
 *   S >= 0.5     y doubles (gentler linear growth) up to Y_MAX; once y is at
 *                Y_MAX, x grows by one (lower ssthresh) up to X_MAX
 *   S < 0.05     x steps back toward 2 first, then y halves toward 8
 * "Leave them standard when the bandwidth-delay product is small": when the
 * path's BDP (the largest seen so far of delivery-rate sample x min RTT; the
 * last sample alone collapses during a loss) is below SMALL_BDP_SEGS
 * segments (46 KB at MSS 1448), x = 2 and y = 8 are used and not changed.
 *
 * Counters for the lab: map lfp_fixed_st / lfp_adapt_st, one entry summed
 * over all flows (struct lfp_stats).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#ifndef LFP_ADAPTIVE
#define LFP_ADAPTIVE 0
#endif

#if LFP_ADAPTIVE
#define LFP_NAME "lfp_adapt"
#define LFP_OPS lfp_adapt
#define LFP_STATS lfp_adapt_st
#else
#define LFP_NAME "lfp_fixed"
#define LFP_OPS lfp_fixed
#define LFP_STATS lfp_fixed_st
#endif

char _license[] SEC("license") = "GPL";

#define X_STD 2
#define Y_STD 8
#define X_MAX 8
#define Y_MAX 64
#define SMALL_BDP_SEGS 32
#define FRAC_SHIFT 10 /* avoidance accumulator: 1/1024 segment */
#define S_STALLED_PERMILLE 500
#define S_QUIET_PERMILLE 50
#define INFINITE_SSTHRESH 0x7fffffff

/* Per-connection state, in the socket's icsk_ca_priv (104 bytes). */
struct lfp {
	u64 epoch_start_us;
	u64 last_ack_us;
	u64 stalled_us;
	u32 acc;
	u16 x;
	u16 y;
	u32 pending_reset;
	u32 bdp_max;         /* largest BDP seen, in segments */
};

/* What the lab reads after a run (bpftool map dump name lfp_adapt_st). */
struct lfp_stats {
	u64 losses;
	u64 resets;          /* cwnd set to one segment after a loss */
	u64 undos;
	u64 raise_y;
	u64 raise_x;
	u64 relax;
	u64 small_bdp;       /* losses at which the BDP was small: standard x, y */
	u64 stalled_us;      /* summed over all epochs */
	u64 elapsed_us;
	u32 last_x;
	u32 last_y;
	u32 last_s_permille;
	u32 max_x;
	u32 max_y;
	u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct lfp_stats);
} LFP_STATS SEC(".maps");

static __always_inline struct tcp_sock *tcp_sk_of(struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline struct lfp *lfp_of(struct sock *sk)
{
	return (struct lfp *)((struct inet_connection_sock *)sk)->icsk_ca_priv;
}

static __always_inline struct lfp_stats *stats(void)
{
	u32 k = 0;
	return bpf_map_lookup_elem(&LFP_STATS, &k);
}

static __always_inline u32 min_u32(u32 a, u32 b) { return a < b ? a : b; }
static __always_inline u32 max_u32(u32 a, u32 b) { return a > b ? a : b; }

static __always_inline u32 window_segs(const struct tcp_sock *tp)
{
	u32 mss = tp->mss_cache ? tp->mss_cache : 1;
	return tp->snd_wnd / mss;
}

/* Path BDP in segments: delivered per interval (last rate sample) x min RTT. */
static __always_inline u64 bdp_segs(const struct tcp_sock *tp)
{
	u32 interval = tp->rate_interval_us;
	u32 min_rtt = tp->rtt_min.s[0].v;
	if (!interval || min_rtt == ~0U)
		return 0;
	return (u64)tp->rate_delivered * min_rtt / interval;
}

SEC("struct_ops/lfp_init")
void BPF_PROG(lfp_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk_of(sk);
	struct lfp *ca = lfp_of(sk);

	ca->epoch_start_us = tp->tcp_mstamp;
	ca->last_ack_us = 0;
	ca->stalled_us = 0;
	ca->acc = 0;
	ca->x = X_STD;
	ca->y = Y_STD;
	ca->pending_reset = 0;
	ca->bdp_max = 0;
}

/* Every ACK: the stall measure. */
SEC("struct_ops/lfp_in_ack_event")
void BPF_PROG(lfp_in_ack_event, struct sock *sk, u32 flags)
{
	struct tcp_sock *tp = tcp_sk_of(sk);
	struct lfp *ca = lfp_of(sk);
	u64 now = tp->tcp_mstamp;
	u32 srtt = tp->srtt_us >> 3;

	if (ca->last_ack_us && now > ca->last_ack_us + srtt)
		ca->stalled_us += now - ca->last_ack_us - srtt;
	ca->last_ack_us = now;
	if (LFP_ADAPTIVE) {
		u64 bdp = bdp_segs(tp);
		if (bdp > ca->bdp_max)
			ca->bdp_max = bdp > 0xffffffffull ? 0xffffffffu : (u32)bdp;
	}
}

/* At a loss: S over the epoch that ends here, and the study's steering. */
static __always_inline void adapt(struct sock *sk, struct lfp *ca, struct lfp_stats *st)
{
	struct tcp_sock *tp = tcp_sk_of(sk);
	u64 now = tp->tcp_mstamp;
	u64 elapsed = now > ca->epoch_start_us ? now - ca->epoch_start_us : 0;
	u64 stalled = ca->stalled_us < elapsed ? ca->stalled_us : elapsed;
	u32 s = elapsed ? (u32)(stalled * 1000 / elapsed) : 0;

	ca->epoch_start_us = now;
	ca->stalled_us = 0;
	if (st) {
		__sync_fetch_and_add(&st->stalled_us, stalled);
		__sync_fetch_and_add(&st->elapsed_us, elapsed);
		st->last_s_permille = s;
	}
	if (!LFP_ADAPTIVE)
		return;
	if (ca->bdp_max < SMALL_BDP_SEGS) {
		ca->x = X_STD;
		ca->y = Y_STD;
		if (st)
			__sync_fetch_and_add(&st->small_bdp, 1);
		return;
	}
	if (s >= S_STALLED_PERMILLE) {
		if (ca->y < Y_MAX) {
			ca->y *= 2;
			if (st)
				__sync_fetch_and_add(&st->raise_y, 1);
		} else if (ca->x < X_MAX) {
			ca->x++;
			if (st)
				__sync_fetch_and_add(&st->raise_x, 1);
		}
	} else if (s < S_QUIET_PERMILLE && (ca->x > X_STD || ca->y > Y_STD)) {
		if (ca->x > X_STD)
			ca->x--;
		else
			ca->y /= 2;
		if (st)
			__sync_fetch_and_add(&st->relax, 1);
	}
}

SEC("struct_ops/lfp_ssthresh")
u32 BPF_PROG(lfp_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk_of(sk);
	struct lfp *ca = lfp_of(sk);
	struct lfp_stats *st = stats();

	adapt(sk, ca, st);
	ca->pending_reset = 1;
	ca->acc = 0;
	if (st) {
		__sync_fetch_and_add(&st->losses, 1);
		st->last_x = ca->x;
		st->last_y = ca->y;
		if (ca->x > st->max_x)
			st->max_x = ca->x;
		if (ca->y > st->max_y)
			st->max_y = ca->y;
	}
	return max_u32(min_u32(tp->snd_cwnd / ca->x, window_segs(tp)), 2);
}

SEC("struct_ops/lfp_cong_avoid")
void BPF_PROG(lfp_cong_avoid, struct sock *sk, u32 ack, u32 acked)
{
	struct tcp_sock *tp = tcp_sk_of(sk);
	struct lfp *ca = lfp_of(sk);
	u32 cwnd = tp->snd_cwnd;

	if (ca->pending_reset) {
		ca->pending_reset = 0;
		cwnd = 1;
		struct lfp_stats *st = stats();
		if (st)
			__sync_fetch_and_add(&st->resets, 1);
	}
	if (cwnd < tp->snd_ssthresh) { /* slow start: +1 per segment, up to ssthresh */
		u32 room = tp->snd_ssthresh - cwnd;
		u32 step = acked < room ? acked : room;
		cwnd += step;
		acked -= step;
	}
	if (acked && cwnd) {
		/* avoidance: 1/cwnd + 1/y per segment, in 1/1024 segment */
		u32 inc = (acked << FRAC_SHIFT) / cwnd + (acked << FRAC_SHIFT) / ca->y;
		ca->acc += inc;
		cwnd += ca->acc >> FRAC_SHIFT;
		ca->acc &= (1u << FRAC_SHIFT) - 1;
	}
	tp->snd_cwnd = min_u32(max_u32(cwnd, 1), tp->snd_cwnd_clamp);
}

SEC("struct_ops/lfp_undo_cwnd")
u32 BPF_PROG(lfp_undo_cwnd, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk_of(sk);
	struct lfp *ca = lfp_of(sk);
	struct lfp_stats *st = stats();

	ca->pending_reset = 0;
	if (st)
		__sync_fetch_and_add(&st->undos, 1);
	return max_u32(tp->snd_cwnd, tp->prior_cwnd);
}

SEC(".struct_ops")
struct tcp_congestion_ops LFP_OPS = {
	.init = (void *)lfp_init,
	.in_ack_event = (void *)lfp_in_ack_event,
	.ssthresh = (void *)lfp_ssthresh,
	.cong_avoid = (void *)lfp_cong_avoid,
	.undo_cwnd = (void *)lfp_undo_cwnd,
	.name = LFP_NAME,
};
