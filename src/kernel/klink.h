/* Whether a port's interface can carry frames, as its flags say, and the
 * one line linkemuk prints on stderr when that changes: a user watching
 * it can tell why frames stopped (down, or no carrier) and for how long.
 *
 * Read by the forwarding thread where it already asks whether the
 * sockets' interfaces are there (kloop.c: after an error a socket
 * reported, and every 100 ms): nothing on the forwarding path. So a
 * change is seen within 100 ms, and the time told is as exact. */
#ifndef K_LINK_H
#define K_LINK_H

#include <stdio.h>

#include "le_time.h"

enum klink_state {
	K_LINK_UNKNOWN = 0,   /* not known (yet): no line */
	K_LINK_UP,            /* up and running */
	K_LINK_DOWN,          /* administratively down (ip link set down) */
	K_LINK_NO_CARRIER,    /* up, but its link is down (a veth: its peer is down) */
};

struct klink {
	enum klink_state state;  /* as last told */
	le_ns_t since;           /* when it was first seen not up */
};

/* A route netlink socket to ask with (-1 if none can be had: then every
 * state is unknown), of the calling thread's network namespace: the one
 * the interfaces were looked up in. */
int klink_open(void);
/* The state of interface `ifindex` (RTM_GETLINK's flags: IFF_UP, and
 * IFF_LOWER_UP for the carrier, which the kernel sets at once, where
 * IFF_RUNNING follows the operational state up to a second late);
 * K_LINK_UNKNOWN when it cannot be asked. By index, not name: a renamed
 * interface is still the one bound. */
enum klink_state klink_read(int nl, int ifindex);

/* Notes the state seen at `now`; on a change, one line to `out` naming
 * the interface (and, when it is up again, how long it was not). The
 * first state seen is told only when it is not up. */
void klink_note(struct klink *k, const char *name, enum klink_state seen, le_ns_t now, FILE *out);

#endif
