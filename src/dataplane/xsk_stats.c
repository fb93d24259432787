#include "xsk_stats.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/if_xdp.h>

#ifndef AF_XDP
#define AF_XDP 44
#endif

static int is_xsk(int fd)
{
	int domain = 0;
	socklen_t len = sizeof(domain);
	return getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 && domain == AF_XDP;
}

void dp_xsk_fds_list(struct dp_xsk_fds *out)
{
	out->n = 0;
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return;
	int own = dirfd(d);
	struct dirent *e;
	while ((e = readdir(d)) != NULL && out->n < DP_XSK_FDS_MAX) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);
		if (end == e->d_name || *end || fd == own)
			continue;
		if (is_xsk((int)fd))
			out->fd[out->n++] = (int)fd;
	}
	closedir(d);
}

static int has(const struct dp_xsk_fds *s, int fd)
{
	for (unsigned i = 0; i < s->n; i++)
		if (s->fd[i] == fd)
			return 1;
	return 0;
}

void dp_xsk_fds_new(const struct dp_xsk_fds *before, const struct dp_xsk_fds *after,
		    struct dp_xsk_fds *out)
{
	out->n = 0;
	for (unsigned i = 0; i < after->n; i++)
		if (!has(before, after->fd[i]))
			out->fd[out->n++] = after->fd[i];
}

int dp_xsk_counts_read(const struct dp_xsk_fds *fds, struct dp_xsk_counts *out)
{
	*out = (struct dp_xsk_counts){0};
	int got = 0;
	for (unsigned i = 0; i < fds->n; i++) {
		struct xdp_statistics st;
		memset(&st, 0, sizeof(st));
		socklen_t len = sizeof(st);
		if (getsockopt(fds->fd[i], SOL_XDP, XDP_STATISTICS, &st, &len) != 0)
			continue;
		out->rx_dropped += st.rx_dropped;
		out->rx_invalid_descs += st.rx_invalid_descs;
		out->tx_invalid_descs += st.tx_invalid_descs;
		out->rx_ring_full += st.rx_ring_full;
		got = 1;
	}
	return got ? 0 : -1;
}
