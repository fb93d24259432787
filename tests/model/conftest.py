"""The link model on the real test bed: every word of the grammar, run by
`linkemu run` on a bed named "lm", checked against what the traffic tools
see and against the daemon's own counters.

They need root and working `ip netns` (skipped with the reason otherwise).
The bed is removed at the end even when tests fail, and the session fails
if any lm-* namespace or veth, linkemud or runtime file is left behind.
Statistical tests use fixed seeds; each bound is derived in a comment.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .lmkit import BED, Link, linkemu, mean, probe, sd  # noqa: F401  (sets sys.path)

from linkemu import netns, paths, procs, testbed  # noqa: E402

_usable: tuple[bool, str] | None = None


def _check_usable() -> tuple[bool, str]:
    global _usable
    if _usable is None:
        if os.geteuid() != 0:
            _usable = (False, "model tests need root (namespaces, veths, hugepages)")
        elif paths.find_linkemud() is None:
            _usable = (False, "linkemud is not built (meson setup build && ninja -C build)")
        else:
            _usable = netns.netns_usable()
    return _usable


def pytest_collection_modifyitems(config, items):
    ok, why = _check_usable()
    if ok:
        return
    here = Path(__file__).resolve().parent
    # Under CI a missing daemon fails every test instead of skipping it.
    if os.environ.get("CI") == "true" and why.startswith("linkemud is not built"):
        mark = pytest.mark.usefixtures("_fail_without_linkemud")
    else:
        mark = pytest.mark.skip(reason=why)
    for item in items:
        if Path(str(item.fspath)).resolve().parent == here:
            item.add_marker(mark)


@pytest.fixture
def _fail_without_linkemud():
    pytest.fail(_check_usable()[1])


def leftovers() -> list[str]:
    b = testbed.bed_for(BED)
    found = [f"namespace {n}" for n in netns.ns_list() if n.startswith(f"{BED}-")]
    found += [f"link {d}" for d in os.listdir("/sys/class/net") if d.startswith(f"{BED}-")]
    found += [f"linkemud pid {p}" for p in procs.find_linkemud(b.file_prefix)]
    if paths.bed_run_dir(BED).exists():
        found.append(f"dir {paths.bed_run_dir(BED)}")
    if (paths.DPDK_RUN_ROOT / b.file_prefix).exists():
        found.append(f"dir {paths.DPDK_RUN_ROOT / b.file_prefix}")
    found += [f"file {f}" for f in Path("/dev/hugepages").glob(f"{b.file_prefix}map_*")]
    return found


@pytest.fixture(scope="session")
def lm_session():
    """Set up first, torn down last: the bed goes away even when tests
    fail, and the session fails if anything of it survived `down`."""
    if not _check_usable()[0]:
        pytest.skip(_check_usable()[1])
    b = testbed.bed_for(BED)
    testbed.down(b)
    try:
        testbed.up(b)
        yield b
    finally:
        testbed.down(b)
        left = leftovers()
        if left:
            pytest.fail(f"left behind after the model tests: {left}")


@pytest.fixture
def bed(lm_session):
    """The bed, rebuilt if a test took it down; no daemon may be running."""
    if not testbed.status(lm_session)["up"]:
        testbed.up(lm_session)
    assert testbed.daemon_pid(lm_session) is None, "a linkemud from an earlier test is running"
    return lm_session


@pytest.fixture
def run_link(bed):
    """run_link(a2b, b2a="", *extra) -> Link; whatever a test started is
    stopped (and its conservation checked) at the end, even on failure."""
    links: list[Link] = []

    def start(a2b: str = "", b2a: str = "", *extra: str) -> Link:
        link = Link(bed, a2b, b2a, extra)
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
    if testbed.daemon_pid(bed) is not None:       # never leave one running
        linkemu("stop", "--bed", BED)
    assert not errors, errors


@pytest.fixture(scope="session")
def path_owd(lm_session):
    """The bed's own one-way delay through an unimpaired linkemud (ms):
    mean, sd, p99 of 1000 probe datagrams. Bounds on emulated delays add
    this, because the probe measures emulated delay + the path."""
    link = Link(lm_session, "", "", ())
    try:
        r = probe(lm_session, count=1000, rate=1000, port=9001)
    finally:
        link.stop()
    assert r.received == 1000, f"an unimpaired link lost {r.lost} datagrams"
    owd = sorted(r.owd_ms())
    return {"mean": mean(owd), "sd": sd(owd), "p50": owd[len(owd) // 2],
            "p99": owd[int(len(owd) * 0.99)]}
