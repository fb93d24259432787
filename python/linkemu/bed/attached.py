"""Beds that put the emulator between namespaces linkemu does not own.

Two kinds, both built from one veth pair per side (host end = a DPDK port,
other end in the side's namespace):

- `between`: the user's own namespaces (by name, or a process id: a
  container's, a Mininet host's).

      [NS_A] DEV ==veth== NAME-a (port 0)  linkemud  (port 1) NAME-b ==veth== DEV [NS_B]

  Only what linkemu creates is touched: the two veths, and settings that
  belong to them (per-device IPv6 off, offloads, RPS, and the addresses
  and neighbour entries only when asked). Deleting the host ends deletes
  the other ends and everything attached to them, so `down` leaves the
  namespaces exactly as they were.

- `shell`: a namespace of its own for a wrapped command (side A), and the
  host itself as side B:

      [NAME-sh] eth0 X.2/30 ==veth== NAME-a (port 0)  linkemud  (port 1) NAME-b ==veth== NAME-h X.1/30 [host]

  The host's end is an address on a veth in the root namespace (X from
  198.19.0.0/16, chosen free), so any server on the host that listens on
  it (or on 0.0.0.0) answers through the link, with no `linkemu exec`:
  that is what makes `mm-delay`'s habit work. The root namespace gets
  nothing else: no route but the /30 on our own veth, no forwarding, no
  change to its other interfaces; the shell's namespace has no default
  route, so the link is its only way out, and it reaches only the host.
"""

from __future__ import annotations

import fcntl
import ipaddress
import json
import shutil
import time
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path

from linkemu.bed import netns, paths, sides, testbed
from linkemu.bed.nsref import NsRef
from linkemu.bed.sides import Side
from linkemu.errors import LinkemuError, UsageError

KINDS = ("between", "shell")
DEFAULT_DEV = "linkemu0"
SHELL_NS_DEV = "eth0"
# The shell's links are carved from the upper half of the benchmarking
# range, one /30 each; the pair beds use 198.18.0.0/24 inside their own
# namespaces, so the two never meet in one routing table.
SHELL_POOL = ipaddress.ip_network("198.19.0.0/16")
SHELL_PREFIX = 30
_ALLOC_LOCK = Path("/run/lock/linkemu-shell-addr.lock")
_IFNAME_MAX = 15


@dataclass(frozen=True)
class AttachedBed(testbed.BedFiles):
    name: str
    kind: str          # "between" | "shell"
    a: Side
    b: Side
    identity_a: tuple[int, int] | None = None   # the namespaces seen at `up`
    identity_b: tuple[int, int] | None = None

    # The names every bed has (testbed.Bed's), so the daemon, the control
    # client and the instruments take either.
    @property
    def host_a(self) -> str:
        return self.a.host

    @property
    def host_b(self) -> str:
        return self.b.host

    @property
    def addr_src(self) -> str:
        return self.a.addr

    @property
    def addr_dst(self) -> str:
        return self.b.addr

    @property
    def ns_src(self) -> str:
        return self.a.ref.value

    @property
    def ns_dst(self) -> str:
        return self.b.ref.value

    @property
    def ns_dev(self) -> str:
        return self.a.dev

    def side(self, role: str) -> Side:
        if role in ("src", "a"):
            return self.a
        if role in ("dst", "b"):
            return self.b
        raise UsageError(f"unknown side '{role}' (expected src or dst)")

    def ref(self, role: str) -> NsRef:
        return self.side(role).ref

    def eal_ports(self, pmd: str) -> list[str]:
        return testbed.vdev_args(pmd, (self.a.host, self.b.host))

    def to_state(self) -> dict:
        return {"kind": self.kind, **asdict(self)}

    @classmethod
    def from_state(cls, st: dict) -> "AttachedBed":
        ia, ib = st.get("identity_a"), st.get("identity_b")
        return cls(st["name"], st["kind"], Side(**st["a"]), Side(**st["b"]),
                   tuple(ia) if ia else None, tuple(ib) if ib else None)


# --- layouts --------------------------------------------------------------------------

def between(name: str, ns_a: str, ns_b: str, dev: str = DEFAULT_DEV,
            addr_a: str = "", addr_b: str = "") -> AttachedBed:
    """The layout for `testbed up --between NS_A NS_B` (nothing built yet)."""
    names = testbed.bed_for(name)
    _check_ifname(dev, "--dev")
    ra, rb = NsRef.parse(ns_a), NsRef.parse(ns_b)
    cidr_a, cidr_b = _cidr(addr_a, "--addr-a"), _cidr(addr_b, "--addr-b")
    if cidr_a and cidr_b:
        _check_pair(cidr_a, cidr_b)
    return AttachedBed(name, "between",
                       Side("src", ra.spec(), dev, names.host_a, cidr_a),
                       Side("dst", rb.spec(), dev, names.host_b, cidr_b))


