/* One link (link.h): its set-up from a configuration. The model, the
 * stages of DESIGN.md section 2 in order with the link's own accounting
 * and virtual clock, is in link_stages.c (frame by frame) and
 * link_burst.c (bursts as blocks); frames leave it in link_take.c, and
 * link_change.c makes a link continue another (a live change). */
#include "link.h"

#include <stdio.h>
#include <string.h>

#include "err.h"

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

/* Room the delay line needs: every held frame, plus due frames the data
 * plane has not taken yet (a poll's worth, normally). */
static uint64_t line_capacity(uint32_t limit)
{
	uint64_t slack = limit / 8 > 1024 ? limit / 8 : 1024;
	return (uint64_t)limit + slack;
}

/* A link without serializer or per-frame chance (offer_drawn). */
static int config_stageless(const struct le_link_config *cfg)
{
	return !le_config_has_queue(cfg) && !cfg->duplicate_set && cfg->loss.model == LE_LOSS_NONE && !cfg->corrupt_set;
}

/* ... and without jitter or reordering: a fixed delay, 0 too, and nothing
 * else (offer_plain). */
static int config_plain(const struct le_link_config *cfg)
{
	return config_stageless(cfg) && !cfg->jitter && !cfg->reorder_set;
}

/* An ordered line's wheel spans the delay and four jitters beyond it, so
 * only the rare tail of a jitter distribution waits in its overflow (the
 * sum cannot wrap: check_config bounds both to an hour). */
static int init_line(struct le_delay_line *d, const struct le_link_config *cfg, uint32_t capacity)
{
	/* A fixed delay (0 too) without serializer: frames arriving together
	 * share their deadline, and the runs form keeps them in a third of
	 * the bytes and moves them as blocks. Without delay the burst is due
	 * at once and still one run, but for the frames of its last turn
	 * (offer_plain, offer_chances): the unimpaired link cost a fifth fewer
	 * instructions a frame than slots built and taken one by one. */
	if (!le_config_has_queue(cfg) && !cfg->jitter && !cfg->reorder_set)
		return le_delay_line_init_runs(d, capacity);
	if (!le_config_reorders(cfg))
		return le_delay_line_init(d, capacity);
	return le_delay_line_init_ordered(d, capacity, cfg->delay + 4 * cfg->jitter);
}

/* --- init ----------------------------------------------------------------- */

static int check_config(const struct le_link_config *cfg, char *err, size_t errlen)
{
	if (cfg->limit < 1 || cfg->limit > LE_MAX_LIMIT) {
		le_err(err, errlen, "limit %u is out of range (1 .. %u)", (unsigned)cfg->limit, LE_MAX_LIMIT);
		return -1;
	}
	if (cfg->delay > LE_MAX_DELAY_NS || cfg->jitter > LE_MAX_DELAY_NS) {
		le_err(err, errlen, "delay %llu ns is out of range (max 3600s)",
			(unsigned long long)(cfg->delay > cfg->jitter ? cfg->delay : cfg->jitter));
		return -1;
	}
	if (cfg->trace.enabled && cfg->rate.bps) {
		le_err(err, errlen, "trace and rate both set the link's serializer: give one");
		return -1;
	}
	return 0;
}

static int check_ops(const struct le_link_config *c, const struct le_frame_ops *ops, char *err,
		     size_t errlen)
{
	const char *what = NULL;

	if (ops == NULL || ops->free == NULL)
		what = "free (every link can drop frames)";
	else if (c->duplicate_set && ops->clone == NULL)
		what = "clone (duplicate)";
	else if ((c->corrupt_set || c->ecn || (c->codel.enabled && c->codel.ecn)) && ops->bytes == NULL)
		what = "bytes (corrupt, ecn)";
	if (what == NULL)
		return 0;
	le_err(err, errlen, "the frame operations lack %s", what);
	return -1;
}

static int init_common(struct le_link *l, const struct le_link_config *cfg, enum le_direction dir,
		       uint32_t cls, uint64_t default_seed, uint64_t capacity, char *err, size_t errlen)
{
	char sub[LE_ERR_MAX];

	l->cfg = *cfg;
	l->direction = (uint32_t)dir;
	l->cls = cls;
	l->seed = cfg->seed_set ? cfg->seed : default_seed;
	le_loss_init_class(&l->loss, l->seed, l->direction, cls);
	le_chance_init(&l->dup, l->seed, l->direction, cls, LE_STREAM_DUPLICATE);
	le_chance_init(&l->corrupt, l->seed, l->direction, cls, LE_STREAM_CORRUPT);
	le_chance_init(&l->reorder, l->seed, l->direction, cls, LE_STREAM_REORDER);
	le_codel_init(&l->codel);
	l->has_queue = le_config_has_queue(cfg);
	l->stageless = config_stageless(cfg);
	l->plain = config_plain(cfg);
	l->fate_gaps = (!cfg->duplicate_set || le_corr_none(cfg->duplicate.corr)) &&
		       (!cfg->corrupt_set || le_corr_none(cfg->corrupt.corr)) &&
		       (cfg->loss.model == LE_LOSS_NONE || cfg->loss.model == LE_LOSS_GEMODEL ||
			(cfg->loss.model == LE_LOSS_RANDOM && le_corr_none(cfg->loss.corr)));
	l->rate_len = UINT32_MAX; /* no frame is that long: nothing timed yet */
	l->settled = 0;
	if (capacity > (1u << 31)) {
		le_err(err, errlen, "limit %u needs more than 2^31 frames of storage", (unsigned)cfg->limit);
		return -1;
	}
	if (le_jitter_init(&l->jitter, cfg, l->seed, l->direction, cls, sub, sizeof(sub)) < 0 ||
	    le_slot_init(&l->slot, &cfg->slot, l->seed, l->direction, cls, sub, sizeof(sub)) < 0) {
		le_err(err, errlen, "distribution: %s", sub);
		return -1;
	}
	if (cfg->trace.enabled &&
	    le_trace_load(cfg->trace.file, cfg->trace.us, &l->trace, sub, sizeof(sub)) < 0) {
		le_err(err, errlen, "%s: %s", cfg->trace.us ? "trace-us" : "trace", sub);
		return -1;
	}
	if (le_queue_init(&l->queue, l->has_queue ? cfg->limit : 0) < 0 ||
	    init_line(&l->line, cfg, (uint32_t)capacity) < 0) {
		le_err(err, errlen, "cannot allocate storage for %llu frames (limit %u)",
			(unsigned long long)capacity, (unsigned)cfg->limit);
		return -1;
	}
	return 0;
}

int le_link_init_ops(struct le_link *l, const struct le_link_config *cfg, enum le_direction dir,
		     uint32_t cls, uint64_t default_seed, const struct le_frame_ops *ops, char *err,
		     size_t errlen)
{
	memset(l, 0, sizeof(*l));
	if (check_config(cfg, err, errlen) < 0 || check_ops(cfg, ops, err, errlen) < 0)
		return -1;
	l->ops = *ops;
	if (init_common(l, cfg, dir, cls, default_seed, line_capacity(cfg->limit), err, errlen) < 0) {
		le_link_free(l);
		return -1;
	}
	return 0;
}

void le_link_free(struct le_link *l)
{
	le_delay_line_free(&l->line);
	le_queue_free(&l->queue);
	le_trace_free(&l->trace);
	le_jitter_free(&l->jitter);
	le_slot_free(&l->slot);
}
