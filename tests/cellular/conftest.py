"""Tests of the unit-latency instrument and the cellular lab.

test_units_unit.py and test_profiles_fit.py need no root and no bed
(units over loopback only). test_cellular_bed.py runs `linkemu lab
cellular --quick` and `linkemu units run` on a bed named "lx", which is
always torn down; the session fails if anything of it is left behind.
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

BED = "lx"


def bed_usable() -> tuple[bool, str]:
    if os.geteuid() != 0:
        return False, "needs root (namespaces, veths, hugepages)"
    return netns.netns_usable()


def cli_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO / "python") + (os.pathsep + env["PYTHONPATH"]
                                                 if env.get("PYTHONPATH") else "")
    return env


def linkemu(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "linkemu", *args], capture_output=True,
                          text=True, timeout=timeout, env=cli_env())


def leftovers(bed: str = BED) -> list[str]:
    b = testbed.bed_for(bed)
    found = [f"namespace {n}" for n in netns.ns_list() if n.startswith(f"{bed}-")]
    found += [f"link {d}" for d in os.listdir("/sys/class/net") if d.startswith(f"{bed}-")]
    found += [f"linkemud pid {p}" for p in procs.find_linkemud(b.file_prefix)]
    if paths.bed_run_dir(bed).exists():
        found.append(f"dir {paths.bed_run_dir(bed)}")
    return found


@pytest.fixture(scope="session")
def bed():
    """Bed lx, or skip (fail under CI=true) when this machine cannot build one."""
    ok, why = bed_usable()
    if not ok:
        if os.environ.get("CI") == "true":
            pytest.fail(f"bed {BED} needed: {why}")
        pytest.skip(why)
    if paths.find_linkemud() is None:
        pytest.fail("linkemud not built (make build)")
    testbed.down(testbed.bed_for(BED))
    yield BED
    left = leftovers()
    testbed.down(testbed.bed_for(BED))
    if left:
        pytest.fail(f"left behind after the cellular tests: {left}")
