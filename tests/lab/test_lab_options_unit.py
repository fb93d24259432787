"""The lab's option parsers (cli/lab.py), without a bed."""

from __future__ import annotations

import pytest

from linkemu.cli.lab import parse_delays
from linkemu.errors import UsageError


@pytest.mark.parametrize("text, ns", [
    ("0,1.001ms,1.005s,2.3ms", (0, 1_001_000, 1_005_000_000, 2_300_000)),
    ("1.001us,0.7us,1.009", (1_001, 700, 1_009)),      # a bare number is in us, as in tc
    ("3599.999999999s", (3_599_999_999_999,)),
])
def test_delays_are_exact_decimals(text, ns):
    # 1.001ms was refused as "finer than 1 ns": float(1.001) * 1e6 is
    # 1000999.9999999999, not the 1001000 ns written.
    assert parse_delays(text) == ns


@pytest.mark.parametrize("text", ["1.0000000001ms", "0.5ns", "1.0000000000000001s"])
def test_delays_finer_than_a_nanosecond_are_refused(text):
    # The last was taken as 1 s: a float has no digit for its 1e-16.
    with pytest.raises(UsageError, match=f"'{text}' is finer than 1 ns"):
        parse_delays(text)


# --- What each study's command hands the study ------------------------------

import dataclasses
import importlib
from pathlib import Path

from linkemu.cli.main import build_parser


class _Ran(Exception):
    """Raised by the stand-in for a study's run(), to stop before any bed."""


def _options(monkeypatch, argv: list[str]):
    """The options object the command built for its study, not run."""
    seen = {}
    module = {"delay-precision": "delay_precision", "loss-accuracy": "loss_accuracy",
              "lfp": "lfp", "cellular": "cellular", "forwarding": "forwarding"}[argv[1]]
    mod = importlib.import_module(f"linkemu.lab.{module}")

    def run(o, path):
        seen["o"] = o
        raise _Ran

    monkeypatch.setattr(mod, "run", run)
    a = build_parser().parse_args(argv)
    with pytest.raises(_Ran):
        a.func(a)
    return seen["o"]


_COMMON = dict(bed="lab", pmd=None, seed=1, quiet=False)


@pytest.mark.parametrize("study, cls_name, extra", [
    ("delay-precision", "delay_precision.DelayOptions", dict(keep_raw=True)),
    ("loss-accuracy", "loss_accuracy.LossOptions", {}),
    ("lfp", "lfp.LfpOptions", {}),
    ("cellular", "cellular.CellularOptions", dict(keep_raw=True)),
    ("forwarding", "forwarding.ForwardingOptions", {}),
])
@pytest.mark.parametrize("quick", [False, True])
def test_a_study_given_no_options_gets_its_defaults(monkeypatch, study, cls_name, extra, quick):
    module, name = cls_name.split(".")
    cls = getattr(importlib.import_module(f"linkemu.lab.{module}"), name)
    want = (cls.quick_defaults(**_COMMON, **extra) if quick else cls(**_COMMON, **extra))
    got = _options(monkeypatch, ["lab", study] + (["--quick"] if quick else []))
    assert dataclasses.asdict(got) == dataclasses.asdict(want)


def _fields(o, names):
    return {n: getattr(o, n) for n in names}


def test_delay_precision_takes_every_option_given(monkeypatch):
    o = _options(monkeypatch, [
        "lab", "delay-precision", "--bed", "b1", "--pmd", "af_packet", "--seed", "7", "--quiet",
        "--no-raw", "--delays", "0,1ms", "--sizes", "46", "--rates", "moderate, high",
        "--moderate-pps", "5000", "--high-pps", "46=9000", "--seconds", "2",
        "--noise-seconds", "0.5"])
    assert _fields(o, ["bed", "pmd", "seed", "quiet", "keep_raw", "delays_ns", "sizes", "rates",
                       "moderate_pps", "high_pps", "seconds", "noise_seconds"]) == dict(
        bed="b1", pmd="af_packet", seed=7, quiet=True, keep_raw=False, delays_ns=(0, 1_000_000),
        sizes=(46,), rates=("moderate", "high"), moderate_pps=5000.0, high_pps={46: 9000.0},
        seconds=2.0, noise_seconds=0.5)


