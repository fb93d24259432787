#include "model_slot.h"

#include <stdio.h>
#include <stdlib.h>


struct dp_model *dp_model_new(const struct le_path_config *cfg, enum le_direction dir, uint64_t default_seed,
			      const struct le_frame_ops *ops, char *err, size_t errlen)
{
	struct dp_model *m = calloc(1, sizeof(*m));
	if (!m) {
		snprintf(err, errlen, "out of memory for a link model");
		return NULL;
	}
	if (le_path_init(&m->path, cfg, dir, default_seed, ops, err, errlen)) {
		free(m);
		return NULL;
	}
	le_path_config_format(cfg, m->text, sizeof(m->text));
	return m;
}

void dp_model_free(struct dp_model *m)
{
	if (!m)
		return;
	le_path_free(&m->path);
	free(m);
}

static struct dp_model *model_of(struct le_path *p)
{
	return (struct dp_model *)p; /* path is the first member */
}

int dp_model_slot_init(struct dp_model_slot *s, struct dp_model *first, uint32_t max_limit, char *err,
		       size_t errlen)
{
	*s = (struct dp_model_slot){.active = first};
	le_swap_init(&s->swap, &first->path);
	s->max_retiring_depth = (uint64_t)(DP_MODEL_LIMITS - 2) * max_limit;
	(void)err;
	(void)errlen;
	return 0;
}

void dp_model_slot_collect(struct dp_model_slot *s)
{
	void *m;
	while (dp_ptr_ring_take(&s->retired, &m) == 0)
		dp_model_free(m);
}

void dp_model_slot_fini(struct dp_model_slot *s)
{
	struct le_path *paths[LE_SWAP_RETIRING_MAX * 2 + 2];
	dp_model_slot_collect(s);
	if (s->swap.active) {
		unsigned n = le_swap_release(&s->swap, paths);
		for (unsigned i = 0; i < n; i++)
			dp_model_free(model_of(paths[i]));
	} else {
		dp_model_free(s->active); /* set but never handed to le_swap */
	}
	dp_model_free(s->mailbox);
	*s = (struct dp_model_slot){0};
}

int dp_model_slot_publish(struct dp_model_slot *s, struct dp_model *m, le_ns_t at)
{
	if (__atomic_load_n(&s->mailbox, __ATOMIC_ACQUIRE) != NULL)
		return -1;
	s->mailbox_at = at;
	__atomic_store_n(&s->mailbox, m, __ATOMIC_RELEASE);
	return 0;
}

static void try_stage(struct dp_model_slot *s, struct dp_model *next)
{
	uint32_t retiring = le_swap_depth(&s->swap) - le_path_depth(s->swap.active);
	if (retiring > s->max_retiring_depth) {
		__atomic_store_n(&s->waiting_depth, retiring, __ATOMIC_RELAXED);
		return;
	}
	/* A time already passed means now: the old path cannot be taken back
	 * to it. */
	le_ns_t at = s->mailbox_at;
	if (at && at < s->swap.clock)
		at = s->swap.clock;
	if (le_swap_stage(&s->swap, &next->path, at))
		return; /* another change is staged: after it */
	__atomic_store_n(&s->mailbox, NULL, __ATOMIC_RELEASE);
	__atomic_add_fetch(&s->staged_seq, 1, __ATOMIC_RELEASE);
}

void dp_model_slot_poll(struct dp_model_slot *s, le_ns_t now)
{
	struct le_path *p;
	/* The ring has room for every path there is: cannot fail. */
	while (__builtin_expect(s->swap.ndrained != 0, 0) && (p = le_swap_take_drained(&s->swap)) != NULL)
		(void)dp_ptr_ring_put(&s->retired, model_of(p));
	struct dp_model *next = __atomic_load_n(&s->mailbox, __ATOMIC_ACQUIRE);
	if (__builtin_expect(next != NULL, 0)) {
		try_stage(s, next);
		le_swap_advance(&s->swap, now); /* at once, even with no traffic */
	}
	if (__builtin_expect(s->swap.swaps != s->applied_seq, 0)) {
		/* The change le_swap applied (here or in the last offer/dequeue). */
		__atomic_store_n(&s->active, model_of(s->swap.active), __ATOMIC_RELEASE);
		__atomic_store_n(&s->applied_ns, s->swap.swapped_at, __ATOMIC_RELAXED);
		__atomic_store_n(&s->applied_seq, s->swap.swaps, __ATOMIC_RELEASE);
	}
}

void dp_model_slot_drain(struct dp_model_slot *s)
{
	if (s->swap.active)
		le_swap_drain(&s->swap);
}

void dp_model_slot_snapshot(const struct dp_model_slot *s, struct dp_model_slot_snapshot *out)
{
	const struct le_swap *w = &s->swap;
	out->active = w->active ? model_of(w->active) : NULL;
	out->ctr = (struct le_counters){0};
	out->depth = 0;
	out->nclasses = 0;
	out->nhops = 0;
	out->changes = w->swaps;
	out->changed_at = w->swapped_at;
	out->staged_at = w->staged ? w->staged_at : UINT64_MAX;
	if (!w->active)
		return;
	le_swap_counters(w, &out->ctr);
	out->depth = le_swap_depth(w);
	out->nclasses = le_path_classes(w->active);
	for (unsigned k = 0; k < out->nclasses; k++) {
		le_swap_class_counters(w, k, &out->cls[k]);
		out->cls_depth[k] = le_swap_class_depth(w, k);
		out->cls_born[k] = le_path_class_born(w->active, k);
		out->cls_hops[k] = (uint8_t)le_path_class_hops(w->active, k);
		for (unsigned h = 0; out->cls_hops[k] > 1 && h < out->cls_hops[k]; h++) {
			le_swap_hop_counters(w, k, h, &out->hop[out->nhops]);
			out->hop_born[out->nhops] = le_path_hop_born(w->active, k, h);
			out->hop_depth[out->nhops++] = le_swap_hop_depth(w, k, h);
		}
	}
}
