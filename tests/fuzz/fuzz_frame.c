/* libFuzzer target: arbitrary bytes as a frame (0..9000 bytes) through a
 * path with class rules: header reading (pkt.c), matching (classify.c),
 * and the stages that write into frames (corrupt, ECN marking with its
 * checksum update, CoDel ECN), as the data plane would run them.
 *
 * The first input byte picks one of the rule sets below and whether the
 * frame's bytes are all contiguous or cut short (a chained mbuf); the rest
 * is the frame. Every frame copy is its own exact-size allocation, so a
 * read or write one byte past it is an ASan report.
 *
 * Oracle: every frame offered is, after a dequeue far in the future,
 * either sent or freed exactly once (no leak, no double free: ASan), and
 * the path's books balance: rx + dup = tx + dropped + in flight. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ecn.h"
#include "path.h"
#include "pkt.h"

#define MAX_FRAME 9000

struct frame {
	uint32_t len, contiguous;
	uint8_t data[];
};

static void *frame_new(const uint8_t *bytes, uint32_t len, uint32_t contiguous)
{
	struct frame *f = malloc(sizeof(*f) + len);
	if (f == NULL)
		abort();
	f->len = len;
	f->contiguous = contiguous;
	memcpy(f->data, bytes, len);
	return f;
}

static void *op_clone(void *ctx, void *h)
{
	const struct frame *f = h;
	(void)ctx;
	return frame_new(f->data, f->len, f->contiguous);
}

static void op_free(void *ctx, void *h)
{
	(void)ctx;
	free(h);
}

static uint8_t *op_bytes(void *ctx, void *h, uint32_t *contiguous)
{
	struct frame *f = h;
	(void)ctx;
	*contiguous = f->contiguous;
	return f->len ? f->data : NULL;
}

/* Rule sets: every filter word, at every depth, with links whose stages
 * write into frames. */
static const char *const rule_sets[] = {
	"corrupt 100% ; class v match vlan 7 ether ipv6 : delay 1ms ; class e match ether 0x88b5 : loss 1%",
	"delay 1ms loss 50% ecn ; class t match proto tcp dport 80-443 src 198.18.0.0/15 : corrupt 50% duplicate 50% ; "
	"class u match proto udp sport 53 dst 2001:db8::/32 : delay 2ms 1ms reorder 10% ; class s match port 9-9 proto sctp : delay 1ms",
	"rate 1gbit limit 100 codel target 1us interval 1us ecn ; class d match dscp ef : loss 10% ecn ; "
	"class a match dscp af41 ether ipv4 : corrupt 10% ; class c match dscp cs1 proto icmpv6 : delay 3ms",
	"delay 1ms ; class x match src ::1/128 : loss 100% ; class y match dst 0.0.0.0/0 proto 17 : duplicate 100% corrupt 100%",
};
#define NSETS (sizeof(rule_sets) / sizeof(rule_sets[0]))

static struct le_path paths[NSETS];
static const struct le_frame_ops ops = { NULL, op_clone, op_free, op_bytes, NULL, NULL };

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static struct le_path_config cfg;
	char err[LE_ERR_MAX];

	(void)argc;
	(void)argv;
	for (unsigned k = 0; k < NSETS; k++)
		if (le_path_config_parse(rule_sets[k], &cfg, err, sizeof(err)) ||
		    le_path_init(&paths[k], &cfg, LE_DIR_A2B, 42, &ops, err, sizeof(err))) {
			fprintf(stderr, "fuzz_frame: rule set %u: %s\n", k, err);
			abort();
		}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static le_ns_t now = 1;
	struct le_frame out[64];
	struct le_counters c;
	struct le_pkt pkt;
	uint32_t len, contiguous;
	struct le_path *p;
	uint8_t *copy;

	if (size < 1 || size - 1 > MAX_FRAME)
		return -1;
	p = &paths[data[0] % NSETS];
	len = (uint32_t)(size - 1);
	contiguous = (data[0] & 0x80) && len > 34 ? 34 : len; /* a chained mbuf: headers cut */

	/* The header reader on its own, at every depth, and ECN marking. */
	for (int depth = LE_PKT_L2; depth <= LE_PKT_L4; depth++)
		le_pkt_parse(data + 1, len, depth, &pkt);
	copy = malloc(len ? len : 1);
	memcpy(copy, data + 1, len);
	le_ecn_set_ce(copy, len);
	free(copy);

	/* Through the path, then everything out. */
	now += 1000;
	le_path_enqueue(p, frame_new(data + 1, len, contiguous), len, now);
	now += 10 * LE_NS_PER_MS;
	for (unsigned n; (n = le_path_dequeue(p, now, out, 64)) > 0;)
		for (unsigned i = 0; i < n; i++)
			free(out[i].handle);
	le_path_counters(p, &c);
	if (!le_counters_conserved(&c, le_path_depth(p))) {
		fprintf(stderr, "fuzz_frame: books do not balance\n");
		abort();
	}
	return 0;
}
