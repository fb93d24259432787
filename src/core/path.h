/* A direction of the emulator: class rules and one link per class.
 *
 *   DEFAULT-LINK ; class NAME match FILTER-WORDS : LINK ; class NAME2 ...
 *
 * A frame goes through the link of the first rule it matches (rules in
 * the order written), else through the default link. Up to
 * LE_MAX_CLASSES named classes. Class index 0 is the default link, index
 * i the i-th rule; frames leave with le_frame.cls set, so the data plane
 * can attribute tx and emulation error per class. Each class's link is
 * independent (own queue, serializer, random streams); see link.h for
 * what a link does and the accounting law it keeps.
 *
 * Threading: a path is used by one thread (the lcore). Live
 * reconfiguration builds a new path elsewhere (le_path_init allocates and
 * reads files); the owning thread hands over with le_swap (swap.h), which
 * calls le_path_inherit_at and keeps dequeuing the old path until it
 * holds nothing; then the old one can be freed, by the thread that built
 * it.
 */
#ifndef LE_PATH_H
#define LE_PATH_H

#include <stddef.h>
#include <stdint.h>

#include "class_set.h"
#include "classify.h"
#include "config.h"
#include "counters.h"
#include "frame.h"
#include "link.h"
#include "chain.h"

#define LE_MAX_CLASSES 64
#define LE_CLASS_NAME_MAX 32   /* with its NUL: names of 1 .. 31 of [A-Za-z0-9_-] */
/* Hops after the first, over all classes of a path: the configurations
 * are plain data copied whole, so the pool is bounded (about 23 KiB) and
 * not LE_MAX_HOPS per class (which would be 0.7 MiB per path). */
#define LE_PATH_EXTRA_HOPS 16
/* Hops of the classes that have more than one, over a path: each such
 * class has at least one further hop. */
#define LE_PATH_CHAIN_HOPS_MAX (2 * LE_PATH_EXTRA_HOPS)
#define LE_PATH_TEXT_MAX ((LE_MAX_CLASSES + 1 + LE_PATH_EXTRA_HOPS) * (LE_CONFIG_TEXT_MAX + 640))

/* A class's further hops (`LINK >> LINK ...`): `more` hops after its
 * first (0 for a plain link), configurations extra[first .. first+more)
 * of the path configuration. */
struct le_hops {
	uint8_t more;
	uint8_t first;
};

/* `punt fifo PATH` / `punt shm NAME` right after a class's ':': the
 * class's frames go to an external process first and what it returns
 * goes through the class's link (docs/punt.md). Plain data: the data
 * plane opens the channel (src/plane/punt.h). */
enum le_punt_transport { LE_PUNT_NONE = 0, LE_PUNT_FIFO, LE_PUNT_SHM };
#define LE_PUNT_NAME_MAX 96   /* with its NUL */

struct le_punt_config {
	enum le_punt_transport transport;
	char name[LE_PUNT_NAME_MAX];   /* fifo: path prefix; shm: segment name */
};

const char *le_punt_transport_name(enum le_punt_transport t); /* "fifo", "shm", "" */

struct le_class_config {
	char name[LE_CLASS_NAME_MAX];
	struct le_match match;
	struct le_link_config link;    /* hop 0 */
	struct le_hops hops;
	struct le_punt_config punt;    /* LE_PUNT_NONE: frames go straight to the link */
};

struct le_path_config {
	struct le_link_config dflt;    /* class 0 */
	unsigned nclasses;             /* named classes, 0 .. LE_MAX_CLASSES */
	struct le_class_config cls[LE_MAX_CLASSES];
	struct le_hops dflt_hops;
	unsigned nextra;
	struct le_link_config extra[LE_PATH_EXTRA_HOPS];
};

/* Hops of class `cls` (0 = default), and the configuration of one. */
unsigned le_path_config_hops(const struct le_path_config *c, unsigned cls);
const struct le_link_config *le_path_config_hop(const struct le_path_config *c, unsigned cls, unsigned hop);

void le_path_config_default(struct le_path_config *c);
/* Parses the path grammar; a text without ';' is just the default link.
 * Errors name the class and the word: "class ctl: delay: '1x' is not a
 * time". */
int le_path_config_parse(const char *text, struct le_path_config *out, char *err, size_t errlen);
/* Grammar text that parses back to the same configuration. */
size_t le_path_config_format(const struct le_path_config *c, char *buf, size_t buflen);
int le_path_config_equal(const struct le_path_config *a, const struct le_path_config *b);

/* About 300 KiB: allocate it, do not put it on a stack. A class's link
 * is its last hop (link[k], where frames leave); its earlier hops are
 * allocated at init (up[k]), and chain[k] views them all. */
struct le_path {
	struct le_path_config cfg;
	struct le_frame_ops ops;
	unsigned nlinks;               /* 1 + nclasses */
	int depth;                     /* how far the rules read frames */
	struct le_class_set rules;     /* the class rules, compiled */
	struct le_link link[LE_MAX_CLASSES + 1];
	int chained;                   /* some class has more than one hop */
	struct le_link *up[LE_MAX_CLASSES + 1];
	struct le_chain chain[LE_MAX_CLASSES + 1];
	enum le_direction dir;
	uint64_t punted;               /* bit k-1: class k is punted (ops.punt) */
	/* Links that may hold frames (bit k of word k / 64): le_path_dequeue
	 * asks only these. A path of many classes asked every link on every
	 * burst, and each idle one cost cache misses on lines the frames of
	 * the busy one had pushed out of L1 meanwhile. A link leaves the set
	 * when a dequeue finds it empty (unless a trace moves it while idle,
	 * or the path has hops), and joins again when frames reach it. */
	uint64_t busy[2];
	le_ns_t seen;                  /* the latest time le_path_dequeue was given */
	/* Live changes that led to this path (le_path_inherit_at: the old
	 * path's + 1; 0 for a first one): what its new links are born with. */
	uint64_t generation;
};

