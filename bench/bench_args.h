/* What the DPDK benchmark programs (pacegen, holdfwd) share for their own
 * options: where they start (after EAL's "--"), so that they are read and
 * refused before EAL starts (a bad word then leaves no runtime directory,
 * memif socket or hugepage behind), and the strict number parsers of the
 * lab's tools (src/tools/tool_args.h: nothing after the number, no sign
 * on an integer, NaN refused). Define TOOL_PROG before including. */
#ifndef BENCH_ARGS_H
#define BENCH_ARGS_H

#include <string.h>

#include "tool_args.h"

/* The index of the program's first own option: the word after the first
 * "--" (EAL's getopt stops there), or argc when there is none. */
static inline int bench_own_args(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--"))
			return i + 1;
	return argc;
}

#endif
