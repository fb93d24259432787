#define _GNU_SOURCE /* recvmmsg, sendmmsg */
#include "ksock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define K_BATCH_MAX 512u
#define K_SOCKBUF_BYTES (4 << 20)

int ksock_open(struct ksock *s, const char *ifname, char *err, size_t errlen)
{
	*s = (struct ksock){.fd = -1};
	snprintf(s->name, sizeof(s->name), "%s", ifname);
	s->ifindex = (int)if_nametoindex(ifname);
	if (s->ifindex == 0) {
		snprintf(err, errlen, "interface '%s': %s", ifname, strerror(errno));
		return -1;
	}
	s->fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(ETH_P_ALL));
	if (s->fd < 0) {
		snprintf(err, errlen, "interface '%s': AF_PACKET socket: %s%s", ifname, strerror(errno),
			 errno == EPERM ? " (needs CAP_NET_RAW)" : "");
		return -1;
	}
	int one = 1, bytes = K_SOCKBUF_BYTES;
	struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL), .sll_ifindex = s->ifindex};
	struct packet_mreq mr = {.mr_ifindex = s->ifindex, .mr_type = PACKET_MR_PROMISC};
	struct ifreq ifr = {0};
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	const char *what = NULL;
	if (setsockopt(s->fd, SOL_PACKET, PACKET_AUXDATA, &one, sizeof(one)))
		what = "PACKET_AUXDATA";
	else if (setsockopt(s->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)))
		what = "PACKET_IGNORE_OUTGOING (Linux >= 4.20)";
	else if (setsockopt(s->fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one)))
		what = "PACKET_QDISC_BYPASS";
	else if (bind(s->fd, (struct sockaddr *)&sll, sizeof(sll)))
		what = "bind";
	else if (setsockopt(s->fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)))
		what = "promiscuous mode";
	else if (ioctl(s->fd, SIOCGIFMTU, &ifr))
		what = "MTU";
	if (what) {
		snprintf(err, errlen, "interface '%s': %s: %s", ifname, what, strerror(errno));
		ksock_close(s);
		return -1;
	}
	/* Larger socket buffers absorb a burst while the thread sleeps; the
	 * kernel caps them at rmem_max/wmem_max (FORCE needs CAP_NET_ADMIN). */
	if (setsockopt(s->fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof(bytes)))
		(void)setsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
	if (setsockopt(s->fd, SOL_SOCKET, SO_SNDBUFFORCE, &bytes, sizeof(bytes)))
		(void)setsockopt(s->fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof(bytes));
	s->mtu = ifr.ifr_mtu;
	return 0;
}

void ksock_close(struct ksock *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

/* The kernel hands an 802.1Q/802.1ad tag it (or the driver) took off the
 * frame to the socket beside it, in auxdata. The link must forward the
 * frame as it was on the wire, so the tag goes back in after the MACs.
 * Returns 1 with the tag's 4 bytes in tag[] when there is one. */
static int taken_vlan(struct msghdr *mh, uint16_t tag[2])
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level != SOL_PACKET || c->cmsg_type != PACKET_AUXDATA)
			continue;
		struct tpacket_auxdata aux;
		memcpy(&aux, CMSG_DATA(c), sizeof(aux));
		if (!(aux.tp_status & TP_STATUS_VLAN_VALID))
			return 0;
		uint16_t tpid = (aux.tp_status & TP_STATUS_VLAN_TPID_VALID) ? aux.tp_vlan_tpid : ETH_P_8021Q;
		tag[0] = htons(tpid);
		tag[1] = htons(aux.tp_vlan_tci);
		return 1;
	}
	return 0;
}