/* Sets up every class's link (allocation and file reads happen here,
 * never per frame). The frame operations must outlive the path; `bytes`
 * is needed when there are class rules. -1 with a message naming the
 * class. */
int le_path_init(struct le_path *p, const struct le_path_config *cfg, enum le_direction dir,
		 uint64_t default_seed, const struct le_frame_ops *ops, char *err, size_t errlen);
void le_path_free(struct le_path *p);
/* Every link's clock as the dequeues since it left the busy set would
 * have moved it (see busy). Whatever reads the links' clocks calls it
 * first: le_path_inherit does. */
void le_path_catch_up(struct le_path *p);

/* The class a frame belongs to (0 = default). */
unsigned le_path_classify(const struct le_path *p, void *handle, uint32_t len);
/* Classifies and offers a frame; the path keeps it or frees it. */
void le_path_enqueue(struct le_path *p, void *handle, uint32_t len, le_ns_t arrival);
/* n frames that arrived together, in order: le_path_enqueue of each.
 * Each run of consecutive frames of one class reaches its link in one
 * call (le_link_offer_burst). */
void le_path_enqueue_burst(struct le_path *p, void *const *handles, const uint32_t *lens, unsigned n,
			   le_ns_t arrival);
/* A frame that a punted class's process returned (or injected): into
 * class cls's link directly, without classifying (cls < nlinks). */
void le_path_offer_class(struct le_path *p, unsigned cls, void *handle, uint32_t len, le_ns_t arrival);
/* Chains: hands frames on from hop to hop up to `now` (le_chain_move);
 * le_path_dequeue does it first. */
void le_path_move(struct le_path *p, le_ns_t now);
/* Frames of every class whose deadline <= now, up to max, in deadline
 * order (ties: lower class first). */
unsigned le_path_dequeue(struct le_path *p, le_ns_t now, struct le_frame *out, unsigned max);
/* The same into a sender's three arrays (frame.h; max <= LE_SPLIT_MAX). */
unsigned le_path_dequeue_split(struct le_path *p, le_ns_t now, const struct le_frame_split *out, unsigned max);
/* Everything still held (shutdown), class by class. */
/* Shutdown: frees everything still held, class by class, each counted as
 * a `shutdown` drop of its class (le_link_drain). Returns how many. */
uint64_t le_path_drain(struct le_path *p);
le_ns_t le_path_next_deadline(const struct le_path *p);
uint32_t le_path_depth(const struct le_path *p);

unsigned le_path_classes(const struct le_path *p);                 /* nclasses + 1 */
const char *le_path_class_name(const struct le_path *p, unsigned cls); /* "default" for 0 */
/* A class's counts as one link (le_chain_counters for a chain). */
struct le_counters le_path_class_counters(const struct le_path *p, unsigned cls);
uint32_t le_path_class_depth(const struct le_path *p, unsigned cls);
/* A class's hops (1 for a plain link) and one hop's own counters (the
 * hand-overs included: hop_in, hop_out) and depth. */
unsigned le_path_class_hops(const struct le_path *p, unsigned cls);
const struct le_counters *le_path_hop_counters(const struct le_path *p, unsigned cls, unsigned hop);
uint32_t le_path_hop_depth(const struct le_path *p, unsigned cls, unsigned hop);
/* Sum over classes. */
void le_path_counters(const struct le_path *p, struct le_counters *total);
/* Which class (hop) of its name this is (le_link.born): equal across live
 * changes exactly while they carry its counts, so counts taken earlier
 * (`reset stats`) apply to it only when it is equal. A class's is its
 * first hop's, which continues whenever the class does. */
uint64_t le_path_class_born(const struct le_path *p, unsigned cls);
uint64_t le_path_hop_born(const struct le_path *p, unsigned cls, unsigned hop);

/* Live change at model time `at`: each class of the new path continues
 * the old path's class of the same name (the default link the default
 * one) with its whole state, le_link_inherit; a class with a new name
 * starts fresh (born in the new path's generation), an old class
 * without successor keeps serving what it holds. The new path's links
 * then point at the old ones (for `limit` and counts) until
 * le_path_detach(old), which must come before `old` is freed. le_swap
 * (swap.h) does all of this for a direction. */
void le_path_inherit_at(struct le_path *newp, struct le_path *old, le_ns_t at);
/* The same, at the old path's clock, for a caller that does not keep the
 * old path linked: the links are detached at once (the new path's limit
 * then ignores what the old one still holds). */
void le_path_inherit(struct le_path *newp, struct le_path *old);
/* Before `old` is freed: its classes' counts go to their successors, or
 * to *gone for classes that ended. */
void le_path_detach(struct le_path *old, struct le_counters *gone);
/* The class of `name` ("default" for 0); -1 when none. */
int le_path_class_index(const struct le_path *p, const char *name);
/* Restarts every class's counts (`reset stats`). */
void le_path_reset_counters(struct le_path *p);

#endif
