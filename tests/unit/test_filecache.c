/* Files loaded once and shared (filecache.h): the check of a
 * configuration and the links it builds read a file once, every class
 * and every `set` naming an unchanged file share its table, a changed
 * file is read again while links built before keep their version, and
 * nothing is freed while a link uses it. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dist_table.h"
#include "fake.h"
#include "minitest.h"
#include "path.h"
#include "trace.h"

static char dir[] = "/tmp/le_filecache_XXXXXX";

static void put_file(const char *path, const char *text, long mtime)
{
	struct timespec ts[2] = { { mtime, 0 }, { mtime, 0 } };

	if (mt_write_file(path, text) < 0)
		return;
	utimensat(AT_FDCWD, path, ts, 0); /* a distinct modification time */
}

static struct le_path *build(const char *text, struct fakes *fk)
{
	static struct le_path_config c;
	char err[LE_ERR_MAX] = "";
	struct le_path *p = malloc(sizeof(*p));

	if (p == NULL || le_path_config_parse(text, &c, err, sizeof(err)) != 0 ||
	    le_path_init(p, &c, LE_DIR_A2B, 1, &fk->ops, err, sizeof(err)) != 0) {
		CHECK(0, "'%s': %s", text, err);
		free(p);
		return NULL;
	}
	return p;
}

static void shared(void)
{
	char tr[100], ds[100], text[1024];
	struct fakes fk;
	struct le_path *a, *b, *c;
	unsigned long r0;

	snprintf(tr, sizeof(tr), "%s/x.trace", dir);
	snprintf(ds, sizeof(ds), "%s/x.dist", dir);
	put_file(tr, "1\n1\n3\n", 1000);
	put_file(ds, "-8192 0 8192\n", 1000);
	fk_init(&fk, 1);
	snprintf(text, sizeof(text),
		 "trace %s delay 5ms 1ms distribution %s ; class a match dscp ef : rate 1mbit slot distribution %s 1ms 1ms ; "
		 "class b match dscp af41 : trace %s delay 1ms 1ms distribution %s",
		 tr, ds, ds, tr, ds);
	r0 = le_filecache_reads();
	a = build(text, &fk);
	/* three classes naming the files five times, checked then built: two reads */
	CHECK_EQ_U64(le_filecache_reads() - r0, 2);
	b = build(text, &fk);
	CHECK_EQ_U64(le_filecache_reads() - r0, 2);
	if (a && b) {
		CHECK(a->link[0].trace.t == b->link[2].trace.t);
		CHECK(a->link[1].trace.t == NULL);
		CHECK(a->link[1].slot.table.v == b->link[0].jitter.table.v);
	}
	/* The file changes: read again; the links built before keep theirs. */
	put_file(tr, "2\n4\n", 2000);
	c = build(text, &fk);
	CHECK_EQ_U64(le_filecache_reads() - r0, 3);
	if (a && c) {
		CHECK(a->link[0].trace.t != c->link[0].trace.t);
		CHECK_EQ_U64(a->link[0].trace.n, 3);
		CHECK_EQ_U64(c->link[0].trace.n, 2);
		CHECK_EQ_U64(a->link[0].trace.t[2], 3 * LE_NS_PER_MS);
	}
	/* A file that became invalid is refused, naming it. */
	put_file(tr, "2\nx\n", 3000);
	{
		static struct le_path_config cfg;
		char err[LE_ERR_MAX] = "";
		CHECK(le_path_config_parse(text, &cfg, err, sizeof(err)) == -1);
		CHECK_STR_CONTAINS(err, "x.trace:2: 'x'");
	}
	for (struct le_path **p = (struct le_path *[]){ a, b, c, NULL }; *p; p++) {
		le_path_free(*p);
		free(*p);
	}
	le_filecache_trim();
	fk_fini(&fk);
	unlink(tr);
	unlink(ds);
}

/* A file rewritten in place with the same size and its modification time
 * put back (cp -p or rsync -t over it, touch -r, tar x of another
 * version stamped with the same time): its device, inode, size and mtime
 * are those of the version cached, but its content is not. The change
 * time, which no program can set, moved: the new content is read. */
static void rewritten_with_the_same_mtime(void)
{
	char tr[100], ds[100], err[LE_ERR_MAX] = "";
	struct le_trace a, b;
	struct le_dist_table da, db;

	snprintf(tr, sizeof(tr), "%s/same.trace", dir);
	snprintf(ds, sizeof(ds), "%s/same.dist", dir);
	put_file(tr, "1\n1\n3\n", 1000);
	put_file(ds, "-8192 0 8192\n", 1000);
	CHECK(le_trace_load(tr, 0, &a, err, sizeof(err)) == 0, "%s", err);
	CHECK(le_dist_load(ds, &da, err, sizeof(err)) == 0, "%s", err);
	put_file(tr, "2\n2\n4\n", 1000);
	put_file(ds, "-4096 0 4096\n", 1000);
	CHECK(le_trace_load(tr, 0, &b, err, sizeof(err)) == 0, "%s", err);
	CHECK(le_dist_load(ds, &db, err, sizeof(err)) == 0, "%s", err);
	CHECK(b.n == 3 && b.t[0] == 2 * LE_NS_PER_MS && b.period == 4 * LE_NS_PER_MS,
	      "the old trace served: first %llu ns, period %llu ns", (unsigned long long)b.t[0],
	      (unsigned long long)b.period);
	CHECK(db.size == 3 && db.v[0] == -4096, "the old table served: first entry %d", db.v[0]);
	/* the links built before keep the version they had */
	CHECK(a.t[0] == 1 * LE_NS_PER_MS && da.v[0] == -8192);
	le_trace_free(&a);
	le_trace_free(&b);
	le_dist_table_free(&da);
	le_dist_table_free(&db);
	le_filecache_trim();
	unlink(tr);
	unlink(ds);
}

int main(void)
{
	if (mkdtemp(dir) == NULL)
		return 1;
	shared();
	rewritten_with_the_same_mtime();
	rmdir(dir);
	return mt_summary();
}
