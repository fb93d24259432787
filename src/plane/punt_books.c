/* The books of a punted class's channel: what was sent to its process,
 * what came back, what the process dropped or took with it when it went
 * away. The set (punt.c) and both transports (punt_fifo.c, punt_shm.c)
 * call these; they call none of them, so the three sit on top of it. */
#include "punt_chan.h"

#include <stdio.h>

void punt_say(const struct chan *c, const char *what)
{
	fprintf(stderr, "punt %s class %s (%s %s): %s\n", le_direction_name(c->dir), c->st.cls,
		le_punt_transport_name(c->cfg.transport), c->cfg.name, what);
	fflush(stderr);
}

uint64_t punt_held(const struct chan *c)
{
	return c->next_seq - 1 - c->settled;
}

/* --- the books ------------------------------------------------------------ */

/* An answer (or notice) with seq `seq`: 1 when the frame answers one sent,
 * 0 when it is a new frame, -1 for a len-0 notice (no frame). Earlier
 * unanswered frames are the process's drops. */
static int settle(struct chan *c, uint64_t seq, uint32_t len)
{
	int in_window = seq > c->settled && seq < c->next_seq;

	if (len == 0) {
		if (in_window) {
			c->st.dropped += seq - c->settled;
			c->settled = seq;
		}
		return -1;
	}
	if (in_window) {
		c->st.dropped += seq - c->settled - 1;
		c->settled = seq;
		c->st.returned++;
		return 1;
	}
	c->st.injected++;
	return 0;
}

/* Takes one record the process sent into the class's link. */
void punt_deliver(struct dp_punt_set *s, struct chan *c, struct le_swap *swap, const struct punt_hdr *h,
		    const uint8_t *frame, le_ns_t now)
{
	void *m;

	if (settle(c, h->seq, h->len) < 0)
		return;
	m = s->make(s->make_ctx, frame, h->len);
	if (m == NULL) {
		c->st.full++;
		return;
	}
	if (le_swap_offer_named(swap, c->st.cls, &c->cache, m, h->len, now) < 0) {
		/* the class is gone (a live change removed it) */
		s->ops.free(s->ops.ctx, m);
		c->st.dropped++;
	}
}

/* The process went away: what it held is lost with it. */
void punt_lost(struct chan *c, const char *why)
{
	char msg[160];
	uint64_t n = punt_held(c);

	c->st.down += n;
	c->settled = c->next_seq - 1;
	c->st.up = 0;
	c->st.peer_pid = 0;
	c->st.peers_lost++;
	snprintf(msg, sizeof(msg), "process went away (%s); %llu frame(s) lost with it; waiting for a new one", why,
		 (unsigned long long)n);
	punt_say(c, msg);
}
