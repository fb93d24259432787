/* Loss stage: decides per frame whether the link loses it.
 *
 * State (model state and the stage's own random stream) lives here, so
 * the stage can be unit-tested alone and later models (Gilbert-Elliott,
 * 4-state) slot in beside Bernoulli. */
#ifndef LE_LOSS_H
#define LE_LOSS_H

#include "config.h"
#include "rng.h"

struct le_loss_state {
	struct le_rng rng;
};

void le_loss_init(struct le_loss_state *s, uint64_t seed, uint32_t direction);
/* 1 when the frame is lost. Consumes exactly one draw from the loss stream
 * per call whenever a loss model is active, none when it is not. */
int le_loss_decide(struct le_loss_state *s, const struct le_loss_config *c);

#endif
