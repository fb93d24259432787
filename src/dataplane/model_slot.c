#include "model_slot.h"

#include <stdio.h>
#include <stdlib.h>

#include <rte_errno.h>

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

int dp_model_slot_init(struct dp_model_slot *s, struct dp_model *first, uint32_t max_limit, const char *name,
		       char *err, size_t errlen)
{
	*s = (struct dp_model_slot){.active = first};
	s->adopt_max_depth = (uint64_t)(DP_MODEL_LIMITS - 1) * max_limit;
	/* More than the lcore can ever hold: retiring + mailbox + active. */
	s->retired = rte_ring_create(name, 2 * DP_RETIRING_MAX, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (!s->retired) {
		snprintf(err, errlen, "cannot create ring %s: %s", name, rte_strerror(rte_errno));
		return -1;
	}
	return 0;
}

/* The model-side counts that belong to the direction's totals. */
static void add_model_counts(struct le_counters *out, const struct dp_model *m)
{
	struct le_counters c = {0};
	le_path_counters(&m->path, &c);
	for (int k = 0; k < LE_DROP_CAUSES; k++)
		out->drop[k] += c.drop[k];
	for (int k = 0; k < LE_EVENTS; k++)
		out->event[k] += c.event[k];
	out->dup += c.dup;
}

void dp_model_slot_collect(struct dp_model_slot *s)
{
	void *m;
	while (s->retired && rte_ring_sc_dequeue(s->retired, &m) == 0)
		dp_model_free(m);
}

void dp_model_slot_fini(struct dp_model_slot *s)
{
	dp_model_slot_collect(s);
	for (unsigned i = 0; i < s->nretiring; i++)
		dp_model_free(s->retiring[i]);
	dp_model_free(s->mailbox);
	dp_model_free(s->active);
	rte_ring_free(s->retired);
	*s = (struct dp_model_slot){0};
}

int dp_model_slot_publish(struct dp_model_slot *s, struct dp_model *m)
{
	if (__atomic_load_n(&s->mailbox, __ATOMIC_ACQUIRE) != NULL)
		return -1;
	__atomic_store_n(&s->mailbox, m, __ATOMIC_RELEASE);
	return 0;
}

/* Drained retiring models go back to the control thread, their counts
 * kept here first. The ring has room for every model that can exist, so
 * the enqueue cannot fail. */
static void retire_drained(struct dp_model_slot *s)
{
	unsigned kept = 0;
	for (unsigned i = 0; i < s->nretiring; i++) {
		struct dp_model *m = s->retiring[i];
		if (le_path_depth(&m->path) == 0) {
			add_model_counts(&s->retired_ctr, m);
			if (rte_ring_sp_enqueue(s->retired, m) == 0)
				continue;
		}
		s->retiring[kept++] = m;
	}
	s->nretiring = kept;
}

static uint32_t models_depth(const struct dp_model_slot *s)
{
	uint32_t d = le_path_depth(&s->active->path);
	for (unsigned i = 0; i < s->nretiring; i++)
		d += le_path_depth(&s->retiring[i]->path);
	return d;
}

void dp_model_slot_poll(struct dp_model_slot *s, le_ns_t now)
{
	if (s->nretiring)
		retire_drained(s);
	struct dp_model *next = __atomic_load_n(&s->mailbox, __ATOMIC_ACQUIRE);
	if (__builtin_expect(next == NULL, 1) || s->nretiring == DP_RETIRING_MAX)
		return;
	/* Memory holds DP_MODEL_LIMITS x max_limit frames: the new model may
	 * fill its limit only if the old ones leave room for it. */
	uint32_t depth = models_depth(s);
	if (depth > s->adopt_max_depth) {
		__atomic_store_n(&s->waiting_depth, depth, __ATOMIC_RELAXED);
		return;
	}
	/* Here, on the owning lcore, the old path's state is current. */
	le_path_inherit(&next->path, &s->active->path);
	s->retiring[s->nretiring++] = s->active;
	__atomic_store_n(&s->active, next, __ATOMIC_RELEASE);
	__atomic_store_n(&s->mailbox, NULL, __ATOMIC_RELEASE);
	__atomic_store_n(&s->applied_ns, now, __ATOMIC_RELAXED);
	__atomic_add_fetch(&s->applied_seq, 1, __ATOMIC_RELEASE);
	retire_drained(s);
}

void dp_model_slot_snapshot(const struct dp_model_slot *s, struct dp_model_slot_snapshot *out)
{
	const struct dp_model *a = s->active;
	out->active = a;
	out->ctr = s->retired_ctr;
	out->depth = 0;
	out->nclasses = 0;
	if (!a)
		return;
	add_model_counts(&out->ctr, a);
	out->depth = models_depth(s);
	for (unsigned i = 0; i < s->nretiring; i++)
		add_model_counts(&out->ctr, s->retiring[i]);
	out->nclasses = le_path_classes(&a->path);
	for (unsigned k = 0; k < out->nclasses; k++) {
		out->cls[k] = *le_path_class_counters(&a->path, k);
		out->cls_depth[k] = le_path_class_depth(&a->path, k);
	}
}
