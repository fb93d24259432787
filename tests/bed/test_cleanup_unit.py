"""Cleanup paths with fakes (no root, no bed): every step of a removal
runs even when an earlier one fails, and what failed is named."""

from __future__ import annotations

import contextlib
import subprocess
import sys

import pytest

from linkemu.bed import isolation, netns, paths, procs, testbed
from linkemu.errors import LinkemuError


@pytest.fixture
def fake_bed(monkeypatch, tmp_path):
    """A bed 'zq' whose every system call is a fake that records what ran."""
    monkeypatch.setattr(paths, "RUN_ROOT", tmp_path / "run")
    calls: list[str] = []
    b = testbed.bed_for("zq")
    b.run_dir.mkdir(parents=True)
    monkeypatch.setattr(procs, "find_linkemud", lambda prefix: [])
    monkeypatch.setattr(testbed, "daemon_pid", lambda bed: None)
    monkeypatch.setattr(netns, "ns_pids", lambda ns: [])
    monkeypatch.setattr(netns, "link_exists", lambda dev, ns=None: True)
    monkeypatch.setattr(netns, "ns_exists", lambda ns: True)
    monkeypatch.setattr(netns, "ns_del", lambda ns: calls.append(f"ns_del {ns}"))
    monkeypatch.setattr(testbed, "remove_dpdk_leftovers",
                        lambda prefix: calls.append(f"dpdk {prefix}") or [])
    monkeypatch.setattr(isolation, "recover_stale", lambda: calls.append("isolation") or [])
    return b, calls


def test_remove_goes_on_after_a_veth_that_will_not_go(fake_bed, monkeypatch):
    b, calls = fake_bed

    def stuck(dev, timeout=5.0):
        calls.append(f"link_del {dev}")
        raise LinkemuError(f"could not delete {dev}")

    monkeypatch.setattr(netns, "link_del_wait", stuck)
    with pytest.raises(LinkemuError) as e:
        testbed.remove(b, [b.ns_src, b.ns_dst])
    # Everything after the stuck veth still ran: the other veth, both
    # namespaces, the runtime files, EAL's files, the isolation records.
    assert calls == ["link_del zq-a", "link_del zq-b", "ns_del zq-src", "ns_del zq-dst",
                     "dpdk linkemu-zq", "isolation"]
    assert not b.run_dir.exists()
    assert "could not delete zq-a" in str(e.value) and "could not delete zq-b" in str(e.value)


def test_remove_goes_on_after_a_process_it_may_not_signal(fake_bed, monkeypatch):
    b, calls = fake_bed
    monkeypatch.setattr(netns, "ns_pids", lambda ns: [4242] if ns == b.ns_src else [])

    def refused(pid, grace, popen=None):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(procs, "terminate", refused)
    monkeypatch.setattr(netns, "link_del_wait", lambda dev, timeout=5.0: calls.append(f"link_del {dev}"))
    with pytest.raises(LinkemuError, match="4242"):
        testbed.remove(b, [b.ns_src, b.ns_dst])
    assert calls == ["link_del zq-a", "link_del zq-b", "ns_del zq-src", "ns_del zq-dst",
                     "dpdk linkemu-zq", "isolation"]


# --- linkemu run: a daemon started, then a later step fails -----------------------------------

class FakeLink:
    pid = 4321
    pmd = "af_xdp"

    def __init__(self):
        self.stopped = False
        self.detached = False

    def exit_code(self):
        return None

    def stop(self):
        self.stopped = True
        raise LinkemuError("fake: no final counters")

    def detach(self):
        self.detached = True


class FakeBed:
    name = "zq"
    kind = "pair"

    def __init__(self):
        self.layout = testbed.bed_for("zq")
        self.link = FakeLink()

    def is_up(self):
        return True

    def require_no_daemon(self):
        pass

    def run(self, *args, **kw):
        return self.link


def _run_args(**over):
    import argparse
    a = dict(bed="zq", a2b="delay 1ms", b2a="", profile=None, pmd=None, lcores=None,
             layout=None, seed=None, io="dpdk", wait=None, spin_us=None, detach=False,
             isolate_lcore=False, scenario=None, ports=None, between=None, dev=None,
             addr_a=None, addr_b=None, punt_echo=True, punt_work_ns=0)
    a.update(over)
    return argparse.Namespace(**a)


