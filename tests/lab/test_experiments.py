"""The --quick experiments on a real test bed ("lb"), as CI runs them:
what must hold of their results, that the results file validates and
renders, that bad options are refused before anything is built, and that
nothing is left behind, also after Ctrl-C."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from kit import cli_env, leftovers, linkemu, require_alone, suite_bed
from linkemu.bed import cpus
from linkemu.instruments import iperf3, owd
from linkemu.lab import results

BED = suite_bed(__file__)

# Every test here runs on (or must leave nothing of) the suite's bed.
pytestmark = pytest.mark.usefixtures("bed_session")


@pytest.fixture(scope="module")
def delay_run(tools, tmp_path_factory):
    d = tmp_path_factory.mktemp("delay")
    out, html = d / "dp.json.gz", d / "dp.html"
    cp = linkemu("lab", "delay-precision", "--quick", "--bed", BED, "-o", str(out),
                 "--report", str(html), timeout=600)
    assert cp.returncode == 0, f"delay-precision --quick failed ({cp.returncode}):\n{cp.stderr}"
    return {"res": results.load(out), "path": out, "html": html, "cp": cp}


@pytest.fixture(scope="module")
def loss_run(tools, tmp_path_factory):
    d = tmp_path_factory.mktemp("loss")
    out, html = d / "la.json", d / "la.html"
    cp = linkemu("lab", "loss-accuracy", "--quick", "--bed", BED, "-o", str(out),
                 "--report", str(html), timeout=600)
    assert cp.returncode == 0, f"loss-accuracy --quick failed ({cp.returncode}):\n{cp.stderr}"
    return {"res": results.load(out), "path": out, "html": html, "cp": cp}


# --- delay-precision ----------------------------------------------------------------

def test_delay_leaves_nothing(delay_run):
    assert leftovers(BED) == []


def test_delay_results_file_and_report(delay_run, tmp_path):
    res = delay_run["res"]                       # results.load validated it against the schema
    assert res["experiment"] == "delay-precision" and res["metadata"]["mode"] == "quick"
    m = res["metadata"]
    assert m["dpdk_version"] and m["kernel"] and m["cpu_model"] and m["seed"] == 1
    html = delay_run["html"].read_text()
    assert html.count("data:image/png;base64,") >= 6 and "Table 2 - DEMU" in html
    # the raw samples beside the results file are the ones the run summarised
    r = res["runs"][0]
    a = owd.read_samples(delay_run["path"].parent / r["samples"]["file"])
    assert a.size == r["stats_ns"]["count"] == r["samples"]["records"]
    # and the file renders again, alone, with `linkemu report`
    cp = linkemu("report", str(delay_run["path"]), "-o", str(tmp_path / "again.html"))
    assert cp.returncode == 0, cp.stderr


def test_delay_noise_floor_measured_on_the_daemon_cpu(delay_run):
    nf = delay_run["res"]["metadata"]["noise_floor"]
    assert nf["daemon_cpu"]["cpu"] == cpus.daemon_cpu()
    assert nf["daemon_cpu"]["reads"] > 1_000_000
    if cpus.tool_cpu_list():
        assert nf["tool_cpu"]["cpu"] == cpus.tool_cpu_list()[0]


def test_delay_never_early_and_accounted(delay_run):
    """No frame leaves before its deadline (min >= inserted), every frame
    the sender sent is accounted for, and the daemon's certificate covers
    every frame it forwarded."""
    for r in delay_run["res"]["runs"]:
        st, rcv, snd, dmn = r["stats_ns"], r["receiver"], r["sender"], r["daemon"]
        assert st["min"] >= r["inserted_ns"], r["id"]
        assert snd["sent"] == r["frames"], r["id"]
        assert rcv["received"] + rcv["lost"] == r["frames"], r["id"]
        assert rcv["duplicates"] == 0, r["id"]
        assert rcv["rx_timestamp"].startswith("kernel"), r["id"]
        assert dmn["emulation_error_ns"]["count"] == dmn["tx"], r["id"]
        assert dmn["rx"] == dmn["tx"] + sum(dmn["dropped"].values()), r["id"]


def test_delay_reproduction_error_within_noise_bound(delay_run):
    """At 1 ms and 10 ms, moderate rate, both IP lengths: the reproduction
    error |mean(D) - (mean(0) + D)| is below the bound a correct emulator
    cannot be expected to beat on this machine (analysis.repro_bound_ns):

      4 x sqrt(SE(D)^2 + SE(0)^2)   the two means' sampling error. SE is
                                    by batch means over 20 consecutive
                                    blocks, because one stall delays a
                                    whole stretch of frames (delays are
                                    not independent); 4 SE leaves ~6e-5
                                    to chance;
    + 2 x (stall residual of the daemon's CPU + of the tool CPU), from the
      noise floor measured before the daemon started: sum(g^2)/(2T) over
      the gaps g > 10 us is how much the machine's stalls add to a mean
      delay; they may hit either run, hence twice;
    + 10 ppm of D: the daemon's TSC clock against the kernel's.

    A loaded machine widens the bound (that is the point of deriving it
    from the noise floor); on a quiet one it is a few microseconds."""
    groups = [g for g in delay_run["res"]["summary"]["groups"] if g["rate_class"] == "moderate"]
    assert {g["ip_len"] for g in groups} == {46, 1500}
    for g in groups:
        for c in g["columns"]:
            if c["inserted_ns"] in (1_000_000, 10_000_000):
                assert c["repro_ns"] <= c["repro_bound_ns"], (
                    f"{g['ip_len']} B, {c['inserted_ns']} ns: reproduction error "
                    f"{c['repro_ns'] / 1e3:.2f} us > bound {c['repro_bound_ns'] / 1e3:.2f} us")
                assert c["repro_ok"] is True


# --- loss-accuracy ---------------------------------------------------------------------

def test_loss_leaves_nothing(loss_run):
    assert leftovers(BED) == []


def test_loss_at_one_percent_inside_wilson(loss_run):
    """At 1e-2 (10^5 frames) the measured rate's 99 % Wilson interval holds
    the specified rate. The seed is fixed (1), so the drops are the same
    frame for frame each run: the test is deterministic as long as every
    loss is the model's, which is checked first; over seeds, a correct
    Bernoulli model would fail it 1 % of the time."""
    r = [r for r in loss_run["res"]["runs"] if r["specified"] == 1e-2][0]
    require_alone(r, "loss at 1e-2")
    assert r["non_model_losses"] == 0, r["problems"]
    assert r["lost"] == r["model_drops"] > 0
    c = r["check"]
    assert c["confidence"] == 0.99 and c["frames"] == 100_000
    assert c["wilson"][0] <= 1e-2 <= c["wilson"][1], c
    assert c["pass"] is True
    # enough loss events at 1 % for the run-length tests to have run
    assert r["run_tests"]["good_runs"]["df"] >= 10
    assert r["run_tests"]["loss_runs"]["p_value"] is not None


def test_loss_zero_loses_nothing(loss_run):
    r = [r for r in loss_run["res"]["runs"] if r["specified"] == 0][0]
    assert r["model_drops"] == 0
    require_alone(r, "no loss at 0")
    assert r["lost"] == 0 and r["model_drops"] == 0 and r["check"]["pass"]


def test_loss_tcp_and_ge_recorded(loss_run):
    res = loss_run["res"]
    ccs = [c for c in ("cubic", "bbr") if c in iperf3.available_ccs()]
    assert {t["cc"] for t in res["tcp"]} == set(ccs)
    for t in res["tcp"]:
        assert t["mbit_s"] > 0 and len(t["snd_cwnd"]) >= 10
    for missing in {"cubic", "bbr"} - set(ccs):
        assert any(missing in n and "skipped" in n for n in res["notes"])
    ge = res["ge"]
    assert ge["status"] in ("ran", "skipped")
    if ge["status"] == "skipped":
        assert ge["reason"] and any("Gilbert-Elliott" in n for n in res["notes"])
    else:
        assert ge["check"]["variance_factor"] > 1
    html = loss_run["html"].read_text()
    assert "Table 1 - specified vs measured loss" in html
    assert html.count("data:image/png;base64,") >= 4


# --- bad input, interruption ----------------------------------------------------------------

@pytest.mark.parametrize("args, words", [
    (["delay-precision", "--delays", "0,1xs"], ["--delays", "'1xs'"]),
    (["delay-precision", "--delays", "1ms"], ["must include 0"]),
    (["delay-precision", "--sizes", "9000"], ["9000", "jumbo"]),
    (["delay-precision", "--high-pps", "46:100"], ["SIZE=PPS"]),
    (["delay-precision", "--rates", "ludicrous"], ["'ludicrous'"]),
    (["delay-precision", "-o", "out.txt"], ["out.txt", ".json"]),
    (["loss-accuracy", "--levels", "0,2"], ["fractions"]),
    (["loss-accuracy", "--frames", "5"], ["--frames"]),
])
def test_lab_bad_options_refused_before_anything(args, words):
    cp = linkemu("lab", *args, "--bed", BED, timeout=60)
    assert cp.returncode == 2, (cp.returncode, cp.stderr)
    assert "Traceback" not in cp.stderr
    for w in words:
        assert w in cp.stderr, cp.stderr
    assert leftovers(BED) == []


def test_lab_interrupted_leaves_nothing(tools, tmp_path):
    p = subprocess.Popen([sys.executable, "-m", "linkemu", "lab", "delay-precision", "--quick",
                          "--bed", BED, "--noise-seconds", "0.2", "-o",
                          str(tmp_path / "x.json")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env())
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = p.stderr.readline()
            if line.startswith("[3/"):          # the bed is up and a daemon has run
                break
            assert line, "the lab exited before its third step"
        p.send_signal(signal.SIGINT)
        p.wait(60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 1
    assert leftovers(BED) == []
    assert not (tmp_path / "x.json").exists()
