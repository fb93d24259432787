/* Serialization time; see rate.h. */
#include "rate.h"

le_ns_t le_rate_packet_time(const struct le_rate_config *r, uint32_t len)
{
	int64_t bytes = (int64_t)len + r->packet_overhead;
	unsigned __int128 t;

	if (bytes < 0)
		bytes = 0;
	if (r->cell_size) {
		int64_t cells = (bytes + r->cell_size - 1) / r->cell_size;
		int64_t per = (int64_t)r->cell_size + r->cell_overhead;
		bytes = cells * (per < 0 ? 0 : per);
	}
	t = (unsigned __int128)(uint64_t)bytes * 8u * LE_NS_PER_S / r->bps;
	return t > UINT64_MAX ? UINT64_MAX : (le_ns_t)t;
}
