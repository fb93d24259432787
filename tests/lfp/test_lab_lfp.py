"""`linkemu lab lfp --quick` on the suite's bed, as CI runs it: it exits 0
only when what physics fixes holds (region 1 within 10 % of 8W/RTT, the
plateau within 10 % of the payload rate, the BPF algorithms load and carry
traffic where the kernel allows); its results file validates and renders;
bad options are refused before anything is built."""

from __future__ import annotations

import pytest

from kit import linkemu, require_alone, suite_bed
from linkemu.bed import bpfcc
from linkemu.instruments import tcpcap
from linkemu.lab import results

BED = suite_bed(__file__)
pytestmark = pytest.mark.usefixtures("bed_session")


@pytest.fixture(scope="module")
def quick(tools, tmp_path_factory):
    d = tmp_path_factory.mktemp("lfp")
    out, html = d / "lfp.json.gz", d / "lfp.html"
    before = set(bpfcc.registered())
    cp = linkemu("lab", "lfp", "--quick", "--bed", BED, "-o", str(out), "--report", str(html),
                 timeout=600)
    return {"cp": cp, "out": out, "html": html, "before": before}


def test_quick_passes_its_physics_checks(quick):
    cp = quick["cp"]
    assert cp.returncode == 0, f"lab lfp --quick failed ({cp.returncode}):\n{cp.stdout[-3000:]}" \
                               f"\n{cp.stderr[-2000:]}"
    res = results.load(quick["out"])
    require_alone(res["link_final"], "lab lfp physics checks")
    why = res["summary"]["unresolved"]
    if why:
        # the lab measured the bed's RTT with ping around the sweep: a
        # machine that stretches it by more than 10 % cannot resolve a 10 %
        # check (the kit's rule: skip the timing verdict, never loosen it)
        pytest.skip(f"timing checks not made: {why}; the rest passed")
    timing = [c for c in res["summary"]["checks"] if c["expected_mbps"] is not None]
    assert timing and all(c["ok"] for c in timing), timing


def test_results_file_and_report(quick):
    res = results.load(quick["out"])
    assert res["experiment"] == "lfp"
    checks = res["summary"]["checks"]
    assert any(c["region"].startswith("region 1") for c in checks)
    assert any(c["region"].startswith("plateau") for c in checks)
    assert len(res["table2"]) == 3
    a = res["anatomy"]
    assert a["t_s"]
    if tcpcap.available() is None:       # the capture of the anatomy's run
        assert a["capture"]["packets"] > 0 and a["capture"]["seq_bytes"]
        assert a["capture"]["ack_bytes"][-1] <= a["capture"]["seq_bytes"][-1] + 1
    html = quick["html"].read_text()
    assert "Window vs throughput" in html or "Throughput vs window" in html


def test_bpf_algorithms_checked_where_the_kernel_allows(quick):
    res = results.load(quick["out"])
    by = {b["name"]: b for b in res["bpf"]}
    assert set(by) == {"lfp_fixed", "lfp_adapt"}
    why = bpfcc.unsupported()
    for b in by.values():
        assert b["loaded"] == (why is None), b
    # the lab unloads what it loaded
    assert set(bpfcc.registered()) == quick["before"]


def test_bad_options_are_refused():
    for args, word in ((["--windows", "0"], "--windows"), (["--senders", "vegas"], "--senders"),
                       (["--runs", "0"], "--runs")):
        cp = linkemu("lab", "lfp", "--bed", BED, *args)
        assert cp.returncode == 2 and word in cp.stderr, cp.stderr
