#include "kopts.h"

#include <stdio.h>
#include <string.h>

#include "options.h"
#include "units.h"

static void usage(void)
{
	printf("usage: linkemuk --iface-a IF --iface-b IF [--a2b GRAMMAR] [--b2a GRAMMAR] [options]\n"
	       "\n"
	       "The kernel-socket data plane: bridges interface A and interface B through an\n"
	       "emulated link per direction, with raw AF_PACKET sockets (no DPDK, no hugepages;\n"
	       "needs CAP_NET_RAW). a2b = frames received on A, sent on B.\n"
	       "\n"
	       "  --iface-a IF      side A's interface\n"
	       "  --iface-b IF      side B's interface\n"
	       "  --busy-poll       never sleep between deadlines (one CPU at 100 %%, best precision)\n"
	       "  --spin-us N|auto  wake N us before a deadline and poll until it; auto: as early as\n"
	       "                    99.9 %% of the thread's recent wake-ups were late (default auto)\n"
	       "  --instance NAME   a name for this daemon (shown in ps; lets tools find it)\n"
	       "\n"
	       "and linkemud's options (--a2b, --b2a, --seed, --burst, --control, --no-control,\n"
	       "--max-limit, --no-pm-qos, --json, --stats-file, --check, --wait: busy is --busy-poll,\n"
	       "adaptive the default); --layout and --ring-size do not apply (one thread runs both\n"
	       "directions), nor --held-mbufs, --compact-after, --no-compact (no mbufs) and --idle-us.\n"
	       "Grammar: docs/grammar.md.\n");
}

/* Why one of linkemud's options, which the shared parser (options.c)
 * takes too, does not apply here; NULL for the others. Accepted, they
 * did nothing and said nothing. */
static const char *linkemud_only(const char *a)
{
	static const struct {
		const char *option, *why;
	} refused[] = {
		{"--layout", "one thread runs both directions"},
		{"--ring-size", "one thread runs both directions"},
		{"--held-mbufs", "its frames wait in plain buffers, not mbufs"},
		{"--compact-after", "its frames wait in plain buffers, not mbufs"},
		{"--no-compact", "its frames wait in plain buffers, not mbufs"},
		{"--idle-us", "its thread sleeps as soon as a pass moves nothing"},
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		if (strcmp(a, refused[i].option) == 0)
			return refused[i].why;
	return NULL;
}

int kopts_parse(int argc, char **argv, struct kopts *k, char *err, size_t errlen)
{
	memset(k, 0, sizeof(*k));
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *why;
		int has_value = i + 1 < argc;
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage();
			return 1;
		} else if (strcmp(a, "--version") == 0) {
			printf("linkemuk %s\n", DP_VERSION);
			return 1;
		} else if (strcmp(a, "--iface-a") == 0 || strcmp(a, "--iface-b") == 0 ||
			   strcmp(a, "--instance") == 0) {
			if (!has_value) {
				snprintf(err, errlen, "%s: missing value", a);
				return -1;
			}
			if (strcmp(a, "--instance") == 0)
				k->instance = argv[++i];
			else
				k->iface[a[8] == 'a' ? 0 : 1] = argv[++i];
		} else if (strcmp(a, "--busy-poll") == 0) {
			k->busy_poll = 1;
		} else if ((why = linkemud_only(a)) != NULL) {
			snprintf(err, errlen, "%s does not apply to linkemuk (%s)", a, why);
			return -1;
		} else {
			if (k->argc >= K_ARGS_MAX) {
				snprintf(err, errlen, "too many arguments");
				return -1;
			}
			k->argv[k->argc++] = argv[i];
		}
	}
	return 0;
}
