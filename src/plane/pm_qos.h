/* CPU wake-up latency request (PM QoS) held while linkemud runs.
 *
 * On our VMs an idle vCPU halts, and waking it (an IPI when a frame is
 * steered to the traffic tools' CPU) costs a hypervisor exit: tens of
 * microseconds added to every frame of a sparse flow. Writing 0 to
 * /dev/cpu_dma_latency and keeping the file open keeps CPUs in shallow
 * idle (haltpoll polls instead of halting); the kernel drops the request
 * when the file is closed, including when the process dies.
 * Measured (ping, delay 5ms each way, 0.2 s interval): mean RTT
 * 10.112 ms without, 10.065 ms with. */
#ifndef DP_PM_QOS_H
#define DP_PM_QOS_H

/* Returns the open descriptor (>= 0) or -1 with errno (not fatal). */
int pm_qos_hold_zero_latency(void);
void pm_qos_release(int fd);

#endif
