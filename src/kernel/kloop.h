/* The kernel-socket data plane's forwarding thread: both directions, run
 * to completion, like linkemud's `single` layout.
 *
 *   per pass, per direction:  sock_in --recvmmsg--> model (arrival = now)
 *                             model --due frames--> pending --sendmmsg--> sock_out
 *
 * Time is CLOCK_MONOTONIC in ns (the model's clock). When a pass moved
 * nothing, the thread sleeps in ppoll() on both sockets until shortly
 * before the next deadline (spin_ns early, timer slack 1 ns) and then
 * polls until it; with busy_poll it never sleeps. A sleep never exceeds
 * 1 ms, so control requests (snapshots, live changes) are served within
 * about a millisecond even on an idle link.
 *
 * An interface that can carry no more frames (deleted: ksock_lost) ends
 * the loop by itself: forwarding on with one side gone would only count
 * frames into the void, and a socket that polls as hung up would make
 * every sleep return at once. The sockets are checked after any error
 * they report, at most every K_CHECK_SOON_NS, and every K_CHECK_NS
 * regardless (a device deleted while down reports nothing). The same
 * checks see an interface go down or lose its carrier and come back, and
 * say so on stderr, one line per change (klink.h). */
#ifndef K_LOOP_H
#define K_LOOP_H

#include <stdint.h>
#include <time.h>

#include "dp_counters.h"
#include "hist.h"
#include "kbuf.h"
#include "klink.h"
#include "ksock.h"
#include "model_slot.h"
#include "port_counters.h"
#include "punt.h"
#include "spin_learn.h"

#define K_BURST_MAX 512u

struct kdir_pending {
	uint8_t *buf[K_BURST_MAX];
	uint32_t len[K_BURST_MAX];
	le_ns_t deadline[K_BURST_MAX];
	unsigned first, count;
};

struct kdir {
	struct ksock *in, *out;
	struct dp_model_slot models;
	struct dp_counters ctr;       /* rx, tx, bytes, data-plane drops */
	struct le_hist error;         /* emulation error: send time - deadline */
	struct kdir_pending pending;  /* due, not yet taken by the kernel */
	le_ns_t retry_ns;             /* the output refuses (K_REFUSED): next nap before a retry */
};

/* A direction's counts as of one pass boundary (the thread copies them). */
struct kdir_snapshot {
	struct dp_counters ctr;
	unsigned held;                /* pending */
	struct le_hist error;
	struct dp_model_slot_snapshot models;
	struct dp_port_counters port_in, port_out;
	unsigned npunt;
	struct dp_punt_status punt[DP_PUNT_MAX];
};

struct kloop {
	struct kdir dir[LE_DIRS];
	struct ksock sock[2];         /* 0: side A, 1: side B */
	struct kbuf_pool pool;
	unsigned burst;
	le_ns_t spin_ns;              /* fixed, or learned from the sleeps when spin_auto */
	int spin_auto;
	struct dp_spin_learner spin;
	int busy_poll;
	struct dp_punt_set *punt;     /* punted classes' channels; NULL: none */
	const volatile int *stop;
	le_ns_t checked_at;           /* the sockets' last ksock_lost */
	int suspect;                  /* ppoll reported an error or a hang-up */
	char lost[160];               /* why kloop_run ended by itself; "" if it did not */
	struct klink link[2];         /* the sockets' interfaces: up, down, no carrier (told on stderr) */
	int nl;                       /* to ask for their state (klink_open), while kloop_run runs */
	/* Snapshot on request (ask.h). */
	uint64_t snap_req, snap_done;
	struct kdir_snapshot snap[LE_DIRS];
};

static inline le_ns_t kclock_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (le_ns_t)ts.tv_sec * 1000000000ull + (le_ns_t)ts.tv_nsec;
}

/* Forwards until *stop (0), or until an interface is lost (-1; `lost`
 * says which and how). Either way kloop_shutdown then ends it. */
int kloop_run(struct kloop *l);
/* The forwarding thread, or anyone once it stopped. */
void kloop_snapshot(struct kloop *l, struct kdir_snapshot out[LE_DIRS]);
/* After the stop: sends what is already due (for up to `ms`), then frees
 * everything else, counted as `shutdown` drops. */
void kloop_shutdown(struct kloop *l, unsigned ms);

#endif
