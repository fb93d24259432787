/* One direction of the link: the stages of DESIGN.md §2 in order
 * (loss -> queue limit -> delay), with the model's own accounting. */
#include "link.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

const char *le_direction_name(enum le_direction d)
{
	switch (d) {
	case LE_DIR_A2B:
		return "a2b";
	case LE_DIR_B2A:
		return "b2a";
	default:
		return "unknown";
	}
}

int le_link_init(struct le_link *l, const struct le_link_config *cfg, enum le_direction dir,
		 uint64_t default_seed, uint32_t capacity, char *err, size_t errlen)
{
	memset(l, 0, sizeof(*l));
	if (cfg->limit < 1 || cfg->limit > LE_MAX_LIMIT) {
		set_err(err, errlen, "limit %u is out of range (1 .. %u)", (unsigned)cfg->limit,
			LE_MAX_LIMIT);
		return -1;
	}
	if (cfg->delay > LE_MAX_DELAY_NS) {
		set_err(err, errlen, "delay %llu ns is out of range (max 3600s)",
			(unsigned long long)cfg->delay);
		return -1;
	}
	/* The line must hold `limit` frames, so the queue limit, not the
	 * line's size, is what decides queue_full drops. */
	if (capacity < cfg->limit) {
		set_err(err, errlen, "capacity %u is below the link's limit %u", (unsigned)capacity,
			(unsigned)cfg->limit);
		return -1;
	}
	if (le_delay_line_init(&l->line, capacity) < 0) {
		set_err(err, errlen, "cannot allocate a delay line for %u frames", (unsigned)capacity);
		return -1;
	}
	l->cfg = *cfg;
	l->direction = (uint32_t)dir;
	l->seed = cfg->seed_set ? cfg->seed : default_seed;
	le_loss_init(&l->loss, l->seed, l->direction);
	return 0;
}

void le_link_free(struct le_link *l)
{
	le_delay_line_free(&l->line);
}

int le_link_enqueue(struct le_link *l, void *handle, uint32_t len, le_ns_t arrival,
		    enum le_drop_cause *cause)
{
	struct le_frame f;

	l->ctr.rx++;
	l->ctr.rx_bytes += len;

	if (le_loss_decide(&l->loss, &l->cfg.loss)) {
		*cause = LE_DROP_LOSS;
		goto drop;
	}
	/* push cannot fail while capacity >= limit (checked at init); treat
	 * it as a full queue anyway rather than lose the frame silently. */
	f.handle = handle;
	f.len = len;
	f.arrival = arrival;
	/* Saturate: a deadline that wrapped would send the frame at once. */
	f.deadline = arrival > UINT64_MAX - l->cfg.delay ? UINT64_MAX : arrival + l->cfg.delay;
	if (l->line.count >= l->cfg.limit || le_delay_line_push(&l->line, &f) < 0) {
		*cause = LE_DROP_QUEUE_FULL;
		goto drop;
	}
	return 0;

drop:
	l->ctr.drop[*cause]++;
	return -1;
}

static void count_tx(struct le_link *l, const struct le_frame *out, unsigned n)
{
	l->ctr.tx += n;
	for (unsigned i = 0; i < n; i++)
		l->ctr.tx_bytes += out[i].len;
}

unsigned le_link_dequeue(struct le_link *l, le_ns_t now, struct le_frame *out, unsigned max)
{
	unsigned n = le_delay_line_pop_due(&l->line, now, out, max);

	count_tx(l, out, n);
	return n;
}

unsigned le_link_drain(struct le_link *l, struct le_frame *out, unsigned max)
{
	unsigned n = le_delay_line_pop_any(&l->line, out, max);

	count_tx(l, out, n);
	return n;
}

le_ns_t le_link_next_deadline(const struct le_link *l)
{
	return le_delay_line_next_deadline(&l->line);
}

uint32_t le_link_depth(const struct le_link *l)
{
	return l->line.count;
}
