"""A suite's test bed: fixtures that build it, run linkemud on it, and make
sure nothing of it survives the session.

Each suite that needs a bed names its own (so suites, and helpers working
at once, never share one) in its conftest.py:

    from kit.bed import bed_fixtures
    bed_session, bed, bed_up, run_link = bed_fixtures("lt", __file__)

and a test module of the suite that needs the name (for the CLI's --bed):

    from kit import suite_bed
    BED = suite_bed(__file__)

Fixtures (the names are fixed; the bed is the suite's):
    bed_session  session: the Bed, torn down at start and at the end even
                 when tests fail; the session fails if anything of the bed
                 is left (namespaces, veths, processes, runtime files).
                 Skips (fails under CI=true) without root or `ip netns`.
    bed          the Bed object (built or not: run_link and bed_up build it;
                 with bed_fixtures(..., bed_built=True) it is bed_up).
    bed_up       the bed, built (testbed.up when it is not), no daemon running.
    run_link     run_link(a2b="", b2a="", *extra) -> Link: `linkemu run
                 --detach`; every Link is stopped at the end of the test and
                 its final counters checked (conservation()), even on failure.
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

import pytest

from kit.cli import linkemu
from kit.need import bed_usable, need
from kit.quiet import StealWatch
from linkemu.bed import netns, paths, procs, testbed
from linkemu.bed.testbed import Bed
from linkemu.daemon import control
from linkemu.daemon.summary import conservation_problems

# The data plane's drop causes, which may happen before a frame has a class.
DATAPLANE_CAUSES = ("ring_full", "malformed")


# --- what a bed leaves behind ---------------------------------------------------------------

def bed_processes(bed: str) -> list[str]:
    """Processes that belong to bed: its linkemud, a scenario player or a
    dpdk-dumpcap attached to its daemon (identified by their command lines)."""
    b = testbed.bed_for(bed)
    found = [f"linkemud pid {p}" for p in procs.find_linkemud(b.file_prefix)]
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        argv = procs.cmdline(int(d.name))
        if not argv or not procs.pid_alive(int(d.name)):
            continue
        if "scenario" in argv and "play" in argv and "--bed" in argv \
                and argv[argv.index("--bed") + 1:argv.index("--bed") + 2] == [bed]:
            found.append(f"scenario player pid {d.name}")
        if any(os.path.basename(a) == "dpdk-dumpcap" for a in argv[:4]) \
                and f"--file-prefix={b.file_prefix}" in argv:
            found.append(f"dpdk-dumpcap pid {d.name}")
    return found


def leftovers(bed: str) -> list[str]:
    """Everything of the bed that should be gone after `down`."""
    b = testbed.bed_for(bed)
    found = [f"namespace {n}" for n in netns.ns_list() if n.startswith(f"{bed}-")]
    found += [f"link {d}" for d in os.listdir("/sys/class/net") if d.startswith(f"{bed}-")]
    found += bed_processes(bed)
    if paths.bed_run_dir(bed).exists():
        found.append(f"dir {paths.bed_run_dir(bed)}")
    if (paths.DPDK_RUN_ROOT / b.file_prefix).exists():
        found.append(f"dir {paths.DPDK_RUN_ROOT / b.file_prefix}")
    found += [f"file {f}" for f in Path("/dev/hugepages").glob(f"{b.file_prefix}map_*")]
    return found


def _kill_bed_processes(bed: str) -> None:
    """Players and dumpcaps of the bed (linkemud is testbed.down's job)."""
    for entry in bed_processes(bed):
        if not entry.startswith("linkemud"):
            procs.terminate(int(entry.rsplit(" ", 1)[1]), 3.0)


# --- a run's books --------------------------------------------------------------------------

def hop_problems(name: str, c: dict) -> list[str]:
    """A chained class (`LINK >> LINK`): each hop conserves, what a hop
    hands on is what the next one received from it, and the hops add up
    to the class (rx: what entered a hop from outside the chain, tx: what
    left one to outside; after a live change that made the chain longer,
    a hop's counts include what it carried as the last or only hop)."""
    hops = c.get("hops") or []
    if not hops:
        return []
    bad, where = [], f"{name}: class {c['name']}"
    for h in hops:
        if (h["rx"] + h["dup"] + h.get("in_flight_at_reset", 0)
                != h["tx"] + sum(h["dropped"].values()) + h["in_flight"] or not h["conserved"]):
            bad.append(f"{where}: hop {h['hop']} not conserved: {h}")
    bad += [f"{where}: hop {a['hop']} handed on {a['to_next_hop']}, hop {b['hop']} received "
            f"{b['from_previous_hop']} from it" for a, b in zip(hops, hops[1:])
            if a["to_next_hop"] != b["from_previous_hop"]]
    rx = sum(h["rx"] - h["from_previous_hop"] for h in hops)
    tx = sum(h["tx"] - h["to_next_hop"] for h in hops)
    if rx != c["rx"] or tx != c["tx"]:
        bad.append(f"{where}: hops in {rx} out {tx}, class in {c['rx']} out {c['tx']}")
    for key in ("dup", "in_flight"):
        if sum(h[key] for h in hops) != c[key]:
            bad.append(f"{where}: hops' {key} add up to {sum(h[key] for h in hops)}, class has {c[key]}")
    return bad


def conservation(final: dict, classes: bool = True) -> list[str]:
    """What must hold after every stopped run, per direction and per class:
    the daemon's own equation (summary.conservation_problems: rx + dup ==
    tx + dropped_total + in_flight, dropped_total the sum of its causes),
    nothing left in flight, frames in flight at shutdown counted as such,
    and classes adding up to the direction (classes=False: directions only).
    Returns every violation."""
    bad = conservation_problems(final)
    for name in ("a2b", "b2a"):
        d = final["directions"][name]
        if d["in_flight"] != 0:
            bad.append(f"{name}: {d['in_flight']} frames in flight after stop")
        if "shutdown" not in d["dropped"]:
            bad.append(f"{name}: no 'shutdown' drop cause in {sorted(d['dropped'])}")
        classes_ = (d.get("classes") or []) if classes else []
        if classes_:
            # Classes a live change removed, together: they add up with
            # the current ones (docs/control.md, "ended_classes").
            if "ended_classes" not in d:
                bad.append(f"{name}: no 'ended_classes' in the report")
            else:
                classes_ = classes_ + [dict(d["ended_classes"], name="(ended)")]
        for c in classes_:
            if c["rx"] + c["dup"] + c.get("in_flight_at_reset", 0) != \
                    c["tx"] + sum(c["dropped"].values()) + c["in_flight"]:
                bad.append(f"{name}: class {c['name']} not conserved: {c}")
            bad += hop_problems(name, c)
        if classes_:
            for key in ("rx", "tx", "dup", "in_flight"):
                if sum(c[key] for c in classes_) != d[key]:
                    bad.append(f"{name}: classes' {key} add up to "
                               f"{sum(c[key] for c in classes_)}, direction has {d[key]}")
            for cause, n in d["dropped"].items():
                if cause in DATAPLANE_CAUSES:
                    continue
                if sum(c["dropped"].get(cause, 0) for c in classes_) != n:
                    bad.append(f"{name}: classes' {cause} drops do not add up to {n}")
            for ev, n in d["events"].items():
                if sum(c["events"].get(ev, 0) for c in classes_) != n:
                    bad.append(f"{name}: classes' {ev} events do not add up to {n}")
    if final.get("conserved") is not True:
        bad.append(f"the daemon reports conserved={final.get('conserved')}")
    return bad


class Link:
    """One linkemud run on the bed, started with `linkemu run --detach`."""

    def __init__(self, bed: Bed, a2b: str | None = "", b2a: str | None = "",
                 extra: tuple[str, ...] = (), classes: bool = True):
        """a2b/b2a None: the option is left out (e.g. to take a --profile's).
        classes: stop() also checks that the classes add up to the direction."""
        self.bed, self.a2b, self.b2a, self.extra = bed, a2b, b2a, extra
        self.classes = classes
        self.final: dict | None = None
        self.steal = StealWatch()
        links = [w for opt, v in (("--a2b", a2b), ("--b2a", b2a)) if v is not None
                 for w in (opt, v)]
        cp = linkemu("run", "--bed", bed.name, *links, "--detach", *extra)
        if cp.returncode != 0:
            raise AssertionError(f"linkemu run --a2b {a2b!r} --b2a {b2a!r} {' '.join(extra)} "
                                 f"failed ({cp.returncode}): {cp.stderr.strip()}")
        assert control.socket_path(bed.name).exists(), \
            "linkemud is ready but has no control socket"

    def client(self, timeout: float = 5.0) -> control.ControlClient:
        """A connected client of the daemon's control socket."""
        return control.connect_bed(self.bed, timeout, wait_s=5.0)

    def stop_unchecked(self) -> dict:
        """Stop and return the final JSON without the conservation checks
        (for a test that checks one thing itself, to say what is wrong)."""
        if self.final is None:
            cp = linkemu("stop", "--bed", self.bed.name, "--json")
            assert cp.stdout.strip(), f"stop failed ({cp.returncode}): {cp.stderr}"
            self.final = json.loads(cp.stdout)
            # The kit's, not linkemud's: what the host took meanwhile
            # (quiet.require_vcpus).
            self.final["kit"] = {"steal_pct": self.steal.pct()}
        return self.final

    def stop(self) -> dict:
        """Stop; the final JSON, after checking conservation (every run)."""
        fresh = self.final is None
        final = self.stop_unchecked()
        if fresh:
            bad = conservation(final, classes=self.classes)
            assert not bad, "after stop: " + "; ".join(bad)
        return final


# --- the fixtures ---------------------------------------------------------------------------

_SUITE_BEDS: dict[Path, str] = {}


def suite_bed(test_file: str) -> str:
    """The bed name of the suite test_file belongs to (its folder's, or an
    enclosing folder's, conftest.py called bed_fixtures)."""
    for d in Path(test_file).resolve().parents:
        if d in _SUITE_BEDS:
            return _SUITE_BEDS[d]
    raise LookupError(f"{test_file}: no conftest.py above it calls bed_fixtures()")


def suite_bed_name(name: str) -> str:
    """The bed a suite uses: its own name, or the one LINKEMU_TEST_BEDS
    maps it to ("lt=lq,lm=lr"), so that a second run of a suite (e.g. on
    the other data plane) can use a bed of its own beside the usual one."""
    for pair in filter(None, os.environ.get("LINKEMU_TEST_BEDS", "").split(",")):
        old, sep, new = pair.partition("=")
        if not sep or not new.strip():
            raise RuntimeError(f"LINKEMU_TEST_BEDS: '{pair}' is not SUITE_BED=BED")
        if old.strip() == name:
            return new.strip()
    return name


def _hold_bed(name: str):
    """Hold the bed for this session: a second test session on the same bed
    (another checkout's `make test`, a suite run by hand) would tear it
    down under us; it waits here instead. The lock is the open file: it
    goes when the session closes it, or when the process dies."""
    f = open(f"/tmp/linkemu-bed-{name}.session.lock", "w")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print(f"\nbed '{name}' is in use by another test session: waiting for it", flush=True)
        fcntl.flock(f, fcntl.LOCK_EX)
    return f


def bed_fixtures(name: str, conftest_file: str, bed_built: bool = False,
                 classes_add_up: bool = True):
    """The fixtures of the suite in conftest_file's folder, whose bed is
    `name` (see the module's doc); assign them in that conftest.py so pytest
    finds them there. bed_built: `bed` is `bed_up` (a suite whose every
    test wants the bed built). classes_add_up: every Link's stop() checks
    that its classes add up to the direction (conservation(classes=...))."""
    name = suite_bed_name(name)
    testbed.bed_for(name)           # a bad name fails here, at collection
    _SUITE_BEDS[Path(conftest_file).resolve().parent] = name

    @pytest.fixture(scope="session", name="bed_session")
    def bed_session():
        need(*bed_usable())
        b = testbed.bed_for(name)
        lock = _hold_bed(name)
        _kill_bed_processes(name)
        testbed.down(b)
        try:
            yield b
        finally:
            # Every test stops what it started: a process of the bed still
            # running now is a leak, and so is anything `down` cannot remove.
            left = [p for p in bed_processes(name)]
            _kill_bed_processes(name)
            testbed.down(b)
            left += leftovers(name)
            lock.close()
            if left:
                pytest.fail(f"left behind on bed '{name}' after the session: {left}")

    def build(b: Bed) -> Bed:
        """The bed, built (a test that took it down leaves it down:
        rebuild); no daemon of an earlier test may be running."""
        if not testbed.status(b)["up"]:
            testbed.up(b)
        assert testbed.daemon_pid(b) is None, "a linkemud from an earlier test is running"
        return b

    @pytest.fixture(name="bed")
    def bed(bed_session):
        return build(bed_session) if bed_built else bed_session

    @pytest.fixture(name="bed_up")
    def bed_up(bed_session):
        return build(bed_session)

    @pytest.fixture(name="run_link")
    def run_link(bed_up, linkemud_bin):
        links: list[Link] = []

        def start(a2b: str | None = "", b2a: str | None = "", *extra: str) -> Link:
            link = Link(bed_up, a2b, b2a, extra, classes=classes_add_up)
            links.append(link)
            return link

        yield start
        errors = []
        for link in links:
            if link.final is None:
                try:
                    link.stop()
                except AssertionError as e:
                    errors.append(str(e))
        if testbed.daemon_pid(bed_up) is not None:       # never leave one running
            linkemu("stop", "--bed", name)
        assert not errors, errors

    return bed_session, bed, bed_up, run_link
