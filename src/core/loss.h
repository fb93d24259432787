/* Loss stage: decides per frame whether the loss model loses it.
 *
 * Models, with netem's meanings (sch_netem.c loss_event):
 *   random  P [CORR]            Bernoulli, optionally through netem's
 *                               correlated generator (rng.h le_corr)
 *   gemodel p r 1-h 1-k         Gilbert-Elliott: states Good and Bad; a
 *                               frame is lost with probability 1-k in Good
 *                               and 1-h in Bad (the state it meets), then
 *                               the chain moves (Good->Bad p, Bad->Good r)
 *   state p13 p31 p32 p23 p14   the 4-state Markov chain of Salsano et al.
 *                               (1 gap-receive, 2 burst-receive, 3 burst-
 *                               loss, 4 isolated loss); a frame's fate is
 *                               the state the chain enters for it
 * State (chain state, the stage's own random stream) lives here so the
 * stage can be unit-tested alone. */
#ifndef LE_LOSS_H
#define LE_LOSS_H

#include "config.h"
#include "rng.h"

enum { LE_GE_GOOD = 1, LE_GE_BAD = 2 };

struct le_loss_state {
	struct le_rng rng;
	uint64_t last;     /* correlated generator memory (random model) */
	int primed;        /* last holds a value */
	int state;         /* chain state: 1..2 (gemodel), 1..4 (state) */
	uint64_t left_p;   /* random: the gap of a rare p (rng.h le_rng_chance_gap) */
	uint64_t left[4];  /* gemodel: the gaps of prob[0..3] (p, r, 1-h, 1-k) */
};

/* Stream of the default class (0). */
void le_loss_init(struct le_loss_state *s, uint64_t seed, uint32_t direction);
void le_loss_init_class(struct le_loss_state *s, uint64_t seed, uint32_t direction, uint32_t cls);
/* 1 when the frame is lost. Draws from the loss stream only. random and
 * gemodel's chances (gemodel: transition, then fate, as netem) are
 * drawn as gaps when rare (rng.h le_rng_chance_any: a draw per event),
 * take no draw when certain, and one per frame otherwise or when
 * correlated; state draws once per frame; no model draws nothing. */
int le_loss_decide_model(struct le_loss_state *s, const struct le_loss_config *c);
/* One trial of gemodel's chance i, with its own gap: the trials of one
 * chance are independent of the others' and of the state's history, so
 * each chance's gap counts only its own trials (a gap of p waits while
 * the chain is in Bad, and goes on when it is back in Good). */
static inline int le_loss_ge_chance(struct le_loss_state *s, const struct le_loss_config *c, int i)
{
	return le_rng_chance_any(&s->rng, c->prob[i], &s->left[i]);
}
/* Gilbert-Elliott: prob[] = p, r, 1-h, 1-k. The frame meets the state:
 * the chain moves, then the fate of the state met is drawn (netem). */
static inline int le_loss_gemodel(struct le_loss_state *s, const struct le_loss_config *c)
{
	if (s->state == LE_GE_GOOD) {
		if (le_loss_ge_chance(s, c, 0))
			s->state = LE_GE_BAD;
		return le_loss_ge_chance(s, c, 3);
	}
	if (le_loss_ge_chance(s, c, 1))
		s->state = LE_GE_GOOD;
	return le_loss_ge_chance(s, c, 2);
}
/* Inline for the models asked for every frame: uncorrelated `loss P`
 * and gemodel (whose rare chances cost less than the call did). */
static inline int le_loss_decide(struct le_loss_state *s, const struct le_loss_config *c)
{
	if (c->model == LE_LOSS_RANDOM && le_corr_none(c->corr))
		return le_rng_chance_any(&s->rng, c->p, &s->left_p);
	if (c->model == LE_LOSS_GEMODEL)
		return le_loss_gemodel(s, c);
	return le_loss_decide_model(s, c);
}
/* Frames ahead that the model certainly does not lose and that draw
 * nothing (rng.h le_rng_chance_quiet): for gemodel, those before either
 * chance of the state the chain is in fires (the state holds until its
 * leaving chance fires). None for the correlated random model and the
 * 4-state chain, which draw for every frame. le_loss_skip passes n of
 * them (n <= le_loss_quiet) as n calls of le_loss_decide would. */
static inline uint64_t le_loss_quiet(const struct le_loss_state *s, const struct le_loss_config *c)
{
	uint64_t a, b;

	switch (c->model) {
	case LE_LOSS_NONE:
		return UINT64_MAX;
	case LE_LOSS_RANDOM:
		return le_corr_none(c->corr) ? le_rng_chance_quiet(c->p, s->left_p) : 0;
	case LE_LOSS_GEMODEL:
		if (s->state == LE_GE_GOOD) {
			a = le_rng_chance_quiet(c->prob[0], s->left[0]);
			b = le_rng_chance_quiet(c->prob[3], s->left[3]);
		} else {
			a = le_rng_chance_quiet(c->prob[1], s->left[1]);
			b = le_rng_chance_quiet(c->prob[2], s->left[2]);
		}
		return a < b ? a : b;
	default:
		return 0;
	}
}
static inline void le_loss_skip(struct le_loss_state *s, const struct le_loss_config *c, uint64_t n)
{
	if (c->model == LE_LOSS_RANDOM) {
		le_rng_chance_skip(c->p, &s->left_p, n);
	} else if (c->model == LE_LOSS_GEMODEL) {
		const int i = s->state == LE_GE_GOOD ? 0 : 1, j = s->state == LE_GE_GOOD ? 3 : 2;

		le_rng_chance_skip(c->prob[i], &s->left[i], n);
		le_rng_chance_skip(c->prob[j], &s->left[j], n);
	}
}
/* Live change: `n` continues `o`. streams: the random stream (and the
 * correlated generator's memory) goes on where o's is, instead of n's
 * fresh seed, and with it the gap of each chance whose probability nc
 * keeps. Under the same model (oc's) the chain state carries over (a
 * chain of a different model starts in state 1, as a fresh one). */
void le_loss_carry(struct le_loss_state *n, const struct le_loss_state *o, int streams,
		   const struct le_loss_config *nc, const struct le_loss_config *oc);

#endif
