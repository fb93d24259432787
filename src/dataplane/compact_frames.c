/* Memory for frames (compact_frames.h): the compact stores, the mbuf
 * pool and the send pool, sized from the configured links and refused at
 * start, with the figures, when the hugepages cannot hold them. */
#include "compact_frames.h"

#include <inttypes.h>
#include <stdio.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "fastpath.h"
#include "model_slot.h"

#define MIB (1024.0 * 1024.0)

/* Frames in a send pool mbuf: one slot, after the usual headroom. */
#define TX_DATA_ROOM (RTE_PKTMBUF_HEADROOM + LE_COMPACT_SLOT)

uint64_t dp_frames_held_mbufs(const struct dp_options *o)
{
	/* Without the store every held frame has its mbuf: the active model
	 * and those still draining after a change (model_slot.h). */
	uint64_t all = (uint64_t)DP_MODEL_LIMITS * o->max_limit;
	if (o->no_compact)
		return all;
	if (o->held_mbufs)
		return o->held_mbufs;
	return all < DP_HELD_MBUFS_DEFAULT ? all : DP_HELD_MBUFS_DEFAULT;
}

/* Bytes of one mbuf of the given data room, as the mempool lays it out. */
static uint64_t mbuf_bytes(unsigned data_room)
{
	struct rte_mempool_objsz sz;
	return rte_mempool_calc_obj_size((uint32_t)(sizeof(struct rte_mbuf) + data_room), 0, &sz);
}

void dp_frames_plan(struct dp_frames_plan *p, const struct dp_options *o, uint64_t other_mbufs,
		    unsigned tx_mbufs)
{
	*p = (struct dp_frames_plan){0};
	p->held_mbufs = dp_frames_held_mbufs(o);
	uint64_t n = other_mbufs + LE_DIRS * p->held_mbufs;
	p->pool_mbufs = n > UINT32_MAX ? UINT32_MAX : (unsigned)n;
	p->pool_bytes = (uint64_t)p->pool_mbufs * mbuf_bytes(RTE_MBUF_DEFAULT_BUF_SIZE);
	if (o->no_compact)
		return;
	for (int d = 0; d < LE_DIRS; d++) {
		/* What the direction's classes may hold (what `limit` counts,
		 * duplicates included), plus compact frames already out of the
		 * model that wait for a send mbuf. A live change to a larger
		 * limit, or the overlap of two models after one, spills over
		 * into mbufs (held_mbufs). */
		uint64_t s = dp_path_frame_limit(&o->path[d]) + 2 * DP_BURST_MAX;
		p->slots[d] = s > LE_COMPACT_MAX_SLOTS ? LE_COMPACT_MAX_SLOTS : (uint32_t)s;
		p->store_bytes += le_compact_store_bytes(p->slots[d]);
	}
	/* Never later than three quarters of the held mbufs, or the pool
	 * could run dry before the store takes over: once it does, the short
	 * frames in mbufs grow only by what arrives before the next check
	 * (64 bursts, offer_to_model), and the last quarter is left to the
	 * frames over 64 bytes, which always keep theirs. */
	uint64_t after = o->compact_after_set ? o->compact_after : DP_COMPACT_AFTER_DEFAULT;
	uint64_t most = p->held_mbufs - p->held_mbufs / 4;
	p->compact_after = (uint32_t)(after < most ? after : most);
	p->tx_mbufs = tx_mbufs;
	p->tx_bytes = (uint64_t)tx_mbufs * mbuf_bytes(TX_DATA_ROOM);
}

