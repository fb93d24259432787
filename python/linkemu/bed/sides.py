"""One side of a bed: a veth whose host end is a DPDK port and whose other
end sits in a namespace (linkemu's own, a user's, or the host's).

Every kind of bed is two of these (testbed's pair, attached.py's `between`
and `shell`), so building, repairing and checking a side is written once.
What a side may touch depends on whether linkemu owns its namespace: in
its own, namespace-wide settings (IPv6 off everywhere, lo up); in anyone
else's, only the veth end it created and settings that belong to that
device, so that deleting the device undoes all of it.
"""

from __future__ import annotations

from dataclasses import dataclass

from linkemu.bed import netns
from linkemu.bed.nsref import NsRef
from linkemu.errors import UsageError


@dataclass(frozen=True)
class Side:
    role: str          # "src" (side A, DPDK port 0) or "dst" (side B, port 1)
    ns: str            # NsRef spec: "name:N", "pid:P" or "root"
    dev: str           # the veth end in ns
    host: str          # the host end: the DPDK port
    cidr: str = ""     # address/prefix on dev; "" = none (not asked)
    owned: bool = False  # linkemu created ns (and may set namespace-wide settings)

    @property
    def ref(self) -> NsRef:
        return NsRef.from_spec(self.ns)

    @property
    def addr(self) -> str:
        return self.cidr.split("/")[0] if self.cidr else ""


def up(side: Side) -> None:
    """Build the side, or repair a half-built one; idempotent."""
    ref = side.ref
    if side.owned and not netns.ns_exists(ref.value):
        netns.ns_add(ref.value)
    if side.owned:
        # linkemu's own namespace: no IPv6 at all. Router solicitations, MLD
        # reports and DAD probes would cross the emulator and spoil frame
        # counts; `default` covers the veth end created in it after this.
        for key in ("all", "default"):
            netns.ns_run(ref.value, ["sysctl", "-q", "-w", f"net.ipv6.conf.{key}.disable_ipv6=1"])
        netns.link_up("lo", ref.value)
    host_there = netns.link_exists(side.host)
    dev_there = netns.link_exists(side.dev, ref)
    if host_there and not dev_there:
        netns.link_del_wait(side.host)      # half a pair left by a crash
        host_there = False
    if not host_there:
        if dev_there and not side.owned:
            raise UsageError(f"{ref} already has an interface '{side.dev}' that linkemu did "
                             f"not create: choose another name with --dev")
        if dev_there:
            netns.run(ref.ip_argv() + ["link", "del", "dev", side.dev])
        netns.veth_add(side.host, ref, side.dev)
    # IPv6 off on our two devices (in a namespace we do not own, only on
    # them), before `up`, so that no DAD or MLD frame is ever sent.
    device_ipv6_off(NsRef.root(), side.host)
    device_ipv6_off(ref, side.dev)
    netns.offloads_off(side.host)
    netns.offloads_off(side.dev, ref)
    if side.cidr:
        netns.addr_add(side.dev, side.cidr, ref)
    netns.link_up(side.dev, ref)
    netns.link_up(side.host)
    netns.steer_receive(ref, side.dev)


def device_ipv6_off(ref: NsRef, dev: str) -> None:
    # /proc/sys/net shows the namespace of whoever opens it.
    netns.run(ref.exec_argv(["sh", "-c", f"f=/proc/sys/net/ipv6/conf/{dev}/disable_ipv6; "
                                         f"[ ! -e $f ] || echo 1 > $f"]))


def static_neighbours(a: Side, b: Side) -> None:
    """Permanent neighbour entries for each other on the two ends.

    Without them ARP requests and replies cross the emulated link and are
    delayed and dropped like data: with 20 % loss an ARP miss stalls the
    first packets for a second and the kernel discards what it queued
    meanwhile, which would count as link loss. Static entries make the bed
    carry only the test traffic, so the daemon's counters equal the tools'
    counts. They belong to the devices and go away with them."""
    mac_a = netns.link_mac(a.dev, a.ref)
    mac_b = netns.link_mac(b.dev, b.ref)
    netns.neigh_permanent(a.dev, b.addr, mac_b, a.ref)
    netns.neigh_permanent(b.dev, a.addr, mac_a, b.ref)


def addresses_on(dev: str, ref: NsRef | None = None) -> list[str]:
    info = netns.link_info(dev, ref)
    return [f"{a['local']}/{a['prefixlen']}" for a in (info or {}).get("addr_info", [])
            if a.get("family") == "inet"]


def check(side: Side, identity: tuple[int, int] | None = None) -> list[str]:
    """Everything that should be true of a built side; returns what is not.
    identity: the namespace's (dev, inode) when the bed was built."""
    ref = side.ref
    if not ref.exists():
        return [f"namespace {ref} missing"]
    if identity is not None and ref.identity() != identity:
        return [f"{ref} is now another namespace than at `up` (a pid reused, or the "
                f"namespace re-created)"]
    if not netns.link_exists(side.host):
        return [f"host veth {side.host} missing"]
    info = netns.link_info(side.dev, ref)
    if info is None:
        return [f"{ref}: {side.dev} missing"]
    problems = []
    if side.cidr:
        have = addresses_on(side.dev, ref)
        if side.cidr not in have:
            problems.append(f"{ref}: {side.dev} has {have or 'no address'}, want {side.cidr}")
    if "UP" not in info.get("flags", []):
        problems.append(f"{ref}: {side.dev} is down")
    host_info = netns.link_info(side.host)
    if host_info is None or "UP" not in host_info.get("flags", []):
        problems.append(f"host veth {side.host} is down")
    if side.owned:
        for r in netns.routes(ref.value):
            if r.get("dst") == "default":
                problems.append(f"{ref}: has a default route ({r})")
    for dev, where in ((side.host, None), (side.dev, ref)):
        on = netns.offloads_on(dev, where)
        if on:
            problems.append(f"{where or 'host'}: {dev}: offloads still on: {', '.join(on)}")
    return problems
