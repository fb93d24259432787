"""The one-way-delay instrument (owdprobe through its wrapper,
linkemu.instruments.owd) across a real link: paced, every datagram
accounted, delays sane, and a stream started and finished in two steps.
owdprobe's own accounting (loss, reordering, duplicates, foreign frames)
is tested on loopback in tests/lab/test_tools.py."""

from __future__ import annotations

from linkemu.instruments import owd


def test_probe_across_an_unimpaired_link(bed_up, run_link, tmp_path):
    """The wrapper paces, the receiver reports every datagram, the samples
    file holds each one with its TOS byte."""
    run_link()
    samples = tmp_path / "s.owd"
    out = owd.probe(bed_up, owd.ProbeSpec(ip_len=92, pps=1000, count=500, port=9100, spin_us=50,
                                          samples=samples, tos=0x28))
    snd, res = out["sender"], out["receiver"]
    # Paced at 1000/s: 500 datagrams take ~0.5 s (not a burst).
    assert snd["sent"] == 500 and 0.45 < snd["duration_s"] < 1.5, snd
    assert res["received"] == 500 and res["lost"] == 0 and res["duplicates"] == 0, res
    d = res["delay_ns"]
    assert 0 < d["min"] <= d["p50"] <= d["max"], d
    a = owd.read_samples(samples, duplicates=True)
    assert sorted(a["seq"].tolist()) == list(range(500))
    assert set(a["tos"].tolist()) == {0x28} and not (a["flags"] & owd.DUPLICATE).any()


def test_stream_in_two_steps_and_duplicates_in_the_samples(bed_up, run_link, tmp_path):
    """OwdRun: start, do something else, finish; a link that duplicates
    every frame gives each sequence number twice in the samples, the second
    copy flagged, and read_samples() leaves the copies out by default."""
    run_link("duplicate 100%", "")
    samples = tmp_path / "d.owd"
    run = owd.OwdRun(bed_up, owd.ProbeSpec(ip_len=64, pps=2000, count=200, port=9101,
                                           spin_us=50, samples=samples)).start()
    out = run.finish()
    assert out["receiver"]["received"] == 200 and out["receiver"]["duplicates"] == 200
    every = owd.read_samples(samples, duplicates=True)
    assert len(every) == 400 and int((every["flags"] & owd.DUPLICATE).sum()) == 200
    firsts = owd.read_samples(samples)
    assert sorted(firsts["seq"].tolist()) == list(range(200))
