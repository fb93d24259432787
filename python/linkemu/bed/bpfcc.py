"""Our BPF congestion controls (bpf/lfp_cc.bpf.c): build, register, list
(the command is linkemu.cli.cc: `linkemu cc list|load|unload|stats`).

Registration is global to the kernel (struct_ops tcp_congestion_ops), so a
registered algorithm can be chosen in every network namespace, by
TCP_CONGESTION, `iperf3 -C NAME` or `ttcp send --cc NAME`. It stays
registered until `unload` (bpftool's registration without a link holds
the struct_ops map in the kernel after bpftool exits).

Build: vmlinux.h is generated from the running kernel's BTF into
build/bpf/ (one per kernel release), and each algorithm is the same source
compiled with -DLFP_ADAPTIVE=0 or 1. Objects are rebuilt when the source or
the kernel changed.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from linkemu.bed.paths import repo_root
from linkemu.errors import LinkemuError, UsageError

BTF_VMLINUX = Path("/sys/kernel/btf/vmlinux")
AVAILABLE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")


@dataclass(frozen=True)
class Algorithm:
    name: str          # TCP_CONGESTION name, also the struct_ops map's name
    adaptive: int      # -DLFP_ADAPTIVE
    stats_map: str     # the counters' BPF map
    what: str


ALGORITHMS = {
    "lfp_fixed": Algorithm("lfp_fixed", 0, "lfp_fixed_st",
                           "LFP study's avoidance, fixed x = 2, y = 8 (4.3BSD-Reno rules)"),
    "lfp_adapt": Algorithm("lfp_adapt", 1, "lfp_adapt_st",
                           "LFP study's adaptive avoidance: x, y steered by the stall share S"),
}

STATS_FIELDS = ("losses", "resets", "undos", "raise_y", "raise_x", "relax", "small_bdp",
                "stalled_us", "elapsed_us", "last_x", "last_y", "last_s_permille",
                "max_x", "max_y")


def source() -> Path:
    return repo_root() / "bpf" / "lfp_cc.bpf.c"


def build_dir() -> Path:
    return repo_root() / "build" / "bpf"


def _pick(names: list[str] | None) -> list[Algorithm]:
    if not names:
        return list(ALGORITHMS.values())
    unknown = [n for n in names if n not in ALGORITHMS]
    if unknown:
        raise UsageError(f"unknown BPF congestion control {', '.join(unknown)} "
                         f"(ours: {', '.join(ALGORITHMS)})")
    return [ALGORITHMS[n] for n in names]


def unsupported() -> str | None:
    """Why this machine cannot build or register our algorithms, or None."""
    if os.geteuid() != 0:
        return "registering a BPF congestion control needs root (CAP_BPF and CAP_NET_ADMIN)"
    if not BTF_VMLINUX.exists():
        return (f"the kernel has no BTF ({BTF_VMLINUX} is missing: CONFIG_DEBUG_INFO_BTF is "
                f"off), so BPF struct_ops congestion controls cannot be loaded")
    missing = [t for t in ("clang", "bpftool") if shutil.which(t) is None]
    if missing:
        return (f"{' and '.join(missing)} not found: install the Debian packages clang and "
                f"bpftool (scripts/setup.sh does)")
    return None


def require_support() -> None:
    why = unsupported()
    if why:
        raise LinkemuError(f"BPF congestion control unavailable: {why}")


def available() -> list[str]:
    try:
        return AVAILABLE.read_text().split()
    except OSError:
        return []


def _run(cmd: list[str], what: str, timeout: float = 120) -> str:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise LinkemuError(f"{what}: {e}") from e
    if p.returncode != 0:
        msg = (p.stderr.strip() or p.stdout.strip()).splitlines()[-8:]
        raise LinkemuError(f"{what} failed (exit {p.returncode}):\n  " + "\n  ".join(msg))
    return p.stdout


def vmlinux_header() -> Path:
    """build/bpf/vmlinux-RELEASE/vmlinux.h for the running kernel."""
    d = build_dir() / f"vmlinux-{platform.release()}"
    h = d / "vmlinux.h"
    if not h.exists():
        d.mkdir(parents=True, exist_ok=True)
        text = _run(["bpftool", "btf", "dump", "file", str(BTF_VMLINUX), "format", "c"],
                    "generating vmlinux.h from the kernel's BTF")
        tmp = h.with_suffix(".tmp")
        tmp.write_text(text)
        tmp.replace(h)
    return h


def build(alg: Algorithm) -> Path:
    header = vmlinux_header()
    obj = header.parent / f"{alg.name}.bpf.o"
    src = source()
    if obj.exists() and obj.stat().st_mtime >= src.stat().st_mtime:
        return obj
    _run(["clang", "-O2", "-g", "-target", "bpf", "-D__TARGET_ARCH_x86",
          f"-DLFP_ADAPTIVE={alg.adaptive}", "-I", str(header.parent), "-Wall", "-Werror",
          "-c", str(src), "-o", str(obj)], f"compiling {alg.name} ({src.name})")
    return obj


def registered(strict: bool = False) -> dict[str, int]:
    """struct_ops maps registered now: name -> id. When bpftool is missing
    or cannot list them (not root): {}, or with strict a LinkemuError
    saying why (for a caller that acts on the answer, e.g. unload)."""
    if shutil.which("bpftool") is None:
        if strict:
            raise LinkemuError("bpftool not found: it lists and unregisters BPF congestion "
                               "controls (install the Debian package bpftool)")
        return {}
    try:
        out = _run(["bpftool", "-j", "struct_ops", "show"], "bpftool struct_ops show", 30)
        rows = json.loads(out or "[]")
    except (LinkemuError, ValueError) as e:
        if strict:
            raise LinkemuError(f"cannot tell which BPF congestion controls are registered "
                               f"(root needed): {e}") from e
        return {}
    return {r.get("name"): r.get("id") for r in rows
            if r.get("kernel_struct_ops") == "tcp_congestion_ops"}


def load(names: list[str] | None = None) -> list[str]:
    """Build and register; already registered ones are left as they are.
    Returns what this call registered. If any step fails, what this call
    registered is unregistered again before the error is raised."""
    algs = _pick(names)
    require_support()
    done = []
    have = registered()
    try:
        for a in algs:
            if a.name in have or a.name in available():
                continue
            obj = build(a)
            _run(["bpftool", "struct_ops", "register", str(obj)],
                 f"registering {a.name} (bpftool struct_ops register; the kernel needs "
                 f"CONFIG_BPF_JIT and BPF struct_ops support)")
            done.append(a.name)     # registered: undone below if a later step fails
            if a.name not in available():
                raise LinkemuError(f"{a.name} was registered but the kernel does not offer "
                                   f"it in {AVAILABLE}")
    except BaseException:
        # All or nothing: what this call registered goes again, so a failed
        # load leaves the kernel's TCP as it found it.
        for name in reversed(done):
            try:
                _run(["bpftool", "struct_ops", "unregister", "name", name],
                     f"unregistering {name} after the failed load", 30)
            except LinkemuError:
                pass
        raise
    return done


def unload(names: list[str] | None = None) -> list[str]:
    algs = _pick(names)
    have = registered(strict=True)     # {} must mean "none registered", not "cannot see"
    done = []
    for a in algs:
        if a.name not in have:
            continue
        _run(["bpftool", "struct_ops", "unregister", "name", a.name],
             f"unregistering {a.name}")
        done.append(a.name)
    return done


def stats(name: str) -> dict:
    """The algorithm's counters (zeros never loaded -> LinkemuError)."""
    a = _pick([name])[0]
    if a.name not in available():
        raise LinkemuError(f"{a.name} is not loaded, so it has no counters: "
                           f"`linkemu cc load {a.name}` first")
    out = _run(["bpftool", "-j", "map", "dump", "name", a.stats_map],
               f"reading {a.stats_map} (is {a.name} loaded?)", 30)
    try:
        rows = json.loads(out)
        v = rows[0]["formatted"]["value"]
    except (ValueError, IndexError, KeyError, TypeError) as e:
        raise LinkemuError(f"{a.stats_map}: unexpected bpftool output ({e})") from e
    return {k: int(v.get(k, 0)) for k in STATS_FIELDS}


def stats_delta(before: dict, after: dict) -> dict:
    """Counters over one run: differences, except the last_/max_ values."""
    out = {}
    for k in STATS_FIELDS:
        if k.startswith("last_") or k.startswith("max_"):
            out[k] = after[k]
        else:
            out[k] = after[k] - before.get(k, 0)
    out["s_share"] = (out["stalled_us"] / out["elapsed_us"]) if out["elapsed_us"] else None
    return out


def listing() -> list[dict]:
    avail = available()
    regs = registered()
    rows = [{"name": n, "kind": "ours (BPF)" if n in ALGORITHMS else
             ("BPF" if n in regs else "kernel"), "available": True} for n in avail]
    for n, a in ALGORITHMS.items():
        if n not in avail:
            rows.append({"name": n, "kind": "ours (BPF)", "available": False})
    for r in rows:
        a = ALGORITHMS.get(r["name"])
        r["what"] = a.what if a else ""
    return rows
