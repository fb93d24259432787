/* linkemuk's own options, taken out of the command line before the rest
 * goes to the options both data planes share (src/plane/options.h). */
#ifndef K_OPTS_H
#define K_OPTS_H

#include <stddef.h>
#include <stdint.h>

#define K_ARGS_MAX 256

struct kopts {
	const char *iface[2];    /* side A, side B */
	int busy_poll;           /* never sleep */
	const char *instance;    /* a name that tells daemons apart (ps, the bed) */
	/* What remains for dp_options_parse. */
	int argc;
	char *argv[K_ARGS_MAX];
};

/* 0; 1 when --help/--version was handled; -1 with a message. */
int kopts_parse(int argc, char **argv, struct kopts *k, char *err, size_t errlen);

#endif
