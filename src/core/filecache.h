/* Files the model reads (traces, .dist tables), read and parsed once and
 * shared, read-only, by every link that names them.
 *
 * A file is identified by its path and what fstat says of the open file
 * that was read (device, inode, size, modification and change times; the
 * change time because tools such as cp -p put an old mtime back on new
 * content): a `set` that
 * names an unchanged file shares the table already loaded (by the check
 * of its configuration, or by a live link) instead of reading it again;
 * a file changed since is read again, and the links built before keep
 * the table they had. Since the identity comes from the very descriptor
 * the bytes are read from, a table is always exactly one version of the
 * file, and the configuration's check and the link's init (same path,
 * same identity) use the same table.
 *
 * Entries are reference counted; an unreferenced one stays cached (at
 * most LE_FILECACHE_IDLE of them, oldest evicted) so the check and the
 * init that follows it read the file once. Threads: get and put may be
 * called from any thread (a mutex guards the cache), but are meant for
 * the control thread, which builds and frees models; the data plane only
 * reads the tables, which never change while referenced. */
#ifndef LE_FILECACHE_H
#define LE_FILECACHE_H

#include <stddef.h>

#define LE_FILECACHE_IDLE 8

struct le_file_entry;

/* Parses text (NUL-terminated, len bytes) read from `name` into *out (an
 * object of the size given to le_filecache_get). */
typedef int (*le_file_parse_fn)(const char *text, size_t len, const char *name, int variant, void *out,
				char *err, size_t errlen);
/* Frees what a parse allocated in obj. */
typedef void (*le_file_free_fn)(void *obj);

struct le_file_kind {
	const char *what;           /* "trace", "trace-us", "dist": also part of the key */
	int variant;                /* passed to parse */
	long max_bytes;             /* files larger are refused unread */
	const char *limit_text;     /* "1 GiB" */
	size_t objsize;
	le_file_parse_fn parse;
	le_file_free_fn free;
};

/* The parsed object for `path` (shared: do not modify it), with a
 * reference in *ref for le_filecache_put. NULL with a message naming the
 * file on a read or parse error. */
const void *le_filecache_get(const struct le_file_kind *k, const char *path, struct le_file_entry **ref,
			     char *err, size_t errlen);
void le_filecache_put(struct le_file_entry *ref);
/* Frees the unreferenced entries (tests, shutdown). */
void le_filecache_trim(void);
/* Reads performed so far (tests: a file used twice is read once). */
unsigned long le_filecache_reads(void);

#endif
