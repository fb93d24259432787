"""Tests of the control side: ctl, stats --watch, capture, scenarios.

Two kinds:
- unit tests (no root, no DPDK): the client against a fake control server,
  scenario files, the watch view, the pcapng reader;
- live tests on a real bed named "lc" (root, namespaces, a built linkemud
  with --control). They skip, with the reason, where that is missing. The
  bed is removed at the end of the session even when tests fail, and the
  session fails if anything of it is left behind (namespaces, veths, a
  linkemud, a scenario player, a dpdk-dumpcap, runtime files).
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lckit import BED, linkemu  # noqa: E402

from linkemu import control, netns, paths, procs, testbed  # noqa: E402
from linkemu.summary import conservation_problems  # noqa: E402

_usable: tuple[bool, str] | None = None


@pytest.fixture(autouse=True)
def _signals_as_they_were():
    """Tests that call cli.main() in this process get its signal set-up
    (SIGPIPE at its default, for `linkemu ... | head`): give the next test
    the handlers it started with."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGPIPE, signal.SIGINT, signal.SIGTERM,
                                               signal.SIGHUP)}
    yield
    for s, h in saved.items():
        signal.signal(s, h)


def _check_usable() -> tuple[bool, str]:
    global _usable
    if _usable is None:
        if os.geteuid() != 0:
            _usable = (False, "live control tests need root (namespaces, veths, hugepages)")
        else:
            _usable = netns.netns_usable()
    return _usable


def _bed_processes(bed: str) -> list[str]:
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


def leftovers(bed: str = BED) -> list[str]:
    b = testbed.bed_for(bed)
    found = [f"namespace {n}" for n in netns.ns_list() if n.startswith(f"{bed}-")]
    found += [f"link {d}" for d in os.listdir("/sys/class/net") if d.startswith(f"{bed}-")]
    found += _bed_processes(bed)
    if paths.bed_run_dir(bed).exists():
        found.append(f"dir {paths.bed_run_dir(bed)}")
    if (paths.DPDK_RUN_ROOT / b.file_prefix).exists():
        found.append(f"dir {paths.DPDK_RUN_ROOT / b.file_prefix}")
    found += [f"file {f}" for f in Path("/dev/hugepages").glob(f"{b.file_prefix}map_*")]
    return found


def _kill_bed_processes(bed: str) -> None:
    """Players and dumpcaps of our bed (linkemud is testbed.down's job)."""
    for entry in _bed_processes(bed):
        if not entry.startswith("linkemud"):
            procs.terminate(int(entry.rsplit(" ", 1)[1]), 3.0)


@pytest.fixture(scope="session")
def bed():
    """The session's bed "lc": clean slate at start, removed at the end even
    if tests failed; the session fails if anything of it is left."""
    ok, why = _check_usable()
    if not ok:
        pytest.skip(why)
    b = testbed.bed_for(BED)
    _kill_bed_processes(BED)
    testbed.down(b)
    try:
        yield b
    finally:
        # Every test stops what it started: a process of the bed still
        # running now is a leak, and so is anything `down` cannot remove.
        left = _bed_processes(BED)
        _kill_bed_processes(BED)
        testbed.down(b)
        left += leftovers()
        if left:
            pytest.fail(f"left behind by the control tests: {left}")


@pytest.fixture
def bed_up(bed):
    cp = linkemu("testbed", "up", "--bed", BED, "--json")
    assert cp.returncode == 0, cp.stderr
    return bed


@pytest.fixture(scope="session")
def linkemud_bin():
    p = paths.find_linkemud()
    if p is None:
        # Under CI a missing daemon is a failure: the suite must not pass by skipping.
        missing = pytest.fail if os.environ.get("CI") == "true" else pytest.skip
        missing("linkemud is not built (meson setup build && ninja -C build)")
    return p


@pytest.fixture(scope="session")
def control_bin(linkemud_bin):
    """linkemud, which has the control socket: a build whose `--help` no
    longer names --control is a regression, not a reason to skip."""
    assert control.daemon_supports(linkemud_bin, "--control"), \
        f"{linkemud_bin} --help does not name --control"
    return linkemud_bin


def check_final(final: dict) -> None:
    """After every run: conservation in both directions, nothing in flight."""
    problems = conservation_problems(final)
    assert not problems, problems
    for name in ("a2b", "b2a"):
        d = final["directions"][name]
        assert d["in_flight"] == 0, f"{name}: {d['in_flight']} frames still in flight"
        assert d["rx"] == d["tx"] + d["dropped_total"], d
    assert final["conserved"] is True


class Link:
    def __init__(self, bed):
        self.bed = bed
        self.final: dict | None = None

    def client(self, timeout: float = 5.0) -> control.ControlClient:
        return control.connect_bed(self.bed, timeout, wait_s=5.0)

    def stop(self) -> dict:
        if self.final is None:
            cp = linkemu("stop", "--bed", self.bed.name, "--json")
            assert cp.returncode == 0, f"stop failed ({cp.returncode}): {cp.stderr}"
            self.final = json.loads(cp.stdout)
            check_final(self.final)
        return self.final


@pytest.fixture
def run_link(bed_up, control_bin):
    """run_link(a2b, b2a, *extra) -> Link: linkemud with its control socket;
    stopped (and its final counters checked) at the end of the test."""
    links: list[Link] = []

    def start(a2b: str = "", b2a: str = "", *extra: str) -> Link:
        cp = linkemu("run", "--bed", BED, "--a2b", a2b, "--b2a", b2a, "--detach", *extra)
        assert cp.returncode == 0, f"run failed ({cp.returncode}): {cp.stderr}"
        link = Link(bed_up)
        links.append(link)
        assert control.socket_path(BED).exists(), "linkemud is ready but has no control socket"
        return link

    yield start
    for link in links:
        if link.final is None:
            link.stop()
