#include "fault.h"

#include <stdlib.h>
#include <string.h>

int dp_test_fault(const char *name)
{
	const char *list = getenv("LINKEMUD_TEST_FAULT");
	size_t n = strlen(name);
	for (const char *p = list; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
		if (strncmp(p, name, n) == 0 && (p[n] == ',' || p[n] == '\0'))
			return 1;
	}
	return 0;
}
