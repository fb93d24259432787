"""The test bed: two namespaces joined through the emulator over veths.

    [ns src] eth0 198.18.0.1 ==veth== le-a (DPDK port 0, side A)
                                            linkemud
    [ns dst] eth0 198.18.0.2 ==veth== le-b (DPDK port 1, side B)

Both addresses are on one /24: linkemud is a transparent bridge, so src and
dst share one L2 segment and no routing is needed (and no default route
exists, so test traffic cannot leave the bed). Direction a2b is src -> dst.

Everything here is idempotent: `up` repairs a half-built bed and verifies a
built one; `down` removes whatever exists by name, with or without state.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from linkemu.bed import hugepages, isolation, netns, paths, procs, sides
from linkemu.bed.nsref import NsRef
from linkemu.errors import LinkemuError, UsageError

DEFAULT_BED = "default"
_NAME_RE = re.compile(r"^[a-z0-9]{1,8}$")
# Test addresses come from 198.18.0.0/15 (RFC 2544 benchmarking range): it
# is never routed, so a misconfiguration cannot reach a real network.
ADDR_SRC = "198.18.0.1"
ADDR_DST = "198.18.0.2"
PREFIX_LEN = 24
NS_DEV = "eth0"
DAEMON_STOP_GRACE_S = 5.0
# In the bed's run dir: held by daemon.start() from its "is one running?"
# check until the daemon is ready or gone, and by `up` while it removes a
# gone daemon's files (start_lock()).
START_LOCK = "start.lock"


class BedFiles:
    """What every kind of bed (this pair, attached.AttachedBed,
    ports.PortsBed) derives from its name: EAL's file prefix and the
    runtime directory of its daemon."""

    name: str

    @property
    def file_prefix(self) -> str:
        return paths.dpdk_file_prefix(self.name)

    @property
    def run_dir(self) -> Path:
        return paths.bed_run_dir(self.name)


@dataclass(frozen=True)
class Bed(BedFiles):
    """Every name a bed uses, derived from the bed's name alone, so that
    `down` can find everything even when the state file is gone."""

    name: str
    ns_src: str
    ns_dst: str
    host_a: str          # host end of src's veth: DPDK port 0
    host_b: str          # host end of dst's veth: DPDK port 1
    ns_dev: str = NS_DEV
    addr_src: str = ADDR_SRC
    addr_dst: str = ADDR_DST
    prefix_len: int = PREFIX_LEN

    def sides(self):
        """(side, namespace, host veth, address, dpdk port) for A then B."""
        return (("a", self.ns_src, self.host_a, self.addr_src, 0),
                ("b", self.ns_dst, self.host_b, self.addr_dst, 1))

    def side_specs(self) -> tuple[sides.Side, sides.Side]:
        """The two sides, in namespaces of the bed's own."""
        return tuple(sides.Side("src" if side == "a" else "dst", f"name:{ns}", self.ns_dev, host,
                                f"{addr}/{self.prefix_len}", owned=True)
                     for side, ns, host, addr, _port in self.sides())

    def eal_ports(self, pmd: str) -> list[str]:
        """EAL options that make the two host veths DPDK ports 0 and 1."""
        return vdev_args(pmd, (self.host_a, self.host_b))

    def ref(self, role: str) -> NsRef:
        return NsRef("name", self.namespace(role))

    def namespace(self, role: str) -> str:
        if role == "src":
            return self.ns_src
        if role == "dst":
            return self.ns_dst
        raise UsageError(f"unknown namespace role '{role}' (expected src or dst)")


# Devargs per PMD beyond the interface. net_af_packet: transmit without the
# qdisc layer (the veths have none: noqueue) and a ring of 4096 frames
# (DPDK's default is 512): on the bed, 64-byte frames at 316 against 267
# kpps untuned in one run of bench/bed_attach.py, 259 against 253 in a
# noisier one; TCP within the runs' spread (docs/performance.md, "The bed's
# attachments"). With `noqueue` veths the bypass changes no behaviour.
PMD_DEVARGS = {"af_packet": "qdisc_bypass=1,blocksz=4096,framesz=2048,framecnt=4096"}


