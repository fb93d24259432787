/* Error messages of the core: every function that can fail writes what
 * went wrong into a caller's buffer (err, errlen; LE_ERR_MAX is enough)
 * and returns -1. */
#ifndef LE_ERR_H
#define LE_ERR_H

#include <stdarg.h>
#include <stddef.h>

/* Formats into err (when err != NULL and errlen > 0, truncating). -1. */
int le_err(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The same with a va_list, for helpers that add their own context. */
int le_verr(char *err, size_t errlen, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));

#endif
