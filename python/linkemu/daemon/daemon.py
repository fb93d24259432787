"""Start and stop linkemud for a bed, and read its final counters.

linkemud's side of the contract:
  - grammar errors: exit 2 with `linkemud: --a2b: ...` on stderr, before EAL
    touches hugepages;
  - ready: a line beginning `linkemud: ready` on stdout once ports forward;
  - on SIGTERM/SIGINT: stop, account every frame, write the final JSON to
    --stats-file, exit 0.
Its stdout and stderr go to one log file rather than a pipe to us: with
--detach we exit and a pipe would break under the daemon.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from linkemu.bed import paths, procs
from linkemu.bed.cpus import default_lcores
from linkemu.bed.interrupts import shielded
from linkemu.bed.testbed import Bed, daemon_pid, live_daemon, remove_dpdk_leftovers, start_lock
from linkemu.daemon import control
from linkemu.errors import LinkemuError, UsageError

PMDS = ("af_xdp", "af_packet")
# Data planes: linkemud on DPDK ports, or linkemuk on kernel AF_PACKET
# sockets (docs/kernel-plane.md). Both speak the same options after the
# ports, control protocol, ready line and final JSON.
IOS = ("dpdk", "kernel")
# Each plane's program: the name its own messages begin with.
DAEMON_NAMES = {"dpdk": "linkemud", "kernel": "linkemuk"}
LAYOUTS = ("auto", "single", "per-direction", "pipeline")
# How an idle data plane waits (docs/performance.md "Waiting"): busy polls,
# adaptive sleeps until shortly before the next deadline or a frame.
WAITS = ("busy", "adaptive")
READY_PREFIX = "linkemud: ready"
READY_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0
# A daemon that did not become ready: its time to exit on SIGTERM before SIGKILL.
ABORT_GRACE_S = 5.0
_LCORES_RE = re.compile(r"^[0-9][0-9,\-]*$")


@dataclass(frozen=True)
class DaemonConfig:
    bed: Bed
    a2b: str = ""              # empty grammar: an unimpaired link
    b2a: str = ""
    pmd: str = "af_xdp"
    lcores: str = ""           # "" -> default_lcores()
    layout: str | None = None  # None -> the daemon's own default
    seed: int | None = None
    io: str = "dpdk"           # "kernel": linkemuk (pmd, lcores, layout do not apply)
    wait: str | None = None    # None -> the daemon's own default (WAITS)
    spin: str | None = None    # adaptive: "auto" or microseconds; None -> the daemon's default (auto)


@dataclass
class Daemon:
    """A started daemon. popen is set only in the process that started it."""

    pid: int
    config: DaemonConfig
    argv: list[str]
    popen: subprocess.Popen | None = field(default=None, repr=False)


class DaemonStartError(LinkemuError):
    """linkemud did not become ready (not a usage error: worth a retry)."""


def validate(cfg: DaemonConfig) -> None:
    if cfg.io not in IOS:
        raise UsageError(f"unknown --io '{cfg.io}' (expected {' or '.join(IOS)})")
    if cfg.io == "kernel" and cfg.layout not in (None, "auto", "single"):
        raise UsageError(f"--layout {cfg.layout} does not apply to --io kernel "
                         "(one thread runs both directions)")
    if cfg.io == "kernel" and getattr(cfg.bed, "pci", False):
        raise UsageError("--io kernel needs interface names, not PCI addresses")
    if cfg.pmd not in PMDS:
        raise UsageError(f"unknown --pmd '{cfg.pmd}' (expected {' or '.join(PMDS)})")
    if cfg.layout is not None and cfg.layout not in LAYOUTS:
        raise UsageError(f"unknown --layout '{cfg.layout}' (expected {', '.join(LAYOUTS)})")
    if cfg.wait is not None and cfg.wait not in WAITS:
        raise UsageError(f"unknown --wait '{cfg.wait}' (expected {' or '.join(WAITS)})")
    if cfg.wait == "adaptive" and cfg.layout == "pipeline":
        raise UsageError("--wait adaptive needs the single or per-direction layout (the "
                         "pipeline's lcores hand frames over rings, which cannot wake a sleeper)")
    # isascii: str.isdigit() also takes digits int() refuses ('²').
    if cfg.spin is not None and cfg.spin != "auto" and not (cfg.spin.isascii() and cfg.spin.isdigit()
                                                            and int(cfg.spin) <= 1_000_000):
        raise UsageError(f"bad --spin-us '{cfg.spin}' (expected auto or microseconds, 0 to 1000000)")
    if cfg.lcores and not _LCORES_RE.match(cfg.lcores):
        raise UsageError(f"bad --lcores '{cfg.lcores}' (expected a list like 1 or 1-2 or 1,3)")
    # Checked here, before the bed is up: linkemud takes 64 bits.
    if cfg.seed is not None and not 0 <= cfg.seed < 2**64:
        raise UsageError(f"--seed {cfg.seed} is out of range (0 to {2**64 - 1})")


def ports_argv(binary: Path, cfg: DaemonConfig) -> list[str]:
    """The daemon and its ports: EAL's options for linkemud, the two
    interfaces for linkemuk (--instance = the bed's file prefix, so the
    bed's process checks find either daemon by the same name)."""
    b = cfg.bed
    if cfg.io == "kernel":
        return [str(binary), "--iface-a", b.host_a, "--iface-b", b.host_b,
                "--instance", b.file_prefix]
    return [str(binary), "-l", cfg.lcores or default_lcores(),
            "--file-prefix", b.file_prefix, *b.eal_ports(cfg.pmd), "--"]


def control_character(text: str, allowed: str = "\t") -> str | None:
    """The first control character (C0 or DEL) of text not in `allowed`,
    or None. The daemon reads a link as a C string (a NUL cuts it short)
    and no word of the grammar holds one."""
    return next((c for c in text if ord(c) < 0x20 and c not in allowed or c == "\x7f"), None)


def check_link(binary: str | os.PathLike, grammar: str) -> str | None:
    """Ask linkemud whether a link's grammar is valid (`linkemud --check`):
    None if it is, else linkemud's reason (naming the word, and the word
    probably meant when one was misspelt)."""
    if "\0" in grammar:
        # No argument can carry one (subprocess raises ValueError), and no
        # word holds one: a reason like any other, not a traceback.
        return "the link holds a NUL character"
    try:
        cp = subprocess.run([str(binary), "--check", grammar], capture_output=True, text=True,
                            timeout=10)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise LinkemuError(f"cannot run {binary} --check: {e}") from e
    if cp.returncode == 0:
        return None
    msg = (cp.stderr.strip() or cp.stdout.strip() or f"exit code {cp.returncode}").splitlines()[0]
    return msg.removeprefix("linkemud: ").removeprefix("linkemuk: ")


def check_links(cfg: DaemonConfig, binary: str | os.PathLike) -> None:
    """Both directions' links, checked before anything is built: a bad one
    is a UsageError naming the direction, as the daemon itself would say
    (and in its name: linkemuk for --io kernel)."""
    for name, grammar in (("a2b", cfg.a2b), ("b2a", cfg.b2a)):
        why = check_link(binary, grammar)
        if why is not None:
            raise UsageError(f"{DAEMON_NAMES.get(cfg.io, 'linkemud')}: --{name}: {why}")


def build_argv(binary: Path, cfg: DaemonConfig) -> list[str]:
    b = cfg.bed
    argv = ports_argv(binary, cfg) + [
        "--a2b", cfg.a2b, "--b2a", cfg.b2a,
        "--stats-file", str(paths.daemon_final_stats_file(b.name))]
    argv += control.daemon_args(binary, b.name)   # --control SOCKET, if this linkemud has it
    if cfg.layout and cfg.io != "kernel":
        argv += ["--layout", cfg.layout]
    if cfg.seed is not None:
        argv += ["--seed", str(cfg.seed)]
    if cfg.wait is not None:
        argv += ["--wait", cfg.wait]      # linkemuk takes it too (busy = --busy-poll)
    if cfg.spin is not None:
        argv += ["--spin-us", cfg.spin]   # both planes: the spin of the adaptive wait
    return argv


def ensure_bpffs() -> None:
    """libxdp (used by net_af_xdp) pins its dispatcher program in bpffs and
    complains without it; mounting it is harmless otherwise."""
    mnt = Path("/sys/fs/bpf")
    for line in Path("/proc/mounts").read_text().splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == str(mnt) and parts[2] == "bpf":
            return
    if mnt.is_dir():
        subprocess.run(["mount", "-t", "bpf", "bpf", str(mnt)], capture_output=True)


def require_binary(io: str = "dpdk") -> Path:
    if io == "kernel":
        binary = paths.find_linkemuk()
        if binary is None:
            raise LinkemuError("linkemuk not found: build it (meson setup build && ninja -C build), "
                               "or set LINKEMUK=/path/to/linkemuk")
        return binary
    binary = paths.find_linkemud()
    if binary is None:
        raise LinkemuError("linkemud not found: build it (meson setup build && ninja -C build), "
                           "or set LINKEMUD=/path/to/linkemud")
    return binary


def start(cfg: DaemonConfig, binary: Path | None = None,
          ready_timeout: float = READY_TIMEOUT_S) -> Daemon:
    """Start linkemud and wait until it says it is ready.

    Raises UsageError (exit 2) for the daemon's grammar errors and
    DaemonStartError otherwise; in both cases no process is left behind."""
    validate(cfg)
    binary = binary or require_binary(cfg.io)
    bed = cfg.bed
    # Two `linkemu run`s on one bed both found no daemon and both started
    # one; EAL refused the second, whose _abort then removed the first's
    # pid file, runtime dir and hugepage files. The check and the start are
    # now one step per bed.
    with start_lock(bed) as held:
        if not held:
            raise LinkemuError(f"another linkemu is starting linkemud on bed '{bed.name}' "
                               f"right now; wait for it, or use another --bed")
        return _start_locked(cfg, binary, ready_timeout)


def already_running(bed, pid: int) -> LinkemuError:
    """The refusal of a start on a bed whose daemon (pid) still runs."""
    return LinkemuError(f"{procs.daemon_word(pid)} is already running on bed '{bed.name}' "
                        f"(pid {pid}); run `linkemu stop --bed {bed.name}` first")


def _start_locked(cfg: DaemonConfig, binary: Path, ready_timeout: float) -> Daemon:
    bed = cfg.bed
    running = live_daemon(bed)
    if running is not None:
        raise already_running(bed, running)
    if cfg.io == "dpdk":
        ensure_bpffs()
    final = paths.daemon_final_stats_file(bed.name)
    final.unlink(missing_ok=True)      # never report a previous run's counters
    argv = build_argv(binary, cfg)
    log_path = paths.daemon_log_file(bed.name)
    with open(log_path, "ab") as log:
        log.write(f"--- linkemu {time.strftime('%Y-%m-%d %H:%M:%S')}: "
                  f"{' '.join(argv)}\n".encode())
        log.flush()
        offset = log.tell()            # this attempt's output starts here
        # Own session: a Ctrl-C in the user's terminal reaches only us, and
        # we stop the daemon in order (SIGTERM, wait, read final counters).
        popen = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                 stderr=subprocess.STDOUT, start_new_session=True)
    d = Daemon(popen.pid, cfg, argv, popen)
    try:
        paths.daemon_pid_file(bed.name).write_text(f"{popen.pid}\n")
        info = {"pid": popen.pid, "argv": argv, "pmd": cfg.pmd, "io": cfg.io,
                "started": time.time()}
        paths.daemon_run_info_file(bed.name).write_text(json.dumps(info, indent=2) + "\n")
        _wait_ready(d, log_path, offset, ready_timeout)
    except BaseException:
        # Covers our own Ctrl-C while waiting too: nothing may outlive us.
        _abort(d)
        raise
    return d