def vdev_args(pmd: str, ifaces: tuple[str, str]) -> list[str]:
    """--no-pci and one --vdev per interface: port 0 = ifaces[0] (side A)."""
    extra = f",{PMD_DEVARGS[pmd]}" if pmd in PMD_DEVARGS else ""
    return ["--no-pci"] + [f"--vdev=net_{pmd}{i},iface={dev}{extra}"
                           for i, dev in enumerate(ifaces)]


def bed_for(name: str | None) -> Bed:
    name = name or DEFAULT_BED
    if name == DEFAULT_BED:
        return Bed(name, "src", "dst", "le-a", "le-b")
    if not _NAME_RE.fullmatch(name):   # match() with $ let "zr\n" through
        raise UsageError(f"bad bed name '{name}': use 1-8 characters from [a-z0-9]")
    if name == "le":
        # Its veths would be le-a/le-b, the default bed's.
        raise UsageError("bed name 'le' is reserved (the default bed uses le-a/le-b)")
    return Bed(name, f"{name}-src", f"{name}-dst", f"{name}-a", f"{name}-b")


# --- up ------------------------------------------------------------------------

def _say(line: str) -> None:
    print(f"linkemu: {line}", file=sys.stderr)


def up(bed: Bed, say=_say) -> dict:
    """Build (or repair) the bed, verify it, write its state; return status.
    say(line): what was removed that a gone daemon had left."""
    for tool in ("ip", "ethtool"):
        if shutil.which(tool) is None:
            raise LinkemuError(f"{tool} not found: install iproute2 and ethtool")
    make_room_for_daemon(bed, say)
    a, b = bed.side_specs()
    sides.up(a)
    sides.up(b)
    sides.static_neighbours(a, b)
    problems = check(bed)
    if problems:
        raise LinkemuError(f"test bed '{bed.name}' is not right after setup:\n  "
                           + "\n  ".join(problems))
    bed.run_dir.mkdir(parents=True, exist_ok=True)
    state = {"bed": bed.name, "created": time.time(), **asdict(bed),
             "file_prefix": bed.file_prefix}
    write_json(paths.testbed_state_file(bed.name), state)
    return status(bed)


def make_room_for_daemon(bed: BedFiles, say=_say) -> None:
    """Free hugepages for the bed's next daemon: first the files a gone
    daemon of this bed left (a linkemud killed with SIGKILL cannot remove
    them, and they keep their pages taken), then reserve what is still
    missing. Reserving first counted those pages as used and grew the
    reservation by as many on every crash."""
    with start_lock(bed) as held:
        # A daemon running or being started (`linkemu run` elsewhere holds
        # the lock) owns the files and pages it has: removing them would
        # pull them from under it, and asking for MIN_FREE_PAGES more on
        # top would only grow the reservation.
        if not held or live_daemon(bed) is not None:
            return
        line = remove_gone_daemons_files(bed)
    if line:
        say(line)
    hugepages.ensure()


def remove_gone_daemons_files(bed: BedFiles) -> str | None:
    """EAL's files of the bed's prefix, once no daemon of the bed lives
    (the caller's to know): one line saying what went, or None."""
    runtime = remove_eal_runtime_dir(bed.file_prefix)
    pages = remove_hugepage_files(bed.file_prefix)
    if not runtime and not pages:
        return None
    what = [f"{len(pages)} hugepage files in {', '.join(sorted({str(p.parent) for p in pages}))}"
            ] if pages else []
    what += [str(p) for p in runtime]
    return (f"bed '{bed.name}': removed what its linkemud, now gone, left behind "
            f"({'; '.join(what)}) before reserving hugepages")


def check(bed: Bed) -> list[str]:
    """Everything that should be true of a built bed; returns what is not."""
    return [p for side in bed.side_specs() for p in sides.check(side)]


# --- status ----------------------------------------------------------------------

