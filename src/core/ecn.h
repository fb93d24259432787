/* ECN marking: sets Congestion Experienced on an ECN-capable IPv4 or
 * IPv6 frame (Linux INET_ECN_set_ce, used by netem's `ecn` and CoDel's).
 *
 * ECT(0) and ECT(1) become CE; a frame already CE counts as marked (as in
 * Linux); a Not-ECT frame, a non-IP frame or one whose IP header is not
 * in the contiguous bytes is not marked (and is then dropped by the
 * caller). The IPv4 header checksum is updated incrementally (RFC 1624,
 * eqn. 3: HC' = ~(~HC + ~m + m')); IPv6 has no header checksum, and
 * transport checksums do not cover the ECN bits. */
#ifndef LE_ECN_H
#define LE_ECN_H

#include <stdint.h>

/* 1 when the frame is (now) CE, 0 when it is not ECN-capable. */
int le_ecn_set_ce(uint8_t *frame, uint32_t len);

/* RFC 1624 incremental update of a one's complement checksum for a
 * 16-bit word changing from old to new (exposed for tests). */
uint16_t le_csum_update16(uint16_t check, uint16_t old, uint16_t new_);

#endif
