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
is opt-in (bench/forwarding_paced.py and bench/tail_wait.py
--isolate-lcore), every change is undone by
restore() (also on Ctrl-C or an error, through the caller's `finally`),
and what it moved is reported. A run killed with SIGKILL leaves the moved
threads on the other CPUs until they are moved back (`taskset -a -p -c
0-N PID`)."""
from __future__ import annotations

import os


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


def move_off(cpu: int, pids=None, keep=()) -> dict:
    """Moves every thread allowed on `cpu` and on some other CPU to those
    other CPUs. pids: only these processes' threads (all when None); keep:
    processes left as they are (the caller's own). Returns {tid: the
    affinity it had} for restore(), and skips what cannot move (threads
    bound to one CPU, kernel threads that refuse, threads gone meanwhile)."""
    moved = {}
    for pid, tid in _tids(pids):
        if pid in keep:
            continue
        try:
            had = os.sched_getaffinity(tid)
        except OSError:
            continue
        if cpu not in had or len(had) < 2:
            continue
        try:
            os.sched_setaffinity(tid, had - {cpu})
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
