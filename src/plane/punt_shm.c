/* The shared-memory transport of punted classes: /dev/shm/NAME, two
 * SPSC rings, a lock for liveness, a futex for wake-ups (docs/punt.md). */
#define _GNU_SOURCE /* F_OFD_SETLK */
#include "punt_chan.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "err.h"

static void futex_wake(uint32_t *addr)
{
	(void)syscall(SYS_futex, addr, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

unsigned punt_shm_read(struct dp_punt_set *s, struct chan *c, struct le_swap *swap, le_ns_t now)
{
	unsigned got = 0, skipped = 0;
	const uint8_t *slot;
	struct punt_hdr h;

	while (got < TAKE_MAX && (slot = punt_ring_peek(&c->in)) != NULL) {
		/* The process owns head: one more than `slots` ahead of our
		 * tail cannot hold records (it is garbage or a bug). Read on,
		 * stale slots would come back as new frames (injected) lap
		 * after lap, and the drain when the process dies would walk up
		 * to 2^32 of them in the forwarding thread. A protocol error:
		 * skip to its head, so a process that goes on correctly from
		 * there is read again. */
		if (c->in.other - c->in.local > c->in.mask + 1) {
			c->st.protocol_errors++;
			c->in.local = c->in.other;
			skipped = 1;
			break;
		}
		punt_hdr_get(slot, &h);
		if (h.len > PUNT_FRAME_MAX || h.flags != 0)
			c->st.protocol_errors++; /* a slot stands alone: skip it */
		else
			punt_deliver(s, c, swap, &h, slot + PUNT_HDR_LEN, now);
		punt_ring_pop(&c->in);
		got++;
	}
	if (got || skipped)
		punt_ring_release(&c->in);
	return got;
}

/* The process holds a write lock on byte 0 while attached. Trying to take
 * it tells whether one is there; when none is, we hold it for the
 * moment, so no process attaches while the rings are reset (a process
 * waits for the lock: F_SETLKW). */
void punt_shm_check(struct dp_punt_set *s, struct chan *c, struct le_swap *swap, le_ns_t now)
{
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};

	if (fcntl(c->shm_fd, F_OFD_SETLK, &fl) == 0) {
		if (c->st.up) {
			/* What ring 1 held, at most a ring's worth: a peer that
			 * let its lock go but goes on producing must not keep
			 * the forwarding thread here. */
			unsigned k, n = 0;
			while (n <= c->in.mask && (k = punt_shm_read(s, c, swap, now)) > 0)
				n += k;
			/* Ring 0 has no consumer now: empty it. */
			__atomic_store_n(&c->out.ctl->tail, c->out.local, __ATOMIC_RELEASE);
			__atomic_store_n(&c->out.ctl->waiting, 0, __ATOMIC_RELAXED);
			c->out.other = c->out.local;
			c->seg->peer_pid = 0;
			punt_lost(c, "its lock on the segment is free");
		}
		fl.l_type = F_UNLCK;
		(void)fcntl(c->shm_fd, F_OFD_SETLK, &fl);
		return;
	}
	if (!c->st.up) {
		c->st.up = 1;
		punt_say(c, "process attached");
	}
	c->st.peer_pid = __atomic_load_n(&c->seg->peer_pid, __ATOMIC_RELAXED);
}

int punt_shm_open(struct chan *c, char *err, size_t errlen)
{
	char name[LE_PUNT_NAME_MAX + 2];
	size_t len = punt_shm_size(PUNT_SHM_SLOTS);

	c->shm_fd = -1;
	snprintf(name, sizeof(name), "/%s", c->cfg.name);
	/* A segment left by a daemon that did not stop cleanly is replaced. */
	(void)shm_unlink(name);
	c->shm_fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (c->shm_fd < 0)
		return le_err(err, errlen, "cannot create the segment /dev/shm/%s: %s", c->cfg.name, strerror(errno));
	(void)fchmod(c->shm_fd, 0666);
	if (ftruncate(c->shm_fd, (off_t)len) < 0)
		return le_err(err, errlen, "cannot size /dev/shm/%s to %zu bytes: %s", c->cfg.name, len, strerror(errno));
	c->seg = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, c->shm_fd, 0);
	if (c->seg == MAP_FAILED) {
		c->seg = NULL;
		return le_err(err, errlen, "cannot map /dev/shm/%s: %s", c->cfg.name, strerror(errno));
	}
	c->seg_len = len;
	c->seg->version = PUNT_VERSION;
	c->seg->slots = PUNT_SHM_SLOTS;
	c->seg->slot_size = PUNT_SLOT_SIZE;
	c->seg->daemon_pid = (int32_t)getpid();
	c->seg->ring_off[0] = PUNT_SHM_HEAD;
	c->seg->ring_off[1] = PUNT_SHM_HEAD + PUNT_RING_CTL + (uint64_t)PUNT_SHM_SLOTS * PUNT_SLOT_SIZE;
	punt_ring_view_init(&c->out, c->seg, c->seg->ring_off[0], PUNT_SHM_SLOTS);
	punt_ring_view_init(&c->in, c->seg, c->seg->ring_off[1], PUNT_SHM_SLOTS);
	__atomic_store_n(&c->seg->magic, PUNT_MAGIC, __ATOMIC_RELEASE);
	return 0;
}

void punt_shm_close(struct chan *c)
{
	char name[LE_PUNT_NAME_MAX + 2];

	if (c->seg) {
		__atomic_store_n(&c->seg->closed, 1, __ATOMIC_RELEASE);
		/* a process asleep on ring 0 wakes, sees `closed` and may exit */
		futex_wake(&c->out.ctl->head);
		munmap(c->seg, c->seg_len);
		c->seg = NULL;
	}
	if (c->shm_fd >= 0) {
		close(c->shm_fd);
		c->shm_fd = -1;
		snprintf(name, sizeof(name), "/%s", c->cfg.name);
		(void)shm_unlink(name);
	}
}

int punt_shm_queue(struct chan *c, const uint8_t *b, uint32_t len)
{
	uint8_t *slot = punt_ring_reserve(&c->out);

	if (slot == NULL)
		return -1;
	punt_hdr_put(slot, len, c->next_seq++);
	memcpy(slot + PUNT_HDR_LEN, b, len);
	punt_ring_push(&c->out);
	c->pushed++;
	c->st.sent++;
	return 0;
}

void punt_shm_publish(struct chan *c)
{
	if (c->pushed == 0)
		return;
	/* a futex wake only when the process said it sleeps */
	if (punt_ring_publish(&c->out))
		futex_wake(&c->out.ctl->head);
	c->pushed = 0;
}
