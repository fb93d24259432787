/* linkemuk's forwarding thread at its ending (src/kernel/kloop.c): the
 * frames already due are sent in both directions, the rest counted as
 * `shutdown`, even when one direction's output cannot take a frame. The
 * "interfaces" are AF_UNIX datagram pairs: ksock_send works on any
 * socket, and a pair whose reader never reads refuses the 11th datagram
 * (EAGAIN), as a full send buffer does. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kloop.h"
#include "minitest.h"

static struct kloop l; /* large */

static void test_shutdown_backpressure(void)
{
	char err[LE_ERR_MAX] = "";
	int stuck[2], free_[2];
	struct le_frame_ops ops;
	struct le_path_config cfg;

	CHECK(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, stuck) == 0);
	CHECK(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, free_) == 0);
	int small = 4096; /* a pair's datagrams wait in the sender's buffer */
	CHECK(setsockopt(stuck[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)) == 0);
	memset(&l, 0, sizeof(l));
	/* a2b goes out on "B" (never read: backpressure), b2a on "A" */
	l.sock[1].fd = stuck[0];
	l.sock[0].fd = free_[0];
	CHECK(kbuf_pool_init(&l.pool, 4096, err, sizeof(err)) == 0, "%s", err);
	ops = kbuf_frame_ops(&l.pool);
	l.burst = 32;
	CHECK(le_path_config_parse("delay 1ms", &cfg, err, sizeof(err)) == 0, "%s", err);
	for (int d = 0; d < LE_DIRS; d++) {
		struct kdir *dir = &l.dir[d];
		dir->in = &l.sock[d == LE_DIR_A2B ? 0 : 1];
		dir->out = &l.sock[d == LE_DIR_A2B ? 1 : 0];
		struct dp_model *m = dp_model_new(&cfg, (enum le_direction)d, 1, &ops, err, sizeof(err));
		CHECK(m != NULL && dp_model_slot_init(&dir->models, m, 1000, err, sizeof(err)) == 0, "%s", err);
		/* 100 frames, all due by the time the daemon stops */
		for (int i = 0; i < 100; i++) {
			uint8_t *b = kbuf_get(&l.pool);
			if (b == NULL)
				break;
			memset(kbuf_data(b), i, 64);
			*kbuf_len(b) = 64;
			dir->ctr.rx++;
			dp_model_slot_offer(&dir->models, b, 64, kclock_now() - 10 * LE_NS_PER_MS);
		}
	}
	kloop_shutdown(&l, 50);
	struct kdir_snapshot s[LE_DIRS];
	kloop_snapshot(&l, s);
	for (int d = 0; d < LE_DIRS; d++) {
		uint64_t shut = s[d].ctr.drop[DP_DROP_SHUTDOWN] + s[d].models.ctr.drop[LE_DROP_SHUTDOWN];
		printf("%s: tx %llu shutdown %llu held %u depth %u\n", le_direction_name(d),
		       (unsigned long long)s[d].ctr.tx, (unsigned long long)shut, s[d].held, s[d].models.depth);
		CHECK(s[d].ctr.tx + shut == 100 && s[d].held == 0 && s[d].models.depth == 0, "%s: books",
		      le_direction_name(d));
	}
	CHECK(s[LE_DIR_A2B].ctr.tx < 100, "a2b's output was stuck");
	CHECK(s[LE_DIR_B2A].ctr.tx == 100, "b2a's due frames leave though a2b's output is stuck: %llu sent",
	      (unsigned long long)s[LE_DIR_B2A].ctr.tx);
	CHECK(kbuf_in_use(&l.pool) == 0, "%u buffers not freed", kbuf_in_use(&l.pool));
	for (int d = 0; d < LE_DIRS; d++)
		dp_model_slot_fini(&l.dir[d].models);
	kbuf_pool_fini(&l.pool);
	close(stuck[0]);
	close(stuck[1]);
	close(free_[0]);
	close(free_[1]);
}

int main(void)
{
	test_shutdown_backpressure();
	printf("test_kloop: %u passed, %u failed\n", mt_passed, mt_failed);
	return mt_failed ? 1 : 0;
}
