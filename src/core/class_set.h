/* A path's class rules compiled for lookup: first-match semantics (the
 * lowest-numbered matching rule wins, as a linear scan would find), at a
 * cost that grows with the number of distinct rule shapes rather than the
 * number of rules.
 *
 * Rules that test fields for equality (ether, vlan, proto, single-port
 * sport/dport, dscp, and src/dst prefixes, masked to their length) are
 * grouped by shape: the set of fields and the prefix lengths and
 * families (tuple space search). Each group is a hash table from the
 * frame's values of those fields to the lowest rule index with them, so a
 * group costs one key build and one probe whatever its size. Rules with a
 * port range or `port` (either side) are matched one by one. Groups and
 * the rules matched one by one are visited in order of their lowest rule
 * index and skipped once a lower-numbered match is found.
 *
 * A group that tests a port also keeps the set of its port values as a
 * bitmap: a frame whose port no rule holds (the default class's frames,
 * in a set of rules per port) is refused there, before its key is built
 * or hashed; in the burst form, from its port's two bytes alone.
 *
 * Few rules, or as many shapes as rules, are cheaper scanned: the set
 * then keeps the plain scan (`compiled` 0).
 *
 * Frames of the two plain shapes (IPv4 with a 20-byte header and no VLAN
 * tag; not IP) skip the parse: a set of up to LE_CLASS_FAST_MAX rules is
 * also compiled to masks and ranges tested on their bytes (class_fast.h),
 * and a larger set of hashed groups builds their keys from the bytes. */
#ifndef LE_CLASS_SET_H
#define LE_CLASS_SET_H

#include <stdint.h>

#include "class_fast.h"
#include "classify.h"
#include "pkt.h"

/* A group's key: the values of its fields as six 64-bit words, 0-1 the
 * source address (masked to the group's prefix), 2-3 the destination, 4
 * ethertype | vlan << 16 | sport << 32 | dport << 48, 5 proto | dscp << 8;
 * the fields the group does not test are zero. */
#define LE_CS_WORDS 6

struct le_cs_entry {
	uint64_t key[LE_CS_WORDS];
	uint64_t hash; /* the key's: a probe compares it before the words */
	uint32_t rule; /* rule index + 1; 0 = empty */
};

struct le_cs_group {
	unsigned fields;          /* LE_M_* tested (equality fields only) */
	int src_family, dst_family;
	uint8_t src_len, dst_len; /* prefix lengths in bits */
	uint32_t first;           /* lowest rule index in the group */
	uint32_t mask;            /* table size - 1 */
	unsigned words;           /* bit i: the key's word i can be non-zero
				   * (the only words hashed and compared) */
	uint32_t src4_mask, dst4_mask; /* IPv4 prefixes: the mask's bytes as
					* they lie in the frame */
	/* A plain IPv4 frame's key (plain4_words), without a branch per
	 * field: words 4 and 5 masked to the group's fields. */
	int plain4_never;         /* a field a plain IPv4 frame cannot match (vlan, IPv6) */
	int plain4_ports;         /* needs the ports */
	uint64_t mask4, mask5;
	struct le_cs_entry *table;
	/* The port filter: a group that tests dport (else sport) keeps a
	 * bit per port value its rules hold (8 KB), so a frame whose port
	 * is in none of them (in a per-port set, the frames of the default
	 * class) is refused by one load, without a hash or a probe. NULL:
	 * the group tests neither port. */
	uint64_t *ports;
	unsigned port_shift;      /* the port's place in key word 4 (48 or 32) */
	unsigned port_off;        /* ... and in a plain IPv4 frame (36 or 34) */
};

struct le_class_set {
	struct le_match *rules;       /* a copy, for the scans */
	unsigned nrules;
	int compiled;
	unsigned ngroups;
	struct le_cs_group *group;    /* in order of `first` */
	unsigned nscan;
	uint32_t *scan;               /* rules matched one by one, ascending */
	struct le_class_fast fast;    /* a small set, for the plain shapes */
};

/* Compiles n rules (copied). -1 on allocation failure. */
int le_class_set_build(struct le_class_set *s, const struct le_match *const *rules, unsigned n);
void le_class_set_free(struct le_class_set *s);
/* 1 + the index of the first rule the frame matches, 0 when none. */
unsigned le_class_set_lookup(const struct le_class_set *s, const struct le_pkt *p);
/* The class of a frame from its first len bytes (1 + the index of the
 * first rule it matches, 0 when none): le_class_set_lookup of what
 * le_pkt_parse reads to `depth`, which must reach every rule's fields
 * (le_match_depth), as a path's does. The plain shapes are read straight
 * from the bytes (class_fast.h); le_class_set_classify_parsed does the
 * rest. */
unsigned le_class_set_classify_parsed(const struct le_class_set *s, const uint8_t *b, uint32_t len, int depth);
static inline unsigned le_class_set_classify(const struct le_class_set *s, const uint8_t *b, uint32_t len,
					     int depth)
{
	int k = le_class_fast_lookup(&s->fast, b, len);

	return k >= 0 ? (unsigned)k : le_class_set_classify_parsed(s, b, len, depth);
}
/* The same for n <= LE_CS_BURST frames at once, the class of frame i into
 * cls[i]: a large per-flow set overlaps the frames' lookups. */
#define LE_CS_BURST 64
void le_class_set_classify_burst(const struct le_class_set *s, const uint8_t *const *b, const uint32_t *len,
				 unsigned n, int depth, unsigned *cls);
/* The same by a linear scan: the reference the tests compare with. */
unsigned le_class_set_scan(const struct le_match *rules, unsigned n, const struct le_pkt *p);

#endif
