/* Time in the link model: nanoseconds since an arbitrary epoch, as uint64.
 *
 * The model never reads a clock; every call is given `now`. The data plane
 * converts TSC cycles to nanoseconds; tests drive virtual time by hand. */
#ifndef LE_TIME_H
#define LE_TIME_H

#include <stdint.h>

typedef uint64_t le_ns_t;

#define LE_NS_PER_US 1000ULL
#define LE_NS_PER_MS 1000000ULL
#define LE_NS_PER_S  1000000000ULL

#endif
