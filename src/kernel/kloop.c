#define _GNU_SOURCE /* ppoll */
#include "kloop.h"

#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ask.h"
#include "wait.h"

#define K_MIN_FRAME 14u       /* an Ethernet header */
#define K_SLEEP_MAX_NS 1000000ull
#define K_PUNT_NAP_NS 50000ull   /* while punted frames await answers */
/* An output that refuses frames (K_REFUSED) is retried after a nap that
 * starts short (a driver's queue drains in microseconds) and doubles while
 * it keeps refusing (a veth whose peer is down refuses until it is up),
 * up to the longest sleep: an idle thread's wake-ups, not a spin. */
#define K_RETRY_MIN_NS 20000ull
#define K_CHECK_NS 100000000ull  /* the sockets asked whether their interfaces are there */
#define K_CHECK_SOON_NS 1000000ull /* ... after an error, at most this often (a down interface
				      * refuses every send) */

/* Receives one burst into the model, stamped with the time it was read:
 * after the receive call returned. A frame can reach the socket during
 * the call (a system call, microseconds), and stamped with a read from
 * before it, it would leave early by up to the call. */
static unsigned rx_burst(struct kloop *l, struct kdir *d)
{
	uint8_t *buf[K_BURST_MAX];
	uint32_t len[K_BURST_MAX];
	unsigned want = 0;
	while (want < l->burst && (buf[want] = kbuf_get(&l->pool)) != NULL)
		want++;
	uint8_t *data[K_BURST_MAX];
	for (unsigned i = 0; i < want; i++)
		data[i] = kbuf_data(buf[i]);
	unsigned k = want ? ksock_recv(d->in, data, K_FRAME_MAX, len, want) : 0;
	le_ns_t now = k ? kclock_now() : 0;
	for (unsigned i = 0; i < k; i++) {
		if (len[i] < K_MIN_FRAME || len[i] > K_FRAME_MAX) {
			/* A runt, or larger than a buffer (truncated): unusable.
			 * Counted at its real length, as received (ksock_recv). */
			d->ctr.rx++;
			d->ctr.rx_bytes += len[i];
			d->ctr.drop[DP_DROP_MALFORMED]++;
			kbuf_put(&l->pool, buf[i]);
			continue;
		}
		*kbuf_len(buf[i]) = len[i];
		d->ctr.rx++;
		d->ctr.rx_bytes += len[i];
		dp_model_slot_offer(&d->models, buf[i], len[i], now);
	}
	for (unsigned i = k; i < want; i++)
		kbuf_put(&l->pool, buf[i]);
	return k;
}

/* Sends pending frames; each sent one's emulation error is recorded. */
static unsigned send_pending(struct kloop *l, struct kdir *d)
{
	struct kdir_pending *p = &d->pending;
	if (p->count == 0)
		return 0;
	uint8_t *data[K_BURST_MAX];
	for (unsigned i = 0; i < p->count; i++)
		data[i] = kbuf_data(p->buf[p->first + i]);
	le_ns_t send_time = kclock_now();
	unsigned k = ksock_send(d->out, data, p->len + p->first, p->count);
	if (k)
		d->retry_ns = 0;
	for (unsigned i = 0; i < k; i++) {
		unsigned j = p->first + i;
		le_ns_t dl = p->deadline[j];
		le_hist_record(&d->error, send_time >= dl ? send_time - dl : 0);
		d->ctr.tx++;
		d->ctr.tx_bytes += p->len[j];
		kbuf_put(&l->pool, p->buf[j]);
	}
	p->first += k;
	p->count -= k;
	if (p->count == 0)
		p->first = 0;
	return k;
}

/* Moves due frames from the model into the (empty) pending buffer. */
static unsigned take_due(struct kloop *l, struct kdir *d, le_ns_t now)
{
	struct le_frame f[K_BURST_MAX];
	unsigned k = dp_model_slot_dequeue(&d->models, now, f, l->burst);
	for (unsigned i = 0; i < k; i++) {
		d->pending.buf[i] = f[i].handle;
		d->pending.len[i] = f[i].len;
		d->pending.deadline[i] = f[i].deadline;
	}
	d->pending.first = 0;
	d->pending.count = k;
	return k;
}

