"""linkemu.bed.isolation moves threads off a forwarding lcore's CPU for a
benchmark and gives them their CPUs back (bench/forwarding_paced.py and
bench/tail_wait.py --isolate-lcore). Checked on processes this test starts, never on the
machine's: a thread allowed on several CPUs loses the lcore's, a thread
bound to that one CPU is left alone, and restore() puts back exactly
what each had."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from linkemu.bed import isolation
from linkemu.errors import UsageError

CPUS = sorted(os.sched_getaffinity(0))
pytestmark = pytest.mark.skipif(len(CPUS) < 2, reason="needs two CPUs")


def _sleeper(cpus):
    return subprocess.Popen(["sleep", "30"], preexec_fn=lambda: os.sched_setaffinity(0, cpus))


def test_moves_the_shared_thread_and_leaves_the_bound_one():
    lcore = CPUS[-1]
    shared, bound = _sleeper(set(CPUS)), _sleeper({lcore})
    try:
        moved = isolation.move_off(lcore, pids=[shared.pid, bound.pid])
        assert set(moved) == {shared.pid}
        assert os.sched_getaffinity(shared.pid) == set(CPUS) - {lcore}
        assert os.sched_getaffinity(bound.pid) == {lcore}
        assert "sleep" in isolation.describe(moved)
        assert isolation.restore(moved) == 1
        assert os.sched_getaffinity(shared.pid) == set(CPUS)
    finally:
        for p in (shared, bound):
            p.kill()
            p.wait()


def test_keep_and_threads_that_ended():
    lcore = CPUS[-1]
    mine, other = _sleeper(set(CPUS)), _sleeper(set(CPUS))
    try:
        moved = isolation.move_off(lcore, pids=[mine.pid, other.pid], keep={mine.pid})
        assert set(moved) == {other.pid}
        assert os.sched_getaffinity(mine.pid) == set(CPUS)
        other.kill()
        other.wait()
        assert isolation.restore(moved) == 0  # gone: skipped, no error
    finally:
        for p in (mine, other):
            p.kill()
            p.wait()


def test_a_set_of_cpus_at_once():
    """Every CPU but the first (one on this machine, more on a bigger one)."""
    shared = _sleeper(set(CPUS))
    try:
        moved = isolation.move_off(set(CPUS[1:]), pids=[shared.pid])
        assert os.sched_getaffinity(shared.pid) == {CPUS[0]}
        isolation.restore(moved)
        assert os.sched_getaffinity(shared.pid) == set(CPUS)
    finally:
        shared.kill()
        shared.wait()


@pytest.mark.parametrize("text,cpus", [("1", {1}), ("1-3", {1, 2, 3}), ("0,2-3", {0, 2, 3})])
def test_lcore_lists(text, cpus):
    assert isolation.cpus_of(text) == cpus


@pytest.mark.parametrize("text", ["", "x", "1@2", "(1,2)@3", "2-x"])
def test_lcore_lists_it_cannot_read(text):
    with pytest.raises(UsageError, match="--isolate-lcore"):
        isolation.cpus_of(text)


def _dead_pid():
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def _record(records, owner, entries):
    records.mkdir(parents=True, exist_ok=True)
    path = records / f"{owner}.json"
    path.write_text(json.dumps({"owner": owner, "start": 1, "moved": entries}))
    return path


def test_a_killed_runs_threads_get_their_cpus_back(tmp_path):
    """What a run killed with SIGKILL moved is given back from its record,
    except a thread someone has moved again since."""
    lcore = CPUS[-1]
    moved_only, changed = _sleeper(set(CPUS)), _sleeper(set(CPUS))
    try:
        isolation.move_off(lcore, pids=[moved_only.pid, changed.pid])
        os.sched_setaffinity(changed.pid, {lcore})  # someone else's choice since
        rest = sorted(set(CPUS) - {lcore})
        path = _record(tmp_path, _dead_pid(), {
            str(moved_only.pid): {"had": CPUS, "now": rest},
            str(changed.pid): {"had": CPUS, "now": rest}})
        done = isolation.recover_stale(tmp_path)
        assert os.sched_getaffinity(moved_only.pid) == set(CPUS)
        assert os.sched_getaffinity(changed.pid) == {lcore}
        assert not path.exists()
        assert len(done) == 1 and "gave 1 threads" in done[0], done
    finally:
        for p in (moved_only, changed):
            p.kill()
            p.wait()


def test_a_live_runs_record_is_kept_until_it_restores(tmp_path):
    lcore = CPUS[-1]
    other = _sleeper(set(CPUS))
    try:
        moved = isolation.move_off(lcore, pids=[other.pid])
        path = isolation.remember(moved, lcore, records=tmp_path)
        assert path is not None and path.exists()
        assert isolation.recover_stale(tmp_path) == []   # its owner (this test) runs
        assert os.sched_getaffinity(other.pid) == set(CPUS) - {lcore}
        isolation.restore(moved)
        isolation.forget(path)
        assert not path.exists()
        assert os.sched_getaffinity(other.pid) == set(CPUS)
    finally:
        other.kill()
        other.wait()


def test_an_unreadable_record_is_removed(tmp_path):
    tmp_path.joinpath("123.json").write_text("{not json")
    done = isolation.recover_stale(tmp_path)
    assert done and "unreadable" in done[0]
    assert not list(tmp_path.iterdir())


def test_isolated_gives_back_and_forgets_even_after_an_error(tmp_path):
    """The context the runs use: moved and recorded within, given back and
    the record gone afterwards, also when the body fails."""
    lcore = CPUS[-1]
    other = _sleeper(set(CPUS))
    said = []
    try:
        with pytest.raises(RuntimeError):
            with isolation.isolated(lcore, pids=[other.pid], records=tmp_path, say=said.append) as moved:
                assert set(moved) == {other.pid}
                assert os.sched_getaffinity(other.pid) == set(CPUS) - {lcore}
                assert len(list(tmp_path.glob("*.json"))) == 1
                raise RuntimeError("the run failed")
        assert os.sched_getaffinity(other.pid) == set(CPUS)
        assert not list(tmp_path.glob("*.json"))
        assert said == ["gave 1 of 1 moved threads their CPUs back (the others had ended)"]
    finally:
        other.kill()
        other.wait()


def test_isolated_gives_back_after_a_signal_right_after_moving(tmp_path, monkeypatch):
    """A SIGTERM (interruptible(): KeyboardInterrupt) that lands as the
    shield comes down after moving, before the body starts: the threads
    get their CPUs back then too, not only at the next run or `down`."""
    import contextlib
    lcore = CPUS[-1]
    other = _sleeper(set(CPUS))
    real = isolation.shielded
    calls = []

    @contextlib.contextmanager
    def shield_then_signal():
        with real():
            yield
        calls.append(1)
        if len(calls) == 1:              # the shield around moving only
            raise KeyboardInterrupt("SIGTERM")

    monkeypatch.setattr(isolation, "shielded", shield_then_signal)
    try:
        with pytest.raises(KeyboardInterrupt):
            with isolation.isolated(lcore, pids=[other.pid], records=tmp_path):
                pytest.fail("the body ran")
        assert os.sched_getaffinity(other.pid) == set(CPUS)
        assert not list(tmp_path.glob("*.json"))
    finally:
        other.kill()
        other.wait()


# The child a SIGKILL meets half-way through moving: isolated() over two
# sleepers, killed by its own hand right after the first one has moved.
_KILLED_WHILE_MOVING = """
import os, signal, sys
from pathlib import Path
from linkemu.bed import isolation
real, lcore = os.sched_setaffinity, int(sys.argv[2])
def set_then_die(tid, cpus):
    real(tid, cpus)
    if tid != 0 and lcore not in cpus:      # a thread has just moved
        os.kill(os.getpid(), signal.SIGKILL)
