/* One interface as the kernel-socket data plane sees it: a raw AF_PACKET
 * socket bound to it, promiscuous, that does not see its own sends
 * (PACKET_IGNORE_OUTGOING) and sends past the qdisc (PACKET_QDISC_BYPASS:
 * like a DPDK port, no second queue the link model does not know of).
 *
 * I/O is recvmmsg/sendmmsg in bursts, not PACKET_MMAP rings: the link
 * model holds frames for as long as the delay says (milliseconds to
 * seconds), far longer than a ring slot may stay taken, so frames must be
 * copied out of an rx ring anyway. recvmmsg copies each frame once,
 * straight into the buffer the model will hold, which is the same copy
 * without a ring's bookkeeping (block retirement, tx slot status). */
#ifndef K_SOCK_H
#define K_SOCK_H

#include <stddef.h>
#include <stdint.h>

#include "port_counters.h"

struct ksock {
	int fd;
	int ifindex;
	char name[32];
	int mtu;
	uint64_t kernel_drops;   /* PACKET_STATISTICS tp_drops, summed (reading resets it) */
	uint64_t send_errors;    /* frames the kernel refused to send (not EAGAIN) */
	int error;               /* the last error a receive or send met (not EAGAIN), until ksock_lost */
	/* Why the last ksock_send left frames: 0 (it did not), K_FULL (the
	 * socket's buffer: POLLOUT says when it has room) or K_REFUSED (the
	 * device would not take one now, ENOBUFS: a driver's full queue, or
	 * a veth whose peer is down; no event tells when, so retry later). */
	int blocked;
};

enum { K_FULL = 1, K_REFUSED = 2 };

/* Opens and binds; -1 with a message naming the interface. */
int ksock_open(struct ksock *s, const char *ifname, char *err, size_t errlen);
void ksock_close(struct ksock *s);

/* Receives up to n frames into buf[i] (cap bytes each, with the VLAN tag
 * the kernel took off put back); len[i] is each frame's length on the
 * wire, tag included, also when it did not fit: then len[i] > cap and
 * buf[i] holds part of it. Returns the count, 0 when none waits. */
unsigned ksock_recv(struct ksock *s, uint8_t *const *buf, uint32_t cap, uint32_t *len, unsigned n);
/* Sends frames in order; returns how many the kernel took (the rest wait:
 * `blocked` says why). A frame the kernel refuses for good (not a full
 * buffer) counts as taken and in send_errors, so one bad frame never
 * blocks the rest. */
unsigned ksock_send(struct ksock *s, uint8_t *const *buf, const uint32_t *len, unsigned n);
/* 0 while s can carry frames; -1 when it never will again, with why (to
 * follow "interface 'NAME' "). Clears `error`.
 *
 * Deleted is lost: the kernel unbinds a packet socket from a device it
 * unregisters (getsockname then shows another ifindex), and a device made
 * later under the same name is another device. Down is not: the kernel
 * re-arms the socket when its device comes up again, and until then a
 * send is refused (a send error) as on a real link whose port is down.
 * A socket that polls as closed or hung up is lost too (a packet socket
 * never hangs up; the tests' AF_UNIX stand-ins do).
 *
 * A poll and a getsockname: for after an error, and now and then (a
 * device deleted while down gives no error at all). */
int ksock_lost(struct ksock *s, char *why, size_t whylen);
/* Folds the kernel's drop counter in and fills c (imissed = tp_drops,
 * oerrors = send errors). Only the forwarding thread (or after it). */
void ksock_counters(struct ksock *s, struct dp_port_counters *c);

#endif