unsigned ksock_recv(struct ksock *s, uint8_t *const *buf, uint32_t cap, uint32_t *len, unsigned n)
{
	struct mmsghdr msg[K_BATCH_MAX];
	struct iovec iov[K_BATCH_MAX];
	/* One tpacket_auxdata per frame (aligned as cmsg wants). */
	static _Thread_local union {
		struct cmsghdr align;
		char b[CMSG_SPACE(sizeof(struct tpacket_auxdata))];
	} ctl[K_BATCH_MAX];
	if (n > K_BATCH_MAX)
		n = K_BATCH_MAX;
	for (unsigned i = 0; i < n; i++) {
		iov[i] = (struct iovec){.iov_base = buf[i], .iov_len = cap};
		msg[i] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov[i], .msg_iovlen = 1,
						      .msg_control = ctl[i].b, .msg_controllen = sizeof(ctl[i].b)}};
	}
	/* MSG_TRUNC: msg_len is the frame's real length, also when it did not
	 * fit, so an oversize frame is seen and counted at its size. */
	int k = recvmmsg(s->fd, msg, n, MSG_DONTWAIT | MSG_TRUNC, NULL);
	if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
		s->error = errno; /* ENETDOWN: down, or deleted (ksock_lost tells) */
	if (k <= 0)
		return 0;
	for (int i = 0; i < k; i++) {
		uint16_t tag[2];
		len[i] = msg[i].msg_len;
		if (len[i] < 12 || !taken_vlan(&msg[i].msg_hdr, tag))
			continue; /* as on the wire (or a runt); > cap: truncated */
		/* The wire's length has the tag: the frame fits with it, or is
		 * counted at that length as one that does not. */
		if (len[i] + 4 <= cap) {
			memmove(buf[i] + 16, buf[i] + 12, len[i] - 12);
			memcpy(buf[i] + 12, tag, sizeof(tag));
		}
		len[i] += 4;
	}
	return (unsigned)k;
}

unsigned ksock_send(struct ksock *s, uint8_t *const *buf, const uint32_t *len, unsigned n)
{
	struct mmsghdr msg[K_BATCH_MAX];
	struct iovec iov[K_BATCH_MAX];
	if (n > K_BATCH_MAX)
		n = K_BATCH_MAX;
	for (unsigned i = 0; i < n; i++) {
		iov[i] = (struct iovec){.iov_base = buf[i], .iov_len = len[i]};
		msg[i] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov[i], .msg_iovlen = 1}};
	}
	unsigned sent = 0;
	s->blocked = 0;
	while (sent < n) {
		int k = sendmmsg(s->fd, msg + sent, n - sent, MSG_DONTWAIT);
		if (k > 0) {
			sent += (unsigned)k;
			continue;
		}
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			s->blocked = K_FULL; /* the rest waits (backpressure) */
			break;
		}
		if (k < 0 && (errno == ENOBUFS || errno == EINTR)) {
			s->blocked = K_REFUSED;
			break;
		}
		/* The frame at `sent` is refused for good (EMSGSIZE, ENETDOWN,
		 * ...): count it and go on with the next. */
		s->send_errors++;
		s->error = errno;
		sent++;
	}
	return sent;
}

int ksock_lost(struct ksock *s, char *why, size_t whylen)
{
	int err = s->error;
	s->error = 0;
	struct pollfd pfd = {.fd = s->fd};
	if (poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLNVAL | POLLHUP))) {
		snprintf(why, whylen, "%s", (pfd.revents & POLLNVAL) ? "has no open socket" : "hung up");
		return -1;
	}
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	if (getsockname(s->fd, (struct sockaddr *)&ss, &sl) != 0) {
		snprintf(why, whylen, "cannot be asked about its socket: %s", strerror(errno));
		return -1;
	}
	if (ss.ss_family == AF_PACKET && ((const struct sockaddr_ll *)&ss)->sll_ifindex != s->ifindex) {
		snprintf(why, whylen, "was deleted (its socket is no longer bound to ifindex %d%s%s)", s->ifindex,
			 err ? "; last error: " : "", err ? strerror(err) : "");
		return -1;
	}
	return 0;
}

void ksock_counters(struct ksock *s, struct dp_port_counters *c)
{
	struct tpacket_stats st;
	socklen_t sl = sizeof(st);
	if (getsockopt(s->fd, SOL_PACKET, PACKET_STATISTICS, &st, &sl) == 0)
		s->kernel_drops += st.tp_drops;
	*c = (struct dp_port_counters){.imissed = s->kernel_drops, .oerrors = s->send_errors};
}