def test_loss_accuracy_takes_every_option_given(monkeypatch):
    o = _options(monkeypatch, [
        "lab", "loss-accuracy", "--quick", "--levels", "0,0.01", "--frames", "1000", "--pps",
        "2000", "--confidence", "0.95", "--tcp-seconds", "2", "--tcp-levels", "0.001",
        "--ccs", "cubic", "--no-tcp", "--no-ge", "--noise-seconds", "0.25"])
    assert _fields(o, ["quick", "levels", "frames", "pps", "confidence", "tcp_seconds",
                       "tcp_levels", "ccs", "tcp", "ge", "noise_seconds"]) == dict(
        quick=True, levels=(0.0, 0.01), frames=1000, pps=2000.0, confidence=0.95,
        tcp_seconds=2.0, tcp_levels=(0.001,), ccs=("cubic",), tcp=False, ge=None,
        noise_seconds=0.25)


def test_lfp_takes_every_option_given(monkeypatch):
    o = _options(monkeypatch, [
        "lab", "lfp", "--windows", "32,64", "--senders", "cubic, bbr", "--runs", "2",
        "--seconds", "4", "--no-table2"])
    assert _fields(o, ["windows_kb", "senders", "runs", "seconds", "table2_seconds",
                       "table2"]) == dict(
        windows_kb=(32, 64), senders=("cubic", "bbr"), runs=2, seconds=4.0, table2_seconds=4.0,
        table2=False)


def test_cellular_takes_every_option_given(monkeypatch):
    o = _options(monkeypatch, [
        "lab", "cellular", "--links", "cell-4g-dec4, cell-5g-dec4", "--protos", "udp",
        "--unit-runs", "2", "--units", "100", "--iperf-runs", "1", "--iperf-seconds", "5",
        "--ping-seconds", "10", "--no-raw"])
    from linkemu.lab import cellular
    assert _fields(o, ["links", "unit_links", "protos", "unit_runs", "units", "iperf_runs",
                       "iperf_seconds", "ping_seconds", "keep_raw"]) == dict(
        links=("cell-4g-dec4", "cell-5g-dec4"),
        unit_links=tuple(l for l in cellular.pub.UNIT_LINKS
                         if l in ("cell-4g-dec4", "cell-5g-dec4")),
        protos=("udp",), unit_runs=2, units=100, iperf_runs=1, iperf_seconds=5.0,
        ping_seconds=10, keep_raw=False)
    # With --quick, --units sets the quick run's count.
    q = _options(monkeypatch, ["lab", "cellular", "--quick", "--units", "600"])
    assert (q.quick_units, q.units) == (600, cellular.CellularOptions.units)


def test_forwarding_takes_every_option_given(monkeypatch):
    o = _options(monkeypatch, [
        "lab", "forwarding", "--sizes", "64,1460", "--paths", "direct, swa", "--udp-seconds",
        "1", "--tcp-seconds", "1.5", "--repeats", "2", "--rounds", "4", "--offered", "1G",
        "--long-seconds", "0", "--lock", "/tmp/x.lock", "--quiet-wait", "9"])
    assert _fields(o, ["sizes", "paths", "udp_seconds", "tcp_seconds", "repeats", "rounds",
                       "offered", "long_seconds", "lock", "quiet_wait_s"]) == dict(
        sizes=(64, 1460), paths=("direct", "swa"), udp_seconds=1.0, tcp_seconds=1.5,
        repeats=2, rounds=4, offered="1G", long_seconds=0.0, lock=Path("/tmp/x.lock"),
        quiet_wait_s=9.0)


@pytest.mark.parametrize("argv", [
    ["lab", "loss-accuracy", "--ccs", ""], ["lab", "loss-accuracy", "--ccs", "cubic,,bbr"],
    ["lab", "delay-precision", "--rates", "moderate,"], ["lab", "lfp", "--senders", " "],
])
def test_an_empty_name_in_a_list_is_refused(monkeypatch, argv):
    # '--ccs ""' ran the TCP part with a congestion control named ''.
    with pytest.raises(UsageError, match=f"{argv[2]}: .* has an empty item"):
        _options(monkeypatch, argv)
