#include "paced_source.h"

#include <stdio.h>
#include <string.h>

#include <rte_mbuf.h>

#include "fastpath.h"

/* The rate and its fixed-point factors (pps in 1 .. 1e9). */
static void set_rate(struct dp_paced_source *s, uint64_t pps)
{
	s->pps = pps;
	/* pps < 1e9, so both fit 64 bits. */
	s->frames_per_ns_q64 = (uint64_t)(((unsigned __int128)pps << 64) / 1000000000u);
	s->ns_per_frame_q32 = (uint64_t)(((unsigned __int128)1000000000u << 32) / pps);
}

/* The frames of the wire that have arrived by `now`: floor(elapsed x
 * pps) + 1 (frame 0 arrives at start). */
static inline uint64_t arrived_by(const struct dp_paced_source *s, le_ns_t now)
{
	if (now < s->start)
		return 0;
	return (uint64_t)(((unsigned __int128)(now - s->start) * s->frames_per_ns_q64) >> 64) + 1;
}

/* The arrival time of frame k. */
static inline le_ns_t arrival_of(const struct dp_paced_source *s, uint64_t k)
{
	return s->start + (le_ns_t)(((unsigned __int128)k * s->ns_per_frame_q32) >> 32);
}

/* The RX callback: after the driver's (empty) receive, the frames that
 * arrived since the last poll, up to the room left in the caller's array. */
static uint16_t paced_rx(uint16_t port, uint16_t queue, struct rte_mbuf *pkts[], uint16_t nb, uint16_t max,
			 void *arg)
{
	struct dp_paced_source *s = arg;
	(void)queue;
	le_ns_t now = tsc_clock_now(s->clock);
	if (unlikely(!s->started)) {
		s->start = now;
		s->started = 1;
	}
	uint64_t waiting = arrived_by(s, now) - s->arrived;
	if (waiting > s->ring) {
		/* The ring held the first `ring` of them; later ones found it
		 * full. Dropping the newest or the oldest loses as many; the
		 * oldest go here so that the counters need no per-frame state
		 * (a NIC drops the newest: its ring keeps the older ones). */
		s->missed += waiting - s->ring;
		s->arrived += waiting - s->ring;
		waiting = s->ring;
	}
	unsigned room = max > nb ? (unsigned)(max - nb) : 0;
	if (room > DP_BURST_MAX)
		room = DP_BURST_MAX;
	unsigned n = waiting < room ? (unsigned)waiting : room;
	if (n == 0)
		return nb;
	/* No mbuf: the frames stay in the ring (a NIC that cannot refill its
	 * descriptors stops receiving; past `ring` they count as missed). */
	if (rte_pktmbuf_alloc_bulk(s->pool, &pkts[nb], n) != 0)
		return nb;
	le_ns_t arrival[DP_BURST_MAX];
	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[nb + i];
		m->data_len = DP_PACED_FRAME_LEN;
		m->pkt_len = DP_PACED_FRAME_LEN;
		m->port = port;
		arrival[i] = arrival_of(s, s->arrived + i);
	}
	le_hist_record_lateness(&s->wait, now, arrival, n);
	s->arrived += n;
	s->delivered += n;
	return (uint16_t)(nb + n);
}

int dp_paced_source_start(struct dp_paced_source *s, uint16_t port, uint64_t pps, uint32_t ring,
			  const struct tsc_clock *clock, struct rte_mempool *pool, char *err, size_t errlen)
{
	struct rte_eth_dev_info info;
	memset(s, 0, sizeof(*s));
	int rc = rte_eth_dev_info_get(port, &info);
	if (rc != 0) {
		snprintf(err, errlen, "--paced-source: port %u: %s", port, rte_strerror(-rc));
		return -1;
	}
	if (!info.driver_name || strcmp(info.driver_name, "net_null") != 0) {
		snprintf(err, errlen,
			 "--paced-source: port %u is %s, not net_null: the paced source replaces a port's receive "
			 "(give --vdev=net_null0,no-rx=1 --vdev=net_null1,no-rx=1)",
			 port, info.driver_name ? info.driver_name : "an unknown driver");
		return -1;
	}
	/* A net_null without no-rx=1 offers a full burst at every poll: the
	 * paced frames would come on top of an unpaced flood. */
	struct rte_mbuf *probe[8];
	uint16_t got = rte_eth_rx_burst(port, 0, probe, RTE_DIM(probe));
	if (got) {
		rte_pktmbuf_free_bulk(probe, got);
		snprintf(err, errlen,
			 "--paced-source: port %u (net_null) receives frames of its own: give it no-rx=1 "
			 "(--vdev=net_null%u,no-rx=1)",
			 port, port);
		return -1;
	}
	s->clock = clock;
	s->pool = pool;
	s->port = port;
	s->ring = ring;
	set_rate(s, pps);
	le_hist_init(&s->wait);
	s->cb = rte_eth_add_rx_callback(port, 0, paced_rx, s);
	if (!s->cb) {
		snprintf(err, errlen, "--paced-source: port %u: cannot add an RX callback: %s", port,
			 rte_strerror(rte_errno));
		return -1;
	}
	return 0;
}

void dp_paced_source_stop(struct dp_paced_source *s)
{
	if (!s->cb)
		return;
	/* DPDK keeps the callback's own record (it cannot know when no lcore
	 * still runs it); ours stays valid until the daemon exits. */
	(void)rte_eth_remove_rx_callback(s->port, 0, s->cb);
	s->cb = NULL;
}
