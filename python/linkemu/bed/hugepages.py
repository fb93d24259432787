"""Check, and if needed reserve and mount, the 2 MiB hugepages DPDK needs."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from linkemu.errors import LinkemuError

HP_DIR = Path("/sys/kernel/mm/hugepages/hugepages-2048kB")
MOUNT_POINT = Path("/dev/hugepages")
# 256 x 2 MiB = 512 MiB: linkemud's mbuf pools and delay lines for the
# default limits, with room for EAL's own allocations.
MIN_FREE_PAGES = 256


@dataclass
class HugepageState:
    total: int
    free: int
    mounts: list[str]


def read_state() -> HugepageState:
    try:
        total = int((HP_DIR / "nr_hugepages").read_text())
        free = int((HP_DIR / "free_hugepages").read_text())
    except FileNotFoundError:
        total = free = 0
    return HugepageState(total, free, hugetlbfs_mounts())


def hugetlbfs_mounts() -> list[str]:
    mounts = []
    for line in Path("/proc/mounts").read_text().splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[2] == "hugetlbfs":
            mounts.append(parts[1])
    return mounts


def ensure(min_free: int = MIN_FREE_PAGES) -> HugepageState:
    """Make sure min_free 2 MiB pages are free and hugetlbfs is mounted."""
    st = read_state()
    if not HP_DIR.exists():
        raise LinkemuError("this kernel has no 2 MiB hugepages "
                           f"({HP_DIR} missing); DPDK cannot run here")
    if st.free < min_free:
        want = st.total + (min_free - st.free)
        try:
            (HP_DIR / "nr_hugepages").write_text(str(want))
        except OSError as e:
            raise LinkemuError(_fix_msg(st, min_free, f"could not reserve: {e}")) from e
        st = read_state()
        if st.free < min_free:
            raise LinkemuError(_fix_msg(st, min_free, "the kernel could not find enough "
                                        "contiguous memory"))
    if not st.mounts:
        MOUNT_POINT.mkdir(parents=True, exist_ok=True)
        cp = subprocess.run(["mount", "-t", "hugetlbfs", "-o", "pagesize=2M", "nodev",
                             str(MOUNT_POINT)], capture_output=True, text=True)
        if cp.returncode != 0:
            raise LinkemuError(f"hugetlbfs is not mounted and mounting it at {MOUNT_POINT} "
                               f"failed: {cp.stderr.strip()}\n  fix: mount -t hugetlbfs "
                               f"nodev {MOUNT_POINT}")
        st = read_state()
    return st


def _fix_msg(st: HugepageState, min_free: int, why: str) -> str:
    return (f"need {min_free} free 2 MiB hugepages, have {st.free} free of {st.total}: "
            f"{why}\n  fix: echo {st.total + min_free - st.free} > {HP_DIR}/nr_hugepages "
            f"(as root, early after boot when memory is not fragmented), or stop "
            f"whatever holds them (see {MOUNT_POINT})")
