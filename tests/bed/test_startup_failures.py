"""Every way linkemud can fail after EAL started ends in a clear message
and an exit status (2: bad input, 1: the environment), never in a crash,
and leaves nothing behind (issue 13, item 2).

Each case runs linkemud on two net_null ports with --in-memory (no files,
no namespaces): the failure is provoked by a real condition where one can
be made on demand (too few lcores for a layout, a hugepage budget too
small for the mbuf pool, an unusable control socket path), else by the
test-only switch LINKEMUD_TEST_FAULT (src/dataplane/fault.h: a TSC that
disagrees with the clock, a link that cannot be built after the check,
a port that refuses to start)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import uuid
from pathlib import Path

import pytest

from kit.vdev import clean_run_dir
from linkemu.bed import procs

# Needs root and hugepages, not a bed: linkemud runs on net_null ports.
pytestmark = pytest.mark.needs_root

EAL = ["--no-pci", "--in-memory", "--vdev=net_null0", "--vdev=net_null1", "--log-level=lib.eal:error"]

CASES = {
    # name: (EAL extra, linkemud options, LINKEMUD_TEST_FAULT, status, message)
    "layout": (["-l", "0"], ["--layout", "pipeline"], None, 2,
               "linkemud: layout pipeline needs 6 lcores (RX, worker and TX per direction), "
               "EAL was given 1"),
    "mbuf-pool": (["-l", "0", "--socket-limit=128"], ["--max-limit", "200000", "--no-compact"], None, 1,
                  "linkemud: cannot allocate 1208320 mbufs"),
    "tsc": (["-l", "0"], [], "tsc", 1, "linkemud: TSC calibration failed"),
    "link": (["-l", "0"], ["--a2b", "delay 1ms"], "link", 2,
             "linkemud: a2b: cannot build the link (test fault 'link')"),
    "port-start": (["-l", "0"], [], "port-start", 1,
                   "linkemud: port 1: start failed (test fault 'port-start')"),
    "control-socket": (["-l", "0"], ["--control", "/proc/linkemu-none/ctl.sock"], None, 1,
                       "linkemud: control socket: cannot create /proc/linkemu-none"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_start_failure_is_clean(case, linkemud_bin, tmp_path):
    eal, opts, fault, status, message = CASES[case]
    prefix = f"dpfail-{uuid.uuid4().hex[:8]}"
    if "--control" not in opts:
        opts = opts + ["--no-control"]
    env = dict(os.environ)
    env.pop("LINKEMUD_TEST_FAULT", None)
    if fault:
        env["LINKEMUD_TEST_FAULT"] = fault
    argv = [str(linkemud_bin), *eal, *EAL, f"--file-prefix={prefix}", "--",
            "--stats-file", str(tmp_path / "final.json"), *opts]
    run_dir = Path(f"/var/run/dpdk/{prefix}")
    try:
        _run_and_check(case, argv, env, status, message, prefix, run_dir, tmp_path)
    finally:
        # EAL leaves its runtime directory even after a clean exit; an
        # empty one is removed here whatever the outcome, a full one kept
        # (and reported by the check above).
        clean_run_dir(prefix)


def _run_and_check(case, argv, env, status, message, prefix, run_dir, tmp_path):
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        out, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        # A start that should have failed reached "ready" (or hung): stop it.
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
        pytest.fail(f"{case}: linkemud did not fail: {out[-500:]} {err[-500:]}")
    assert p.returncode == status, f"{case}: exit {p.returncode} (want {status}): {err}"
    assert message in err, err
    assert "ready" not in out, out
    # Nothing else on stderr that looks like a crash or a second error.
    ours = [l for l in err.splitlines() if l.startswith("linkemud:")]
    assert ours and ours[0].startswith(message), ours
    assert not any(w in err for w in ("Segmentation", "Aborted", "BUG")), err
    # Nothing left: no process of this prefix, no runtime files, no socket,
    # no report (it never ran).
    assert procs.find_linkemud(prefix) == []
    assert not run_dir.exists() or not list(run_dir.iterdir()), list(run_dir.iterdir())
    assert not list(Path("/dev/hugepages").glob(f"{prefix}*"))
    assert not (tmp_path / "final.json").exists()


def _dpdk_linked_in(binary: Path) -> bool:
    """Whether this linkemud has DPDK inside (meson -Ddpdk_linkage=static)
    rather than loading its shared libraries."""
    ldd = subprocess.run(["ldd", str(binary)], capture_output=True, text=True).stdout
    return "librte_eal" not in ldd


@pytest.mark.parametrize("where", ["eal", "ports"])
def test_a_device_without_a_driver_names_the_drivers_inside(linkemud_bin, tmp_path, where):
    # A static build carries a fixed set of drivers: a user whose device
    # needs another must learn which ones are inside and how to get the
    # rest, whether EAL refuses the device word (an unknown vdev) or finds
    # no port (a PCI NIC no driver claimed; here: no device at all).
    prefix = f"dpfail-{uuid.uuid4().hex[:8]}"
    devices = ["--no-pci", "--vdev=net_nosuchdriver0", "--vdev=net_null1"] if where == "eal" else ["--no-pci"]
    argv = [str(linkemud_bin), "-l", "0", "--in-memory", "--log-level=lib.eal:error", *devices,
            f"--file-prefix={prefix}", "--", "--no-control", "--stats-file", str(tmp_path / "final.json")]
    try:
        cp = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    finally:
        clean_run_dir(prefix)
    # EAL's refusal is the environment's (1); too few ports, the command line's (2).
    assert cp.returncode == (1 if where == "eal" else 2), cp.stderr
    first = "EAL initialisation failed" if where == "eal" else "2 ports to bridge are needed, EAL found 0"
    assert first in cp.stderr, cp.stderr
    hint = "this linkemud has DPDK linked in with the drivers"
    if _dpdk_linked_in(linkemud_bin):
        assert hint in cp.stderr and "net_af_xdp" in cp.stderr and "-Ddpdk_linkage=shared" in cp.stderr, cp.stderr
    else:
        assert hint not in cp.stderr, cp.stderr


def _mbufs_refused(linkemud_bin: Path, opts: list[str]) -> int:
    """How many mbufs linkemud asked for when a 128 MiB socket limit
    refused its pool."""
    prefix = f"dpfail-{uuid.uuid4().hex[:8]}"
    argv = [str(linkemud_bin), "-l", "0", "--socket-limit=128", *EAL, f"--file-prefix={prefix}", "--",
            "--no-control", *opts]
    try:
        cp = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    finally:
        clean_run_dir(prefix)
    m = re.search(r"linkemud: cannot allocate (\d+) mbufs", cp.stderr)
    assert cp.returncode == 1 and m, cp.stderr
    return int(m.group(1))


def test_pool_counts_the_compact_stores_spare_mbufs(linkemud_bin):
    # With the compact store, each direction keeps up to 2 x DP_BURST_MAX
    # (1024) mbufs of frames it copied, to carry the next compact frames
    # out (dp_direction.spare, fastpath.c); they come from the pool. With
    # the same mbufs for held frames (3 x 200000 per direction), the pool
    # with the store is larger than without by exactly those.
    without = _mbufs_refused(linkemud_bin, ["--max-limit", "200000", "--no-compact"])
    with_store = _mbufs_refused(linkemud_bin, ["--max-limit", "200000", "--held-mbufs", "600000"])
    assert with_store - without == 2 * 1024, (with_store, without)
