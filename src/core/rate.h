/* Rate: serialization time of a frame, netem's arithmetic
 * (sch_netem.c packet_time_ns):
 *     bytes = len + PACKETOVERHEAD
 *     with CELLSIZE: bytes = ceil(bytes / CELLSIZE) * (CELLSIZE + CELLOVERHEAD)
 *     time  = floor(bytes * 8 * 10^9 / rate_in_bit_per_s) ns
 * netem keeps the rate in bytes/s (tc divides by 8); in bit/s the result
 * is the same whenever the rate is a whole number of bytes/s, and exact
 * when it is not. A negative byte count (a negative overhead larger than
 * the frame) counts as 0. Back-to-back frames leave exactly these times
 * apart: the serializer starts a frame at max(its arrival, the end of the
 * frame before). */
#ifndef LE_RATE_H
#define LE_RATE_H

#include <stdint.h>

#include "config.h"

le_ns_t le_rate_packet_time(const struct le_rate_config *r, uint32_t len);

#endif