@pytest.fixture
def fake_run(monkeypatch, tmp_path):
    from linkemu.cli import run as run_cli
    from linkemu.daemon import daemon
    monkeypatch.setattr(paths, "RUN_ROOT", tmp_path / "run")
    bed = FakeBed()
    bed.layout.run_dir.mkdir(parents=True)
    monkeypatch.setattr(run_cli, "bed_from_args", lambda a: bed)
    monkeypatch.setattr(run_cli, "bring_up", lambda b, pmd="af_xdp": {})
    monkeypatch.setattr(isolation, "recover_stale", lambda: [])
    monkeypatch.setattr(daemon, "require_binary", lambda io="dpdk": "linkemud")
    monkeypatch.setattr(daemon, "check_links", lambda cfg, binary: None)
    return run_cli, bed


@pytest.mark.parametrize("over", [dict(punt_work_ns=-1), dict(punt_echo_missing=True)])
def test_run_stops_its_daemon_when_a_later_step_fails(fake_run, monkeypatch, over):
    """`run --punt-echo` checks --punt-work-ns and finds punt_echo only once
    linkemud is ready: a failure there must not leave linkemud running (in
    its own session, nothing else would stop it)."""
    run_cli, bed = fake_run
    from linkemu.cli import punt
    if over.pop("punt_echo_missing", False):
        def missing(name):
            raise LinkemuError(f"{name} is not built")
        monkeypatch.setattr(punt, "require_tool", missing)
    a = _run_args(a2b="class c match udp : punt fifo /tmp/zq-fifo", **over)
    with pytest.raises(LinkemuError):
        run_cli.cmd_run(a)
    assert bed.link.stopped, "linkemud was left running"


