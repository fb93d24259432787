/* Punted classes, the data plane's side (docs/punt.md): every class
 * written `punt fifo PATH` or `punt shm NAME` gets a channel to an
 * external process. Frames of the class are copied out to it (the model
 * calls dp_punt_take through le_frame_ops.punt); what the process sends
 * back is copied into new frames and offered to the class's link
 * (dp_punt_poll). No DPDK here: the data plane supplies how to make a
 * frame from bytes, so linkemud and linkemuk share it.
 *
 * Never blocking: every descriptor is non-blocking and rings are polled.
 * A full pipe or ring drops the frame (`punt_full`); no process attached,
 * or one that went away, drops it as `punt_down`, and the frames it held
 * are counted so too; frames the process did not answer are
 * `punt_dropped`; frames it sends unasked are `injected`. What the
 * channel holds (sent, not answered) is in flight.
 *
 * Threading: a direction's channels are used by the thread that runs the
 * direction's model (take, poll, counts); create and free happen before
 * and after the forwarding threads run. */
#ifndef DP_PUNT_H
#define DP_PUNT_H

#include <stdint.h>

#include "dp_counters.h"
#include "frame.h"
#include "path.h"
#include "swap.h"

#define DP_PUNT_MAX 8   /* punted classes per direction */

/* A channel as reports show it. */
struct dp_punt_status {
	char cls[LE_CLASS_NAME_MAX];
	enum le_punt_transport transport;
	char name[LE_PUNT_NAME_MAX];
	int up;                 /* a process is attached */
	int32_t peer_pid;       /* shm: what the process wrote; fifo: 0 */
	uint64_t sent;          /* frames handed to the process */
	uint64_t returned;      /* answers taken back */
	uint64_t injected;      /* new frames from it */
	uint64_t dropped;       /* punt_dropped */
	uint64_t full;          /* punt_full */
	uint64_t down;          /* punt_down */
	uint64_t held;          /* sent, not yet settled: in flight */
	uint64_t peers_lost;    /* times the process went away */
	uint64_t protocol_errors;
};

/* How the data plane makes a frame from bytes a process sent (NULL when
 * it has no buffer; counted `punt_full`). */
typedef void *(*dp_punt_make_fn)(void *ctx, const uint8_t *bytes, uint32_t len);

struct dp_punt_set;

/* Opens a channel for every punted class of both directions (creates the
 * FIFOs or the segment). NULL and a message naming the class when one
 * cannot be made; *out NULL (and 0) when no class is punted. The frame
 * operations are the models' (free, bytes). */
int dp_punt_open(struct dp_punt_set **out, const struct le_path_config cfg[LE_DIRS], const struct le_frame_ops *ops,
		 dp_punt_make_fn make, void *make_ctx, char *err, size_t errlen);
/* Closes every channel, tells attached processes linkemud stopped,
 * removes the FIFOs and the segment. Safe with NULL. */
void dp_punt_close(struct dp_punt_set *s);
/* A live change (`set`): 0 when every class cfg punts has the channel
 * opened for it at start (same class, transport and name); else -1 and
 * why (channels are made only at start). s may be NULL (none opened). */
int dp_punt_accepts(const struct dp_punt_set *s, enum le_direction dir, const struct le_path_config *cfg,
		    char *err, size_t errlen);
/* Sets ops->punt so the models hand punted frames to the set. */
void dp_punt_bind(struct dp_punt_set *s, struct le_frame_ops *ops);

/* le_frame_ops.punt: takes a frame of a punted class. */
void dp_punt_take(void *set, const struct le_path *p, unsigned cls, void *handle, uint32_t len, le_ns_t arrival);

/* Once per pass of the direction's model thread, after it offered the
 * pass's frames: sends what was queued, takes answers back into the
 * model (arrival `now`), and every 10 ms checks that the processes are
 * alive. Returns the frames taken back. */
unsigned dp_punt_poll(struct dp_punt_set *s, enum le_direction dir, struct le_swap *swap, le_ns_t now);

/* The direction's punt counts into *ctr (drops, injected) and what the
 * channels hold into *held; the model thread, or anyone once it stopped. */
void dp_punt_counts(const struct dp_punt_set *s, enum le_direction dir, struct dp_counters *ctr, uint64_t *held);
/* Frames the direction's channels wait answers for (a data plane that
 * sleeps keeps its naps short meanwhile). */
uint64_t dp_punt_held(const struct dp_punt_set *s, enum le_direction dir);
/* The direction's channels (<= DP_PUNT_MAX). */
unsigned dp_punt_status(const struct dp_punt_set *s, enum le_direction dir, struct dp_punt_status *out);
/* Shutdown, model thread stopped: what the channels still hold is
 * counted as `shutdown` drops (in dp_punt_counts). */
void dp_punt_drain(struct dp_punt_set *s, enum le_direction dir);

#endif
