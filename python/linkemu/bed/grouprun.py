"""Run a command to completion, and when it must be cut short (a timeout,
Ctrl-C, any exception while waiting) kill it with every process it started.

subprocess.run kills only its child on a timeout: `sh -c 'iperf3 ... &
wait'` or any tool that forks left the rest running in the namespace, where
it held the bed busy (and `down` later found it). The command gets a
session of its own, so its process group is exactly what it started (a
process that makes a new session of its own escapes, as a daemon means to).
"""

from __future__ import annotations

import os
import signal
import subprocess

# After the kill: how long to wait for the pipes to close (a process that
# left the group may hold them; its output is not worth hanging for).
DRAIN_S = 2.0


class GroupTimeout(Exception):
    """The command ran past its timeout; its group was killed. stdout and
    stderr hold what it wrote until then (None when not captured)."""

    def __init__(self, timeout: float, stdout, stderr):
        super().__init__(f"timed out after {timeout:g} s")
        self.timeout = timeout
        self.stdout = stdout
        self.stderr = stderr


def kill_group(p: subprocess.Popen) -> None:
    """SIGKILL p's process group (p leads it) and reap p."""
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass      # the group is empty already
    p.wait()


def run(argv: list, *, timeout: float | None, input=None, **kw) -> subprocess.CompletedProcess:
    """subprocess.run(argv, timeout=..., input=..., **kw), but a timeout
    raises GroupTimeout after killing the command's whole process group,
    and an exception while waiting (KeyboardInterrupt) kills it too."""
    if input is not None:
        kw["stdin"] = subprocess.PIPE
    with subprocess.Popen(argv, start_new_session=True, **kw) as p:
        try:
            out, err = p.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_group(p)
            try:
                out, err = p.communicate(timeout=DRAIN_S)
            except subprocess.TimeoutExpired as e:
                out, err = _text(e.stdout, kw), _text(e.stderr, kw)
            raise GroupTimeout(timeout, out, err) from None
        except BaseException:
            kill_group(p)
            raise
        # The leader exited: what it left in its group is the caller's
        # (a deliberate background process), as with subprocess.run.
    return subprocess.CompletedProcess(argv, p.returncode, out, err)


def _text(partial, kw: dict):
    """TimeoutExpired carries bytes even in text mode."""
    if isinstance(partial, bytes) and (kw.get("text") or kw.get("encoding")
                                       or kw.get("universal_newlines")):
        return partial.decode(kw.get("encoding") or "utf-8", errors="replace")
    return partial
