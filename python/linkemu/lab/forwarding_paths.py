"""The forwarding study's paths on one test bed, each started and stopped.

    direct         a veth pair straight from the src to the dst namespace,
                   no forwarder (the study's direct connection, its
                   physical baseline)
    swa            linkemuk: the kernel-socket data plane, unimpaired link
    swb            linkemud: the DPDK data plane, unimpaired link
    swc-*-fifo/shm linkemud with a class handed to an external process
                   (`punt fifo|shm`, src/tools/punt_echo.c) and back: all
                   frames, or only a 1 % control flow of 64 B frames

All paths use the bed's two namespaces, so the tools, their CPUs and the
namespaces' stacks are the same for every path; only what sits between
the two namespaces changes. The direct pair has its own addresses
(198.18.1.0/24) and goes away with the namespaces when the bed is removed.

CPU layout on a 2-vCPU machine: the forwarder runs on the daemon CPU (CPU
1: linkemud's one lcore in its `single` layout, RX, model and TX of both
directions in one loop; linkemuk pinned there too), and the sender, the
receiver and the kernel's veth processing share the tool CPU (CPU 0). The
study gave SWB's RX and TX a dedicated core each; two vCPUs leave one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from linkemu.bed import netns, procs
from linkemu.bed.cpus import daemon_cpu, tool_cpus
from linkemu.bed.interrupts import shielded
from linkemu.bed.nsref import NsRef
from linkemu.bed.testbed import Bed
from linkemu.daemon import daemon
from linkemu.errors import LinkemuError
from linkemu.instruments.tools import require_tool
from linkemu.lab.session import LabSession, Link

PATHS = ("direct", "swa", "swb", "swc-all-fifo", "swc-1pct-fifo", "swc-all-shm",
         "swc-1pct-shm")
SWC_PATHS = PATHS[3:]
LABELS = {
    "direct": "direct veth pair (no forwarder)",
    "swa": "SWA: linkemuk (kernel sockets)",
    "swb": "SWB: linkemud (DPDK)",
    "swc-all-fifo": "SWC: all frames via FIFO",
    "swc-1pct-fifo": "SWC: 1 % control via FIFO",
    "swc-all-shm": "SWC: all frames via shm",
    "swc-1pct-shm": "SWC: 1 % control via shm",
}
SWB_LAYOUT = "single"

DIRECT_DEV = "fwd0"
DIRECT_SRC = "198.18.1.1"
DIRECT_DST = "198.18.1.2"
DIRECT_PREFIX = 24
# The 1 % control flow's UDP port (its own iperf3 server); the class that
# punts it matches this destination port only.
CONTROL_PORT = 5301


def is_swc(path: str) -> bool:
    return path.startswith("swc-")


def transport(path: str) -> str | None:
    return path.rsplit("-", 1)[1] if is_swc(path) else None


def one_pct(path: str) -> bool:
    return "-1pct-" in path


# --- the direct pair ------------------------------------------------------------------

def direct_layout(bed: Bed) -> Bed:
    """The bed as the instruments see it, with the direct pair's addresses:
    iperf3 and ping address dst by addr_dst, so traffic takes the pair."""
    return dataclasses.replace(bed, addr_src=DIRECT_SRC, addr_dst=DIRECT_DST)


def direct_up(bed: Bed) -> None:
    """A veth pair fwd0 <-> fwd0 between the bed's namespaces, set up like
    the bed's own veths (offloads off, static neighbours, receive steering
    to the tool CPUs), so the only difference is the missing forwarder."""
    src, dst = NsRef("name", bed.ns_src), NsRef("name", bed.ns_dst)
    if netns.link_exists(DIRECT_DEV, src):
        netns.run(src.ip_argv() + ["link", "del", "dev", DIRECT_DEV])
    netns.run(src.ip_argv() + ["link", "add", DIRECT_DEV, "type", "veth", "peer", "name",
                               DIRECT_DEV, "netns", bed.ns_dst])
    for ref, addr in ((src, DIRECT_SRC), (dst, DIRECT_DST)):
        netns.offloads_off(DIRECT_DEV, ref)
        netns.addr_add(DIRECT_DEV, f"{addr}/{DIRECT_PREFIX}", ref)
        netns.link_up(DIRECT_DEV, ref)
        netns.steer_receive(ref, DIRECT_DEV)
    mac_src, mac_dst = netns.link_mac(DIRECT_DEV, src), netns.link_mac(DIRECT_DEV, dst)
    netns.neigh_permanent(DIRECT_DEV, DIRECT_DST, mac_dst, src)
    netns.neigh_permanent(DIRECT_DEV, DIRECT_SRC, mac_src, dst)


def direct_down(bed: Bed) -> None:
    src = NsRef("name", bed.ns_src)
    if netns.link_exists(DIRECT_DEV, src):
        netns.run(src.ip_argv() + ["link", "del", "dev", DIRECT_DEV], check=False)


# --- punt (SWC) -------------------------------------------------------------------------

def channel(bed: Bed, path: str) -> str:
    """The punt channel's name: a FIFO in the bed's run directory (gone
    with the bed), or a shared-memory segment named after the bed."""
    if transport(path) == "fifo":
        return str(bed.run_dir / "fwd-punt")
    return f"linkemu-{bed.name}-fwd"


def punt_grammar(path: str, name: str) -> str:
    """The a2b link of an SWC path: a class handed to the punt process.
    All frames: every IPv4 frame (the measured flow, ping and iperf3's
    control connection alike); 1 %: the control flow's UDP port only."""
    match = (f"proto udp dport {CONTROL_PORT}" if one_pct(path) else "ether ipv4")
    return f"; class ctl match {match} : punt {transport(path)} {name}"


