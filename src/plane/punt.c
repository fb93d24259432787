/* Punted classes' channels (see punt.h; the wire: punt_wire.h): the set,
 * taking frames and polling. The transports are punt_fifo.c and
 * punt_shm.c; the books they and this file keep are punt_books.c. */
#include "punt_chan.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

/* --- the set --------------------------------------------------------------- */

static void chan_free(struct chan *c)
{
	if (c == NULL)
		return;
	if (c->cfg.transport == LE_PUNT_FIFO)
		punt_fifo_close(c);
	else
		punt_shm_close(c);
	free(c);
}

void dp_punt_close(struct dp_punt_set *s)
{
	if (s == NULL)
		return;
	for (int d = 0; d < LE_DIRS; d++)
		for (unsigned i = 0; i < s->n[d]; i++)
			chan_free(s->ch[d][i]);
	free(s);
}

int dp_punt_open(struct dp_punt_set **out, const struct le_path_config cfg[LE_DIRS], const struct le_frame_ops *ops,
		 dp_punt_make_fn make, void *make_ctx, char *err, size_t errlen)
{
	struct dp_punt_set *s;
	char sub[LE_ERR_MAX];

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return le_err(err, errlen, "out of memory");
	s->ops = *ops;
	s->make = make;
	s->make_ctx = make_ctx;
	for (int d = 0; d < LE_DIRS; d++)
		for (unsigned k = 0; k < cfg[d].nclasses; k++) {
			const struct le_class_config *cc = &cfg[d].cls[k];
			struct chan *c;

			if (cc->punt.transport == LE_PUNT_NONE)
				continue;
			for (int e = 0; e <= d; e++)
				for (unsigned i = 0; i < s->n[e]; i++)
					if (s->ch[e][i]->cfg.transport == cc->punt.transport &&
					    strcmp(s->ch[e][i]->cfg.name, cc->punt.name) == 0) {
						le_err(err, errlen, "%s class %s: punt %s %s is used by %s class %s too; give each its own",
						       le_direction_name(d), cc->name, le_punt_transport_name(cc->punt.transport),
						       cc->punt.name, le_direction_name(e), s->ch[e][i]->st.cls);
						goto fail;
					}
			if (s->n[d] == DP_PUNT_MAX) {
				le_err(err, errlen, "%s class %s: more than %d punted classes in a direction",
				       le_direction_name(d), cc->name, DP_PUNT_MAX);
				goto fail;
			}
			c = calloc(1, sizeof(*c));
			if (c == NULL) {
				le_err(err, errlen, "out of memory");
				goto fail;
			}
			s->ch[d][s->n[d]++] = c;
			c->dir = (enum le_direction)d;
			c->cfg = cc->punt;
			c->next_seq = 1;
			c->shm_fd = c->fd_in = c->fd_out = -1;
			snprintf(c->st.cls, sizeof(c->st.cls), "%s", cc->name);
			c->st.transport = cc->punt.transport;
			snprintf(c->st.name, sizeof(c->st.name), "%s", cc->punt.name);
			if ((c->cfg.transport == LE_PUNT_FIFO ? punt_fifo_open(c, sub, sizeof(sub))
							      : punt_shm_open(c, sub, sizeof(sub))) < 0) {
				le_err(err, errlen, "%s class %s: punt %s %s: %s", le_direction_name(d), cc->name,
				       le_punt_transport_name(cc->punt.transport), cc->punt.name, sub);
				goto fail;
			}
		}
	if (s->n[0] + s->n[1] == 0) {
		free(s);
		return 0;
	}
	/* A process that closes its end must not kill the daemon: writes
	 * then fail with EPIPE, which is how we notice. */
	signal(SIGPIPE, SIG_IGN);
	*out = s;
	return 0;
fail:
	dp_punt_close(s);
	return -1;
}

int dp_punt_accepts(const struct dp_punt_set *s, enum le_direction dir, const struct le_path_config *cfg,
		    char *err, size_t errlen)
{
	for (unsigned k = 0; k < cfg->nclasses; k++) {
		const struct le_class_config *cc = &cfg->cls[k];
		const struct chan *c = NULL;

		if (cc->punt.transport == LE_PUNT_NONE)
			continue;
		for (unsigned i = 0; s != NULL && i < s->n[dir] && c == NULL; i++)
			if (s->ch[dir][i]->cfg.transport == cc->punt.transport &&
			    strcmp(s->ch[dir][i]->cfg.name, cc->punt.name) == 0)
				c = s->ch[dir][i];
		if (c == NULL)
			return le_err(err, errlen,
				      "class %s: punt %s %s: no such channel was opened at start (channels are made "
				      "when the daemon starts: restart it to add one)",
				      cc->name, le_punt_transport_name(cc->punt.transport), cc->punt.name);
		if (strcmp(c->st.cls, cc->name) != 0)
			return le_err(err, errlen, "class %s: punt %s %s: the channel belongs to class %s",
				      cc->name, le_punt_transport_name(cc->punt.transport), cc->punt.name, c->st.cls);
	}
	return 0;
}

void dp_punt_bind(struct dp_punt_set *s, struct le_frame_ops *ops)
{
	if (s == NULL)
		return;
	ops->punt = dp_punt_take;
	ops->punt_ctx = s;
}