def shell(name: str) -> AttachedBed:
    """The layout for `linkemu shell`: a fresh namespace NAME-sh, and the
    host's end NAME-h with a /30 no other interface of the host uses."""
    names = testbed.bed_for(name)
    net = _shell_subnet(name)
    host_ip, app_ip = list(net.hosts())
    return AttachedBed(name, "shell",
                       Side("src", f"name:{shell_ns(name)}", SHELL_NS_DEV, names.host_a,
                            f"{app_ip}/{SHELL_PREFIX}", owned=True),
                       Side("dst", "root", f"{name}-h", names.host_b,
                            f"{host_ip}/{SHELL_PREFIX}"))


def shell_ns(name: str) -> str:
    return f"{name}-sh"


def _cidr(text: str, opt: str) -> str:
    if not text:
        return ""
    try:
        iface = ipaddress.ip_interface(text)
    except ValueError:
        raise UsageError(f"{opt}: '{text}' is not an address with a prefix "
                         f"(e.g. 198.18.0.1/24)") from None
    if "/" not in text:
        raise UsageError(f"{opt}: '{text}' has no prefix length (e.g. {text}/24)")
    if iface.version != 4:
        raise UsageError(f"{opt}: only IPv4 addresses (the bed turns IPv6 off on its veths)")
    return str(iface)


def _check_pair(cidr_a: str, cidr_b: str) -> None:
    """The two ends must reach each other directly: up() gives each a
    permanent neighbour entry for the other, which one address on both,
    or two subnets, leave with no frame to carry."""
    ia, ib = ipaddress.ip_interface(cidr_a), ipaddress.ip_interface(cidr_b)
    if ia.ip == ib.ip:
        raise UsageError(f"--addr-a and --addr-b: one address for both ends ({ia.ip}); "
                         f"give each end its own in one subnet (e.g. 198.18.9.1/24 and "
                         f"198.18.9.2/24)")
    if ia.network != ib.network:
        raise UsageError(f"--addr-a {cidr_a} and --addr-b {cidr_b} are not in one subnet "
                         f"({ia.network} and {ib.network}): the two ends would not reach "
                         f"each other")


def _check_ifname(dev: str, opt: str) -> None:
    if not dev or len(dev) > _IFNAME_MAX or "/" in dev or dev in (".", "..") \
            or any(c.isspace() for c in dev):
        raise UsageError(f"{opt}: '{dev}' is not an interface name (1-15 characters, "
                         f"no '/' or spaces)")


def _shell_subnet(name: str) -> ipaddress.IPv4Network:
    """A /30 of SHELL_POOL: the bed's own if it has one (a re-run), else
    the first free one from a start derived from the name, so that a bed
    keeps its address from run to run while nothing else takes it."""
    mine = sides.addresses_on(f"{name}-h")
    if mine:
        return ipaddress.ip_interface(mine[0]).network
    used = {ipaddress.ip_interface(c).network for c in _root_ipv4()}
    subnets = list(SHELL_POOL.subnets(new_prefix=SHELL_PREFIX))
    start = zlib.crc32(name.encode()) % len(subnets)
    for i in range(len(subnets)):
        net = subnets[(start + i) % len(subnets)]
        if not any(net.overlaps(u) for u in used):
            return net
    raise LinkemuError(f"no free /{SHELL_PREFIX} left in {SHELL_POOL} for the shell's link")


def _root_ipv4() -> list[str]:
    cp = netns.run(["ip", "-j", "-4", "addr", "show"])
    return [f"{a['local']}/{a['prefixlen']}" for link in json.loads(cp.stdout or "[]")
            for a in link.get("addr_info", [])]


# --- state ------------------------------------------------------------------------------

