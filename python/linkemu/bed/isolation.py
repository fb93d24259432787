"""Keep other threads off a forwarding lcore's CPU for a benchmark, and
give them their CPUs back afterwards: `isolcpus` from user space, for the
length of a run.

Why: on this kind of VM two threads outside linkemu take the lcore's CPU
for milliseconds (docs/performance.md, "The 4 ms stalls"). PID 1's tokio
workers (nice -10) run for 2-4 ms about once a second, and the DAMON
thread `kdamond.0` for about 1 ms every 512 ms. They land on the lcore's
CPU when the other CPU is busy (as it is under a paced source), and the
frames that fall due meanwhile leave late. Per-CPU kernel threads
(kworker/N, ksoftirqd/N, migration/N) cannot be moved and are not tried.

This changes other processes' CPU affinity, which is a system setting: it
is opt-in (`linkemu run --isolate-lcore`, bench/forwarding_paced.py and
bench/tail_wait.py --isolate-lcore), every change is undone when
isolated() ends (also on Ctrl-C or an error; SIGTERM too under
interrupts.interruptible()), and what it moved is reported. A run killed with SIGKILL cannot restore:
remember() writes what was moved under /run/linkemu/isolation, and
recover_stale() (at the next `linkemu run`, and `testbed down`) gives it
back once its owner is gone."""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
from pathlib import Path

from linkemu.bed import paths
from linkemu.bed.interrupts import shielded
from linkemu.errors import UsageError

RECORDS = paths.RUN_ROOT / "isolation"


def _tids(pids=None):
    """(pid, tid) of every thread of the given processes (all when None)."""
    if pids is None:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue  # gone
        for t in tids:
            yield pid, int(t)


def _comm(tid):
    try:
        with open(f"/proc/{tid}/comm") as f:
            return f.read().strip()
    except OSError:
        return "?"


def cpus_of(eal_list: str) -> set[int]:
    """The CPUs of an EAL lcore list ("1", "1-3", "1,3-4"; an lcore runs on
    the CPU of its number unless remapped with @, which this refuses)."""
    cpus: set[int] = set()
    try:
        for part in eal_list.split(","):
            if "@" in part or "(" in part:
                raise ValueError
            lo, _, hi = part.partition("-")
            cpus.update(range(int(lo), int(hi or lo) + 1))
    except ValueError:
        raise UsageError(f"--isolate-lcore: cannot tell the CPUs of the lcore list '{eal_list}' "
                         "(a list like 1 or 1-3 or 1,3)") from None
    if not cpus:
        raise UsageError(f"--isolate-lcore: the lcore list '{eal_list}' names no CPU")
    return cpus


def move_off(cpu, pids=None, keep=()) -> dict:
    """Moves every thread allowed on `cpu` (one CPU, or a set of them) and
    on some other CPU to those other CPUs. pids: only these processes'
    threads (all when None); keep: processes left as they are (the
    caller's own). Returns {tid: the affinity it had} for restore(), and
    skips what cannot move (threads bound to these CPUs, kernel threads
    that refuse, threads gone meanwhile)."""
    away = _cpu_set(cpu)
    return _apply(_plan(away, pids, keep), away)


def _cpu_set(cpu) -> set[int]:
    return {cpu} if isinstance(cpu, int) else set(cpu)


def _plan(away: set[int], pids=None, keep=()) -> dict:
    """{tid: its affinity} of the threads move_off() would move: allowed
    on a CPU of `away` and on some other."""
    plan = {}
    for pid, tid in _tids(pids):
        if pid in keep:
            continue
        try:
            had = os.sched_getaffinity(tid)
        except OSError:
            continue
        if had & away and had - away:
            plan[tid] = had
    return plan


def _apply(plan: dict, away: set[int]) -> dict:
    """Moves the planned threads off `away`; {tid: had} of those moved."""
    moved = {}
    for tid, had in plan.items():
        try:
            if os.sched_getaffinity(tid) != had:
                continue  # changed since it was planned: someone else's now
            os.sched_setaffinity(tid, had - away)
        except OSError:
            continue  # PF_NO_SETAFFINITY (EINVAL), gone (ESRCH)
        moved[tid] = had
    return moved


def restore(moved: dict) -> int:
    """Gives each moved thread the affinity it had; the number restored
    (threads that ended meanwhile are skipped)."""
    n = 0
    for tid, had in moved.items():
        try:
            os.sched_setaffinity(tid, had)
            n += 1
        except OSError:
            pass
    return n


def describe(moved: dict, limit: int = 8) -> str:
    """A one-line summary: how many threads moved, and the names of some."""
    names = sorted({_comm(t) for t in moved})
    more = f" and {len(names) - limit} more names" if len(names) > limit else ""
    return f"{len(moved)} threads ({', '.join(names[:limit])}{more})"


