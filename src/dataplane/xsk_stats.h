/* The kernel's own drop counts for the AF_XDP sockets under a port.
 *
 * DPDK 22.11's net_af_xdp folds a socket's rx_dropped into imissed but not
 * rx_ring_full, the count of frames the kernel dropped because linkemud's
 * RX ring had no room: the common loss when the lcore is descheduled, and
 * the one that made frames vanish before linkemud saw them (a SIGSTOPped
 * daemon took 1024 of 3000 frames and every counter stayed 0). The PMD
 * does not give us its sockets, and AF_XDP sockets have no getsockname to
 * say which interface they serve, so the port module notes which AF_XDP
 * sockets appear while a port starts (xsk_fds_new) and reads their
 * XDP_STATISTICS later, on the control thread. */
#ifndef DP_XSK_STATS_H
#define DP_XSK_STATS_H

#include <stdint.h>

#define DP_XSK_FDS_MAX 8

struct dp_xsk_fds {
	unsigned n;
	int fd[DP_XSK_FDS_MAX];
};

/* The kernel's counts summed over a port's sockets (struct
 * xdp_statistics; the last three are 0 on kernels before 5.9). */
struct dp_xsk_counts {
	uint64_t rx_dropped;
	uint64_t rx_invalid_descs;
	uint64_t tx_invalid_descs;
	uint64_t rx_ring_full;
};

/* The AF_XDP sockets this process has open now. */
void dp_xsk_fds_list(struct dp_xsk_fds *out);
/* Those in after that were not in before: the sockets a port's start
 * created. */
void dp_xsk_fds_new(const struct dp_xsk_fds *before, const struct dp_xsk_fds *after,
		    struct dp_xsk_fds *out);
/* Sums XDP_STATISTICS over fds; 0, or -1 if fds is empty or none could be
 * read (out zero then). */
int dp_xsk_counts_read(const struct dp_xsk_fds *fds, struct dp_xsk_counts *out);

#endif