def load(name: str) -> AttachedBed | None:
    """The attached bed of this name from its state file, or None (no
    state, or a pair bed's)."""
    try:
        st = json.loads(paths.testbed_state_file(name).read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    if st.get("kind") not in KINDS:
        return None
    return AttachedBed.from_state(st)


# --- up -----------------------------------------------------------------------------------

def up(bed: AttachedBed) -> AttachedBed:
    """Build (or repair) the bed; returns it with the namespaces' identities
    recorded. A half-built bed is the caller's to remove (down)."""
    for tool in ("ip", "ethtool", "nsenter", "unshare"):
        if shutil.which(tool) is None:
            raise LinkemuError(f"{tool} not found: install iproute2, ethtool and util-linux")
    _refuse_other_kind(bed)
    if bed.kind == "between":
        _check_between(bed)
    testbed.make_room_for_daemon(bed)
    bed.run_dir.mkdir(parents=True, exist_ok=True)
    if bed.kind == "shell":
        with open(_ALLOC_LOCK, "w") as lock:
            # Two shells starting at once must not both take one /30.
            fcntl.flock(lock, fcntl.LOCK_EX)
            bed = shell(bed.name)
            sides.up(bed.b)
        sides.up(bed.a)
    else:
        sides.up(bed.a)
        sides.up(bed.b)
    if bed.a.cidr and bed.b.cidr:
        sides.static_neighbours(bed.a, bed.b)
    bed = AttachedBed(bed.name, bed.kind, bed.a, bed.b, bed.a.ref.identity(), bed.b.ref.identity())
    problems = check(bed)
    if problems:
        raise LinkemuError(f"test bed '{bed.name}' is not right after setup:\n  "
                           + "\n  ".join(problems))
    testbed.write_json(paths.testbed_state_file(bed.name),
                       {**bed.to_state(), "created": time.time(), "file_prefix": bed.file_prefix})
    return bed


def _refuse_other_kind(bed: AttachedBed) -> None:
    other = load(bed.name)
    if other is not None and (other.kind, other.a.ns, other.b.ns) != (bed.kind, bed.a.ns, bed.b.ns):
        raise UsageError(f"bed '{bed.name}' is already up as {describe(other)}: take it down "
                         f"(linkemu testbed down --bed {bed.name}) or use another --bed")
    pair = testbed.bed_for(bed.name)
    if other is None and (netns.ns_exists(pair.ns_src) or netns.ns_exists(pair.ns_dst)):
        raise UsageError(f"bed '{bed.name}' is up as linkemu's own pair of namespaces: take it "
                         f"down (linkemu testbed down --bed {bed.name}) or use another --bed")


def _check_between(bed: AttachedBed) -> None:
    ra, rb = bed.a.ref, bed.b.ref
    ra.require()
    rb.require()
    if ra.identity() == rb.identity():
        raise UsageError(f"{ra} and {rb} are one network namespace: the link needs two "
                         f"(a frame sent from one end would be delivered locally)")


# --- check / status ----------------------------------------------------------------------

def check(bed: AttachedBed) -> list[str]:
    return sides.check(bed.a, bed.identity_a) + sides.check(bed.b, bed.identity_b)


def describe(bed: AttachedBed) -> str:
    if bed.kind == "shell":
        return f"a shell link (namespace {bed.a.ref.value}, host end {bed.b.dev} {bed.b.cidr})"
    return f"a link between {bed.a.ref} and {bed.b.ref}"


def status(bed: AttachedBed) -> dict:
    interfaces = {}
    for side in (bed.a, bed.b):
        ref = side.ref
        interfaces[side.role] = {
            "namespace": str(ref), "ns": side.ns, "dev": side.dev, "host": side.host,
            "address": side.cidr or None, "owned_namespace": side.owned,
            "dpdk_port": 0 if side.role == "src" else 1,
            "present": netns.link_exists(side.host) and netns.link_exists(side.dev, ref),
        }
    pid = testbed.daemon_pid(bed)
    return {"bed": bed.name, "kind": bed.kind,
            "up": all(i["present"] for i in interfaces.values()),
            "interfaces": interfaces,
            "daemon": {"running": pid is not None, "pid": pid},
            "state_file": str(paths.testbed_state_file(bed.name))}


def format_status(st: dict) -> str:
    lines = [f"test bed '{st['bed']}' ({st['kind']}): {'up' if st['up'] else 'down'}"]
    for role, i in st["interfaces"].items():
        mark = "" if i["present"] else "  (missing)"
        addr = i["address"] or "no address"
        lines.append(f"  side {'A' if role == 'src' else 'B'} ({role}): {i['namespace']} "
                     f"{i['dev']} {addr} <-> host {i['host']} = DPDK port {i['dpdk_port']}{mark}")
    d = st["daemon"]
    lines.append(f"  linkemud: {'running, pid %d' % d['pid'] if d['running'] else 'not running'}")
    return "\n".join(lines)


# --- down ----------------------------------------------------------------------------------

def down(name: str) -> list[str]:
    """Remove what an attached bed of this name may have left, state file
    or not: its daemon, its two host veths (which takes their other ends,
    with their addresses and neighbour entries, out of whatever namespace
    they are in), the shell's own namespace, the runtime files. Never a
    namespace or process of the user's."""
    return testbed.remove(testbed.bed_for(name), [shell_ns(name)])
