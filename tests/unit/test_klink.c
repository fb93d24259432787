/* What linkemuk says when a port's interface changes state (klink.c):
 * one line per change, none while the state stays, none for an interface
 * up from the start or one that cannot be asked, and the time it was not
 * up counted from the first line of an outage (down, then no carrier, is
 * one outage). The kernel's side, an interface actually going down, is
 * test_kloop's and the bed's. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "klink.h"
#include "minitest.h"

#define S(x) ((le_ns_t)(x) * 1000000000ull)

/* The lines klink_note wrote for a run of states seen a second apart. */
static unsigned told(const enum klink_state *seen, unsigned n, char *out, size_t cap)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct klink k = {0};
	for (unsigned i = 0; i < n; i++)
		klink_note(&k, "kB", seen[i], S(10 + i), f);
	fclose(f);
	snprintf(out, cap, "%s", buf);
	free(buf);
	unsigned lines = 0;
	for (const char *p = out; *p; p++)
		lines += *p == '\n';
	return lines;
}

int main(void)
{
	char out[2048];
	const enum klink_state quiet[] = {K_LINK_UP, K_LINK_UP, K_LINK_UNKNOWN, K_LINK_UP};
	CHECK(told(quiet, 4, out, sizeof(out)) == 0, "up all along, said: %s", out);

	const enum klink_state flap[] = {K_LINK_UP, K_LINK_DOWN, K_LINK_DOWN, K_LINK_DOWN, K_LINK_UP, K_LINK_UP};
	CHECK(told(flap, 6, out, sizeof(out)) == 2, "said: %s", out);
	CHECK(strstr(out, "linkemuk: interface 'kB' is down") != NULL, "%s", out);
	CHECK(strstr(out, "linkemuk: interface 'kB' is up again (down for 3.0 s)\n") != NULL, "%s", out);

	/* Down at the start is told; a state that cannot be read changes nothing. */
	const enum klink_state start_down[] = {K_LINK_DOWN, K_LINK_UNKNOWN, K_LINK_UP};
	CHECK(told(start_down, 3, out, sizeof(out)) == 2, "said: %s", out);
	CHECK(strstr(out, "up again (down for 2.0 s)") != NULL, "%s", out);

	/* No carrier, then down, then up: three lines, one outage of 3 s. */
	const enum klink_state carrier[] = {K_LINK_UP, K_LINK_NO_CARRIER, K_LINK_NO_CARRIER, K_LINK_DOWN, K_LINK_UP};
	CHECK(told(carrier, 5, out, sizeof(out)) == 3, "said: %s", out);
	CHECK(strstr(out, "interface 'kB' has no carrier") != NULL, "%s", out);
	CHECK(strstr(out, "up again (down for 3.0 s)") != NULL, "%s", out);

	printf("test_klink: %u passed, %u failed\n", mt_passed, mt_failed);
	return mt_failed ? 1 : 0;
}
