"""The lab's tests.

test_analysis.py is pure Python (no root, no bed). The others run the
lab's C tools and its --quick experiments on a real test bed named "lb"
(distinct from the integration tests' "lt"), which is always torn down,
even when a test fails; a last check fails the session if any lb-*
namespace or veth, lb daemon, or DPDK file of the bed is left behind.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))

from linkemu import netns, paths, procs, testbed  # noqa: E402

BED = "lb"

_usable: tuple[bool, str] | None = None


def bed_usable() -> tuple[bool, str]:
    global _usable
    if _usable is None:
        if os.geteuid() != 0:
            _usable = (False, "needs root (namespaces, veths, hugepages)")
        else:
            _usable = netns.netns_usable()
    return _usable


def pytest_collection_modifyitems(config, items):
    ok, why = bed_usable()
    if ok:
        return
    skip = pytest.mark.skip(reason=why)
    for item in items:
        if "needs_root" in item.keywords:
            item.add_marker(skip)


def pytest_configure(config):
    config.addinivalue_line("markers", "needs_root: runs tools or a test bed as root")


def cli_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO / "python") + (os.pathsep + env["PYTHONPATH"]
                                                 if env.get("PYTHONPATH") else "")
    return env


def linkemu(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """`linkemu ARGS` as a user runs it; never raises on exit codes."""
    return subprocess.run([sys.executable, "-m", "linkemu", *args], capture_output=True,
                          text=True, timeout=timeout, env=cli_env())


def leftovers(bed: str = BED) -> list[str]:
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
    """Set up first, torn down last: the session must leave nothing of bed lb."""
    if not bed_usable()[0]:
        yield
        return
    testbed.down(testbed.bed_for(BED))
    yield
    left = leftovers()
    testbed.down(testbed.bed_for(BED))
    if left:
        pytest.fail(f"left behind after the lab tests: {left}")


@pytest.fixture(scope="session")
def built():
    """The C tools and the daemon, or skip with how to build them."""
    from linkemu.lab.tools import find_tool
    missing = [t for t in ("owdprobe", "noisefloor") if find_tool(t) is None]
    if paths.find_linkemud() is None:
        missing.append("linkemud")
    if missing:
        # Under CI a missing program is a failure, not a skip.
        (pytest.fail if os.environ.get("CI") == "true" else pytest.skip)(
            f"not built: {', '.join(missing)} (meson setup build && ninja -C build)")
    from linkemu.lab.tools import require_tool
    return {t: require_tool(t) for t in ("owdprobe", "noisefloor")}
