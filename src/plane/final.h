/* The end of a run, the same for both data planes: the final counters
 * (human or JSON on stdout, JSON to --stats-file) and the conservation
 * check that makes a miscount an error, not a quiet wrong number. */
#ifndef DP_FINAL_H
#define DP_FINAL_H

#include "options.h"
#include "state.h"

/* The forwarding threads have stopped. prog names the daemon in messages.
 * 0, or -1 when a report could not be written or a direction does not
 * conserve frames (said on stderr). */
int dp_final_reports(struct dp_state *st, const struct dp_options *o, const char *prog);

/* SIGINT and SIGTERM set *stop (the daemon then ends faithfully). */
void dp_stop_on_signals(volatile int *stop);

/* A seed for runs without --seed (getrandom, else the clock and pid). */
uint64_t dp_random_seed(void);

#endif
