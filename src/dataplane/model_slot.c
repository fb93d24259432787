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

int dp_model_slot_init(struct dp_model_slot *s, struct dp_model *first, const char *name, char *err,
		       size_t errlen)
{
	*s = (struct dp_model_slot){.active = first};
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

static void fold_and_free(struct dp_model_slot *s, struct dp_model *m)
{
	add_model_counts(&s->retired_ctr, m);
	dp_model_free(m);
}

void dp_model_slot_collect(struct dp_model_slot *s)
{
	void *m;
	while (rte_ring_sc_dequeue(s->retired, &m) == 0)
		fold_and_free(s, m);
}

void dp_model_slot_fini(struct dp_model_slot *s)
{
	dp_model_slot_collect(s);
	for (unsigned i = 0; i < s->nretiring; i++)
		fold_and_free(s, s->retiring[i]);
	s->nretiring = 0;
	if (s->mailbox)
		dp_model_free(s->mailbox);
	if (s->active)
		fold_and_free(s, s->active);
	s->mailbox = s->active = NULL;
	rte_ring_free(s->retired);
	s->retired = NULL;
}

int dp_model_slot_publish(struct dp_model_slot *s, struct dp_model *m)
{
	if (__atomic_load_n(&s->mailbox, __ATOMIC_ACQUIRE) != NULL)
		return -1;
	__atomic_store_n(&s->mailbox, m, __ATOMIC_RELEASE);
	return 0;
}

void dp_model_slot_counters(const struct dp_model_slot *s, struct le_counters *out)
{
	const struct dp_model *a = __atomic_load_n(&s->active, __ATOMIC_ACQUIRE);
	unsigned n = __atomic_load_n(&s->nretiring, __ATOMIC_ACQUIRE);
	for (int k = 0; k < LE_DROP_CAUSES; k++)
		out->drop[k] += s->retired_ctr.drop[k];
	for (int k = 0; k < LE_EVENTS; k++)
		out->event[k] += s->retired_ctr.event[k];
	out->dup += s->retired_ctr.dup;
	if (a)
		add_model_counts(out, a);
	for (unsigned i = 0; i < n; i++) {
		const struct dp_model *r = __atomic_load_n(&s->retiring[i], __ATOMIC_ACQUIRE);
		if (r)
			add_model_counts(out, r);
	}
}

/* Drained retiring models go back to the control thread. The ring has room
 * for every model that can exist, so the enqueue cannot fail. */
static void retire_drained(struct dp_model_slot *s)
{
	unsigned kept = 0;
	for (unsigned i = 0; i < s->nretiring; i++) {
		struct dp_model *m = s->retiring[i];
		if (le_path_depth(&m->path) == 0 && rte_ring_sp_enqueue(s->retired, m) == 0)
			continue;
		__atomic_store_n(&s->retiring[kept++], m, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&s->nretiring, kept, __ATOMIC_RELEASE);
}

void dp_model_slot_poll(struct dp_model_slot *s, le_ns_t now)
{
	if (s->nretiring)
		retire_drained(s);
	struct dp_model *next = __atomic_load_n(&s->mailbox, __ATOMIC_ACQUIRE);
	if (__builtin_expect(next == NULL, 1) || s->nretiring == DP_RETIRING_MAX)
		return;
	/* Here, on the owning lcore, the old path's state is current. */
	le_path_inherit(&next->path, &s->active->path);
	__atomic_store_n(&s->retiring[s->nretiring], s->active, __ATOMIC_RELEASE);
	__atomic_store_n(&s->nretiring, s->nretiring + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&s->active, next, __ATOMIC_RELEASE);
	__atomic_store_n(&s->mailbox, NULL, __ATOMIC_RELEASE);
	__atomic_store_n(&s->applied_ns, now, __ATOMIC_RELAXED);
	__atomic_add_fetch(&s->applied_seq, 1, __ATOMIC_RELEASE);
	retire_drained(s);
}

uint32_t dp_model_slot_depth(const struct dp_model_slot *s)
{
	uint32_t d = 0;
	const struct dp_model *a = __atomic_load_n(&s->active, __ATOMIC_ACQUIRE);
	unsigned n = __atomic_load_n(&s->nretiring, __ATOMIC_ACQUIRE);
	if (a)
		d += le_path_depth(&a->path);
	for (unsigned i = 0; i < n; i++) {
		const struct dp_model *r = __atomic_load_n(&s->retiring[i], __ATOMIC_ACQUIRE);
		if (r)
			d += le_path_depth(&r->path);
	}
	return d;
}
