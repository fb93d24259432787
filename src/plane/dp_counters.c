#include "dp_counters.h"

static const char *const names[DP_DROP_CAUSES] = {
	[DP_DROP_RING_FULL] = "ring_full",
	[DP_DROP_MALFORMED] = "malformed",
	[DP_DROP_SHUTDOWN] = "shutdown",
	[DP_DROP_PUNT_FULL] = "punt_full",
	[DP_DROP_PUNT_DOWN] = "punt_down",
	[DP_DROP_PUNT_DROPPED] = "punt_dropped",
};

const char *dp_drop_cause_name(enum dp_drop_cause c)
{
	return (unsigned)c < DP_DROP_CAUSES ? names[c] : "unknown";
}

uint64_t dp_counters_dropped(const struct dp_counters *c)
{
	uint64_t n = 0;
	for (int k = 0; k < DP_DROP_CAUSES; k++)
		n += c->drop[k];
	return n;
}

void dp_counters_add(struct dp_counters *dst, const struct dp_counters *src)
{
	dst->rx += src->rx;
	dst->tx += src->tx;
	dst->rx_bytes += src->rx_bytes;
	dst->tx_bytes += src->tx_bytes;
	dst->injected += src->injected;
	for (int k = 0; k < DP_DROP_CAUSES; k++)
		dst->drop[k] += src->drop[k];
}

void dp_counters_sub(struct dp_counters *dst, const struct dp_counters *src)
{
	dst->rx -= src->rx;
	dst->tx -= src->tx;
	dst->rx_bytes -= src->rx_bytes;
	dst->tx_bytes -= src->tx_bytes;
	dst->injected -= src->injected;
	for (int k = 0; k < DP_DROP_CAUSES; k++)
		dst->drop[k] -= src->drop[k];
}