static unsigned dir_pass(struct kloop *l, struct kdir *d)
{
	le_ns_t now = kclock_now();
	dp_model_slot_poll(&d->models, now);
	unsigned moved = rx_burst(l, d);
	if (l->punt != NULL)
		moved += dp_punt_poll(l->punt, (enum le_direction)(d - l->dir), &d->models.swap, kclock_now());
	/* Frames the kernel did not take last time go first. */
	moved += send_pending(l, d);
	if (d->pending.count == 0 && take_due(l, d, kclock_now()))
		moved += send_pending(l, d);
	return moved;
}

void kloop_snapshot(struct kloop *l, struct kdir_snapshot out[LE_DIRS])
{
	for (int i = 0; i < LE_DIRS; i++) {
		struct kdir *d = &l->dir[i];
		out[i].ctr = d->ctr;
		uint64_t punt_held = 0;
		out[i].held = d->pending.count;
		dp_punt_counts(l->punt, (enum le_direction)i, &out[i].ctr, &punt_held);
		out[i].held += (unsigned)punt_held;
		out[i].npunt = dp_punt_status(l->punt, (enum le_direction)i, out[i].punt);
		out[i].error = d->error;
		dp_model_slot_snapshot(&d->models, &out[i].models);
		ksock_counters(d->in, &out[i].port_in);
		ksock_counters(d->out, &out[i].port_out);
	}
}

/* Nothing moved: sleep until shortly before the next deadline, or until a
 * frame arrives, at most K_SLEEP_MAX_NS. */
static void wait_for_work(struct kloop *l)
{
	le_ns_t next = UINT64_MAX;
	for (int i = 0; i < LE_DIRS; i++) {
		/* A direction whose output holds frames back cannot send the
		 * model's due ones either: its deadlines are no reason to wake
		 * (they made the wait zero, a spin until the output took a frame). */
		if (l->dir[i].pending.count)
			continue;
		le_ns_t x = le_swap_next_deadline(&l->dir[i].models.swap);
		if (x < next)
			next = x;
	}
	/* The policy linkemud's adaptive lcores use (plane/wait.h): sleep as
	 * soon as a pass moved nothing. */
	const struct dp_wait_policy pol = {.spin_ns = l->spin_ns, .idle_ns = 0, .max_nap_ns = K_SLEEP_MAX_NS};
	le_ns_t nap = dp_wait_nap(&pol, kclock_now(), next, 0);
	/* Answers from punted classes' processes are polled, not waited on:
	 * nap briefly while some are due. */
	if (l->punt != NULL && nap > K_PUNT_NAP_NS &&
	    dp_punt_held(l->punt, LE_DIR_A2B) + dp_punt_held(l->punt, LE_DIR_B2A) > 0)
		nap = K_PUNT_NAP_NS;
	if (nap == 0)
		return; /* within spin_ns of a deadline: poll again at once */
	struct pollfd pfd[2] = {{.fd = l->sock[0].fd, .events = POLLIN}, {.fd = l->sock[1].fd, .events = POLLIN}};
	for (int i = 0; i < LE_DIRS; i++) {
		struct kdir *d = &l->dir[i];
		if (d->pending.count == 0)
			continue;
		if (d->out->blocked == K_REFUSED) {
			/* Writable but refusing: POLLOUT would end every sleep at
			 * once. Retry after a nap instead. */
			d->retry_ns = d->retry_ns ? d->retry_ns * 2 : K_RETRY_MIN_NS;
			if (d->retry_ns > K_SLEEP_MAX_NS)
				d->retry_ns = K_SLEEP_MAX_NS;
			if (nap > d->retry_ns)
				nap = d->retry_ns;
		} else {
			/* The send buffer was full: wake when it has room. */
			pfd[d->out == &l->sock[0] ? 0 : 1].events |= POLLOUT;
		}
	}
	struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)nap};
	le_ns_t asleep = kclock_now();
	int n = ppoll(pfd, 2, &ts, NULL);
	if (n == 0 && l->spin_auto) { /* ended by its timer */
		le_ns_t woke = kclock_now();
		dp_spin_observe(&l->spin, woke > asleep + nap ? woke - asleep - nap : 0);
		l->spin_ns = l->spin.spin_ns;
	}
	if (n > 0 && ((pfd[0].revents | pfd[1].revents) & (POLLERR | POLLHUP | POLLNVAL)))
		l->suspect = 1;
}

