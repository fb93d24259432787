/* Drop-cause and event names, counter arithmetic; see counters.h. */
#include "counters.h"

/* Part of the JSON and control-protocol vocabulary: never rename. */
static const char *const cause_names[LE_DROP_CAUSES] = {
	[LE_DROP_LOSS] = "loss",
	[LE_DROP_QUEUE_FULL] = "queue_full",
	[LE_DROP_SHUTDOWN] = "shutdown",
	[LE_DROP_QUEUE_HEAD] = "queue_head",
	[LE_DROP_CODEL] = "codel",
	[LE_DROP_STALLED] = "stalled",
};

static const char *const event_names[LE_EVENTS] = {
	[LE_EVENT_DUP_FAILED] = "dup_failed",
	[LE_EVENT_CORRUPTED] = "corrupted",
	[LE_EVENT_ECN_MARKED] = "ecn_marked",
	[LE_EVENT_CODEL_MARKED] = "codel_marked",
	[LE_EVENT_REORDERED] = "reordered",
	[LE_EVENT_LATE_ARRIVAL] = "late_arrival",
};

const char *le_drop_cause_name(enum le_drop_cause c)
{
	if ((unsigned)c >= LE_DROP_CAUSES)
		return "unknown";
	return cause_names[c];
}

const char *le_event_name(enum le_event e)
{
	if ((unsigned)e >= LE_EVENTS)
		return "unknown";
	return event_names[e];
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
	dst->dup += src->dup;
	for (unsigned i = 0; i < LE_EVENTS; i++)
		dst->event[i] += src->event[i];
}

void le_counters_sub(struct le_counters *dst, const struct le_counters *src)
{
	dst->rx -= src->rx;
	dst->tx -= src->tx;
	dst->rx_bytes -= src->rx_bytes;
	dst->tx_bytes -= src->tx_bytes;
	for (unsigned i = 0; i < LE_DROP_CAUSES; i++)
		dst->drop[i] -= src->drop[i];
	dst->dup -= src->dup;
	for (unsigned i = 0; i < LE_EVENTS; i++)
		dst->event[i] -= src->event[i];
}

int le_counters_conserved(const struct le_counters *c, uint64_t in_flight)
{
	return c->rx + c->dup == c->tx + le_counters_dropped(c) + in_flight;
}
