/* Drop-cause names and counter arithmetic; see counters.h. */
#include "counters.h"

/* Part of the JSON and control-protocol vocabulary: never rename. */
static const char *const cause_names[LE_DROP_CAUSES] = {
	[LE_DROP_LOSS] = "loss",
	[LE_DROP_QUEUE_FULL] = "queue_full",
	[LE_DROP_RING_FULL] = "ring_full",
	[LE_DROP_TX_REFUSED] = "tx_refused",
	[LE_DROP_SHUTDOWN] = "shutdown",
	[LE_DROP_MALFORMED] = "malformed",
};

const char *le_drop_cause_name(enum le_drop_cause c)
{
	if ((unsigned)c >= LE_DROP_CAUSES)
		return "unknown";
	return cause_names[c];
}

uint64_t le_counters_dropped(const struct le_counters *c)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < LE_DROP_CAUSES; i++)
		n += c->drop[i];
	return n;
}

void le_counters_add(struct le_counters *dst, const struct le_counters *src)
{
	dst->rx += src->rx;
	dst->tx += src->tx;
	dst->rx_bytes += src->rx_bytes;
	dst->tx_bytes += src->tx_bytes;
	for (unsigned i = 0; i < LE_DROP_CAUSES; i++)
		dst->drop[i] += src->drop[i];
}