def _start_time(pid: int) -> int | None:
    """The process's start time (clock ticks since boot), or None when it
    is gone: with the pid, it names one process even after pid reuse."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def remember(plan: dict, away, records: Path = RECORDS) -> Path | None:
    """Writes what is about to move, each thread's affinity before and
    after (had, had without `away`), for recover_stale(); returns the
    record, or None when it could not be written (not root: the run still
    restores in its `finally`). Written before the moves, so that a
    SIGKILL half-way leaves every thread moved so far on record; one not
    moved yet still has `had`, which recover_stale() leaves alone."""
    if not plan:
        return None
    away = _cpu_set(away)
    entries = {str(tid): {"had": sorted(had), "now": sorted(had - away)}
               for tid, had in plan.items()}
    owner = os.getpid()
    path = records / f"{owner}.json"
    try:
        records.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"owner": owner, "start": _start_time(owner), "moved": entries}))
        tmp.replace(path)
    except OSError:
        return None
    return path


def forget(record: Path | None) -> None:
    """Removes a record once restore() has given everything back."""
    if record is not None:
        try:
            record.unlink()
        except OSError:
            pass


def recover_stale(records: Path = RECORDS) -> list[str]:
    """Gives back what runs that ended without restore() (SIGKILL, a crash)
    moved: each thread still alive and still where it was moved to gets
    the affinity it had (one that someone changed since is left alone).
    Records of runs still alive are kept. Returns what was done."""
    done = []
    try:
        files = sorted(records.glob("*.json"))
    except OSError:
        return done
    for path in files:
        try:
            rec = json.loads(path.read_text())
            owner, start, moved = int(rec["owner"]), rec.get("start"), rec["moved"]
        except (OSError, ValueError, KeyError, TypeError):
            forget(path)
            done.append(f"removed unreadable isolation record {path}")
            continue
        if start is not None and _start_time(owner) == start:
            continue  # its run is still going
        n = 0
        for tid, e in moved.items():
            try:
                if os.sched_getaffinity(int(tid)) == set(e["now"]):
                    os.sched_setaffinity(int(tid), set(e["had"]))
                    n += 1
            except (OSError, ValueError, KeyError, TypeError):
                continue
        forget(path)
        done.append(f"gave {n} threads the CPUs an ended run (pid {owner}) had moved them off")
    return done


def _claim(away: set[int], records: Path):
    """The isolation lock: one isolating run at a time, because two undo
    each other (the first to end gives back a CPU the other still keeps
    free; with different CPUs a thread can lose one for good). Returns
    the open lock file, held until closed (a SIGKILL closes it too), or
    None when there is nowhere to keep it (not root: nothing to guard,
    the moves fail too). Raises UsageError naming the run holding it."""
    try:
        records.mkdir(parents=True, exist_ok=True)
        f = open(records / "lock", "a+")
    except OSError:
        return None
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.seek(0)
        holder = f.read().strip() or "? ?"
        f.close()
        pid, _, cpus = holder.partition(" ")
        raise UsageError(f"--isolate-lcore: another run (pid {pid}) isolates CPU {cpus} until it "
                         "ends; two at once would undo each other's moves. Wait for it to end, "
                         "or run without --isolate-lcore") from None
    f.seek(0)
    f.truncate()
    f.write(f"{os.getpid()} {','.join(map(str, sorted(away)))}\n")
    f.flush()
    return f


@contextlib.contextmanager
def isolated(cpu, keep=(), say=lambda line: None, pids=None, records: Path = RECORDS):
    """Within: every thread that may also run elsewhere is off `cpu` (one
    CPU or a set); yields what move_off() moved (pids, keep: as there). A record (remember())
    covers a SIGKILL meanwhile, and records that ended runs left are
    recovered first. Moving and giving back run with Ctrl-C, SIGTERM and
    SIGHUP ignored, so that no signal leaves threads moved and unrecorded.
    One at a time (_claim()): a second raises UsageError.
    say(line): what was recovered and, at the end, what was given back."""
    away = _cpu_set(cpu)
    lock = _claim(away, records)
    moved: dict = {}
    record = None
    # The try starts before the shield comes down: a SIGTERM landing
    # between the end of the shield and the body (interruptible() makes it
    # a KeyboardInterrupt) left the threads moved until the next run or
    # `down` found the record.
    try:
        with shielded():
            for line in recover_stale(records):
                say(line)
            plan = _plan(away, pids, keep)
            record = remember(plan, away, records)
            moved = _apply(plan, away)
        yield moved
    finally:
        with shielded():
            n = restore(moved)
            forget(record)
            if lock is not None:
                lock.close()
        if moved:
            say(f"gave {n} of {len(moved)} moved threads their CPUs back (the others had ended)")
