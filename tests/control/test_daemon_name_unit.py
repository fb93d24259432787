"""Messages that speak for the daemon name the one that runs: linkemud, or
linkemuk for `--io kernel` (docs/kernel-plane.md). Both serve the same
control protocol, so the name comes from the bed's daemon process, never
from a fixed word. No root, no DPDK: a fake control server and a stand-in
process whose command line is linkemuk's."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from fakedaemon import FakeDaemon
from linkemu.bed import paths, procs, testbed
from linkemu.cli import main as cli
from linkemu.daemon import control, daemon
from linkemu.daemon.control import DaemonRefused
from linkemu.errors import UsageError

BED = "fk"


@pytest.fixture
def run_root(monkeypatch):
    # Unix socket paths are limited to 108 bytes: pytest's tmp_path can be longer.
    d = tempfile.mkdtemp(prefix="lc", dir="/tmp")
    monkeypatch.setattr(paths, "RUN_ROOT", Path(d))
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    (paths.RUN_ROOT / BED).mkdir()
    yield d
    shutil.rmtree(d, ignore_errors=True)


def exec_done(p: subprocess.Popen, name: str) -> subprocess.Popen:
    """p once its command line is NAME's: right after fork it is still
    ours (the exec has not happened yet)."""
    deadline = time.monotonic() + 10
    while procs.cmdline(p.pid)[:1] != [name]:
        assert time.monotonic() < deadline, f"{name} stand-in did not start"
        time.sleep(0.01)
    return p


def _stand_in(name: str):
    """A process whose command line is NAME's for bed fk (argv[0] NAME,
    --instance or --file-prefix the bed's prefix), as the bed's daemon."""
    prefix = testbed.bed_for(BED).file_prefix
    opt = "--instance" if name == "linkemuk" else "--file-prefix"
    p = exec_done(subprocess.Popen([name, "-c", "import time; time.sleep(60)", opt, prefix],
                                   executable=sys.executable), name)
    paths.daemon_pid_file(BED).write_text(f"{p.pid}\n")
    return p


@pytest.fixture(params=["linkemud", "linkemuk"])
def bed_daemon(request, run_root):
    """Bed fk with a fake control server and a stand-in daemon process of
    each name."""
    f = FakeDaemon(str(control.socket_path(BED)))
    p = _stand_in(request.param)
    yield request.param, f
    p.kill()
    p.wait()
    f.close()


def test_daemon_name_from_the_process():
    p = exec_done(subprocess.Popen(["linkemuk", "-c", "import time; time.sleep(60)"],
                                   executable=sys.executable), "linkemuk")
    try:
        assert procs.daemon_name(p.pid) == "linkemuk"
    finally:
        p.kill()
        p.wait()
    assert procs.daemon_name(os.getpid()) is None      # pytest is neither


def test_ctl_refusal_is_said_in_the_name_of_the_daemon_that_refused(bed_daemon, capsys):
    name, _ = bed_daemon
    assert cli.main(["ctl", "--bed", BED, "set", "a2b", "dealy 5ms"]) == 1
    assert capsys.readouterr().err == (f"{name}: set a2b: unknown word 'dealy' (expected delay, "
                                       f"loss, limit, seed)\n")


def test_api_refusal_and_client_errors_name_the_daemon(bed_daemon):
    name, f = bed_daemon
    c = control.connect_bed(testbed.bed_for(BED), timeout=0.5)
    try:
        with pytest.raises(DaemonRefused) as ei:
            c.set("a2b", "dealy 5ms")
        assert ei.value.daemon == name
        f.reply_delay_s = 2.0
        with pytest.raises(control.ControlTimeout, match=f"^{name} did not answer 'show'"):
            c.show()
    finally:
        c.close()


def test_without_a_known_daemon_the_refusal_says_linkemud(run_root, capsys):
    """No pid file (a daemon started by hand with the bed's socket): the
    protocol's documented server, as before."""
    f = FakeDaemon(str(control.socket_path(BED)))
    try:
        assert cli.main(["ctl", "--bed", BED, "set", "a2b", "dealy 5ms"]) == 1
    finally:
        f.close()
    assert capsys.readouterr().err.startswith("linkemud: set a2b: unknown word 'dealy'")


def test_bad_link_for_the_kernel_plane_is_linkemuks_word(tmp_path):
    """`linkemu run --io kernel --a2b 'dealy 5ms'`: the grammar check runs
    linkemuk --check, and its refusal is linkemuk's."""
    checker = tmp_path / "linkemuk"
    checker.write_text("#!/bin/sh\necho \"linkemuk: unknown word 'dealy'\" >&2\nexit 2\n")
    checker.chmod(0o755)
    for io, name in (("kernel", "linkemuk"), ("dpdk", "linkemud")):
        cfg = daemon.DaemonConfig(bed=testbed.bed_for(BED), a2b="dealy 5ms", io=io)
        with pytest.raises(UsageError) as ei:
            daemon.check_links(cfg, checker)
        assert str(ei.value) == f"{name}: --a2b: unknown word 'dealy'"


def test_main_prints_linkemuks_usage_error_as_its_own(monkeypatch, capsys):
    """A daemon's own message keeps its name alone, not `linkemu: linkemuk: ...`."""
    def refuse(a, b, profile):
        raise UsageError("linkemuk: --a2b: unknown word 'dealy'")
    from linkemu import api
    monkeypatch.setattr(api, "resolve_links", refuse)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert cli.main(["run", "--io", "kernel", "--bed", BED, "--a2b", "dealy 5ms"]) == 2
    assert capsys.readouterr().err == "linkemuk: --a2b: unknown word 'dealy'\n"


def test_already_running_names_the_daemon_that_runs(bed_daemon):
    """A second start on a bed whose daemon is linkemuk said 'linkemud is
    already running'."""
    from linkemu import api
    name, _ = bed_daemon
    with pytest.raises(Exception, match=rf"^{name} is already running on bed '{BED}'"):
        api.Bed(BED).require_no_daemon()
