"""Bed.exec past its timeout, or interrupted: a LinkemuError naming the
side, the command and the timeout (docs/python.md: the API's errors are
LinkemuErrors), and nothing the command started left running. Commands
"on a side" run right here: no namespace, no root."""

from __future__ import annotations

import signal
import time

import pytest

import linkemu
from linkemu import api
from linkemu.bed import procs, testbed

# A shell that starts a child which would outlive it, writes its pid, says
# it started, and waits.
FORKS = "sleep 60 & echo $! > {pidfile}; echo started; wait"


@pytest.fixture
def here_bed(monkeypatch):
    monkeypatch.setattr(api.netns, "ns_exec_argv", lambda ns, cmd, cpus: list(cmd))
    return api.Bed("fk", _layout=testbed.bed_for("fk"))


def _gone_soon(pid: int) -> bool:
    deadline = time.monotonic() + 2.0
    while procs.pid_alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_timeout_is_a_linkemu_error_and_kills_what_the_command_started(here_bed, tmp_path):
    pidfile = tmp_path / "child.pid"
    t0 = time.monotonic()
    with pytest.raises(linkemu.ExecTimeout) as ei:
        here_bed.exec("src", ["sh", "-c", FORKS.format(pidfile=pidfile)], timeout=1.5)
    took = time.monotonic() - t0
    e = ei.value
    assert isinstance(e, linkemu.LinkemuError)
    assert str(e).startswith(f"sh -c {FORKS.format(pidfile=pidfile)} on src did not finish "
                             f"within 1.5 s")
    assert (e.role, e.timeout, e.cmd[0]) == ("src", 1.5, "sh")
    assert e.stdout == "started\n"                   # what it wrote until then
    assert took < 1.5 + 2.0                          # not the 60 s of its child
    child = int(pidfile.read_text())
    try:
        assert _gone_soon(child), f"the command's child (pid {child}) outlived the timeout"
    finally:
        if procs.pid_alive(child):
            import os
            os.kill(child, signal.SIGKILL)


def test_ctrl_c_while_exec_runs_kills_what_the_command_started(here_bed, tmp_path):
    pidfile = tmp_path / "child.pid"

    def interrupt(*_):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 1.5)
    try:
        with pytest.raises(KeyboardInterrupt):
            here_bed.exec("dst", ["sh", "-c", FORKS.format(pidfile=pidfile)])
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    child = int(pidfile.read_text())
    assert _gone_soon(child), f"the command's child (pid {child}) outlived Ctrl-C"


def test_a_command_that_finishes_in_time_is_unchanged(here_bed):
    cp = here_bed.exec("src", ["sh", "-c", "read x; echo got $x; echo err >&2; exit 3"],
                  timeout=10, input="hi\n")
    assert (cp.returncode, cp.stdout, cp.stderr) == (3, "got hi\n", "err\n")


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), float("inf"), "5", True])
def test_a_timeout_that_is_not_seconds_is_a_usage_error(here_bed, timeout):
    with pytest.raises(linkemu.UsageError, match=r"timeout=.*give seconds above 0"):
        here_bed.exec("src", ["true"], timeout=timeout)