def status(bed: Bed) -> dict:
    namespaces = [ns for ns in (bed.ns_src, bed.ns_dst) if netns.ns_exists(ns)]
    interfaces = {}
    for side, ns, host, addr, port in bed.sides():
        interfaces[side] = {
            "host": host, "namespace": ns, "peer": bed.ns_dev, "dpdk_port": port,
            "present": netns.link_exists(host) and netns.link_exists(bed.ns_dev, ns),
        }
    up_ = (len(namespaces) == 2 and all(i["present"] for i in interfaces.values()))
    pid = daemon_pid(bed)
    return {
        "bed": bed.name,
        "up": up_,
        "namespaces": namespaces,
        "interfaces": interfaces,
        "addresses": {"src": f"{bed.addr_src}/{bed.prefix_len}",
                      "dst": f"{bed.addr_dst}/{bed.prefix_len}"},
        "daemon": {"running": pid is not None, "pid": pid},
        "state_file": str(paths.testbed_state_file(bed.name)),
    }


def format_status(st: dict) -> str:
    lines = [f"test bed '{st['bed']}': {'up' if st['up'] else 'down'}"]
    for side, i in st["interfaces"].items():
        role = "src" if side == "a" else "dst"
        mark = "" if i["present"] else "  (missing)"
        lines.append(f"  side {side.upper()}: ns {i['namespace']} {i['peer']} "
                     f"{st['addresses'][role]} <-> host {i['host']} = DPDK port "
                     f"{i['dpdk_port']}{mark}")
    d = st["daemon"]
    lines.append(f"  linkemud: {'running, pid %d' % d['pid'] if d['running'] else 'not running'}")
    return "\n".join(lines)


def live_daemon(bed: BedFiles) -> int | None:
    """The bed's live daemon: by pid file, else by EAL file prefix (a pid
    file removed by hand, or one not yet written by a start elsewhere)."""
    pid = daemon_pid(bed)
    if pid is not None:
        return pid
    found = procs.find_linkemud(bed.file_prefix)
    return found[0] if found else None


