/* How a data plane's forwarding thread waits when it has nothing to do:
 * the policy both planes share (linkemud's lcores, linkemuk's thread).
 *
 *   busy      poll without pause: one CPU at 100 %, the best precision.
 *   adaptive  after `idle_ns` without a frame moved, sleep until `spin_ns`
 *             before the next deadline the model knows of, at most
 *             `max_nap_ns`, waking early when a frame arrives (where the
 *             port can signal it); then poll until the deadline, so a
 *             frame still leaves on time when the wake-up is late by less
 *             than spin_ns.
 *
 * This file is the decision only (pure, unit-tested in virtual time); how
 * a thread sleeps and what wakes it belongs to its plane (dataplane/wait.c,
 * kernel/kloop.c). */
#ifndef DP_WAIT_H
#define DP_WAIT_H

#include <stdint.h>

#include "le_time.h"

enum dp_wait_mode {
	DP_WAIT_BUSY = 0,
	DP_WAIT_ADAPTIVE,
};

/* linkemud's default, from the measurements in docs/performance.md. */
#define DP_WAIT_DEFAULT_MODE DP_WAIT_BUSY
#define DP_WAIT_DEFAULT_IDLE_US 0u
#define DP_WAIT_MAX_US 1000000u

/* A sleep shorter than this costs about what it saves (a timer, two
 * context switches, a wake-up of tens of us on a VM): spin instead. */
#define DP_WAIT_MIN_NAP_NS (10 * LE_NS_PER_US)

struct dp_wait_policy {
	le_ns_t spin_ns;     /* wake this long before a deadline, then poll (the
			      * learned spin's starting value when spin_auto) */
	int spin_auto;       /* the loop learns spin_ns from its wake-ups (spin_learn.h) */
	le_ns_t idle_ns;     /* sleep only after this long without a frame moved */
	le_ns_t max_nap_ns;  /* longest sleep: bounds how late a control request or a
			      * frame the port cannot signal is seen */
};

const char *dp_wait_mode_name(enum dp_wait_mode m);
/* 0 and *out set, or -1 for a name that is not a mode. */
int dp_wait_mode_parse(const char *s, enum dp_wait_mode *out);

/* How long the thread may sleep from `now`: 0 means poll again at once.
 * next_deadline: the earliest time the model has work (UINT64_MAX: none);
 * last_busy: when the thread last moved a frame. */
le_ns_t dp_wait_nap(const struct dp_wait_policy *p, le_ns_t now, le_ns_t next_deadline, le_ns_t last_busy);

#endif
