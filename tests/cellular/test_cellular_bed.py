"""`linkemu lab cellular --quick` and `linkemu units run` on bed lx."""

from __future__ import annotations

import json

import pytest

from checks_made import problems
from kit import linkemu, require_alone, suite_bed
from linkemu.lab import results
from linkemu.lab.cellular_quick import CHECK_BASE_MEAN, TIMING

BED = suite_bed(__file__)


@pytest.fixture(scope="module")
def quick(bed_session, tmp_path_factory):
    # bed_session holds bed lx for this session (the kit's lock).
    out = tmp_path_factory.mktemp("cell") / "cell.json.gz"
    html = out.with_name("cell.html")
    cp = linkemu("lab", "cellular", "--quick", "--bed", BED, "-o", str(out), "--report",
                 str(html), timeout=600)
    assert out.exists(), cp.stderr
    return {"cp": cp, "path": out, "html": html, "res": results.load(out)}  # schema-checked


def _checks(res: dict) -> dict:
    return {c["name"]: c for c in res["summary"]["checks"]}


def test_quick_writes_a_valid_results_file_and_report(quick):
    res = quick["res"]
    assert res["experiment"] == "cellular" and res["metadata"]["mode"] == "quick"
    assert [r["id"] for r in res["runs"]] == ["overhead-udp", "fixed-udp", "fixed-tcp",
                                              "fixed-quic"]
    text = quick["html"].read_text()
    assert "quick checks over a fixed delay 20ms link" in text and "<img" in text


# Delivery: at least one check made per protocol. Of UDP's, only "no
# flush before 20 ms" can go unmade (no unit came over the delay), and
# "nothing lost" then fails; TCP's and QUIC's are always made. Fewer made
# means the report lacks a protocol's rows: the test would pass on
# nothing.
DELIVERY_LEAST_MADE = {"UDP:": 1, "TCP:": 1, "QUIC:": 1}
# Timing: the band is not made when linkemud reported no lateness; the
# mean always is. With neither there is no timing verdict to pass.
TIMING_LEAST_MADE = {"UDP:": 1}


def test_quick_delivery(quick):
    """What holds whatever the machine's load: nothing early, nothing lost,
    TCP and QUIC complete and in order. A check not made is not a failure
    (checks_made.py)."""
    c = _checks(quick["res"])
    delivery = [n for n in c if n not in TIMING and n != CHECK_BASE_MEAN]
    failed = problems(c, delivery, DELIVERY_LEAST_MADE)
    assert not failed, "\n".join(failed)


def require_own_cpu(run: dict, what: str) -> None:
    """Skip a timing verdict when linkemud's polling threads waited for
    their CPU during the run (the lab records their schedstat run-queue
    wait): the rule of kit.quiet.CpuWatch.shared, more than 2 ms + 1 ms per
    second (alone, linkemud waits ~0.2 ms per second for kernel threads)."""
    w = run.get("daemon_cpu_wait_ms")
    if w is not None and w > 2 + run["elapsed_s"]:
        pytest.skip(f"{what}: timing not checked, linkemud waited {w:.1f} ms for its CPU in "
                    f"{run['elapsed_s']:.1f} s (shared); the rest passed")


def test_quick_timing(quick):
    """The band and the mean (cellular_quick's model): a verdict only when
    no other linkemud shared the machine, ours had its CPU (the lab records
    both per run), and the baseline stream's mean held, i.e. the machine
    itself did not move the mean by more than the check resolves."""
    res = quick["res"]
    fixed = next(r for r in res["runs"] if r["id"] == "fixed-udp")
    base = next(r for r in res["runs"] if r["id"] == "overhead-udp")
    require_alone(base, "bed overhead")
    require_alone(fixed, "UDP units over delay 20ms")
    require_own_cpu(base, "bed overhead")
    require_own_cpu(fixed, "UDP units over delay 20ms")
    c = _checks(res)
    if not c[CHECK_BASE_MEAN]["pass"]:
        pytest.skip(f"UDP timing: not checked, {c[CHECK_BASE_MEAN]['detail']}")
    failed = problems(c, TIMING, TIMING_LEAST_MADE)
    assert not failed, "\n".join(failed)
    assert quick["cp"].returncode == 0, quick["cp"].stderr


def test_units_run_on_a_running_bed(bed_session, run_link):
    link = run_link("delay 5ms", "delay 5ms")
    for proto in ("udp", "tcp", "quic"):
        cp = linkemu("units", "run", "--bed", BED, "--proto", proto, "--count", "500",
                     "--delay", "5ms", "--json", timeout=300)
        assert cp.returncode == 0, cp.stderr
        s = json.loads(cp.stdout)["server"]
        assert s["received"] == s["expected"] == 500
        assert s["latency_ns"]["min"] >= 5_000_000     # never before the link's delay
        assert s["band"]["lo_ns"] == 6_000_000 and s["band"]["hi_ns"] == 15_000_000
    link.stop()


def test_units_run_without_a_bed_says_so(bed_session):
    linkemu("testbed", "down", "--bed", BED, timeout=120)
    cp = linkemu("units", "run", "--bed", BED, "--proto", "udp", timeout=60)
    assert cp.returncode == 1 and "is not up" in cp.stderr


@pytest.mark.parametrize("args, words", [
    (["--links", "cell-9g"], "unknown link(s) cell-9g"),
    (["--protos", "sctp"], "unknown sctp"),
    (["--unit-runs", "0"], "--unit-runs"),
])
def test_lab_cellular_bad_options_refused_before_anything(bed_session, args, words):
    cp = linkemu("lab", "cellular", *args, "--bed", BED, timeout=60)
    assert cp.returncode == 2 and words in cp.stderr, cp.stderr
