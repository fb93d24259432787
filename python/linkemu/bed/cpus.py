"""Which CPUs do what on the test bed.

linkemud busy-polls one CPU; everything else (traffic tools, the kernel's
receive processing for the namespaces) belongs on the others. Sharing the
polling CPU makes the emulator and the other work take turns in scheduler
time slices of milliseconds, which shows up directly as emulation error.
"""

from __future__ import annotations

import os


def default_lcores() -> str:
    """CPU 1 on a machine with >= 2 CPUs, leaving CPU 0 to the kernel's
    softirqs (veth forwarding happens there) and to the traffic tools; a
    polling lcore sharing their CPU would starve them. Else CPU 0."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) >= 2:
        return "1" if 1 in cpus else str(cpus[-1])
    return str(cpus[0]) if cpus else "0"


def tool_cpus() -> str | None:
    """CPUs for traffic tools: every CPU but the default daemon lcore's,
    or None (no pinning) on a one-CPU machine."""
    busy = default_lcores()
    rest = [c for c in sorted(os.sched_getaffinity(0)) if str(c) != busy]
    return ",".join(map(str, rest)) if rest else None


def tool_cpu_mask() -> str | None:
    """tool_cpus() as the hex mask sysfs wants (e.g. RPS), or None."""
    cpus = tool_cpus()
    if not cpus:
        return None
    mask = 0
    for c in cpus.split(","):
        mask |= 1 << int(c)
    return format(mask, "x")


def tool_cpu_list() -> list[int]:
    """tool_cpus() as a list of CPU numbers (empty: no pinning)."""
    cpus = tool_cpus()
    return [int(c) for c in cpus.split(",")] if cpus else []


def tool_cpu_pair() -> tuple[str | None, str | None]:
    """(sender cpus, receiver cpus) for a two-sided tool: one CPU each when
    there are two tool CPUs, otherwise both share what there is."""
    cpus = tool_cpu_list()
    if not cpus:
        return None, None
    if len(cpus) >= 2:
        return str(cpus[0]), str(cpus[-1])
    return str(cpus[0]), str(cpus[0])


def daemon_cpu() -> int:
    """The first CPU of the default daemon lcore list."""
    return int(default_lcores().split(",")[0].split("-")[0])
