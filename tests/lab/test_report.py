"""Results files and `linkemu report`: a synthetic results file validates and
renders; corrupt or invalid files give a clear error naming the file and
the problem (exit 1, no traceback)."""

from __future__ import annotations

import base64
import copy
import gzip
import json
import random
import re

import pytest

from kit import linkemu
from linkemu.lab import delay_precision as dp
from linkemu.lab import loss_accuracy as la
from linkemu.lab import analysis, results


def _noise(cpu: int) -> dict:
    hist = [[27, 27, 1_000_000], [12_000, 12_287, 30], [1_200_000, 1_204_223, 1]]
    n = {"tool": "noisefloor", "cpu": cpu, "seconds": 1.0, "reads": 1_000_031,
         "gap_ns": {"min": 21, "mean": 28.0, "p50": 27, "p90": 28, "p99": 30, "p999": 40,
                    "p9999": 120, "max": 1_204_000},
         "gaps_over": {"10us": 31, "100us": 1, "1ms": 1}, "lost_fraction": 0.0016,
         "histogram": hist}
    n["stall_residual_ns"] = analysis.stall_residual_ns(n)
    return n


def fake_delay_results() -> dict:
    """A delay-precision results document built by the experiment's own
    summarise(), from made-up delays: path 20 us + inserted + noise."""
    import numpy as np
    rng = random.Random(4)
    res = results.new("delay-precision", quick=True, seed=1, config={"fake": True})
    res["metadata"]["noise_floor"] = {"daemon_cpu": _noise(1), "tool_cpu": _noise(0)}
    for size in (1500, 46):
        for d in (0, 1_000_000, 10_000_000):
            delays = np.array([20_000 + d + int(rng.expovariate(1 / 3000)) for _ in range(2000)])
            st = analysis.summary(delays)
            st["se_batch_means"] = analysis.batch_means_se(delays)
            excess = delays - d
            counts, _ = np.histogram(excess, bins=20, range=(0, 40_000))
            res["runs"].append({
                "id": f"{size}B-moderate-{d}", "ip_len": size, "rate_class": "moderate",
                "requested_pps": 10_000.0, "inserted_ns": d, "grammar": f"delay {d}ns limit 9",
                "limit": 9, "frames": 2000,
                "sender": {"sent": 2000, "achieved_pps": 10_000.0},
                "receiver": {"received": 2000, "lost": 0, "rx_timestamp": "kernel (fake)"},
                "daemon": {"emulation_error_ns": {"count": 2000, "min": 10, "mean": 400.0,
                                                  "p50": 300, "p90": 700, "p99": 2000,
                                                  "p999": 5000, "max": 9000}},
                "stats_ns": st,
                "series": {"first_index": 0, "delay_ns": [int(x) for x in delays]},
                "histogram": {"lo_ns": 0.0, "width_ns": 2000.0,
                              "counts": [int(c) for c in counts],
                              "above": int((excess >= 40_000).sum())},
                "quantiles": {"q": dp.CDF_Q,
                              "excess_ns": [float(x) for x in np.quantile(excess, dp.CDF_Q)]},
                "samples": None, "problems": []})
    res["summary"] = dp.summarise(res)
    return res


def fake_loss_results() -> dict:
    res = results.new("loss-accuracy", quick=True, seed=1,
                      config={"confidence": 0.99, "levels": [0, 0.01]})
    res["metadata"]["noise_floor"] = {"daemon_cpu": _noise(1)}
    for p, lost in ((0.0, 0), (0.01, 1003)):
        c = analysis.loss_check(lost, 100_000, p, 0.99)
        lr = {1: 990, 2: 10} if p else {}
        res["runs"].append({
            "id": f"loss-{p}", "specified": p, "grammar": f"delay 1ms loss {p * 100}%",
            "frames": 100_000, "lost": lost, "model_drops": lost, "non_model_losses": 0,
            "delay_us": {"mean": 1010.0, "sd": 5.0}, "check": c,
            "loss_runs": sorted([k, v] for k, v in lr.items()), "good_runs": [[50, 3], [99, 10]],
            "run_tests": ({"loss_runs": analysis.chi_square_runs(lr, analysis.geometric_pmf(p))
                           .as_dict()} if p else {}),
            "problems": []})
    res["ge"] = {"status": "skipped", "reason": "linkemud: unknown word", "grammar": "loss gemodel",
                 "params": la.GE_DEFAULT.__dict__,
                 "theory": {"loss_rate": 0.03, "mean_loss_run": 3.0, "mean_good_run": 100.0}}
    res["tcp"] = [{"cc": cc, "specified": p, "seconds": 1.0, "mbit_s": 100.0 / (1 + 100 * p),
                   "retransmits": int(p * 1000), "t_s": [0.1, 0.2, 0.3],
                   "snd_cwnd": [10_000, 20_000, 15_000], "interval_mbit_s": [90.0, 100.0, 95.0],
                   "cwnd_reductions": 1}
                  for cc in ("cubic", "bbr") for p in (0.0, 1e-4, 1e-2)]
    res["summary"] = la.summarise(res)
    return res


