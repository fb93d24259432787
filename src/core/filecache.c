/* Shared file tables; see filecache.h. */
#include "filecache.h"
#include "err.h"
#include "textfile.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct le_file_entry {
	struct le_file_entry *next;
	const struct le_file_kind *kind;
	char *path;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	struct timespec ctime;      /* no program can set it: see same_identity */
	unsigned long refs;
	unsigned long idle_since;   /* order of becoming unreferenced */
	void *obj;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct le_file_entry *entries;
static unsigned long reads, idle_clock;

/* The modification time alone is not enough: cp -p, rsync -t, touch -r
 * and tar put a chosen one back after rewriting a file in place. The
 * change time moves with every write and rename and cannot be set. */
static int same_identity(const struct le_file_entry *e, const struct stat *st)
{
	return e->dev == st->st_dev && e->ino == st->st_ino && e->size == st->st_size &&
	       e->mtime.tv_sec == st->st_mtim.tv_sec && e->mtime.tv_nsec == st->st_mtim.tv_nsec &&
	       e->ctime.tv_sec == st->st_ctim.tv_sec && e->ctime.tv_nsec == st->st_ctim.tv_nsec;
}

static void destroy(struct le_file_entry *e)
{
	e->kind->free(e->obj);
	free(e->obj);
	free(e->path);
	free(e);
}

/* Drops unreferenced entries beyond `keep` (oldest first), and stale ones
 * of (kind, path) when `path` is given. Under the lock. */
static void evict(unsigned keep, const struct le_file_kind *k, const char *path)
{
	for (;;) {
		struct le_file_entry **pp, **oldest = NULL;
		unsigned idle = 0;

		for (pp = &entries; *pp != NULL; pp = &(*pp)->next) {
			struct le_file_entry *e = *pp;
			if (e->refs != 0)
				continue;
			if (path != NULL && e->kind == k && strcmp(e->path, path) == 0) {
				oldest = pp;
				idle = keep + 1;
				break;
			}
			idle++;
			if (oldest == NULL || e->idle_since < (*oldest)->idle_since)
				oldest = pp;
		}
		if (oldest == NULL || idle <= keep)
			return;
		struct le_file_entry *e = *oldest;
		*oldest = e->next;
		destroy(e);
	}
}

const void *le_filecache_get(const struct le_file_kind *k, const char *path, struct le_file_entry **ref,
			     char *err, size_t errlen)
{
	struct le_file_entry *e;
	struct stat st;
	FILE *f = fopen(path, "rb");
	char *text = NULL;
	size_t size;

	*ref = NULL;
	if (f == NULL) {
		le_err(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
		fclose(f);
		le_err(err, errlen, "%s: not a regular file", path);
		return NULL;
	}
	pthread_mutex_lock(&lock);
	for (e = entries; e != NULL; e = e->next)
		if (e->kind == k && same_identity(e, &st) && strcmp(e->path, path) == 0)
			break;
	if (e != NULL) {
		e->refs++;
		pthread_mutex_unlock(&lock);
		fclose(f);
		*ref = e;
		return e->obj;
	}
	evict(LE_FILECACHE_IDLE, k, path); /* an older version nobody uses */
	reads++;
	pthread_mutex_unlock(&lock);
	/* Read and parse outside the lock: a big trace takes a while. */
	e = calloc(1, sizeof(*e));
	if (e != NULL) {
		e->obj = calloc(1, k->objsize);
		e->path = strdup(path);
	}
	if (e == NULL || e->obj == NULL || e->path == NULL) {
		le_err(err, errlen, "%s: out of memory", path);
		goto fail;
	}
	if (le_read_text_stream(f, path, k->max_bytes, k->limit_text, &text, &size, err, errlen) < 0 ||
	    k->parse(text, size, path, k->variant, e->obj, err, errlen) < 0)
		goto fail;
	free(text);
	fclose(f);
	e->kind = k;
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	e->size = st.st_size;
	e->mtime = st.st_mtim;
	e->ctime = st.st_ctim;
	e->refs = 1;
	pthread_mutex_lock(&lock);
	e->next = entries;
	entries = e;
	pthread_mutex_unlock(&lock);
	*ref = e;
	return e->obj;
fail:
	free(text);
	fclose(f);
	if (e != NULL) {
		free(e->obj);
		free(e->path);
		free(e);
	}
	return NULL;
}

void le_filecache_put(struct le_file_entry *e)
{
	if (e == NULL)
		return;
	pthread_mutex_lock(&lock);
	if (--e->refs == 0) {
		e->idle_since = ++idle_clock;
		evict(LE_FILECACHE_IDLE, NULL, NULL);
	}
	pthread_mutex_unlock(&lock);
}

void le_filecache_trim(void)
{
	pthread_mutex_lock(&lock);
	evict(0, NULL, NULL);
	pthread_mutex_unlock(&lock);
}

unsigned long le_filecache_reads(void)
{
	unsigned long n;

	pthread_mutex_lock(&lock);
	n = reads;
	pthread_mutex_unlock(&lock);
	return n;
}
