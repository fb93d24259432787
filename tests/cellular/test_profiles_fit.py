"""The cell-* profiles against the published figures, through the link
model (no bed): ping percentiles within 10 %, UDP saturation inside the
published range, and the shipped traces exactly what their documented
derivation makes."""

from __future__ import annotations

import subprocess
import sys

import pytest

from linkemu import profiles
from linkemu.lab import cellular_model as cm
from linkemu.lab import published_cellular as pub

from kit import REPO

TRACE_RATES = {"cell-4g-dec4": "25", "cell-5g-dec4": "43", "cell-4g-dec2": "22",
               "cell-5g-dec2": "55"}


@pytest.mark.parametrize("name", list(pub.LINKS))
def test_profile_ping_model_within_ten_percent(name):
    prof = profiles.find(name)
    pred = cm.ping_prediction(prof.a2b, prof.b2a)
    for k, v in pub.LINKS[name]["ping_ms"].items():
        assert abs(pred[k] - v) <= 0.10 * v, f"{name} {k}: model {pred[k]:.2f} vs {v}"


@pytest.mark.parametrize("name", list(pub.LINKS))
def test_profile_udp_saturation_in_published_range(name):
    """UDP at the lab's offered rate through the trace and the shallow
    drop-tail buffer (the model's long-run mean; a 20 s run on the bed
    varies with the trace's phase, docs/lab.md). TCP BBR has no model: only
    the bed shows it."""
    prof = profiles.find(name)
    g = cm.udp_goodput_mbit(prof.a2b, cm.offered_mbit(pub.LINKS[name]["udp_offered"]))
    lo, hi = min(pub.LINKS[name]["udp_mbit"]), max(pub.LINKS[name]["udp_mbit"])
    assert lo <= g <= hi, f"{name}: {g:.2f} Mbit/s outside {lo}..{hi}"


def test_udp_model_queue_waste():
    """A shallow buffer wastes opportunities (the trace's bursts empty it);
    a deep one leaves the whole capacity; without an offered rate the model
    is the capacity."""
    trace = REPO / "traces" / "cellular-4g-dec4.up"
    base = f"trace {trace} delay 19.11ms"
    cap = cm.udp_goodput_mbit(base)
    assert cap == pytest.approx(25.0 * 1448 / 1490, rel=1e-3)
    deep = cm.udp_goodput_mbit(base + " limit-queue 1000", 25.0)
    shallow = cm.udp_goodput_mbit(base + " limit-queue 8", 25.0)
    assert deep == pytest.approx(min(cap, 25.0), rel=0.01)
    assert shallow < 0.9 * cap
    assert cm.udp_goodput_mbit(base + " limit-queue 1000", 10.0) == pytest.approx(10.0, rel=0.01)
    # even well below the capacity the trace's longest gaps overflow 8 frames
    assert 9.0 < cm.udp_goodput_mbit(base + " limit-queue 8", 10.0) < 10.0
    assert cm.offered_mbit("25M") == 25.0 and cm.offered_mbit("50M") == 50.0


@pytest.mark.parametrize("name", list(pub.LINKS))
def test_profile_source_names_the_published_figures(name):
    src = profiles.find(name).source
    p = pub.LINKS[name]["ping_ms"]
    assert f"mean {p['mean']:g}" in src and f"p90 {p['p90']:g}" in src


@pytest.mark.parametrize("name", list(pub.LINKS))
def test_shipped_trace_is_its_documented_derivation(name, tmp_path):
    out = tmp_path / "t.up"
    cp = subprocess.run([sys.executable, str(REPO / "scripts" / "derive_cellular_trace.py"),
                         str(REPO / "traces" / "mahimahi_TMobile-LTE-short.up"), "100000",
                         "140000", TRACE_RATES[name], str(out)], capture_output=True, text=True)
    assert cp.returncode == 0, cp.stderr
    shipped = REPO / "traces" / f"cellular-{name.removeprefix('cell-')}.up"
    assert out.read_bytes() == shipped.read_bytes()


def test_scenario_two_paths_loads_with_the_trace_beside_it():
    from linkemu.daemon import scenario
    scn = scenario.load(REPO / "profiles" / "scenarios" / "cell-4g-two-paths.toml")
    assert len(scn.steps) == 12
    trace = str(REPO / "traces" / "cellular-4g-dec4.up")
    assert all(trace in st.a2b for st in scn.steps)
    delays = {cm.delay_jitter_ms(st.a2b) for st in scn.steps}
    assert delays == {(17.0, 1.5), (19.0, 5.0)}


@pytest.mark.parametrize("name", list(TRACE_RATES))
def test_profile_source_states_its_own_trace_and_buffer(name):
    """The source's 'Trace cellular-X.up at R Mbit/s ... buffer N frames
    (M ms)' is what the profile configures: the trace it names (whose mean
    rate is R), limit-queue N, and M the time N full opportunities take
    at R (to the precision written)."""
    import re
    prof = profiles.find(name)
    m = re.search(r"Trace (cellular-\S+\.up) at ([\d.]+) Mbit/s.*?[Bb]uffer:? (\d+) frames \(([\d.]+) ms\)",
                  prof.source, re.S)
    assert m, f"{name}: no 'Trace ... buffer N frames (M ms)' in the source"
    trace, rate, frames, ms = m.group(1), float(m.group(2)), int(m.group(3)), m.group(4)
    words = prof.a2b.split()
    assert words[words.index("trace") + 1] == str(REPO / "traces" / trace)
    lines = (REPO / "traces" / trace).read_text().split()
    assert len(lines) * 1500 * 8 / int(lines[-1]) / 1e3 == pytest.approx(rate, rel=1e-4)
    assert int(words[words.index("limit-queue") + 1]) == frames
    exact = frames * 1500 * 8 / (rate * 1e6) * 1e3
    step = 10.0 ** -len(ms.partition(".")[2])
    assert abs(float(ms) - exact) <= step / 2, f"{name}: {frames} frames at {rate} Mbit/s take {exact:.2f} ms, not {ms}"
