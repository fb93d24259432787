"""`linkemu lab forwarding --quick` on bed lg: a valid results file and a
report with Table 8; every path forwards (UDP, TCP, ping); each daemon's
final report conserves frames; and, where punt is built, the SWC ratio
checks (one-sided Welch t-tests on the interleaved rounds; a verdict
unless another linkemud shared the machine)."""

from __future__ import annotations


import pytest

from kit import linkemu, require_alone, suite_bed
from linkemu.lab import results

BED = suite_bed(__file__)


@pytest.fixture(scope="module")
def quick(bed_session, tmp_path_factory):
    # bed_session holds bed lg for this session (the kit's lock).
    out = tmp_path_factory.mktemp("fwd") / "fwd.json.gz"
    html = out.with_name("fwd.html")
    cp = linkemu("lab", "forwarding", "--quick", "--bed", BED, "-o", str(out), "--report",
                 str(html), timeout=600)
    assert out.exists(), cp.stderr
    return {"cp": cp, "path": out, "html": html, "res": results.load(out)}  # schema-checked


def _checks(res: dict) -> dict:
    return {c["name"]: c for c in res["summary"]["checks"]}


def test_quick_writes_results_and_report(quick):
    res = quick["res"]
    assert res["experiment"] == "forwarding" and res["metadata"]["mode"] == "quick"
    avail = [p["path"] for p in res["paths"] if p["available"]]
    assert avail[:3] == ["direct", "swa", "swb"]
    for p in res["paths"]:
        if not p["available"]:
            assert p["reason"].startswith("not available: "), p
    text = quick["html"].read_text()
    assert "Table 8 layout" in text and "<img" in text


def test_every_path_forwards(quick):
    res = quick["res"]
    c = _checks(res)
    avail = [p["path"] for p in res["paths"] if p["available"]]
    for p in avail:
        assert c[f"{p}: forwards"]["pass"] is True, c[f"{p}: forwards"]["detail"]
    # Each path carried both protocols at 64 B (SWC: UDP only, as in the study).
    for p in avail:
        kinds = {r["kind"] for r in res["runs"] if r["path"] == p}
        assert kinds == ({"udp"} if p.startswith("swc-") else {"udp", "tcp"}), (p, kinds)


def test_conservation_from_each_daemon(quick):
    res = quick["res"]
    daemons = res["daemons"]
    assert {d["path"] for d in daemons} >= {"swa", "swb"}
    failed = [c["detail"] for n, c in _checks(res).items()
              if n.endswith("conservation") and not c["pass"]]
    assert not failed, "\n".join(failed)
    assert all(d["a2b"]["rx"] > 0 for d in daemons)


@pytest.mark.parametrize("name", ["SWC 1 % via fifo >= 0.9x SWB UDP at 64 B",
                                  "SWC 1 % via shm >= 0.9x SWB UDP at 64 B",
                                  "shm not slower than the FIFO (all via IPC, UDP 64 B)"])
def test_swc_ratios(quick, name):
    res = quick["res"]
    gone = [p for p in res["paths"] if p["path"].startswith("swc-") and not p["available"]]
    if gone:
        pytest.skip(f"SWC {gone[0]['reason']}")
    for d in res["daemons"]:
        require_alone(d, f"{name}")
    c = _checks(res)[name]
    if c["pass"] is None:
        pytest.skip(f"{name}: {c['detail']}")
    assert c["pass"], c["detail"]
