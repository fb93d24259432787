/* Error messages; see err.h. */
#include "err.h"

#include <stdio.h>

int le_verr(char *err, size_t errlen, const char *fmt, va_list ap)
{
	if (err != NULL && errlen > 0)
		vsnprintf(err, errlen, fmt, ap);
	return -1;
}

int le_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	le_verr(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}
