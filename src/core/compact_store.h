/* The compact store: short frames' bytes, held in fixed 64-byte slots
 * instead of a 2 KiB+ buffer each, for delay lines that hold millions of
 * frames (a second at 10 GbE is 1.5 x 10^7 minimum-size frames).
 *
 * A slab of slots with an intrusive free list (a freed slot keeps the
 * index of the next free one in its first bytes), so slots may be freed
 * in any order: the FIFO line frees in deadline order, the timing wheel
 * out of it, drops and duplicates anywhere. Freed slots are reused last
 * in, first out: on a FIFO line the slot that just left is the next one
 * filled, still in cache. Slots never used yet are handed out by a bump
 * index, so init touches none of the memory.
 *
 * No allocation and no I/O: the caller gives the memory (hugepages in the
 * data plane, malloc in the unit tests). One writer: the lcore that runs
 * the direction's model. A full store refuses (counted); the caller keeps
 * the frame some other way, never losing it. */
#ifndef LE_COMPACT_STORE_H
#define LE_COMPACT_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define LE_COMPACT_SLOT 64u            /* bytes of frame data a slot holds */
#define LE_COMPACT_NONE UINT32_MAX     /* no slot */
#define LE_COMPACT_MAX_SLOTS (UINT32_MAX - 1u)

struct le_compact_store {
	uint8_t *mem;          /* nslots x LE_COMPACT_SLOT, caller's */
	uint32_t nslots;
	uint32_t free_head;    /* a freed slot, or LE_COMPACT_NONE */
	uint32_t bump;         /* slots [bump, nslots) were never used */
	uint32_t in_use;
	uint32_t high_water;   /* most slots in use at once */
	uint64_t stored;       /* frames taken */
	uint64_t full;         /* frames refused: no slot free */
};

/* Bytes of memory a store of nslots needs. */
static inline size_t le_compact_store_bytes(uint32_t nslots)
{
	return (size_t)nslots * LE_COMPACT_SLOT;
}

/* mem: le_compact_store_bytes(nslots) bytes, 8-byte aligned (64 for a
 * slot per cache line), owned by the caller and outliving the store. */
void le_compact_store_init(struct le_compact_store *s, void *mem, uint32_t nslots);

static inline uint8_t *le_compact_data(const struct le_compact_store *s, uint32_t idx)
{
	return s->mem + (size_t)idx * LE_COMPACT_SLOT;
}

/* A free slot's index, or LE_COMPACT_NONE when every slot is in use (and
 * counted in `full`). */
static inline uint32_t le_compact_alloc(struct le_compact_store *s)
{
	uint32_t idx = s->free_head;
	if (idx != LE_COMPACT_NONE) {
		memcpy(&s->free_head, le_compact_data(s, idx), sizeof(uint32_t));
	} else if (s->bump < s->nslots) {
		idx = s->bump++;
	} else {
		s->full++;
		return LE_COMPACT_NONE;
	}
	if (++s->in_use > s->high_water)
		s->high_water = s->in_use;
	s->stored++;
	return idx;
}

/* Copies len (<= LE_COMPACT_SLOT) bytes into a new slot: its index, or
 * LE_COMPACT_NONE when full (counted) or too long (not counted: the
 * caller decides which frames to offer). */
static inline uint32_t le_compact_put(struct le_compact_store *s, const void *bytes, uint32_t len)
{
	if (len > LE_COMPACT_SLOT)
		return LE_COMPACT_NONE;
	uint32_t idx = le_compact_alloc(s);
	if (idx != LE_COMPACT_NONE)
		memcpy(le_compact_data(s, idx), bytes, len);
	return idx;
}

/* Gives a slot back; its bytes are the store's again. */
static inline void le_compact_release(struct le_compact_store *s, uint32_t idx)
{
	memcpy(le_compact_data(s, idx), &s->free_head, sizeof(uint32_t));
	s->free_head = idx;
	s->in_use--;
}

#endif
