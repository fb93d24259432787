/* linkemud's own command line (the words after EAL's `--`).
 *
 * Parsed before rte_eal_init so that a typo in a link's grammar is reported
 * at once, without touching hugepages or ports. */
#ifndef DP_OPTIONS_H
#define DP_OPTIONS_H

#include <stdint.h>

#include "config.h"
#include "link.h"
#include "path.h"
#include "wait.h"

#define DP_DEFAULT_CONTROL_PATH "/run/linkemu/linkemud.sock"
#define DP_DEFAULT_MAX_LIMIT 10000u
#define DP_VERSION "0.1.0"

enum dp_layout_kind {
	DP_LAYOUT_AUTO = 0,
	DP_LAYOUT_SINGLE,        /* one lcore does everything, both directions */
	DP_LAYOUT_PER_DIRECTION, /* one lcore per direction, run to completion */
	DP_LAYOUT_PIPELINE,      /* RX -> worker -> TX lcores per direction (DEMU) */
};

const char *dp_layout_name(enum dp_layout_kind k);

struct dp_options {
	const char *link_text[LE_DIRS];          /* as given, for reports */
	struct le_path_config path[LE_DIRS];     /* default link + classes */
	enum dp_layout_kind layout;
	int seed_set;
	uint64_t seed;
	int json;                                /* final counters as JSON on stdout */
	const char *stats_file;                  /* final counters as JSON to a file */
	unsigned burst;                          /* frames per rx/tx burst */
	int burst_set;                           /* --burst given (else the plane's default) */
	unsigned ring_size;                      /* inter-lcore rings (pipeline) */
	int no_pm_qos;                           /* leave CPU idle states alone */
	uint32_t max_limit;                      /* largest `limit` a live change may set */
	uint32_t held_mbufs;                     /* per direction, frames kept as mbufs; 0: default */
	int no_compact;
	uint32_t compact_after;                  /* held mbufs before short frames go compact */
	int compact_after_set;                          /* no compact store: every held frame keeps its mbuf */
	const char *control_path;                /* control socket, NULL: default */
	int no_control;                          /* no control socket at all */
	enum dp_wait_mode wait;                  /* how an idle lcore waits (wait.h) */
	int wait_set;                            /* --wait given (else the plane's default) */
	unsigned spin_us;                        /* adaptive: wake this early before a deadline */
	int spin_auto;                           /* adaptive: learn the spin instead (spin_learn.h) */
	unsigned idle_us;                        /* adaptive: sleep only after this long idle */
	uint64_t paced_pps;                      /* --paced-source: frames/s into each port; 0: off */
	uint32_t paced_ring;                     /* its receive ring; 0: the port's RX descriptors */
};

/* The spin an adaptive thread starts with: --spin-us N, or the learned
 * spin's starting value (spin_learn.h) under --spin-us auto. */
le_ns_t dp_options_spin_ns(const struct dp_options *o);

/* Frames a direction may hold at once: the sum of its classes' limits. */
uint64_t dp_path_frame_limit(const struct le_path_config *c);

/* Returns 0 on success; 1 when --help/--version/--check was handled (exit 0);
 * -1 on error with a message naming the option in err. */
int dp_options_parse(int argc, char **argv, struct dp_options *o, char *err, size_t errlen);
void dp_options_usage(const char *prog);

#endif
