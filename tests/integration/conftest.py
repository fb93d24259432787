"""Integration tests on a real test bed (namespaces, veths, linkemud).

They need root and working `ip netns`; without them everything is skipped
with the reason. All tests share one bed named "lt", so they never touch a
user's default bed, and it is removed at the end even when tests fail; a
last check fails the session if any lt-* namespace or veth, or any linkemud
process, is left behind.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))

from linkemu import netns, paths, procs, testbed  # noqa: E402

BED = "lt"

_usable: tuple[bool, str] | None = None


def _check_usable() -> tuple[bool, str]:
    global _usable
    if _usable is None:
        if os.geteuid() != 0:
            _usable = (False, "integration tests need root (namespaces, veths, hugepages)")
        else:
            _usable = netns.netns_usable()
    return _usable


def pytest_collection_modifyitems(config, items):
    ok, why = _check_usable()
    if not ok:
        skip = pytest.mark.skip(reason=why)
        for item in items:
            item.add_marker(skip)


def cli_env() -> dict:
    """Run the CLI from this checkout whether or not it is pip-installed."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO / "python") + (os.pathsep + env["PYTHONPATH"]
                                                 if env.get("PYTHONPATH") else "")
    return env


def linkemu(*args: str, timeout: float = 120,
            env: dict | None = None) -> subprocess.CompletedProcess[str]:
    """`linkemu ARGS` as a user would run it; never raises on exit codes.
    env: extra environment variables."""
    return subprocess.run([sys.executable, "-m", "linkemu", *args], capture_output=True,
                          text=True, timeout=timeout, env={**cli_env(), **(env or {})})


def leftovers(bed: str = BED) -> list[str]:
    """Everything of the bed that should be gone after `down`."""
    b = testbed.bed_for(bed)
    found = [f"namespace {n}" for n in netns.ns_list() if n.startswith(f"{bed}-")]
    found += [f"link {d}" for d in os.listdir("/sys/class/net") if d.startswith(f"{bed}-")]
    found += [f"linkemud pid {p}" for p in procs.find_linkemud(b.file_prefix)]
    if paths.bed_run_dir(bed).exists():
        found.append(f"dir {paths.bed_run_dir(bed)}")
    if (paths.DPDK_RUN_ROOT / b.file_prefix).exists():
        found.append(f"dir {paths.DPDK_RUN_ROOT / b.file_prefix}")
    found += [f"file {f}" for f in Path("/dev/hugepages").glob(f"{b.file_prefix}map_*")]
    return found


@pytest.fixture(scope="session", autouse=True)
def no_leaks():
    """Runs last (set up first): the whole session must leave nothing."""
    if not _check_usable()[0]:
        yield
        return
    yield
    b = testbed.bed_for(BED)
    # Every daemon this session starts runs with the bed's file prefix, so
    # leftovers() sees any that survived; other linkemud processes on the
    # machine (someone else's) are none of our business.
    left = leftovers()
    testbed.down(b)       # leave the machine clean even when failing
    if left:
        pytest.fail(f"left behind after the session: {left}")


@pytest.fixture(scope="session")
def bed(no_leaks):
    """The session's bed: clean slate at start, removed at the end even if
    tests failed (a yield fixture's teardown always runs)."""
    b = testbed.bed_for(BED)
    testbed.down(b)
    try:
        yield b
    finally:
        testbed.down(b)


@pytest.fixture
def bed_up(bed):
    """The bed, built (tests that tear it down leave it down: rebuild)."""
    cp = linkemu("testbed", "up", "--bed", BED, "--json")
    assert cp.returncode == 0, cp.stderr
    return bed


@pytest.fixture(scope="session")
def linkemud_bin():
    p = paths.find_linkemud()
    if p is None:
        # Under CI a missing daemon is a failure: the suite must not pass by skipping.
        missing = pytest.fail if os.environ.get("CI") == "true" else pytest.skip
        missing("linkemud is not built (meson setup build && ninja -C build), or set LINKEMUD")
    return p


class Link:
    """A running linkemud on the bed; stop() returns its final JSON after
    checking what must hold after every run."""

    def __init__(self, bed: testbed.Bed):
        self.bed = bed
        self.final: dict | None = None

    def stop(self) -> dict:
        if self.final is not None:
            return self.final
        cp = linkemu("stop", "--bed", self.bed.name, "--json")
        assert cp.returncode == 0, f"stop failed ({cp.returncode}): {cp.stderr}"
        self.final = json.loads(cp.stdout)
        check_final(self.final)
        return self.final


def check_final(final: dict) -> None:
    """After every run: frame conservation in both directions, nothing left in
    flight, and frames that were in flight at shutdown counted as such."""
    for name in ("a2b", "b2a"):
        d = final["directions"][name]
        assert d["in_flight"] == 0, f"{name}: {d['in_flight']} frames still in flight"
        assert "shutdown" in d["dropped"], f"{name}: no 'shutdown' drop cause"
        assert sum(d["dropped"].values()) == d["dropped_total"], d
        assert d["rx"] == d["tx"] + d["dropped_total"] + d["in_flight"], (
            f"{name}: conservation violated: {d}")
    assert final["conserved"] is True


@pytest.fixture
def run_link(bed_up, linkemud_bin):
    """run_link(a2b, b2a, *extra) -> Link; every link is stopped (and checked)
    at the end of the test even if the test failed."""
    links: list[Link] = []

    def start(a2b: str = "", b2a: str = "", *extra: str) -> Link:
        cp = linkemu("run", "--bed", BED, "--a2b", a2b, "--b2a", b2a, "--detach", *extra)
        assert cp.returncode == 0, f"run failed ({cp.returncode}): {cp.stderr}"
        link = Link(bed_up)
        links.append(link)
        return link

    yield start
    for link in links:
        if link.final is None:
            link.stop()