os.sched_setaffinity = set_then_die
with isolation.isolated(lcore, pids=[int(p) for p in sys.argv[3:]], records=Path(sys.argv[1])):
    pass
"""


def test_threads_moved_before_a_sigkill_are_on_record(tmp_path):
    """A run killed while it moves threads (SIGKILL: no finally runs)
    leaves a record of every thread it had moved by then, so the next run
    gives them back; a record written only after all the moves had none."""
    import sys
    lcore = CPUS[-1]
    first, second = _sleeper(set(CPUS)), _sleeper(set(CPUS))
    try:
        child = subprocess.run([sys.executable, "-c", _KILLED_WHILE_MOVING, str(tmp_path),
                                str(lcore), str(first.pid), str(second.pid)],
                               capture_output=True, text=True, timeout=60)
        assert child.returncode == -9, child.stderr
        assert os.sched_getaffinity(first.pid) != set(CPUS)   # the kill came after a move
        isolation.recover_stale(tmp_path)
        assert os.sched_getaffinity(first.pid) == set(CPUS)
        assert os.sched_getaffinity(second.pid) == set(CPUS)
        assert not list(tmp_path.glob("*.json"))
    finally:
        for p in (first, second):
            p.kill()
            p.wait()


def test_a_second_isolation_at_once_is_refused(tmp_path):
    """Two isolating runs at once undo each other: the first to end gives
    back the CPU the other still isolates (and with different CPUs, a
    thread could end up without one for good). The second is refused,
    naming the run that isolates, and may go once that one has ended."""
    lcore = CPUS[-1]
    other = _sleeper(set(CPUS))
    try:
        with isolation.isolated(lcore, pids=[other.pid], records=tmp_path):
            with pytest.raises(UsageError, match=f"another run \\(pid {os.getpid()}\\) isolates CPU {lcore}"):
                with isolation.isolated(lcore, pids=[other.pid], records=tmp_path):
                    pytest.fail("a second isolation ran")
            assert os.sched_getaffinity(other.pid) == set(CPUS) - {lcore}   # the first's stays
        assert os.sched_getaffinity(other.pid) == set(CPUS)
        with isolation.isolated(lcore, pids=[other.pid], records=tmp_path) as moved:
            assert set(moved) == {other.pid}
    finally:
        other.kill()
        other.wait()
