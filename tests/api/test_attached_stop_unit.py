"""Link.stop() on a link that attached to a running daemon stops that
daemon and no other: once it has exited, the bed's pid file may name a
daemon started since (or its pid may be reused), and stopping that one
would end someone else's run. No root, no DPDK: stand-in processes whose
command lines are linkemud's for the bed, in a temporary run dir."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

import linkemu
from linkemu import api
from linkemu.bed import paths, procs, testbed
from linkemu.daemon import daemon

from .test_api_unit import FINAL

BED = "q2s"


@pytest.fixture
def run_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "RUN_ROOT", tmp_path)
    monkeypatch.setattr(daemon, "remove_dpdk_leftovers", lambda prefix: [])
    (tmp_path / BED).mkdir()
    started: list[subprocess.Popen] = []

    def start_daemon() -> subprocess.Popen:
        """A stand-in linkemud for the bed that exits 0 on SIGTERM, made
        the bed's daemon (pid file) as `linkemu run --detach` does."""
        p = subprocess.Popen(["linkemud", "-c", "import time; time.sleep(60)", "--file-prefix",
                              testbed.bed_for(BED).file_prefix], executable=sys.executable)
        started.append(p)
        # Right after fork its command line is still ours: wait for the exec.
        deadline = time.monotonic() + 10
        while procs.cmdline(p.pid)[:1] != ["linkemud"]:
            assert time.monotonic() < deadline, "the stand-in did not start"
            time.sleep(0.01)
        paths.daemon_pid_file(BED).write_text(f"{p.pid}\n")
        return p

    yield start_daemon
    for p in started:
        p.kill()
        p.wait()


def test_stop_of_an_attached_link_stops_its_daemon(run_dir):
    first = run_dir()
    link = api.Bed(BED).attach()
    paths.daemon_final_stats_file(BED).write_text(json.dumps(FINAL))
    assert link.running
    report = link.stop()
    assert first.wait(5) is not None and report.pid == first.pid
    assert not link.running


def test_stop_leaves_a_daemon_started_after_the_attached_one_exited(run_dir):
    first = run_dir()
    link = api.Bed(BED).attach()
    first.kill()
    first.wait()
    second = run_dir()                     # another run on the same bed
    assert not link.running
    with pytest.raises(linkemu.LinkemuError,
                       match=rf"the linkemud this link attached to on bed '{BED}' \(pid "
                             rf"{first.pid}\) is no longer running; the bed now runs another "
                             rf"daemon \(pid {second.pid}\), which this link does not stop"):
        link.stop()
    assert second.poll() is None and procs.pid_alive(second.pid)
    # The bed's exit stops the links it holds that run: not this one.
    api.Bed.__exit__(link.bed, None, None, None)
    assert second.poll() is None


def test_stop_leaves_a_process_that_reuses_the_pid(run_dir, monkeypatch):
    """Same pid, another start time: another process (pid reuse)."""
    run_dir()
    link = api.Bed(BED).attach()
    real = procs.start_time
    monkeypatch.setattr(procs, "start_time", lambda pid: real(pid) + 1)
    with pytest.raises(linkemu.LinkemuError, match="is no longer running"):
        link.stop()
    assert procs.pid_alive(link.pid)


def test_stop_after_the_attached_daemon_exited_stops_nothing(run_dir):
    """Not even a daemon with the bed's prefix that no pid file names (one
    started by hand), which `linkemu stop` would look for."""
    first = run_dir()
    link = api.Bed(BED).attach()
    first.kill()
    first.wait()
    by_hand = run_dir()
    os.unlink(paths.daemon_pid_file(BED))
    with pytest.raises(linkemu.LinkemuError, match=r"\(it exited, or something else stopped it\)"):
        link.stop()
    assert by_hand.poll() is None


def test_the_beds_exit_leaves_a_daemon_it_only_attached_to(run_dir):
    """docs/python.md: on exit, `with bed:` stops the links the bed
    started. A daemon from `linkemu run --detach` that the block attached
    to (to read its stats, say) is someone else's: it was stopped."""
    first = run_dir()
    bed = api.Bed(BED)
    link = bed.attach()
    api.Bed.__exit__(bed, None, None, None)
    assert first.poll() is None and link.running


def test_a_failed_stop_does_not_hide_the_blocks_own_error(run_dir, capsys):
    """`with link:` ended by an exception, then stop() failed: the caller
    got the LinkemuError of stop(), the block's own error only in its
    __context__. Now the block's error is raised and stop's is said."""
    first = run_dir()
    link = api.Bed(BED).attach()
    first.kill()
    first.wait()
    run_dir()                              # another run on the bed: stop() refuses
    with pytest.raises(ValueError, match="the block's own"):
        with link:
            raise ValueError("the block's own")
    err = capsys.readouterr().err
    assert "while cleaning up after ValueError" in err and "is no longer running" in err


def test_a_failed_stop_after_a_normal_block_is_raised(run_dir):
    first = run_dir()
    link = api.Bed(BED).attach()
    first.kill()
    first.wait()
    run_dir()
    with pytest.raises(linkemu.LinkemuError, match="is no longer running"):
        with link:
            pass
