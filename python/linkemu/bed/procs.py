"""Process helpers: is a pid alive, what is it, stop it politely then firmly.

We only ever signal processes we can identify as ours (a pid from our pid
file whose command line is linkemud with our bed's file prefix, or a process
inside one of our bed's namespaces), never anything found by a broad name.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def pid_alive(pid: int) -> bool:
    """True if pid exists and is not a zombie.

    A detached daemon's parent (`linkemu run --detach`) exits, so a dead
    daemon may linger as a zombie until init reaps it; for us it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return False
    # The state follows the parenthesised comm, which may contain spaces.
    state = stat.rpartition(")")[2].split()[0]
    return state not in ("Z", "X")


def start_time(pid: int) -> int | None:
    """When pid started (clock ticks after boot, /proc/PID/stat field 22),
    or None if it is gone. A pid with the same start time is the same
    process: a pid alone may since name another one."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    # Fields after the parenthesised comm (which may hold spaces) start at
    # field 3, the state: starttime, field 22, is the 20th of them.
    return int(stat.rpartition(")")[2].split()[19])


def cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return []
    return [a.decode(errors="replace") for a in raw.split(b"\0") if a]


def is_linkemud(pid: int, file_prefix: str) -> bool:
    """Is pid a linkemud started for this file prefix (guards pid reuse)?"""
    argv = cmdline(pid)
    return _looks_like_linkemud(argv) and has_file_prefix(argv, file_prefix)


def find_linkemud(file_prefix: str) -> list[int]:
    """Every live linkemud whose EAL --file-prefix is ours.

    Used by `down` when the pid file is gone (e.g. /run cleared by hand, or a
    crash between fork and writing the pid file)."""
    return [pid for pid, argv in linkemud_argvs()
            if pid != os.getpid() and has_file_prefix(argv, file_prefix)]


# Invocations that answer and exit without starting a data plane: the
# control client and the scenario player run `linkemud --help` and
# `linkemud --check GRAMMAR` to learn what a binary supports. They poll no
# CPU, own no port and are gone in milliseconds.
ONE_SHOT_OPTIONS = frozenset({"--help", "-h", "--version", "--check"})


def is_data_plane(argv: list[str]) -> bool:
    """A linkemud command line that runs a data plane (not a one-shot run)."""
    return not ONE_SHOT_OPTIONS.intersection(argv)


def any_linkemud() -> list[int]:
    """Every live linkemud data plane, whoever started it (leftover and
    contention checks); one-shot runs (ONE_SHOT_OPTIONS) are not one: a
    timing test that saw the scenario player's `linkemud --help` took it
    for another daemon polling the CPUs and skipped its check."""
    return [pid for pid, argv in linkemud_argvs() if is_data_plane(argv)]


def linkemud_argvs() -> list[tuple[int, list[str]]]:
    """(pid, command line) of every live process that looks like linkemud
    (or linkemuk), in one pass over /proc.

    The timing tests' CPU watch calls this every 250 ms on the CPU their
    traffic's sender shares: each process's command line is read with one
    system call and decoded only when it names linkemu (two Path-based
    passes took 3-5 ms of CPU each time, and up to 90 ms of wall time in a
    slow spell)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            fd = os.open(f"/proc/{name}/cmdline", os.O_RDONLY)
        except OSError:
            continue
        try:
            raw = os.read(fd, 1 << 16)
        except OSError:
            continue
        finally:
            os.close(fd)
        if b"linkemu" not in raw:
            continue
        argv = [a.decode(errors="replace") for a in raw.split(b"\0") if a]
        if _looks_like_linkemud(argv) and pid_alive(int(name)):
            found.append((int(name), argv))
    return found


def wait_gone(pid: int, timeout: float, popen=None) -> bool:
    """Wait up to timeout for pid to exit; reap it if it is our child."""
    deadline = time.monotonic() + timeout
    while True:
        if popen is not None:
            if popen.poll() is not None:
                return True
        elif not pid_alive(pid):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def terminate(pid: int, grace: float, popen=None) -> str:
    """SIGTERM, wait up to grace seconds, then SIGKILL.

    Returns 'gone' (was not running), 'terminated' or 'killed'."""
    if popen is not None:
        if popen.poll() is not None:
            return "gone"      # already exited and reaped: its pid may be reused
    elif not pid_alive(pid):
        return "gone"
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return "gone"
    if wait_gone(pid, grace, popen):
        return "terminated"
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return "terminated"
    wait_gone(pid, 5.0, popen)
    return "killed"


DAEMON_NAMES = ("linkemud", "linkemuk")


def daemon_name(pid: int) -> str | None:
    """Which daemon pid is, "linkemud" or "linkemuk" (the kernel-socket
    plane), by its command line; None if it is neither (or gone). Both
    serve the same control protocol, so a reply does not say which one
    answered: messages that speak for the daemon name it from here."""
    return _daemon_in_argv(cmdline(pid))


def daemon_word(pid: int) -> str:
    """daemon_name(pid), or "linkemud" (the protocol's documented server)
    when the process is neither or gone: for messages that must name one."""
    return daemon_name(pid) or "linkemud"


def _daemon_in_argv(argv: list[str]) -> str | None:
    return next((os.path.basename(a) for a in argv[:2]
                 if os.path.basename(a) in DAEMON_NAMES), None)


def _looks_like_linkemud(argv: list[str]) -> bool:
    """argv[0] is linkemud (or linkemuk, the kernel-socket plane), or argv[1]
    when it runs under an interpreter or a wrapper (a test stand-in script,
    valgrind without options)."""
    return _daemon_in_argv(argv) is not None


def has_file_prefix(argv: list[str], prefix: str) -> bool:
    """Was this linkemud (argv) started for the bed whose prefix this is?"""
    for i, a in enumerate(argv):
        # linkemuk has no EAL: the bed's prefix is its --instance name.
        if a in ("--file-prefix", "--instance") and i + 1 < len(argv) and argv[i + 1] == prefix:
            return True
        if a == f"--file-prefix={prefix}":
            return True
    return False
