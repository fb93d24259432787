"""`linkemu run --ports IF_A,IF_B`: the daemon on two interfaces that
already exist (a lab's NICs, veths of a Mininet or container set-up), or
on two DPDK-bound PCI devices given by address.

Nothing is built and nothing of the interfaces is changed: linkemu checks
what the daemon relies on and says what to do when it is not so, because
turning a user's offloads off or taking an interface that another program
uses is not ours to decide. What linkemu creates (a runtime directory for
the pid file, control socket and final counters, EAL's files) goes on
`stop`/`down`.
"""

from __future__ import annotations

import json
import re
import shlex
import time
from dataclasses import dataclass
from pathlib import Path

from linkemu.bed import isolation, netns, paths, procs, testbed
from linkemu.errors import LinkemuError, UsageError

KIND = "ports"
# domain:bus:device.function, domain optional (DPDK accepts both).
_PCI_RE = re.compile(r"^(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")
PCI_DEVICES = Path("/sys/bus/pci/devices")
# Kernel drivers that hand a PCI device to a user-space (DPDK) driver.
DPDK_DRIVERS = ("vfio-pci", "uio_pci_generic", "igb_uio")


def is_pci(port: str) -> bool:
    return bool(_PCI_RE.match(port))


def _pci_full(port: str) -> str:
    return port.lower() if port.count(":") == 2 else f"0000:{port.lower()}"


@dataclass(frozen=True)
class PortsBed(testbed.BedFiles):
    name: str
    port_a: str        # interface name or PCI address: DPDK port 0 (side A)
    port_b: str
    kind: str = KIND

    @property
    def host_a(self) -> str:
        return self.port_a

    @property
    def host_b(self) -> str:
        return self.port_b

    @property
    def pci(self) -> bool:
        return is_pci(self.port_a)

    def eal_ports(self, pmd: str) -> list[str]:
        if self.pci:
            # DPDK numbers PCI ports in bus order; parse() made A the lower.
            return ["-a", self.port_a, "-a", self.port_b]
        return testbed.vdev_args(pmd, (self.port_a, self.port_b))

    def to_state(self) -> dict:
        return {"kind": KIND, "name": self.name, "port_a": self.port_a, "port_b": self.port_b}


def parse(name: str, spec: str) -> PortsBed:
    """IF_A,IF_B (or PCI_A,PCI_B) -> a PortsBed; usage errors name the part."""
    parts = [p.strip() for p in spec.split(",")]
    if len(parts) != 2 or not all(parts):
        raise UsageError(f"--ports '{spec}': give two ports, IF_A,IF_B (interfaces or PCI "
                         f"addresses)")
    a, b = parts
    # A PCI address may be written with or without its domain, in either case.
    if a == b or (is_pci(a) and is_pci(b) and _pci_full(a) == _pci_full(b)):
        raise UsageError(f"--ports '{spec}': side A and side B are one port")
    if is_pci(a) != is_pci(b):
        raise UsageError(f"--ports '{spec}': both ports must be interfaces or both PCI "
                         f"addresses (DPDK numbers PCI ports before virtual ones, so a mix "
                         f"cannot say which side is which)")
    if is_pci(a) and _pci_full(a) > _pci_full(b):
        raise UsageError(f"--ports '{spec}': DPDK numbers PCI ports in address order, so "
                         f"side A (port 0) must be the lower address: give --ports {b},{a} "
                         f"and swap --a2b/--b2a")
    return PortsBed(testbed.bed_for(name).name, a, b)


def problems(bed: PortsBed, pmd: str) -> list[str]:
    """Why the daemon cannot use these ports, each with what to do."""
    out: list[str] = []
    for port in (bed.port_a, bed.port_b):
        user = _other_linkemud(port, bed.file_prefix)
        if user is not None:
            out.append(f"{port} is in use by another linkemud (pid {user}); stop it first")
            continue
        out += _pci_problems(port) if bed.pci else _iface_problems(port, pmd)
    return out


def _iface_problems(dev: str, pmd: str) -> list[str]:
    if not netns.link_exists(dev):
        if is_pci(dev):
            return [f"{dev}: no such interface"]
        return [f"{dev}: no such interface on this host (ip link shows the interfaces; a "
                f"DPDK-bound NIC is given by its PCI address, e.g. 0000:3b:00.0)"]
    out = []
    info = netns.link_info(dev) or {}
    if "UP" not in info.get("flags", []):
        out.append(f"{dev} is down: ip link set dev {dev} up")
    if info.get("master"):
        out.append(f"{dev} is enslaved to {info['master']} (a bridge or bond takes its "
                   f"frames first): ip link set dev {dev} nomaster")
    if pmd == "af_xdp" and info.get("xdp"):
        out.append(f"{dev} already has an XDP program attached (another AF_XDP user?); "
                   f"detach it (ip link set dev {dev} xdp off) or use --pmd af_packet")
    on = netns.offloads_on(dev)
    if on:
        out.append(f"{dev} has offloads on ({', '.join(on)}): frames forwarded by the "
                   f"daemon would carry unfinished checksums or exceed the MTU; turn them "
                   f"off with: {shlex.join(netns.offloads_off_argv(dev))}")
    return out