/* Asks the sockets whether their interfaces are still there, when one
 * gave a reason to or every K_CHECK_NS. Nonzero (and `lost`) if one is
 * not; else tells on stderr when one went down or came back. */
static int check_sockets(struct kloop *l)
{
	le_ns_t now = kclock_now();
	int reason = l->suspect || l->sock[0].error || l->sock[1].error;
	if (now < l->checked_at + (reason ? K_CHECK_SOON_NS : K_CHECK_NS))
		return 0;
	l->checked_at = now;
	l->suspect = 0;
	for (int s = 0; s < 2; s++) {
		char why[120];
		if (ksock_lost(&l->sock[s], why, sizeof(why))) {
			snprintf(l->lost, sizeof(l->lost), "interface '%s' %s", l->sock[s].name, why);
			return -1;
		}
	}
	for (int s = 0; s < 2; s++)
		klink_note(&l->link[s], l->sock[s].name, klink_read(l->nl, l->sock[s].ifindex), now, stderr);
	return 0;
}

int kloop_run(struct kloop *l)
{
	l->lost[0] = '\0';
	l->checked_at = kclock_now();
	l->nl = klink_open();
	int rc = 0;
	while (!__atomic_load_n(l->stop, __ATOMIC_RELAXED)) {
		if (check_sockets(l)) {
			rc = -1;
			break;
		}
		unsigned moved = 0;
		for (int i = 0; i < LE_DIRS; i++)
			moved += dir_pass(l, &l->dir[i]);
		if (dp_ask_pending(&l->snap_req, &l->snap_done)) {
			kloop_snapshot(l, l->snap);
			dp_ask_answer(&l->snap_req, &l->snap_done);
		}
		if (moved == 0 && !l->busy_poll)
			wait_for_work(l);
	}
	if (l->nl >= 0)
		close(l->nl);
	l->nl = -1;
	return rc;
}

void kloop_shutdown(struct kloop *l, unsigned ms)
{
	le_ns_t give_up = kclock_now() + (le_ns_t)ms * 1000000ull;
	int done[LE_DIRS] = {0};
	/* Frames already due have left the model: sending them is the
	 * faithful ending. Both directions in turn, not one after the other:
	 * an output that takes nothing (a full send buffer) would otherwise
	 * spend the whole time and leave the other direction's due frames
	 * unsent, counted as shutdown. */
	for (le_ns_t now = kclock_now(); now < give_up; now = kclock_now()) {
		int left = 0;
		for (int i = 0; i < LE_DIRS; i++) {
			struct kdir *d = &l->dir[i];
			if (done[i])
				continue;
			if (d->pending.count == 0 && take_due(l, d, now) == 0) {
				done[i] = 1;
				continue;
			}
			send_pending(l, d);
			left = 1;
		}
		if (!left)
			break;
	}
	for (int i = 0; i < LE_DIRS; i++) {
		struct kdir *d = &l->dir[i];
		for (unsigned j = 0; j < d->pending.count; j++)
			kbuf_put(&l->pool, d->pending.buf[d->pending.first + j]);
		d->ctr.drop[DP_DROP_SHUTDOWN] += d->pending.count;
		d->pending.count = d->pending.first = 0;
		dp_model_slot_drain(&d->models);
		dp_punt_drain(l->punt, (enum le_direction)i);
	}
}
