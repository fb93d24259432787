#include "klink.h"

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/if.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int klink_open(void)
{
	return socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_ROUTE);
}

enum klink_state klink_read(int nl, int ifindex)
{
	if (nl < 0 || ifindex <= 0)
		return K_LINK_UNKNOWN;
	static __thread uint32_t seq;
	struct {
		struct nlmsghdr nh;
		struct ifinfomsg ifi;
	} req = {.nh = {.nlmsg_len = sizeof(req), .nlmsg_type = RTM_GETLINK, .nlmsg_flags = NLM_F_REQUEST,
			.nlmsg_seq = ++seq},
		 .ifi = {.ifi_family = AF_UNSPEC, .ifi_index = ifindex}};
	if (send(nl, &req, sizeof(req), 0) != (ssize_t)sizeof(req))
		return K_LINK_UNKNOWN;
	/* Only the header is read: the rest (statistics, ...) is cut off. */
	union {
		struct nlmsghdr nh;
		char b[NLMSG_SPACE(sizeof(struct ifinfomsg))];
	} ans;
	for (;;) {
		/* The kernel answers within the send: an answer not there now
		 * (its buffer was full) will not come. */
		ssize_t n = recv(nl, &ans, sizeof(ans), MSG_TRUNC | MSG_DONTWAIT);
		if (n < (ssize_t)NLMSG_LENGTH(0))
			return K_LINK_UNKNOWN;
		if (ans.nh.nlmsg_seq != seq)
			continue; /* not this request's (none should be) */
		if (ans.nh.nlmsg_type != RTM_NEWLINK || n < (ssize_t)NLMSG_LENGTH(sizeof(struct ifinfomsg)))
			return K_LINK_UNKNOWN; /* NLMSG_ERROR: no such interface (any more) */
		break;
	}
	const struct ifinfomsg *ifi = NLMSG_DATA(&ans.nh);
	if (!(ifi->ifi_flags & IFF_UP))
		return K_LINK_DOWN;
	return (ifi->ifi_flags & IFF_LOWER_UP) ? K_LINK_UP : K_LINK_NO_CARRIER;
}

void klink_note(struct klink *k, const char *name, enum klink_state seen, le_ns_t now, FILE *out)
{
	if (seen == K_LINK_UNKNOWN || seen == k->state)
		return;
	enum klink_state was = k->state;
	k->state = seen;
	if (seen == K_LINK_UP) {
		if (was != K_LINK_UNKNOWN)
			fprintf(out, "linkemuk: interface '%s' is up again (down for %.1f s)\n", name,
				(double)(now - k->since) / 1e9);
		fflush(out);
		return;
	}
	/* Not up: from down to no carrier or back is still one outage. */
	if (was == K_LINK_UP || was == K_LINK_UNKNOWN)
		k->since = now;
	if (seen == K_LINK_DOWN)
		fprintf(out, "linkemuk: interface '%s' is down: frames to it are refused (send errors), none come "
			     "from it\n", name);
	else
		fprintf(out, "linkemuk: interface '%s' has no carrier (its link is down; a veth: its peer is down): "
			     "it takes no frames, none come from it\n", name);
	fflush(out);
}