def _pci_problems(addr: str) -> list[str]:
    dev = PCI_DEVICES / _pci_full(addr)
    if not dev.exists():
        return [f"{addr}: no such PCI device (lspci -D lists them)"]
    try:
        driver = (dev / "driver").resolve().name
    except OSError:
        driver = ""
    if not (dev / "driver").exists():
        return [f"{addr} is bound to no driver: bind it to vfio-pci "
                f"(dpdk-devbind.py --bind=vfio-pci {addr})"]
    if driver not in DPDK_DRIVERS:
        return [f"{addr} is bound to the kernel driver {driver}, not a DPDK one: "
                f"dpdk-devbind.py --bind=vfio-pci {addr} (or give its interface name to "
                f"use it through AF_XDP/AF_PACKET)"]
    return []


def _other_linkemud(port: str, own_prefix: str) -> int | None:
    """A live linkemud (not this bed's) whose EAL arguments name port."""
    want = {f"iface={port}"}
    for pid in procs.any_linkemud():
        argv = procs.cmdline(pid)
        if own_prefix in argv or f"--file-prefix={own_prefix}" in argv:
            continue
        for i, arg in enumerate(argv):
            if any(w in arg.split(",") for w in want):
                return pid
            if arg in ("-a", "--allow", "-w") and i + 1 < len(argv) \
                    and is_pci(port) and _pci_full(argv[i + 1].split(",")[0]) == _pci_full(port):
                return pid
    return None


def up(bed: PortsBed, pmd: str) -> None:
    """Check the ports and record the bed (so stop, ctl and stats find it)."""
    found = problems(bed, pmd)
    if found:
        raise LinkemuError("cannot run on --ports " + f"{bed.port_a},{bed.port_b}:\n  "
                           + "\n  ".join(found))
    bed.run_dir.mkdir(parents=True, exist_ok=True)
    st = _read_state(bed.name) or {}
    # The DPDK drivers turn promiscuous mode on and leave it on; what the
    # interfaces had before the first run is what `stop`/`down` put back.
    promisc = st.get("promisc_before") or ({} if bed.pci else
                                           {p: _promisc(p) for p in (bed.port_a, bed.port_b)})
    testbed.write_json(paths.testbed_state_file(bed.name),
                       {**bed.to_state(), "created": time.time(), "promisc_before": promisc})


def _promisc(dev: str) -> bool:
    return "PROMISC" in ((netns.link_info(dev) or {}).get("flags") or [])


def restore(bed: PortsBed) -> list[str]:
    """Put back what the daemon's drivers changed on the interfaces."""
    done = []
    for dev, was in ((_read_state(bed.name) or {}).get("promisc_before") or {}).items():
        if not was and netns.link_exists(dev) and _promisc(dev):
            netns.run(["ip", "link", "set", "dev", dev, "promisc", "off"], check=False)
            done.append(f"promiscuous mode off again on {dev}")
    return done


def _read_state(name: str) -> dict | None:
    try:
        return json.loads(paths.testbed_state_file(name).read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def load(name: str) -> PortsBed | None:
    st = _read_state(name)
    if st is None or st.get("kind") != KIND:
        return None
    return PortsBed(st["name"], st["port_a"], st["port_b"])


def down(bed: PortsBed) -> list[str]:
    """The daemon and linkemu's own files; never the interfaces. Every step
    runs even when an earlier one failed (testbed.Removal): a daemon we may
    not signal must not leave the promiscuous mode, the runtime dir and
    EAL's hugepage files (their pages stay taken) behind."""
    removal = testbed.Removal(bed.name)
    removal.steps_done("stopping linkemud", testbed.kill_daemons, bed)
    # Before the runtime dir goes: the state file there says what to put back.
    removal.steps_done("restoring the ports' promiscuous mode", restore, bed)
    removal.done += testbed.remove_run_dir(bed)
    removal.steps_done("removing EAL's files", testbed.remove_dpdk_leftovers, bed.file_prefix)
    # As testbed.remove: a killed `run --ports --isolate-lcore` could not
    # give other processes' threads their CPUs back; its record can.
    removal.steps_done("giving back isolated CPUs", isolation.recover_stale)
    return removal.finish()


def status(bed: PortsBed) -> dict:
    pid = testbed.daemon_pid(bed)
    return {"bed": bed.name, "kind": KIND, "up": paths.testbed_state_file(bed.name).exists(),
            "ports": {"a": bed.port_a, "b": bed.port_b},
            "daemon": {"running": pid is not None, "pid": pid},
            "state_file": str(paths.testbed_state_file(bed.name))}


def format_status(st: dict) -> str:
    d = st["daemon"]
    return (f"bed '{st['bed']}' (ports): side A {st['ports']['a']} = DPDK port 0, "
            f"side B {st['ports']['b']} = DPDK port 1\n"
            f"  linkemud: {'running, pid %d' % d['pid'] if d['running'] else 'not running'}")