@contextlib.contextmanager
def start_lock(bed: BedFiles):
    """Within: the bed's start lock, if free (yields True), else False
    (another process starts the bed's daemon). Not waited for: a start
    takes up to the ready timeout."""
    bed.run_dir.mkdir(parents=True, exist_ok=True)
    with open(bed.run_dir / START_LOCK, "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True


def daemon_pid(bed: Bed) -> int | None:
    """The bed's live linkemud from its pid file, or None."""
    try:
        pid = int(paths.daemon_pid_file(bed.name).read_text().strip())
    except (FileNotFoundError, ValueError):
        return None
    if procs.pid_alive(pid) and procs.is_linkemud(pid, bed.file_prefix):
        return pid
    return None


# --- down ------------------------------------------------------------------------

def down(bed: Bed) -> list[str]:
    """Remove everything the bed may have left, crash or not. Returns what was
    done (empty when there was nothing to do)."""
    return remove(bed, [bed.ns_src, bed.ns_dst])


class Removal:
    """The steps of a removal (`down` of any kind of bed), each run even
    when an earlier one failed: stopping at the first error would leave
    the rest behind, and a failed `down` is exactly when the user needs
    the rest gone. finish() raises the failures together, each named."""

    def __init__(self, bed_name: str):
        self.bed_name = bed_name
        self.done: list[str] = []
        self.failed: list[str] = []

    def step(self, what: str, fn, *args) -> tuple[bool, object]:
        """fn(*args): (True, its result), or (False, None) with the failure
        kept under `what`."""
        try:
            return True, fn(*args)
        except Exception as e:      # noqa: BLE001 - named in finish(), the rest still runs
            self.failed.append(f"{what}: {e}")
            return False, None

    def steps_done(self, what: str, fn, *args) -> None:
        """A step whose result is the list of what it did."""
        self.done += self.step(what, fn, *args)[1] or []

    def finish(self) -> list[str]:
        """What was done; LinkemuError naming every failure if any step failed."""
        if self.failed:
            raise LinkemuError(f"test bed '{self.bed_name}': could not remove everything:\n  "
                               + "\n  ".join(self.failed)
                               + ("\n  (done: " + "; ".join(self.done) + ")" if self.done else ""))
        return self.done


def remove(bed: Bed, namespaces: list[str]) -> list[str]:
    """Remove the bed's daemon, its host veths, the given namespaces of its
    own (with any process left inside) and its runtime files.

    Every step runs even when an earlier one failed (a veth the kernel
    holds on to, a process we may not signal), and the failures are
    raised together at the end (Removal)."""
    removal = Removal(bed.name)
    removal.steps_done("stopping linkemud", kill_daemons, bed)
    # Tools still running inside the namespaces (an iperf3 server left by a
    # crashed demo) would keep the namespace, and its veth, alive after
    # `ip netns del`.
    for ns in namespaces:
        _ok, pids = removal.step(f"listing the processes in {ns}", netns.ns_pids, ns)
        for p in pids or []:
            ok, how = removal.step(f"stopping process {p} in {ns}", procs.terminate, p, 2.0)
            if ok:
                removal.done.append(f"process {p} in {ns} {how}")
    # Host veths first: deleting one deletes its peer synchronously, whereas
    # a deleted namespace's devices go away asynchronously and could race
    # with an immediate `up`.
    for host in (bed.host_a, bed.host_b):
        if netns.link_exists(host):
            if removal.step(f"deleting veth {host}", netns.link_del_wait, host)[0]:
                removal.done.append(f"deleted veth {host}")
    for ns in namespaces:
        if netns.ns_exists(ns):
            if removal.step(f"deleting namespace {ns}", netns.ns_del, ns)[0]:
                removal.done.append(f"deleted namespace {ns}")
    removal.done += remove_run_dir(bed)
    removal.steps_done("removing EAL's files", remove_dpdk_leftovers, bed.file_prefix)
    # A killed `linkemu run --isolate-lcore` could not give other
    # processes' threads their CPUs back; its record can (isolation.py).
    removal.steps_done("giving back isolated CPUs", isolation.recover_stale)
    return removal.finish()


def remove_run_dir(bed: BedFiles) -> list[str]:
    """The bed's runtime dir (pid file, control socket, state, log)."""
    if not bed.run_dir.exists():
        return []
    shutil.rmtree(bed.run_dir, ignore_errors=True)
    return [f"removed {bed.run_dir}"]


def kill_daemons(bed: BedFiles) -> list[str]:
    """Stop every linkemud of the bed (by pid file and by EAL file prefix)."""
    done: list[str] = []
    pids = set(procs.find_linkemud(bed.file_prefix))
    pid = daemon_pid(bed)
    if pid is not None:
        pids.add(pid)
    for p in sorted(pids):
        how = procs.terminate(p, DAEMON_STOP_GRACE_S)
        done.append(f"linkemud pid {p} {how}")
    return done


def remove_dpdk_leftovers(prefix: str) -> list[str]:
    """EAL's runtime dir and hugepage files for our file prefix. A killed
    daemon leaves them behind, and its hugepage files keep the pages taken."""
    return [f"removed {p}" for p in remove_eal_runtime_dir(prefix) + remove_hugepage_files(prefix)]


def remove_eal_runtime_dir(prefix: str) -> list[Path]:
    """EAL's runtime dir of the prefix (config, sockets, telemetry), as a
    list: [] when there was none."""
    rt = paths.DPDK_RUN_ROOT / prefix
    if not rt.exists():
        return []
    shutil.rmtree(rt, ignore_errors=True)
    return [rt]


def remove_hugepage_files(prefix: str) -> list[Path]:
    """The prefix's hugepage files in every hugetlbfs mount (and ours, in
    case it is not listed): the ones that were removed."""
    removed = []
    for mnt in set(hugepages.hugetlbfs_mounts()) | {str(hugepages.MOUNT_POINT)}:
        d = Path(mnt)
        if not d.is_dir():
            continue
        # "map_" follows the prefix at once: bed names have no "_", so no
        # other bed's prefix can match.
        for f in sorted(d.glob(f"{prefix}map_*")):
            try:
                f.unlink()
                removed.append(f)
            except FileNotFoundError:
                pass
    return removed


def write_json(path: Path, obj) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(obj, indent=2) + "\n")
    os.replace(tmp, path)

