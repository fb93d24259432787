#include "options.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "spin_learn.h"
#include "units.h"

#define DP_MAX_BURST 512u

uint64_t dp_path_frame_limit(const struct le_path_config *c)
{
	uint64_t n = c->dflt.limit;
	for (unsigned i = 0; i < c->nclasses; i++)
		n += c->cls[i].link.limit;
	for (unsigned i = 0; i < c->nextra; i++)   /* further hops of chains */
		n += c->extra[i].limit;
	return n;
}

const char *dp_layout_name(enum dp_layout_kind k)
{
	switch (k) {
	case DP_LAYOUT_AUTO: return "auto";
	case DP_LAYOUT_SINGLE: return "single";
	case DP_LAYOUT_PER_DIRECTION: return "per-direction";
	case DP_LAYOUT_PIPELINE: return "pipeline";
	}
	return "?";
}

static int parse_layout(const char *s, enum dp_layout_kind *out)
{
	static const enum dp_layout_kind all[] = {DP_LAYOUT_AUTO, DP_LAYOUT_SINGLE,
						  DP_LAYOUT_PER_DIRECTION, DP_LAYOUT_PIPELINE};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if (strcmp(s, dp_layout_name(all[i])) == 0) {
			*out = all[i];
			return 0;
		}
	}
	return -1;
}

void dp_options_usage(const char *prog)
{
	printf("usage: %s [EAL options] -- [--a2b GRAMMAR] [--b2a GRAMMAR] [options]\n"
	       "\n"
	       "Bridges DPDK port 0 (side A) and port 1 (side B) through an emulated link,\n"
	       "one per direction: a2b = frames received on port 0, sent on port 1.\n"
	       "\n"
	       "  --a2b GRAMMAR     link from A to B, e.g. \"delay 5ms loss 0.1%%\" (default: none)\n"
	       "  --b2a GRAMMAR     link from B to A\n"
	       "  --layout L        auto|single|per-direction|pipeline (default auto: from the lcores given)\n"
	       "  --seed N          seed of every random stream not seeded in its grammar\n"
	       "  --burst N         frames per RX/TX burst, 1..%u (default: linkemud 64, linkemuk 32)\n"
	       "  --ring-size N     inter-lcore ring entries in the pipeline layout (default 4096)\n"
	       "  --wait MODE       how an idle lcore waits: busy (poll, one CPU at 100 %%) or adaptive\n"
	       "                    (sleep until shortly before the next deadline or a frame; single\n"
	       "                    and per-direction layouts) (default %s; docs/performance.md)\n"
	       "  --spin-us N|auto  adaptive: wake N us before a deadline and poll until it; auto: as early\n"
	       "                    as 99.9 %% of the lcore's recent wake-ups were late (default auto)\n"
	       "  --idle-us N       adaptive: sleep only after N us without a frame (default %u)\n"
	       "  --no-pm-qos       do not hold /dev/cpu_dma_latency at 0 (deep CPU idle: cheaper, later wake-ups);\n"
	       "                    --wait adaptive never holds it\n"
	       "  --control PATH    control socket (default %s)\n"
	       "  --no-control      no control socket\n"
	       "  --max-limit N     largest limit a live `set` may ask for; memory is sized for it\n"
	       "                    (default: the larger of the two limits, at least %u)\n"
	       "  --held-mbufs N    held frames over 64 bytes (or beyond the compact store) that keep their\n"
	       "                    2 KiB mbuf, per direction (default: 3 x max limit, at most 65536)\n"
	       "  --compact-after N short frames (<= 64 bytes) are copied into the compact store, their mbufs\n"
	       "                    freed, once a direction holds N frames in mbufs (default 49152; 0: always)\n"
	       "  --no-compact      hold every frame in its mbuf (no compact store for frames <= 64 bytes)\n"
	       "  --paced-source PPS  benchmarks: each port (net_null with no-rx=1) receives 64-byte frames\n"
	       "                    paced at PPS a second (k, M, G suffixes), inside the lcore's poll\n"
	       "  --paced-ring N    the paced source's receive ring: frames past it are missed (default:\n"
	       "                    the port's RX descriptors)\n"
	       "  --check GRAMMAR   check a link's grammar, print it formatted, exit 0 (or 2 naming the error)\n"
	       "  --json            print the final counters as one JSON object on stdout\n"
	       "  --stats-file F    write the final counters as JSON to F on exit\n"
	       "  --help, --version\n"
	       "\n"
	       "Grammar: netem words (delay, loss, rate, limit, duplicate, corrupt, reorder, slot,\n"
	       "trace, codel, ...) and classes: see docs/grammar.md.\n"
	       "Stop with SIGINT or SIGTERM; the final counters are printed.\n",
	       prog, DP_MAX_BURST, dp_wait_mode_name(DP_WAIT_DEFAULT_MODE),
	       DP_WAIT_DEFAULT_IDLE_US, DP_DEFAULT_CONTROL_PATH, DP_DEFAULT_MAX_LIMIT);
}

