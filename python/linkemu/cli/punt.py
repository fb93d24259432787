"""`linkemu run --punt-echo`: start the reference control-plane process
(punt_echo, docs/punt.md) for every punted class of the run's links, once
the daemon is ready.

Each punt_echo attaches to its channel (`punt fifo PATH` or `punt shm
NAME`) and exits by itself when the daemon stops (end of file on the FIFO,
or the segment's `closed` flag), so `linkemu stop` needs to know nothing
about it, with --detach too. Its log goes to the bed's run directory
(punt-echo-N.log)."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys

from linkemu.bed import paths
from linkemu.bed.procs import terminate
from linkemu.errors import LinkemuError
from linkemu.instruments.tools import require_tool

# `: punt fifo PATH` / `: punt shm NAME` right after a class's ':' (the
# grammar puts it nowhere else; docs/grammar.md "Punted classes").
_CHANNEL = re.compile(r"(?:^|\s):\s+punt\s+(fifo|shm)\s+(\S+)")


def channels(*texts: str | None) -> list[tuple[str, str]]:
    """The (transport, name) of every punted class in the link texts, in
    order, each once."""
    seen: list[tuple[str, str]] = []
    for t in texts:
        for m in _CHANNEL.finditer(t or ""):
            if (m.group(1), m.group(2)) not in seen:
                seen.append((m.group(1), m.group(2)))
    return seen


def add_run_option(r: argparse.ArgumentParser) -> None:
    r.add_argument("--punt-echo", action="store_true",
                   help="start the reference process (punt_echo) for every punted class "
                        "(`class ... : punt fifo PATH` / `punt shm NAME`; docs/punt.md)")
    r.add_argument("--punt-work-ns", type=work_ns, default=0, metavar="NS",
                   help="with --punt-echo: busy work per frame in the process (default 0)")


def work_ns(text: str) -> int:
    """An argparse type for --punt-work-ns: read with the other options, so a
    bad value stops `linkemu run` before the bed and daemon start (it was
    found only once the daemon was ready), and no more than punt_echo's
    64-bit --work-ns holds (beyond, punt_echo refused it in its log while
    linkemu said it served the channel)."""
    try:
        v = int(text)
    except ValueError:
        v = -1
    if not 0 <= v < 1 << 64:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number of nanoseconds, "
                                         f"0 or more")
    return v


def echo_command(transport: str, name: str, work_ns: int = 0, wait_s: float = 30.0) -> list[str]:
    """The command line of punt_echo for one channel."""
    return [str(require_tool("punt_echo")), f"--{transport}", name,
            "--work-ns", str(work_ns), "--wait", f"{wait_s:g}"]


def start_echoes(a: argparse.Namespace, bed_name: str, a2b: str | None,
                 b2a: str | None) -> list[subprocess.Popen]:
    """With --punt-echo: one punt_echo per channel, in its own session so
    a Ctrl-C meant for `linkemu run` does not stop it before the daemon's
    final counts (it ends when the daemon does)."""
    if not getattr(a, "punt_echo", False):
        return []
    if a.punt_work_ns < 0:
        raise LinkemuError("--punt-work-ns must be 0 or more")
    found = channels(a2b, b2a)
    if not found:
        print("linkemu: --punt-echo: no class is punted (class NAME match ... : punt fifo PATH)",
              file=sys.stderr)
        return []
    procs = []
    run_dir = paths.bed_run_dir(bed_name)
    try:
        for i, (transport, name) in enumerate(found):
            argv = echo_command(transport, name, a.punt_work_ns)
            with open(run_dir / f"punt-echo-{i}.log", "ab") as log:
                procs.append(subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                              stderr=log, start_new_session=True))
            print(f"linkemu: punt_echo (pid {procs[-1].pid}) serves punt {transport} {name}",
                  file=sys.stderr)
    except BaseException:
        # The caller never sees the list when one fails to start: end the
        # ones already running (in their own sessions, nothing else would
        # until the daemon's channel closes, and never if it never opened).
        for p in procs:
            p.kill()
            p.wait()
        raise
    return procs


def reap(procs: list[subprocess.Popen], timeout: float = 5.0) -> None:
    """After the daemon stopped: the echoes exit by themselves; wait, then
    make sure."""
    for p in procs:
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            # SIGTERM, then SIGKILL: one stuck past SIGTERM must not skip
            # the other echoes or stay running.
            terminate(p.pid, timeout, p)