def _wait_ready(d: Daemon, log_path: Path, offset: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        text = _read_from(log_path, offset)
        if any(line.startswith(READY_PREFIX) for line in text.splitlines()):
            return
        rc = d.popen.poll()
        if rc is not None:
            text = _read_from(log_path, offset)
            if rc == 2:
                msgs = [l for l in text.splitlines() if l.startswith(("linkemud:", "linkemuk:"))]
                raise UsageError("\n".join(msgs) or text.strip() or "linkemud: usage error")
            raise DaemonStartError(f"linkemud exited with code {rc} before it was ready; "
                                   f"log ({log_path}):\n{_tail(text)}")
        if time.monotonic() > deadline:
            raise DaemonStartError(f"linkemud was not ready after {timeout:.0f} s; "
                                   f"log ({log_path}):\n{_tail(text)}")
        time.sleep(0.05)


def _abort(d: Daemon) -> None:
    """Stop a daemon that did not become ready and remove its files.

    Shielded: a Ctrl-C while linkemud starts brings us here, and a second
    one (the user pressing again while we wait up to ABORT_GRACE_S for it
    to exit) ended the cleanup there; the caller had no Link to stop yet,
    so linkemud, in a session of its own, ran on with its hugepages."""
    with shielded():
        _stop_and_remove(d)


def _stop_and_remove(d: Daemon) -> None:
    if d.popen.poll() is None:
        procs.terminate(d.pid, ABORT_GRACE_S, d.popen)
    bed = d.config.bed
    pid_file = paths.daemon_pid_file(bed.name)
    try:
        if int(pid_file.read_text().strip()) == d.pid:
            pid_file.unlink(missing_ok=True)
    except (OSError, ValueError):
        pass
    # Only when no other linkemud uses the prefix (one started outside
    # linkemu, e.g. by hand with the bed's prefix): its EAL files are live.
    if not [p for p in procs.find_linkemud(bed.file_prefix) if p != d.pid]:
        remove_dpdk_leftovers(bed.file_prefix)


def start_auto(cfg: DaemonConfig, binary: Path | None = None, fallback: bool = True,
               warn=lambda m: print(m, file=sys.stderr)) -> Daemon:
    """Start with cfg.pmd; if that is af_xdp and fallback is allowed, retry
    once with af_packet (af_xdp needs kernel and driver support that a
    container or an old kernel may lack)."""
    try:
        return start(cfg, binary)
    except DaemonStartError as e:
        if not (fallback and cfg.pmd == "af_xdp" and cfg.io == "dpdk"):
            raise
        lines = str(e).splitlines()
        why = lines[0].split(";")[0] + (f": {lines[-1].strip()}" if len(lines) > 1 else "")
        warn(f"linkemu: linkemud did not start with af_xdp ({why}); retrying with af_packet")
        return start(DaemonConfig(**{**cfg.__dict__, "pmd": "af_packet"}), binary)


@dataclass
class StopResult:
    pid: int
    how: str                   # 'terminated' | 'killed' | 'gone'
    final: dict | None
    error: str | None = None   # why final is None


def stop(bed: Bed, popen: subprocess.Popen | None = None,
         timeout: float = STOP_TIMEOUT_S, pid: int | None = None) -> StopResult:
    """SIGTERM the bed's daemon, wait (SIGKILL after timeout), read final.json.
    pid: the daemon to stop, which the caller has identified (an attached
    Link's); None: the one the bed's pid file names."""
    if popen is not None:
        pid = popen.pid
    elif pid is None:
        pid = daemon_pid(bed)
    if pid is None:
        found = procs.find_linkemud(bed.file_prefix)
        if not found:
            raise LinkemuError(f"no linkemud is running on bed '{bed.name}'")
        pid = found[0]
    how = procs.terminate(pid, timeout, popen)
    paths.daemon_pid_file(bed.name).unlink(missing_ok=True)
    # EAL leaves its runtime dir and hugepage files behind even after a clean
    # exit, and files in hugetlbfs keep their pages reserved: remove them.
    remove_dpdk_leftovers(bed.file_prefix)
    final, err = read_final(bed)
    return StopResult(pid, how, final, err)


def read_final(bed: Bed) -> tuple[dict | None, str | None]:
    path = paths.daemon_final_stats_file(bed.name)
    try:
        return json.loads(path.read_text()), None
    except FileNotFoundError:
        return None, (f"linkemud wrote no final counters ({path} missing); "
                      f"log ({paths.daemon_log_file(bed.name)}):\n"
                      f"{_tail(_read_from(paths.daemon_log_file(bed.name), 0))}")
    except json.JSONDecodeError as e:
        return None, f"{path} is not valid JSON: {e}"


def log_tail(bed: Bed, lines: int = 20) -> str:
    return _tail(_read_from(paths.daemon_log_file(bed.name), 0), lines)


def _read_from(path: Path, offset: int) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            return f.read().decode(errors="replace")
    except FileNotFoundError:
        return ""


def _tail(text: str, lines: int = 20) -> str:
    return "\n".join("    " + l for l in text.strip().splitlines()[-lines:])
