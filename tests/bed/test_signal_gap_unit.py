"""A signal between a command's work and its cleanup must not skip the
cleanup. `linkemu run`, `demo` and `shell` do their work in interruptible()
(SIGTERM/SIGHUP raise KeyboardInterrupt) and clean up in shielded()
(signals ignored). When the shield was entered only at the cleanup, the
handlers were back at their defaults for a few bytecodes in between: a
SIGTERM there ended the process (its default action) and left the bed and
linkemud behind. Each command runs here in a child process with fakes for
the bed and the daemon, and interruptible() patched to send the child a
SIGTERM right after it restored the handlers: the cleanup must still run."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from kit import REPO

PRELUDE = """
import contextlib, os, signal, sys
from linkemu.bed import interrupts
from linkemu.errors import LinkemuError

_real = interrupts.interruptible

@contextlib.contextmanager
def signalled_in_the_gap():
    try:
        with _real():
            yield
    finally:
        os.kill(os.getpid(), signal.SIGTERM)   # after the handlers came back

class FakeLink:
    pid, pmd, report = 1, "af_xdp", None
    def stop(self):
        print("CLEANED UP", flush=True)
        raise LinkemuError("a fake link has no report")
    def exit_code(self):
        return None

class FakeBed:
    name, kind, layout = "gap", "netns", None
    def require_no_daemon(self): pass
    def is_up(self): return True
    def up(self): pass
    def run(self, *a, **k): return FakeLink()
    def down(self): print("CLEANED UP", flush=True)
    def __enter__(self): raise LinkemuError("no bed here")
    def __exit__(self, *exc): print("CLEANED UP", flush=True)
"""

COMMANDS = {
    "demo": """
from linkemu.cli import demo
demo.interruptible = signalled_in_the_gap
demo.daemon.require_binary = lambda io: None
demo.ping.ping = lambda *a, **k: (_ for _ in ()).throw(LinkemuError("no ping here"))
demo.run(FakeBed(), 1)
""",
    "shell": """
import argparse
from linkemu import api
from linkemu.cli import shell
shell.interruptible = signalled_in_the_gap
shell.daemon.require_binary = lambda *a: None
api.Bed.shell = staticmethod(lambda name: FakeBed())
shell.cmd_shell(argparse.Namespace(a2b="", b2a="", profile=None, cmd=["true"], cpus="all",
                                   bed="gap", pmd=None, lcores=None, seed=1, quiet=True))
""",
    "run": """
import argparse
from linkemu.cli import run
run.interruptible = signalled_in_the_gap
run.bed_from_args = lambda a: FakeBed()
run.bring_up = lambda bed, pmd: None
run.daemon.DaemonConfig = lambda **k: None
run.daemon.validate = lambda cfg: None
run.daemon.check_links = lambda cfg, binary: None
run.daemon.require_binary = lambda io: None
run.isolation.recover_stale = lambda *a: []
run.scenario.run_scenario_start = lambda *a: (_ for _ in ()).throw(LinkemuError("no scenario"))
run.cmd_run(argparse.Namespace(a2b="", b2a="", profile=None, pmd=None, lcores=None,
                               layout=None, seed=1, io="dpdk", wait="busy", spin_us=None,
                               isolate_lcore=False, scenario=None, detach=False))
""",
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_signal_between_work_and_cleanup_does_not_skip_the_cleanup(command):
    script = textwrap.dedent(PRELUDE) + textwrap.dedent(COMMANDS[command])
    cp = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                        timeout=60, cwd=REPO, env={"PYTHONPATH": str(REPO / "python"),
                                                  "PATH": "/usr/bin:/bin"})
    assert "CLEANED UP" in cp.stdout, (
        f"{command}: the cleanup did not run (exit {cp.returncode}):\n{cp.stderr[-2000:]}")
    assert cp.returncode != -15, f"{command}: the SIGTERM in the gap ended the process"


API_SCRIPT = """
import os, signal
import linkemu

class Bed(linkemu.Bed):
    def __init__(self):
        self._links = []
    def is_up(self):
        return False
    def up(self):
        pass
    def down(self):
        os.kill(os.getpid(), signal.SIGINT)   # the user presses Ctrl-C again
        print("CLEANED UP", flush=True)
        return []

try:
    with Bed():
        raise KeyboardInterrupt               # the first Ctrl-C, in the body
except KeyboardInterrupt:
    pass
"""


def test_a_second_ctrl_c_does_not_cut_short_the_apis_cleanup():
    # Bed.__exit__ ran unshielded: the second Ctrl-C raised in down().
    cp = subprocess.run([sys.executable, "-c", API_SCRIPT], capture_output=True, text=True,
                        timeout=60, cwd=REPO, env={"PYTHONPATH": str(REPO / "python"),
                                                  "PATH": "/usr/bin:/bin"})
    assert "CLEANED UP" in cp.stdout and cp.returncode == 0, cp.stderr[-2000:]


def test_off_the_main_thread_both_guards_are_no_ops():
    # signal.signal() raises ValueError off the main thread: a capture or a
    # daemon start from an API user's thread must still run.
    import threading
    from linkemu.bed.interrupts import interruptible, shielded
    ran, errors = [], []

    def body():
        try:
            with shielded(), interruptible():
                ran.append(True)
        except Exception as e:          # noqa: BLE001 - reported below
            errors.append(e)
    t = threading.Thread(target=body)
    t.start()
    t.join()
    assert ran == [True] and errors == []