def punt_unavailable(binary: Path | None = None) -> str | None:
    """Why SWC cannot run here (None: it can): linkemud must accept the
    punt grammar and the reference peer (punt_echo) must be built."""
    try:
        binary = binary or daemon.require_binary("dpdk")
    except LinkemuError as e:
        return str(e)
    for t in ("fifo", "shm"):
        name = "/tmp/linkemu-check" if t == "fifo" else "linkemu-check"
        why = daemon.check_link(binary, punt_grammar(f"swc-all-{t}", name))
        if why is not None:
            return f"this linkemud does not accept `punt {t}` ({why.split(' (expected')[0]})"
    try:
        require_tool("punt_echo")
    except LinkemuError as e:
        return f"the reference punt process is missing: {e}"
    return None


PUNT_UP_TIMEOUT_S = 10.0


def _punt_up(link: Link) -> dict | None:
    for ch in link.link.stats().raw["directions"]["a2b"].get("punt", []):
        if ch.get("up"):
            return ch
    return None


@contextlib.contextmanager
def punt_echo(sess: LabSession, path: str, name: str, link: Link):
    """The reference process (punt_echo, docs/punt.md) on the channel,
    pinned to the tool CPUs (the study's control-plane process is an
    ordinary Linux process; on 2 vCPUs the daemon's CPU is busy-polled),
    waited for until the daemon sees it attached. It exits by itself when
    the daemon stops; the caller reaps it after that."""
    cmd = [str(require_tool("punt_echo")), f"--{transport(path)}", name, "--wait", "10"]
    cpus = tool_cpus()
    if cpus:
        cmd = ["taskset", "-c", cpus, *cmd]
    log = open(sess.bed.run_dir / f"fwd-punt-echo-{transport(path)}.log", "ab")
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                         start_new_session=True)
    log.close()
    try:
        deadline = time.monotonic() + PUNT_UP_TIMEOUT_S
        while _punt_up(link) is None:
            if p.poll() is not None:
                raise LinkemuError(f"{path}: punt_echo exited ({p.returncode}) before attaching; "
                                   f"see {sess.bed.run_dir}/fwd-punt-echo-*.log")
            if time.monotonic() > deadline:
                raise LinkemuError(f"{path}: punt_echo did not attach to {name} within "
                                   f"{PUNT_UP_TIMEOUT_S:g} s")
            time.sleep(0.05)
        yield p
    except BaseException:
        procs.terminate(p.pid, 2.0, popen=p)
        raise


def reap(p: subprocess.Popen | None) -> None:
    """After the daemon stopped, punt_echo ends by itself (end of file or
    the segment's closed flag); make sure."""
    if p is None:
        return
    try:
        p.wait(5.0)
    except subprocess.TimeoutExpired:
        procs.terminate(p.pid, 2.0, popen=p)


# --- a started path ---------------------------------------------------------------------

@dataclass
class Started:
    """What a measurement needs of a started path: where to send (layout,
    whose addr_dst is the path's), the daemon (None: direct) and the
    forwarder's pid for its CPU time."""

    path: str
    layout: Bed
    link: Link | None = None
    pid: int | None = None
    peer_pid: int | None = None      # SWC: the punt process


def _pin(pid: int, cpu: int) -> None:
    """Every thread of pid onto cpu (linkemuk is not pinned by itself; for
    the comparison it sits where linkemud's lcore does)."""
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            os.sched_setaffinity(int(t), {cpu})
        except OSError:
            pass


def _daemon(sess: LabSession, grammar: str, io: str, layout: str | None):
    """A daemon on the bed for one path, with the data plane and layout
    chosen (LabSession.link). Its final report lands in link.final."""
    return sess.link(grammar, "", io=io, layout=layout)


@contextlib.contextmanager
def started(sess: LabSession, path: str):
    """Start one path, yield Started, stop it (the daemon's final report is
    then in .link.final)."""
    if path == "direct":
        direct_up(sess.bed)
        try:
            yield Started(path, direct_layout(sess.bed))
        finally:
            with shielded():
                direct_down(sess.bed)
        return
    if path == "swa":
        with _daemon(sess, "", "kernel", None) as link:
            _pin(link.link.pid, daemon_cpu())
            yield Started(path, sess.bed, link, link.link.pid)
        return
    if path == "swb":
        with _daemon(sess, "", "dpdk", SWB_LAYOUT) as link:
            yield Started(path, sess.bed, link, link.link.pid)
        return
    if is_swc(path):
        why = punt_unavailable()
        if why:
            raise LinkemuError(f"{path}: not available: {why}")
        name = channel(sess.bed, path)
        echo = None
        try:
            with _daemon(sess, punt_grammar(path, name), "dpdk", SWB_LAYOUT) as link:
                with punt_echo(sess, path, name, link) as echo:
                    yield Started(path, sess.bed, link, link.link.pid, echo.pid)
        finally:
            with shielded():
                reap(echo)
        return
    raise LinkemuError(f"unknown path '{path}'")
