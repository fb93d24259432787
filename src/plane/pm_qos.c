#include "pm_qos.h"

#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

int pm_qos_hold_zero_latency(void)
{
	int fd = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int32_t zero = 0;
	if (write(fd, &zero, sizeof(zero)) != (ssize_t)sizeof(zero)) {
		close(fd);
		return -1;
	}
	return fd;
}

void pm_qos_release(int fd)
{
	if (fd >= 0)
		close(fd);
}