static struct chan *find(struct dp_punt_set *s, enum le_direction dir, const struct le_punt_config *pc)
{
	for (unsigned i = 0; i < s->n[dir]; i++) {
		struct chan *c = s->ch[dir][i];
		if (c->cfg.transport == pc->transport && strcmp(c->cfg.name, pc->name) == 0)
			return c;
	}
	return NULL;
}

void dp_punt_take(void *sv, const struct le_path *p, unsigned cls, void *handle, uint32_t len, le_ns_t arrival)
{
	struct dp_punt_set *s = sv;
	struct chan *c = find(s, p->dir, &p->cfg.cls[cls - 1].punt);
	uint32_t clen = 0;
	const uint8_t *b;

	(void)arrival;
	if (c == NULL) {
		if (!s->orphan_said[p->dir]++)
			fprintf(stderr, "punt %s class %s: no channel %s %s was opened at start; its frames are counted punt_down\n",
				le_direction_name(p->dir), p->cfg.cls[cls - 1].name,
				le_punt_transport_name(p->cfg.cls[cls - 1].punt.transport), p->cfg.cls[cls - 1].punt.name);
		s->orphan[p->dir]++;
		goto drop;
	}
	if (!c->st.up) {
		c->st.down++;
		goto drop;
	}
	b = s->ops.bytes(s->ops.ctx, handle, &clen);
	if (b == NULL || clen < len || len > PUNT_FRAME_MAX) {
		c->st.full++; /* a frame the channel cannot carry in one piece */
		goto drop;
	}
	if (c->cfg.transport == LE_PUNT_FIFO) {
		if (c->wlen + PUNT_HDR_LEN + len > PACK && punt_fifo_flush(c) < 0) {
			c->st.down++;
			goto drop; /* gone: noticed at the next check */
		}
		punt_fifo_queue(c, b, len);
	} else {
		if (punt_shm_queue(c, b, len) < 0) {
			c->st.full++;
			goto drop;
		}
	}
drop:
	s->ops.free(s->ops.ctx, handle); /* copied out, or dropped and counted */
}

unsigned dp_punt_poll(struct dp_punt_set *s, enum le_direction dir, struct le_swap *swap, le_ns_t now)
{
	unsigned got = 0;

	for (unsigned i = 0; i < s->n[dir]; i++) {
		struct chan *c = s->ch[dir][i];

		if (c->cfg.transport == LE_PUNT_FIFO) {
			if (c->st.up && punt_fifo_flush(c) < 0)
				punt_fifo_gone(s, c, swap, now, 1, "writing PATH.out failed: EPIPE");
		} else {
			punt_shm_publish(c);
		}
		if (now >= c->next_check) {
			c->next_check = now + CHECK_NS;
			if (c->cfg.transport == LE_PUNT_FIFO)
				punt_fifo_check(s, c, swap, now);
			else
				punt_shm_check(s, c, swap, now);
		}
		if (!c->st.up)
			continue;
		if (c->cfg.transport == LE_PUNT_SHM) {
			got += punt_shm_read(s, c, swap, now);
		} else if (punt_held(c) || c->rb->have > c->rb->off || now >= c->next_read) {
			c->next_read = now + IDLE_READ_NS;
			got += punt_fifo_read(s, c, swap, now);
			if (c->broken)
				punt_fifo_gone(s, c, swap, now, 0, "it sent a record that is not the protocol");
		}
	}
	return got;
}

void dp_punt_counts(const struct dp_punt_set *s, enum le_direction dir, struct dp_counters *ctr, uint64_t *held_out)
{
	uint64_t h = 0;

	if (s == NULL)
		return;
	ctr->drop[DP_DROP_PUNT_DOWN] += s->orphan[dir];
	for (unsigned i = 0; i < s->n[dir]; i++) {
		const struct chan *c = s->ch[dir][i];

		ctr->drop[DP_DROP_PUNT_FULL] += c->st.full;
		ctr->drop[DP_DROP_PUNT_DOWN] += c->st.down;
		ctr->drop[DP_DROP_PUNT_DROPPED] += c->st.dropped;
		ctr->drop[DP_DROP_SHUTDOWN] += c->shutdown;
		ctr->injected += c->st.injected;
		h += punt_held(c);
	}
	*held_out += h;
}

uint64_t dp_punt_held(const struct dp_punt_set *s, enum le_direction dir)
{
	uint64_t h = 0;

	for (unsigned i = 0; s != NULL && i < s->n[dir]; i++)
		h += punt_held(s->ch[dir][i]);
	return h;
}

unsigned dp_punt_status(const struct dp_punt_set *s, enum le_direction dir, struct dp_punt_status *out)
{
	if (s == NULL)
		return 0;
	for (unsigned i = 0; i < s->n[dir]; i++) {
		out[i] = s->ch[dir][i]->st;
		out[i].held = punt_held(s->ch[dir][i]);
	}
	return s->n[dir];
}

void dp_punt_drain(struct dp_punt_set *s, enum le_direction dir)
{
	if (s == NULL)
		return;
	for (unsigned i = 0; i < s->n[dir]; i++) {
		struct chan *c = s->ch[dir][i];

		c->shutdown += punt_held(c);
		c->settled = c->next_seq - 1;
	}
}