@pytest.fixture
def delay_file(tmp_path):
    p = tmp_path / "delay.json.gz"
    results.write(fake_delay_results(), p)
    return p


@pytest.fixture
def loss_file(tmp_path):
    p = tmp_path / "loss.json"
    results.write(fake_loss_results(), p)
    return p


def _images(html: str) -> list[bytes]:
    return [base64.b64decode(b) for b in re.findall(r'src="data:image/png;base64,([^"]+)"', html)]


def test_results_roundtrip_and_schema(delay_file, loss_file):
    d = results.load(delay_file)
    assert d["experiment"] == "delay-precision" and d["schema"] == results.SCHEMA_ID
    assert gzip.open(delay_file).read(1) == b"{"
    g = d["summary"]["groups"][0]
    col = [c for c in g["columns"] if c["inserted_ns"] == 1_000_000][0]
    assert col["repro_ns"] is not None and col["repro_bound_ns"] > 0
    assert results.load(loss_file)["summary"]["all_pass"] is True


def test_report_renders_self_contained(delay_file, loss_file, tmp_path):
    out = tmp_path / "r.html"
    second = tmp_path / "delay2.json"
    results.write(fake_delay_results(), second)
    cp = linkemu("report", str(delay_file), str(second), str(loss_file), "-o", str(out))
    assert cp.returncode == 0, cp.stderr
    html = out.read_text()
    assert "http://" not in html and "https://" not in html.replace("https://json-schema", "")
    imgs = _images(html)
    assert len(imgs) >= 8 and all(i[:8] == b"\x89PNG\r\n\x1a\n" for i in imgs)
    # published numbers beside ours
    assert "Table 2 - DEMU, 10 Gbit/s, 1500 B" in html and "1,011.8" in html
    assert "Table 4 - Linux netem" in html and "1.00171" in html   # Table 1, 1 %
    assert "Comparison of the files" in html
    assert "Machine noise floor" in html


def test_report_default_output_name(delay_file):
    cp = linkemu("report", str(delay_file))
    assert cp.returncode == 0, cp.stderr
    assert delay_file.with_name("delay.html").exists()


def _expect_error(path, *words):
    cp = linkemu("report", str(path), "-o", str(path.with_suffix(".html")))
    assert cp.returncode == 1, (cp.returncode, cp.stdout, cp.stderr)
    assert "Traceback" not in cp.stderr
    assert str(path) in cp.stderr, cp.stderr
    for w in words:
        assert w in cp.stderr, cp.stderr
    assert not path.with_suffix(".html").exists()


def test_report_missing_file(tmp_path):
    _expect_error(tmp_path / "nope.json", "no such file")


