"""Helpers of the API suite (beds "la", "lh", "lk"): what the machine
still holds of them, a snapshot of a namespace to compare before and after
linkemu touched it, and readers of ping's and linkemu's output."""

from __future__ import annotations

import json

import kit
from linkemu.bed import netns
from linkemu.bed.nsref import NsRef

BEDS = ("la", "lh", "lk")
USER_NS_PREFIXES = tuple(f"{b}user" for b in BEDS)   # namespaces standing for a user's


def leftovers() -> list[str]:
    """Anything of our three beds (namespaces, links, processes, runtime
    files), or of the namespaces the tests created for a user, still here."""
    found = [x for b in BEDS for x in kit.leftovers(b)]
    return found + [f"namespace {n}" for n in netns.ns_list() if n.startswith(USER_NS_PREFIXES)]


# What a test compares before and after linkemu used a namespace. Keys
# that move by themselves (counters, random seeds) are left out.
_VOLATILE_SYSCTL = ("net.netfilter.nf_conntrack_count", "net.ipv4.route.gc_",
                    "net.core.netdev_rss_key", "net.ipv4.tcp_fastopen_key")


def snapshot(ref: NsRef) -> dict:
    """Links (name, flags, mtu, address), addresses, routes (all tables),
    neighbour entries, and every net.* sysctl of a namespace."""
    def ip(*args: str):
        return json.loads(netns.run(ref.ip_argv() + ["-j", *args]).stdout or "[]")

    links = sorted((l["ifname"], tuple(sorted(l.get("flags", []))), l.get("mtu"),
                    l.get("address")) for l in ip("link", "show"))
    addrs = sorted((l["ifname"], a["family"], a["local"], a["prefixlen"])
                   for l in ip("addr", "show") for a in l.get("addr_info", []))
    routes = sorted(json.dumps(r, sort_keys=True) for r in ip("route", "show", "table", "all"))
    routes6 = sorted(json.dumps(r, sort_keys=True)
                     for r in ip("-6", "route", "show", "table", "all"))
    neigh = sorted(json.dumps(n, sort_keys=True) for n in ip("neigh", "show"))
    out = netns.run(ref.exec_argv(["sysctl", "-a", "--pattern", r"^net\."]), check=False).stdout
    sysctls = {}
    for line in out.splitlines():
        k, _, v = line.partition(" = ")
        if not k.startswith(_VOLATILE_SYSCTL):
            sysctls[k] = v
    return {"links": links, "addrs": addrs, "routes": routes, "routes6": routes6,
            "neigh": neigh, "sysctls": sysctls}


def diff(before: dict, after: dict) -> list[str]:
    out = []
    for key in ("links", "addrs", "routes", "routes6", "neigh"):
        if before[key] != after[key]:
            out.append(f"{key}: before {before[key]} after {after[key]}")
    b, a = before["sysctls"], after["sysctls"]
    for k in sorted(set(b) | set(a)):
        if b.get(k) != a.get(k):
            out.append(f"sysctl {k}: before {b.get(k)!r} after {a.get(k)!r}")
    return out


def ping_rtts(text: str) -> list[float]:
    """RTTs (ms) of ping's reply lines."""
    return [float(l.split("time=")[1].split()[0]) for l in text.splitlines() if "time=" in l]


def emulation_p99_ms(report_text: str) -> list[float]:
    """The per-direction emulation error p99 (ms) from the final counters
    linkemu prints ("... p99 1.2 ms ..." or "us" or "ns")."""
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
    out = []
    for line in report_text.splitlines():
        if "emulation error" in line and "p99" in line:
            value, unit = line.split("p99 ")[1].split(",")[0].split()
            out.append(float(value) * scale[unit])
    return out
