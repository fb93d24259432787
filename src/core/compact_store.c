/* The compact store (compact_store.h); the fast operations are inline. */
#include "compact_store.h"

void le_compact_store_init(struct le_compact_store *s, void *mem, uint32_t nslots)
{
	memset(s, 0, sizeof(*s));
	s->mem = mem;
	s->nslots = nslots;
	s->free_head = LE_COMPACT_NONE;
}
