"""Helpers of the API tests (beds "la", "lh", "lk"): the CLI as a user
runs it, what the machine holds of our beds, and a snapshot of a
namespace to compare before and after linkemu touched it.

tests/api is a package (api.conftest, api.apikit) so that collecting it
with other test directories never mixes up their conftest modules.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
if str(REPO / "python") not in sys.path:
    sys.path.insert(0, str(REPO / "python"))

from linkemu import netns, paths, procs, testbed  # noqa: E402
from linkemu.nsref import NsRef  # noqa: E402

BEDS = ("la", "lh", "lk")


def cli_env(extra: dict | None = None) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO / "python") + (os.pathsep + env["PYTHONPATH"]
                                                 if env.get("PYTHONPATH") else "")
    env.update(extra or {})
    return env


def linkemu(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`linkemu ARGS` as a user runs it; never raises on the exit code."""
    return subprocess.run([sys.executable, "-m", "linkemu", *args], capture_output=True,
                          text=True, timeout=timeout, env=cli_env())


def leftovers(prefixes=BEDS) -> list[str]:
    """Anything of our beds (namespaces, links, daemons, runtime files)
    still on the machine."""
    found = [f"namespace {n}" for n in netns.ns_list() if n.startswith(prefixes)]
    found += [f"link {d}" for d in os.listdir("/sys/class/net")
              if d.startswith(tuple(f"{p}-" for p in prefixes))]
    for name in prefixes:
        b = testbed.bed_for(name)
        found += [f"linkemud pid {p}" for p in procs.find_linkemud(b.file_prefix)]
        if paths.bed_run_dir(name).exists():
            found.append(f"dir {paths.bed_run_dir(name)}")
        if (paths.DPDK_RUN_ROOT / b.file_prefix).exists():
            found.append(f"dir {paths.DPDK_RUN_ROOT / b.file_prefix}")
        found += [f"file {f}" for f in Path("/dev/hugepages").glob(f"{b.file_prefix}map_*")]
    return found


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