/* Free 2 MiB hugepages of the machine, for the error message; -1 unknown. */
static long free_hugepages_mib(void)
{
	FILE *f = fopen("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "r");
	long n = -1;
	if (f) {
		if (fscanf(f, "%ld", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n < 0 ? -1 : n * 2;
}

static void say_needed(const struct dp_frames_plan *p, const char *what, char *err, size_t errlen)
{
	uint64_t total = p->store_bytes + p->pool_bytes + p->tx_bytes;
	long free_mib = free_hugepages_mib();
	char avail[64] = "";
	if (free_mib >= 0)
		snprintf(avail, sizeof(avail), "; %ld MiB of 2 MiB hugepages are free", free_mib);
	if (!p->store_bytes) { /* --no-compact: every held frame has its mbuf */
		snprintf(err, errlen,
			 "cannot allocate %s: frames need %.0f MiB of hugepage memory (mbuf pool: %u mbufs, %" PRIu64
			 " per direction for held frames, 3 x --max-limit)%s: reserve more hugepages "
			 "(scripts/setup.sh), or lower `limit`/--max-limit, or drop --no-compact",
			 what, total / MIB, p->pool_mbufs, p->held_mbufs, avail);
		return;
	}
	snprintf(err, errlen,
		 "cannot allocate %s: frames need %.0f MiB of hugepage memory in all (compact store %.1f MiB: "
		 "%u + %u slots of %u bytes, one per frame the limits allow; mbuf pool %.0f MiB: %u mbufs, "
		 "%" PRIu64 " per direction for held frames over %u bytes (--held-mbufs); send pool %.0f MiB)%s: "
		 "reserve more hugepages (scripts/setup.sh), or lower `limit`/--max-limit or --held-mbufs",
		 what, total / MIB, p->store_bytes / MIB, p->slots[0], p->slots[1], LE_COMPACT_SLOT,
		 p->pool_bytes / MIB, p->pool_mbufs, p->held_mbufs, LE_COMPACT_SLOT, p->tx_bytes / MIB, avail);
}

int dp_frames_create(struct dp_frames *f, const struct dp_frames_plan *p, unsigned cache, char *err,
		     size_t errlen)
{
	char what[96];
	int socket = (int)rte_socket_id();
	*f = (struct dp_frames){0};
	for (int d = 0; d < LE_DIRS; d++) {
		if (!p->slots[d])
			continue;
		/* Hugepages: a store of a gigabyte walked by one lcore would
		 * miss the TLB on nearly every frame with 4 KiB pages. */
		void *mem = rte_malloc_socket("linkemu_compact", le_compact_store_bytes(p->slots[d]),
					      RTE_CACHE_LINE_SIZE, socket);
		f->store[d] = rte_malloc_socket("linkemu_compact_store", sizeof(*f->store[d]), RTE_CACHE_LINE_SIZE,
						socket);
		if (!mem || !f->store[d]) {
			rte_free(mem);
			snprintf(what, sizeof(what), "the %s compact store (%u slots)", le_direction_name(d),
				 p->slots[d]);
			goto fail;
		}
		le_compact_store_init(f->store[d], mem, p->slots[d]);
	}
	f->pool = rte_pktmbuf_pool_create("linkemu_mbufs", p->pool_mbufs, cache, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					  socket);
	if (!f->pool) {
		snprintf(what, sizeof(what), "%u mbufs (%s)", p->pool_mbufs, rte_strerror(rte_errno));
		goto fail;
	}
	if (p->tx_mbufs) {
		f->tx_pool = rte_pktmbuf_pool_create("linkemu_tx", p->tx_mbufs, cache, 0, TX_DATA_ROOM, socket);
		if (!f->tx_pool) {
			snprintf(what, sizeof(what), "the send pool of %u mbufs (%s)", p->tx_mbufs,
				 rte_strerror(rte_errno));
			goto fail;
		}
	}
	return 0;
fail:
	say_needed(p, what, err, errlen);
	dp_frames_free(f);
	return -1;
}

void dp_frames_free(struct dp_frames *f)
{
	for (int d = 0; d < LE_DIRS; d++) {
		if (f->store[d]) {
			rte_free(f->store[d]->mem);
			rte_free(f->store[d]);
		}
		f->store[d] = NULL;
	}
	rte_mempool_free(f->pool);
	rte_mempool_free(f->tx_pool);
	f->pool = f->tx_pool = NULL;
}