/* Frames per second: a number with an optional k, M or G, 1 .. 1e9. */
static int parse_pps(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno)
		return -1;
	if (*end == 'k')
		v *= 1e3, end++;
	else if (*end == 'M')
		v *= 1e6, end++;
	else if (*end == 'G')
		v *= 1e9, end++;
	if (*end != '\0' || !(v >= 1.0 && v <= 1e9))
		return -1;
	*out = (uint64_t)(v + 0.5);
	return 0;
}

static int need_value(int i, int argc, char **argv, char *err, size_t errlen)
{
	if (i + 1 >= argc) {
		snprintf(err, errlen, "%s: missing value", argv[i]);
		return -1;
	}
	return 0;
}

int dp_options_parse(int argc, char **argv, struct dp_options *o, char *err, size_t errlen)
{
	memset(o, 0, sizeof(*o));
	o->link_text[LE_DIR_A2B] = "";
	o->link_text[LE_DIR_B2A] = "";
	o->burst = 32;
	o->ring_size = 4096;
	o->wait = DP_WAIT_DEFAULT_MODE;
	o->spin_auto = 1; /* spin_us counts only once --spin-us N sets it */
	o->idle_us = DP_WAIT_DEFAULT_IDLE_US;

	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		char sub[LE_ERR_MAX];
		uint64_t v;

		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			dp_options_usage("linkemud");
			return 1;
		} else if (strcmp(a, "--version") == 0) {
			printf("linkemud %s\n", DP_VERSION);
			return 1;
		} else if (strcmp(a, "--a2b") == 0 || strcmp(a, "--b2a") == 0) {
			if (need_value(i, argc, argv, err, errlen))
				return -1;
			int d = strcmp(a, "--a2b") == 0 ? LE_DIR_A2B : LE_DIR_B2A;
			o->link_text[d] = argv[++i];
		} else if (strcmp(a, "--layout") == 0) {
			if (need_value(i, argc, argv, err, errlen))
				return -1;
			if (parse_layout(argv[++i], &o->layout)) {
				snprintf(err, errlen,
					 "--layout: '%s' is not a layout (auto, single, per-direction, pipeline)",
					 argv[i]);
				return -1;
			}
		} else if (strcmp(a, "--seed") == 0) {
			if (need_value(i, argc, argv, err, errlen))
				return -1;
			if (le_parse_u64(argv[++i], 0, UINT64_MAX, &o->seed, sub, sizeof(sub))) {
				snprintf(err, errlen, "--seed: '%s': %s", argv[i], sub);
				return -1;
			}
			o->seed_set = 1;
		} else if (strcmp(a, "--burst") == 0) {
			if (need_value(i, argc, argv, err, errlen))
				return -1;
			if (le_parse_u64(argv[++i], 1, DP_MAX_BURST, &v, sub, sizeof(sub))) {
				snprintf(err, errlen, "--burst: '%s': %s", argv[i], sub);
				return -1;
			}
			o->burst = (unsigned)v;
			o->burst_set = 1;
		} else if (strcmp(a, "--ring-size") == 0) {
			if (need_value(i, argc, argv, err, errlen))
				return -1;
			if (le_parse_u64(argv[++i], 64, 1u << 24, &v, sub, sizeof(sub)) || (v & (v - 1))) {
				snprintf(err, errlen, "--ring-size: '%s' must be a power of two in 64 .. 16777216",
					 argv[i]);
				return -1;
			}
			o->ring_size = (unsigned)v;
		} else if (strcmp(a, "--check") == 0) {
			if (need_value(i, argc, argv, err, errlen))
				return -1;
			static struct le_path_config c; /* large: keep it off the stack */
			static char text[LE_PATH_TEXT_MAX];
			if (le_path_config_parse(argv[++i], &c, sub, sizeof(sub))) {
				snprintf(err, errlen, "%s", sub);
				return -1;
			}
			le_path_config_format(&c, text, sizeof(text));
			printf("%s\n", text);
			return 1;
		} else if (strcmp(a, "--control") == 0) {
			if (need_value(i, argc, argv, err, errlen))
				return -1;
			o->control_path = argv[++i];
			if (strlen(o->control_path) >= 108) {
				snprintf(err, errlen, "--control: path longer than 107 bytes");
				return -1;
			}
		} else if (strcmp(a, "--no-control") == 0) {
			o->no_control = 1;
		} else if (strcmp(a, "--max-limit") == 0) {
			if (need_value(i, argc, argv, err, errlen))
				return -1;
			if (le_parse_u64(argv[++i], 1, LE_MAX_LIMIT, &v, sub, sizeof(sub))) {
				snprintf(err, errlen, "--max-limit: '%s': %s", argv[i], sub);
				return -1;
			}
			o->max_limit = (uint32_t)v;
		} else if (strcmp(a, "--wait") == 0) {
			if (need_value(i, argc, argv, err, errlen))
				return -1;
			if (dp_wait_mode_parse(argv[++i], &o->wait)) {
				snprintf(err, errlen, "--wait: '%s' is not a waiting mode (busy, adaptive)", argv[i]);
				return -1;
			}
			o->wait_set = 1;
		} else if (strcmp(a, "--spin-us") == 0 || strcmp(a, "--idle-us") == 0) {
			const int spin = strcmp(a, "--spin-us") == 0;
			if (need_value(i, argc, argv, err, errlen))
				return -1;
			if (spin && strcmp(argv[i + 1], "auto") == 0) {
				o->spin_auto = 1;
				i++;
				continue;
			}
			if (le_parse_u64(argv[++i], 0, DP_WAIT_MAX_US, &v, sub, sizeof(sub))) {
				snprintf(err, errlen, "%s: '%s': %s%s", a, argv[i], sub, spin ? " (or auto)" : "");
				return -1;
			}
			*(spin ? &o->spin_us : &o->idle_us) = (unsigned)v;
			if (spin)
				o->spin_auto = 0;
		} else if (strcmp(a, "--held-mbufs") == 0) {
			if (need_value(i, argc, argv, err, errlen))
				return -1;
			if (le_parse_u64(argv[++i], 1, LE_MAX_LIMIT, &v, sub, sizeof(sub))) {
				snprintf(err, errlen, "--held-mbufs: '%s': %s", argv[i], sub);
				return -1;
			}
			o->held_mbufs = (uint32_t)v;
		} else if (strcmp(a, "--compact-after") == 0) {
			if (need_value(i, argc, argv, err, errlen))
				return -1;
			if (le_parse_u64(argv[++i], 0, LE_MAX_LIMIT, &v, sub, sizeof(sub))) {
				snprintf(err, errlen, "--compact-after: '%s': %s", argv[i], sub);
				return -1;
			}
			o->compact_after = (uint32_t)v;
			o->compact_after_set = 1;
		} else if (strcmp(a, "--no-compact") == 0) {
			o->no_compact = 1;
		} else if (strcmp(a, "--no-pm-qos") == 0) {
			o->no_pm_qos = 1;
		} else if (strcmp(a, "--paced-source") == 0) {
			if (need_value(i, argc, argv, err, errlen))
				return -1;
			if (parse_pps(argv[++i], &o->paced_pps)) {
				snprintf(err, errlen,
					 "--paced-source: '%s' is not a rate in frames per second (1 .. 1G, e.g. "
					 "7440000 or 7.44M)",
					 argv[i]);
				return -1;
			}
		} else if (strcmp(a, "--paced-ring") == 0) {
			if (need_value(i, argc, argv, err, errlen))
				return -1;
			if (le_parse_u64(argv[++i], 1, 1u << 24, &v, sub, sizeof(sub))) {
				snprintf(err, errlen, "--paced-ring: '%s': %s", argv[i], sub);
				return -1;
			}
			o->paced_ring = (uint32_t)v;
		} else if (strcmp(a, "--json") == 0) {
			o->json = 1;
		} else if (strcmp(a, "--stats-file") == 0) {
			if (need_value(i, argc, argv, err, errlen))
				return -1;
			o->stats_file = argv[++i];
		} else {
			snprintf(err, errlen, "unknown option '%s' (see --help)", a);
			return -1;
		}
	}

	if (o->paced_ring && !o->paced_pps) {
		snprintf(err, errlen, "--paced-ring: only with --paced-source");
		return -1;
	}
	uint64_t largest = DP_DEFAULT_MAX_LIMIT;
	for (int d = 0; d < LE_DIRS; d++) {
		char sub[LE_ERR_MAX];
		if (le_path_config_parse(o->link_text[d], &o->path[d], sub, sizeof(sub))) {
			snprintf(err, errlen, "--%s: %s", le_direction_name(d), sub);
			return -1;
		}
		uint64_t frames = dp_path_frame_limit(&o->path[d]);
		if (frames > largest)
			largest = frames;
	}
	if (largest > LE_MAX_LIMIT) {
		snprintf(err, errlen, "the classes' limits add up to %" PRIu64 " frames, more than %u", largest,
			 LE_MAX_LIMIT);
		return -1;
	}
	if (o->max_limit == 0) {
		o->max_limit = (uint32_t)largest;
	} else if (o->max_limit < largest) {
		snprintf(err, errlen, "--max-limit %u is below the configured limits (%" PRIu64 " frames)",
			 o->max_limit, largest);
		return -1;
	}
	if (!o->control_path)
		o->control_path = DP_DEFAULT_CONTROL_PATH;
	return 0;
}

le_ns_t dp_options_spin_ns(const struct dp_options *o)
{
	return o->spin_auto ? DP_SPIN_INITIAL_NS : (le_ns_t)o->spin_us * LE_NS_PER_US;
}
