/* The control socket: a Unix stream socket speaking the line protocol of
 * docs/control.md (help, show, set DIR GRAMMAR, stats, reset stats).
 *
 * One control thread (not an lcore) serves every client with poll(); it
 * never blocks on a client (non-blocking sockets, bounded lines, a client
 * that does not read its replies is dropped) and it never makes an lcore
 * wait: new models are built here and handed over through model_slot. */
#ifndef DP_CONTROL_H
#define DP_CONTROL_H

#include <stddef.h>
#include <stdio.h>

#include "options.h"
#include "state.h"

#define DP_CONTROL_LINE_MAX 4096
#define DP_CONTROL_CLIENTS 16

struct dp_control;

/* Binds the socket (mode 0600) and starts the thread. NULL with a message
 * on failure. */
struct dp_control *dp_control_start(const char *path, struct dp_state *st, char *err, size_t errlen);
/* Handles one request line (without its newline; NUL-terminated at
 * line[len], and modified) and writes its one reply line to out. What the
 * control thread does with every line a client sends; callable without a
 * socket or a thread (tests/fuzz/fuzz_control.c), but like that thread it
 * is not reentrant: one caller at a time. */
void dp_control_handle_line(struct dp_state *st, char *line, size_t len, FILE *out);
/* Stops the thread, closes every client, removes the socket file. */
void dp_control_stop(struct dp_control *c);

#endif