def test_run_stops_its_daemon_on_ctrl_c_before_the_loop(fake_run, monkeypatch):
    run_cli, bed = fake_run
    from linkemu.cli import punt

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(punt, "start_echoes", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_cli.cmd_run(_run_args(punt_echo=False))
    assert bed.link.stopped, "linkemud was left running"


def test_run_detached_leaves_its_daemon(fake_run):
    run_cli, bed = fake_run
    assert run_cli.cmd_run(_run_args(punt_echo=False, detach=True)) == 0
    assert bed.link.detached and not bed.link.stopped


def test_punt_echoes_started_are_ended_when_a_later_one_fails(monkeypatch, tmp_path):
    """Two punted channels, the second punt_echo cannot start: the first
    must not be left running (nobody holds its Popen)."""
    from linkemu.cli import punt
    monkeypatch.setattr(paths, "RUN_ROOT", tmp_path / "run")
    paths.bed_run_dir("zq").mkdir(parents=True)
    started = []
    real_popen = subprocess.Popen

    def popen(argv, **kw):
        if started:
            raise FileNotFoundError(2, "No such file or directory", argv[0])
        p = real_popen(["sleep", "30"], **kw)
        started.append(p)
        return p

    monkeypatch.setattr(punt, "require_tool", lambda name: "/nonexistent/punt_echo")
    monkeypatch.setattr(punt.subprocess, "Popen", popen)
    a = _run_args(a2b="class c match udp : punt fifo /tmp/zq-1", b2a="class d match udp : punt fifo /tmp/zq-2")
    try:
        with pytest.raises(OSError):
            punt.start_echoes(a, "zq", a.a2b, a.b2a)
        assert started and started[0].poll() is not None, "the first punt_echo was left running"
    finally:
        for p in started:
            p.kill()
            p.wait()


# --- a second start on a bed whose daemon runs ----------------------------------------------

@pytest.fixture
def eal_files(monkeypatch, tmp_path):
    """The bed 'zq' with paths under tmp_path and a running daemon's EAL
    files (runtime dir, a hugepage file) in place."""
    from linkemu.bed import hugepages
    from linkemu.daemon import control, daemon
    monkeypatch.setattr(paths, "RUN_ROOT", tmp_path / "run")
    monkeypatch.setattr(paths, "DPDK_RUN_ROOT", tmp_path / "dpdk")
    huge = tmp_path / "huge"
    huge.mkdir()
    monkeypatch.setattr(hugepages, "MOUNT_POINT", huge)
    monkeypatch.setattr(hugepages, "hugetlbfs_mounts", lambda: [str(huge)])
    monkeypatch.setattr(control, "daemon_args", lambda binary, name: [])
    monkeypatch.setattr(daemon, "ensure_bpffs", lambda: None)
    b = testbed.bed_for("zq")
    rt = paths.DPDK_RUN_ROOT / b.file_prefix
    rt.mkdir(parents=True)
    (rt / "config").write_text("")
    page = huge / f"{b.file_prefix}map_0"
    page.write_text("")
    # A linkemud that fails as EAL does when the prefix's primary runs.
    failing = tmp_path / "bin" / "linkemud"
    failing.parent.mkdir()
    failing.write_text("#!/bin/sh\necho 'EAL: Cannot create lock: another primary process is running'\n"
                       "exit 1\n")
    failing.chmod(0o755)
    return b, rt, page, failing


@contextlib.contextmanager
def _running_stand_in(tmp_path, file_prefix: str):
    """Within: a process named linkemud with the bed's EAL file prefix on
    its command line (as procs.find_linkemud sees a running daemon), that
    does nothing; killed on leaving."""
    fake = tmp_path / "stand-in" / "linkemud"
    fake.parent.mkdir()
    fake.write_text("import time\nprint('running', flush=True)\ntime.sleep(30)\n")
    p = subprocess.Popen([sys.executable, str(fake), "-l", "1", "--file-prefix", file_prefix,
                          "--", "--a2b", ""], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline() == "running\n"
        yield p
    finally:
        p.kill()
        p.wait()
        p.stdout.close()


def test_a_second_start_leaves_the_running_daemons_files(eal_files, tmp_path):
    """The bed's daemon runs but its pid file is not there (being written
    by a concurrent `run`, or gone): a second start must not take the
    running daemon's EAL files and pid file with it when it fails."""
    from linkemu.daemon import daemon
    b, rt, page, failing = eal_files
    with _running_stand_in(tmp_path, b.file_prefix):
        with pytest.raises(LinkemuError, match="already running"):
            daemon.start(daemon.DaemonConfig(bed=b), binary=failing, ready_timeout=5)
        assert rt.exists() and page.exists(), "the running daemon's EAL files were removed"


def test_a_start_while_another_starts_is_refused(eal_files):
    import fcntl
    from linkemu.daemon import daemon
    b, rt, page, failing = eal_files
    b.run_dir.mkdir(parents=True)
    with open(b.run_dir / testbed.START_LOCK, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(LinkemuError, match="is starting linkemud on bed 'zq'"):
            daemon.start(daemon.DaemonConfig(bed=b), binary=failing, ready_timeout=5)
    assert rt.exists() and page.exists()
    # Free again: this start runs (and fails as the stand-in does), cleaning up
    # after itself as before.
    with pytest.raises(daemon.DaemonStartError):
        daemon.start(daemon.DaemonConfig(bed=b), binary=failing, ready_timeout=5)
    assert not rt.exists() and not page.exists()


def test_two_shells_started_together_get_two_beds(monkeypatch, tmp_path):
    """`linkemu shell` without --bed picks the first free sh<N>; the bed is
    built (and its run dir made) only later, so two shells started at once
    both took sh0, and the second one's `up` and `down` tore into the
    first's link. The name is now claimed when it is chosen."""
    from linkemu import api
    monkeypatch.setattr(paths, "RUN_ROOT", tmp_path / "run")
    monkeypatch.setattr(netns, "ns_exists", lambda ns: False)
    monkeypatch.setattr(netns, "link_exists", lambda dev, ns=None: False)
    assert api._free_shell_name() != api._free_shell_name()


def test_shell_ends_a_command_that_ignores_sigterm_when_the_daemon_dies():
    """linkemud gone while COMMAND runs: COMMAND is ended. An interactive
    shell (linkemu shell's default COMMAND) ignores SIGTERM, so waiting for
    it after SIGTERM alone hung until the user left the shell."""
    code = ("from linkemu.cli import shell\n"
            "shell.END_GRACE_S = 0.5\n"
            "class Dead:\n"
            "    def exit_code(self): return 139\n"
            "print(shell.run_foreground(['sh', '-c', \"trap '' TERM; while :; do sleep 0.1; done\"], {}, Dead()))\n")
    cp = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=20,
                        env=paths.child_python_env())
    assert cp.stdout.strip() == "1", cp.stderr


def test_a_bed_name_with_a_newline_is_refused():
    # `$` also matches before a final newline: "zr\n" passed as a bed name,
    # giving namespaces and veths named "zr\n-src", "zr\n-a".
    from linkemu.errors import UsageError
    with pytest.raises(UsageError):
        testbed.bed_for("zr\n")


# --- a ports bed: its daemon will not stop -------------------------------------------------------

def test_ports_down_goes_on_after_a_daemon_it_may_not_signal(monkeypatch, tmp_path):
    """`down` of a --ports bed stopped at a daemon it could not signal: the
    promiscuous mode it had turned on, its runtime dir and EAL's hugepage
    files (which keep their pages taken) stayed."""
    from linkemu.bed import ports
    monkeypatch.setattr(paths, "RUN_ROOT", tmp_path / "run")
    b = ports.PortsBed("zq", "eth7", "eth8")
    b.run_dir.mkdir(parents=True)
    calls: list[str] = []

    def refused(pid, grace, popen=None):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(procs, "find_linkemud", lambda prefix: [4242])
    monkeypatch.setattr(testbed, "daemon_pid", lambda bed: None)
    monkeypatch.setattr(procs, "terminate", refused)
    monkeypatch.setattr(ports, "restore", lambda bed: calls.append("restore") or [])
    monkeypatch.setattr(testbed, "remove_dpdk_leftovers",
                        lambda prefix: calls.append(f"dpdk {prefix}") or [])
    monkeypatch.setattr(isolation, "recover_stale", lambda: calls.append("isolation") or [])
    with pytest.raises(LinkemuError, match="stopping linkemud: .*Operation not permitted"):
        ports.down(b)
    # ... and, as testbed.down, gives back CPUs a killed --isolate-lcore run held.
    assert calls == ["restore", "dpdk linkemu-zq", "isolation"]
    assert not b.run_dir.exists()


# --- up after a crashed daemon: its hugepage files first, then the reservation ---------------

@pytest.fixture
def crashed_daemons_files(eal_files, monkeypatch):
    """Bed 'zq' whose linkemud was killed (SIGKILL): its EAL runtime dir
    and hugepage files are in place, its pid file names a pid that is
    gone, and no linkemud with its prefix runs. Building the veths is
    faked; hugepages.ensure() records what was in hugetlbfs when it ran."""
    from linkemu.bed import hugepages, sides
    b, rt, page, _failing = eal_files
    b.run_dir.mkdir(parents=True)
    paths.daemon_pid_file(b.name).write_text(f"{_a_gone_pid()}\n")
    for f in ("map_1", "map_2"):
        (page.parent / f"{b.file_prefix}{f}").write_text("")
    # Another bed's files: never ours to remove.
    other = testbed.bed_for("zr")
    others = [page.parent / f"{other.file_prefix}map_0", paths.DPDK_RUN_ROOT / other.file_prefix]
    others[0].write_text("")
    others[1].mkdir()
    for name in ("up", "static_neighbours"):
        monkeypatch.setattr(sides, name, lambda *args: None)
    monkeypatch.setattr(sides, "check", lambda *args: [])
    seen_by_ensure: list[list[str]] = []
    monkeypatch.setattr(hugepages, "ensure",
                        lambda *a: seen_by_ensure.append(sorted(p.name for p in page.parent.iterdir())))
    return b, rt, page.parent, others, seen_by_ensure


def _a_gone_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def test_up_removes_a_crashed_daemons_hugepage_files_before_reserving(crashed_daemons_files,
                                                                      monkeypatch, capsys):
    """A linkemud killed with SIGKILL leaves its hugepage files, and they
    keep their pages taken: `up` counted them as used and grew the
    reservation by as many pages, on every crash."""
    b, rt, huge, others, seen_by_ensure = crashed_daemons_files
    monkeypatch.setattr(procs, "find_linkemud", lambda prefix: [])
    testbed.up(b)
    assert seen_by_ensure == [["linkemu-zrmap_0"]], "ensure() ran with the crashed daemon's files there"
    assert not rt.exists()
    assert all(p.exists() for p in others), "another bed's files were removed"
    said = capsys.readouterr().err.splitlines()
    assert len(said) == 1 and "3 hugepage files" in said[0] and "bed 'zq'" in said[0], said


def test_up_leaves_a_live_daemons_files(crashed_daemons_files, tmp_path, capsys):
    """The bed's daemon runs (found by its EAL prefix; its pid file is
    stale): its files are live, and `up` neither removes them nor reserves
    pages on top of the ones it holds."""
    b, rt, huge, others, seen_by_ensure = crashed_daemons_files
    with _running_stand_in(tmp_path, b.file_prefix):
        testbed.up(b)
    assert rt.exists() and len(list(huge.glob(f"{b.file_prefix}map_*"))) == 3
    assert seen_by_ensure == []
    assert capsys.readouterr().err == ""


def test_up_leaves_the_files_of_a_daemon_being_started(crashed_daemons_files, monkeypatch):
    """A `linkemu run` elsewhere holds the bed's start lock: its daemon may
    not be found yet, but the files are about to be its own."""
    import fcntl
    b, rt, huge, others, seen_by_ensure = crashed_daemons_files
    monkeypatch.setattr(procs, "find_linkemud", lambda prefix: [])
    with open(b.run_dir / testbed.START_LOCK, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        testbed.up(b)
    assert rt.exists() and len(list(huge.glob(f"{b.file_prefix}map_*"))) == 3


# --- a second Ctrl-C while a start that the first one interrupted cleans up --------------------

SLOW_TO_GO = """#!{python}
# A linkemud that is slow to go: the user's first Ctrl-C lands while
# linkemu waits for it to be ready; the second while linkemu waits for it
# to exit after SIGTERM (the moment a user presses again).
import os, signal, time
signal.signal(signal.SIGTERM, lambda *_: os.kill(os.getppid(), signal.SIGINT))
os.kill(os.getppid(), signal.SIGINT)
while True:
    time.sleep(1)
"""


def test_a_second_ctrl_c_does_not_cut_short_a_failed_starts_cleanup(eal_files, monkeypatch,
                                                                   tmp_path):
    """Ctrl-C while linkemud starts: start() stops it (SIGTERM, wait, then
    SIGKILL) and removes its files. A second Ctrl-C during that wait ended
    the cleanup, and `run` had no daemon to stop yet: linkemud, in a
    session of its own, ran on with its hugepages and the bed."""
    import os
    import signal
    from linkemu.bed.interrupts import interruptible
    from linkemu.daemon import daemon
    b, rt, page, _failing = eal_files
    monkeypatch.setattr(daemon, "ABORT_GRACE_S", 0.5)
    slow = tmp_path / "slow" / "linkemud"
    slow.parent.mkdir()
    slow.write_text(SLOW_TO_GO.format(python=sys.executable))
    slow.chmod(0o755)
    try:
        with pytest.raises(KeyboardInterrupt), interruptible():
            daemon.start(daemon.DaemonConfig(bed=b), binary=slow, ready_timeout=30)
        assert _ours(b, slow) == [], "linkemud was left running"
        assert not paths.daemon_pid_file(b.name).exists() and not page.exists()
    finally:
        for pid in _ours(b, slow):
            os.kill(pid, signal.SIGKILL)     # SIGTERM would make it send another SIGINT


def _ours(b, binary) -> list[int]:
    """Live processes of this test's stand-in (nothing else of the prefix)."""
    return [p for p in procs.find_linkemud(b.file_prefix) if str(binary) in procs.cmdline(p)]
