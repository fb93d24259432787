"""`linkemu lab cellular --quick` and `linkemu units run` on bed lx."""

from __future__ import annotations

import fcntl
import json

import pytest

from linkemu.lab import results

from .conftest import BED, linkemu

LOCK = f"/tmp/linkemu-bed-{BED}.lock"


@pytest.fixture(scope="module")
def bed_lock(bed):
    """One user of bed lx at a time on a shared machine."""
    with open(LOCK, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield bed


@pytest.fixture(scope="module")
def quick(bed_lock, tmp_path_factory):
    out = tmp_path_factory.mktemp("cell") / "cell.json.gz"
    html = out.with_name("cell.html")
    cp = linkemu("lab", "cellular", "--quick", "--bed", BED, "-o", str(out), "--report",
                 str(html), timeout=600)
    return {"cp": cp, "path": out, "html": html}


def test_quick_writes_a_valid_results_file_and_report(quick):
    assert quick["path"].exists(), quick["cp"].stderr
    res = results.load(quick["path"])          # schema-checked
    assert res["experiment"] == "cellular" and res["metadata"]["mode"] == "quick"
    ids = [r["id"] for r in res["runs"]]
    assert ids == ["overhead-udp", "fixed-udp", "fixed-tcp", "fixed-quic"]
    text = quick["html"].read_text()
    assert "quick checks over a fixed delay 20ms link" in text and "<img" in text


def test_quick_checks_hold(quick):
    res = results.load(quick["path"])
    failed = [f"{c['name']}: {c['detail']}" for c in res["summary"]["checks"] if not c["pass"]]
    assert not failed, "\n".join(failed)
    assert quick["cp"].returncode == 0, quick["cp"].stderr


def test_units_run_on_a_running_bed(bed_lock):
    cp = linkemu("run", "--bed", BED, "--a2b", "delay 5ms", "--b2a", "delay 5ms", "--detach",
                 timeout=120)
    assert cp.returncode == 0, cp.stderr
    try:
        for proto in ("udp", "tcp", "quic"):
            cp = linkemu("units", "run", "--bed", BED, "--proto", proto, "--count", "500",
                         "--delay", "5ms", "--json", timeout=300)
            assert cp.returncode == 0, cp.stderr
            s = json.loads(cp.stdout)["server"]
            assert s["received"] == s["expected"] == 500
            assert s["latency_ns"]["min"] >= 5_000_000     # never before the link's delay
            assert s["band"]["lo_ns"] == 6_000_000 and s["band"]["hi_ns"] == 15_000_000
    finally:
        stop = linkemu("stop", "--bed", BED, timeout=120)
        linkemu("testbed", "down", "--bed", BED, timeout=120)
    assert stop.returncode == 0, stop.stderr


def test_units_run_without_a_bed_says_so(bed_lock):
    cp = linkemu("units", "run", "--bed", BED, "--proto", "udp", timeout=60)
    assert cp.returncode == 1 and "is not up" in cp.stderr


@pytest.mark.parametrize("args, words", [
    (["--links", "cell-9g"], "unknown link(s) cell-9g"),
    (["--protos", "sctp"], "unknown sctp"),
    (["--unit-runs", "0"], "--unit-runs"),
])
def test_lab_cellular_bad_options_refused_before_anything(bed_lock, args, words):
    cp = linkemu("lab", "cellular", *args, "--bed", BED, timeout=60)
    assert cp.returncode == 2 and words in cp.stderr, cp.stderr
