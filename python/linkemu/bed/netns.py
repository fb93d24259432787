"""Thin wrappers around `ip`, `ethtool` and `sysctl` for namespaces and veths.

Everything goes through the iproute2 command line rather than netlink from
Python: it keeps the runtime stdlib-only, and every step can be replayed by
hand from the error message, which quotes the command that failed.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import time
from pathlib import Path
from typing import Sequence

from linkemu.errors import LinkemuError
from linkemu.bed.nsref import NsRef

# `ip netns add` keeps one bind-mounted file per namespace here.
NETNS_DIR = Path("/run/netns")

# Offloads that must be off on every veth end of the bed. With checksum
# offload on, the kernel hands veth frames to DPDK with a partial checksum
# (CHECKSUM_PARTIAL) that nobody completes once DPDK forwards the raw frame,
# so the receiver drops it; segmentation/GRO offloads would hand DPDK frames
# larger than the MTU.
OFFLOADS_OFF = ("tx", "rx", "tso", "gso", "gro")


def run(cmd: Sequence[str], *, check: bool = True, timeout: float = 30.0,
        input_text: str | None = None, env: dict | None = None,
        ) -> subprocess.CompletedProcess[str]:
    """Run a command, capturing output; on failure raise with its stderr."""
    try:
        cp = subprocess.run(list(cmd), capture_output=True, text=True,
                            timeout=timeout, input=input_text, env=env)
    except FileNotFoundError as e:
        raise LinkemuError(f"{cmd[0]}: not found (is it installed?)") from e
    except subprocess.TimeoutExpired as e:
        raise LinkemuError(f"timed out after {timeout:.0f} s: {shlex.join(cmd)}") from e
    if check and cp.returncode != 0:
        msg = (cp.stderr or cp.stdout).strip()
        raise LinkemuError(f"command failed ({cp.returncode}): {shlex.join(cmd)}: {msg}")
    return cp


def ns_exec_argv(ns: "str | NsRef", cmd: Sequence[str], cpus: str | None = None) -> list[str]:
    """The argv that runs cmd inside namespace ns (an `ip netns` name, or
    an NsRef for a process's namespace or the host's)."""
    if cpus:
        # Keep traffic tools off the CPU linkemud busy-polls: sharing it
        # would make the tools and the emulator take turns in time slices.
        cmd = ["taskset", "-c", cpus, *cmd]
    if isinstance(ns, NsRef):
        return ns.exec_argv(cmd)
    return ["ip", "netns", "exec", ns, *cmd]


def ns_run(ns: str, cmd: Sequence[str], cpus: str | None = None,
           **kw) -> subprocess.CompletedProcess[str]:
    return run(ns_exec_argv(ns, cmd, cpus), **kw)


# --- namespaces ------------------------------------------------------------

def ns_list() -> list[str]:
    try:
        return sorted(p.name for p in NETNS_DIR.iterdir())
    except FileNotFoundError:
        return []


def ns_exists(ns: str) -> bool:
    return (NETNS_DIR / ns).exists()


def _ns_present(ns: "str | NsRef") -> bool:
    return ns.exists() if isinstance(ns, NsRef) else ns_exists(ns)


def ns_add(ns: str) -> None:
    run(["ip", "netns", "add", ns])


def ns_del(ns: str) -> None:
    """Delete ns if present. Deleting a namespace also destroys the veth ends
    inside it, and with them their host-side peers."""
    if ns_exists(ns):
        run(["ip", "netns", "del", ns])


def ns_pids(ns: str) -> list[int]:
    """Processes running inside ns (they keep it alive after `ip netns del`)."""
    if not ns_exists(ns):
        return []
    cp = run(["ip", "netns", "pids", ns], check=False)
    return [int(x) for x in cp.stdout.split() if x.isdigit()]


def steer_receive(ns: NsRef, dev: str) -> None:
    """Receive Packet Steering for dev (in ns) onto the CPUs linkemud does
    not poll.

    linkemud hands frames to a veth inside its own TX system call, so the
    namespace's whole receive path (TCP included) would otherwise run on the
    daemon's CPU; past the softirq budget it moves to ksoftirqd there, which
    then time-slices against the polling lcore. Measured with iperf3 TCP
    through `delay 10ms` over af_xdp: emulation error p99 15.7 ms / max
    24.7 ms without RPS, p99 39 us / max 137 us with it."""
    from linkemu.bed.cpus import tool_cpu_mask
    mask = tool_cpu_mask()
    if mask is None:
        return
    run(ns.sysfs_argv(f"echo {mask} > /sys/class/net/{dev}/queues/rx-0/rps_cpus"))


def ns_sysctl(ns: str, key: str, value: str) -> None:
    ns_run(ns, ["sysctl", "-q", "-w", f"{key}={value}"])


def netns_usable() -> tuple[bool, str]:
    """Can we create namespaces here? (root, iproute2 present, kernel allows)."""
    if os.geteuid() != 0:
        return False, "needs root (network namespaces and veths)"
    probe = "linkemu-probe-ns"
    try:
        run(["ip", "netns", "add", probe])
        run(["ip", "netns", "del", probe])
    except LinkemuError as e:
        return False, f"ip netns unusable: {e}"
    return True, ""


# --- links -------------------------------------------------------------------

def link_exists(dev: str, ns: "str | NsRef | None" = None) -> bool:
    if ns is None or (isinstance(ns, NsRef) and ns.kind == "root"):
        return Path("/sys/class/net", dev).exists()
    if not _ns_present(ns):
        return False
    cp = run(_ip(ns) + ["link", "show", "dev", dev], check=False)
    return cp.returncode == 0


def link_del(dev: str) -> None:
    """Delete a host-side link if present (its veth peer goes with it)."""
    if link_exists(dev):
        run(["ip", "link", "del", "dev", dev])


def link_del_wait(dev: str, timeout: float = 5.0) -> None:
    run(["ip", "link", "del", "dev", dev], check=False)
    deadline = time.monotonic() + timeout
    while link_exists(dev):
        if time.monotonic() > deadline:
            raise LinkemuError(f"could not delete {dev}")
        time.sleep(0.05)


def veth_add(host_dev: str, ns: "str | NsRef", ns_dev: str) -> None:
    """Create a veth pair whose peer is born inside ns as ns_dev.

    Creating the peer directly in the namespace lets it be called `eth0`
    there even though the host has its own eth0."""
    where: list[str] = []
    if isinstance(ns, NsRef):
        if ns.kind != "root":
            where = ["netns", ns.link_target()]
    else:
        where = ["netns", ns]
    run(["ip", "link", "add", host_dev, "type", "veth", "peer", "name", ns_dev, *where])


def link_up(dev: str, ns: str | None = None) -> None:
    run(_ip(ns) + ["link", "set", "dev", dev, "up"])


def link_mac(dev: str, ns: str | None = None) -> str:
    cp = run(_ip(ns) + ["-j", "link", "show", "dev", dev])
    return json.loads(cp.stdout)[0]["address"]


def link_info(dev: str, ns: str | None = None) -> dict | None:
    """`ip -j -d addr show` for one device, or None if it does not exist."""
    if ns is not None and not _ns_present(ns):
        return None
    cp = run(_ip(ns) + ["-j", "addr", "show", "dev", dev], check=False)
    if cp.returncode != 0:
        return None
    items = json.loads(cp.stdout or "[]")
    return items[0] if items else None


def addr_add(dev: str, cidr: str, ns: str | None = None) -> None:
    # `replace` makes `up` idempotent when the address is already there.
    run(_ip(ns) + ["addr", "replace", cidr, "dev", dev])


def neigh_permanent(dev: str, ip: str, mac: str, ns: str | None = None) -> None:
    run(_ip(ns) + ["neigh", "replace", ip, "lladdr", mac, "dev", dev, "nud", "permanent"])


def routes(ns: str | None = None) -> list[dict]:
    cp = run(_ip(ns) + ["-j", "route", "show", "table", "all"])
    return json.loads(cp.stdout or "[]")


def offloads_off(dev: str, ns: "str | NsRef | None" = None) -> None:
    run(ns_exec_argv(ns, offloads_off_argv(dev)) if ns else offloads_off_argv(dev))


def offloads_off_argv(dev: str) -> list[str]:
    """The ethtool command that turns off every offload linkemu needs off."""
    args = ["ethtool", "-K", dev]
    for o in OFFLOADS_OFF:
        args += [o, "off"]
    return args


# ethtool -k names of the features `ethtool -K ... tx rx tso gso gro off` sets.
ETHTOOL_NAMES = ("rx-checksumming", "tx-checksumming", "tcp-segmentation-offload",
                 "generic-segmentation-offload", "generic-receive-offload")


def offloads_on(dev: str, ns: "str | NsRef | None" = None) -> list[str]:
    """Which of the offloads linkemu needs off are on (ethtool -k names)."""
    feats = offload_state(dev, ns)
    return [f for f in ETHTOOL_NAMES if feats.get(f)]


def offload_state(dev: str, ns: "str | NsRef | None" = None) -> dict[str, bool]:
    """Parse `ethtool -k`: feature name -> on/off (the '[fixed]' tag ignored)."""
    args = ["ethtool", "-k", dev]
    cp = run(ns_exec_argv(ns, args) if ns else args)
    return parse_ethtool_features(cp.stdout)


def parse_ethtool_features(text: str) -> dict[str, bool]:
    out: dict[str, bool] = {}
    for line in text.splitlines():
        if ":" not in line or line.startswith("Features for"):
            continue
        name, _, rest = line.partition(":")
        words = rest.split()
        if words and words[0] in ("on", "off"):
            out[name.strip()] = words[0] == "on"
    return out


def _ip(ns: "str | NsRef | None") -> list[str]:
    if isinstance(ns, NsRef):
        return ns.ip_argv()
    return ["ip"] if ns is None else ["ip", "-n", ns]