def test_report_not_json(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text('{"schema": "linkemu-lab/1", "experiment": ')
    _expect_error(p, "not valid JSON", "line 1")


def test_report_corrupt_gzip(delay_file, tmp_path):
    data = delay_file.read_bytes()
    p = tmp_path / "trunc.json.gz"
    p.write_bytes(data[: len(data) // 2])
    _expect_error(p, "corrupt gzip")


def test_report_binary_garbage(tmp_path):
    p = tmp_path / "garbage.json"
    p.write_bytes(bytes(range(256)) * 4)
    _expect_error(p, "not a results file")


def test_report_other_json(tmp_path):
    p = tmp_path / "other.json"
    p.write_text(json.dumps({"hello": "world"}))
    _expect_error(p, "not a linkemu lab results file")
    p.write_text("[1, 2]")
    _expect_error(p, "top level is list")


@pytest.mark.parametrize("mutate, where, what", [
    (lambda d: d["metadata"].pop("kernel"), "metadata", "'kernel' is a required property"),
    (lambda d: d["runs"][0].__setitem__("ip_len", 12), "runs/0/ip_len", "12"),
    (lambda d: d["runs"][1]["histogram"].__setitem__("counts", "many"), "runs/1/histogram/counts",
     "'many'"),
    (lambda d: d.__setitem__("experiment", "magic"), "experiment", "'magic'"),
    (lambda d: d["summary"]["groups"][0]["columns"][0].pop("sd_ns"),
     "summary/groups/0/columns/0", "'sd_ns'"),
])
def test_report_schema_violation(tmp_path, mutate, where, what):
    doc = copy.deepcopy(fake_delay_results())
    mutate(doc)
    p = tmp_path / "invalid.json"
    p.write_text(json.dumps(doc))
    _expect_error(p, "does not match the results schema", f"at {where}", what)


def test_report_inconsistent_histogram(tmp_path):
    doc = fake_delay_results()
    doc["runs"][0]["histogram"]["above"] = 10**9
    p = tmp_path / "inconsistent.json"
    p.write_text(json.dumps(doc))
    _expect_error(p, "histogram holds more frames than the run received")


def test_report_refuses_non_html_output(delay_file, tmp_path):
    cp = linkemu("report", str(delay_file), "-o", str(tmp_path / "out.pdf"))
    assert cp.returncode == 2 and "HTML page" in cp.stderr


def test_write_refuses_invalid(tmp_path):
    doc = fake_delay_results()
    doc["metadata"]["mode"] = "sometimes"
    with pytest.raises(results.ResultsError, match="metadata/mode"):
        results.write(doc, tmp_path / "x.json")
    assert not (tmp_path / "x.json").exists()


# --- review of the report: what it shows must be what the file holds -----------------------

def _loss_with(**config) -> dict:
    res = fake_loss_results()
    res["config"].update(config)
    res["summary"] = la.summarise(res)
    return res


@pytest.mark.parametrize("conf, shown", [(0.99, "99%"), (0.999, "99.9%"), (0.995, "99.5%")])
def test_wilson_confidence_is_shown_as_set(conf, shown, monkeypatch):
    from linkemu.report import plots, tables
    t = tables.loss_table(_loss_with(confidence=conf))
    assert f"Wilson {shown} interval %" in t.header, t.header
    labels = []
    monkeypatch.setattr(plots, "png", lambda fig: labels.extend(
        fig.axes[0].get_legend_handles_labels()[1]) or b"")
    plots.loss_rates(_loss_with(confidence=conf))
    assert f"linkemu ({shown} Wilson)" in labels, labels


def test_report_renders_a_run_at_100_percent_loss(tmp_path):
    """--levels may include 1 (validate allows 0 .. 1): every frame is lost,
    one loss run, no reception; the run-length plot has no geometric law
    for it (stay = 1) but must still draw the others and the run itself."""
    res = fake_loss_results()
    res["runs"].append({
        "id": "loss-1", "specified": 1.0, "grammar": "delay 1ms loss 100%", "frames": 100_000,
        "lost": 100_000, "model_drops": 100_000, "non_model_losses": 0,
        "delay_us": {"mean": 0.0, "sd": 0.0},
        "check": analysis.loss_check(100_000, 100_000, 1.0, 0.99),
        "loss_runs": [[100_000, 1]], "good_runs": [], "run_tests": {}, "problems": []})
    res["summary"] = la.summarise(res)
    p = tmp_path / "loss100.json"
    results.write(res, p)
    out = tmp_path / "loss100.html"
    cp = linkemu("report", str(p), "-o", str(out))
    assert cp.returncode == 0 and "Traceback" not in cp.stderr, cp.stderr
    assert "Run lengths against the geometric" in out.read_text()


def test_emulation_error_plot_leaves_out_what_the_daemon_did_not_report(monkeypatch):
    """A run whose daemon reported no emulation error (null, as the schema
    allows) shows '-' in the table; the plot must not draw it as 0 us (a
    perfect emulator) but leave the point out."""
    import math
    from linkemu.report import plots
    res = fake_delay_results()
    for r in res["runs"]:
        if r["inserted_ns"] == 1_000_000:
            r["daemon"]["emulation_error_ns"] = None
    res["summary"] = dp.summarise(res)
    ys = []
    monkeypatch.setattr(plots, "png", lambda fig: ys.extend(
        list(l.get_ydata()) for l in fig.axes[0].get_lines()) or b"")
    assert plots.emulation_error(res) is not None
    assert ys and all(len(y) == 3 for y in ys)
    for y in ys:                # columns 0, 1 ms, 10 ms: the 1 ms one is missing
        assert math.isnan(y[1]) and not math.isnan(y[0]) and y[0] > 0, y


@pytest.mark.parametrize("where", ["a directory", "under a file"])
def test_report_unwritable_output_is_a_clear_error(delay_file, tmp_path, where):
    """-o naming a directory, or a path under a regular file: exit 1 with the
    output named, no traceback, and no OUT.html.tmp left behind."""
    if where == "a directory":
        out = tmp_path / "taken.html"
        out.mkdir()
    else:
        (tmp_path / "plain").write_text("x")
        out = tmp_path / "plain" / "r.html"
    cp = linkemu("report", str(delay_file), "-o", str(out))
    assert cp.returncode == 1, (cp.returncode, cp.stderr)
    assert "Traceback" not in cp.stderr and str(out) in cp.stderr, cp.stderr
    assert not list(tmp_path.glob("**/*.tmp"))


def test_report_on_a_file_missing_a_field_it_reads_names_both(tmp_path):
    """The schema leaves `config` free, but the loss table reads its
    confidence: a partial or older file without it must be refused with
    the file and the field named, not a KeyError traceback."""
    doc = fake_loss_results()
    del doc["config"]["confidence"]
    p = tmp_path / "partial.json"
    results.write(doc, p)            # the schema accepts it
    _expect_error(p, "'confidence'")


def test_loss_table_names_the_frame_size_measured():
    """--ip-len 46 .. 1500 is allowed; the note must name the size used."""
    from linkemu.report import tables
    assert "one probe run of 46 B frames" in tables.loss_table(_loss_with(ip_len=46)).note
    assert "one probe run of 1500 B frames" in tables.loss_table(_loss_with(ip_len=1500)).note


def test_inserted_delays_are_labelled_to_the_nanosecond():
    # 1500 ns was labelled '2' (whole microseconds).
    from linkemu.report.tables import fmt_inserted
    assert [fmt_inserted(ns) for ns in (0, 100, 1_500, 10_000, 1_001_000, 10_000_000)] == \
        ["0", "0.1", "1.5", "10", "1,001", "10,000"]


def test_a_tiny_nonzero_rate_never_reads_as_zero():
    # Six decimals of a percentage showed '0' for any rate below 5e-9.
    from linkemu.report.tables import fmt_pct
    assert fmt_pct(1e-9, 6) == "1e-07" and fmt_pct(4.4e-9, 6) == "4.4e-07"
    assert fmt_pct(1e-6, 6) == "0.0001" and fmt_pct(0, 6) == "0" and fmt_pct(None) == "-"


def test_a_run_with_no_delay_measured_shows_none_not_zero():
    # At 100 % loss owdprobe's delay statistics are zeros over no sample;
    # the table showed a mean delay of 0.0 us.
    from linkemu.lab.loss_accuracy import _common
    from linkemu.report import tables

    class Link:
        a2b = {"dropped": {"loss": 1000}}
        problems, contention = [], []
    rcv = {"lost": 1000, "received": 0,
           "delay_ns": {"count": 0, "min": 0, "max": 0, "mean": 0.0, "sd": 0.0, "p50": 0.0,
                        "p99": 0.0}}
    common, _problems = _common({"sent": 1000}, rcv, Link(), 1000)
    assert set(common["delay_us"].values()) == {None}
    res = fake_loss_results()
    res["runs"][1]["delay_us"] = common["delay_us"]
    t = tables.loss_table(res)
    row, head = t.rows[1], t.header
    assert row[head.index("mean delay us")] == "-" and row[head.index("sd us")] == "-"
