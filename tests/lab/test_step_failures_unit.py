"""A tool that fails in the middle of a study (lfp, cellular,
loss-accuracy): the error names the step it failed in, and the session is
left (bed down) all the same. With a stand-in session and tools: no bed, no daemon."""

from __future__ import annotations

import contextlib
from types import SimpleNamespace

import pytest

from linkemu.errors import LinkemuError
from linkemu.instruments.ping import PingResult
from linkemu.lab import cellular, lfp


class FakeSession:
    """LabSession's surface the studies use; records that it was left."""
    left: list = []

    def __init__(self, *a, **kw):
        self.bed = SimpleNamespace(name="q9", ns_src="q9-src", ns_dst="q9-dst", ns_dev="veth0")
        self.pmd = "af_xdp"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        FakeSession.left.append(exc[0])

    @contextlib.contextmanager
    def link(self, a2b, b2a="", **kw):
        yield SimpleNamespace(final={"directions": {}}, problems=[], contention=[], a2b={})


@pytest.fixture
def session(monkeypatch):
    FakeSession.left = []
    for mod in (lfp, cellular):
        monkeypatch.setattr(mod, "LabSession", FakeSession)
    ok = PingResult(transmitted=20, rtts_ms=[12.5] * 20)
    monkeypatch.setattr("linkemu.instruments.ping.ping", lambda *a, **kw: ok)
    return FakeSession


def test_lfp_names_the_run_whose_ttcp_failed(monkeypatch, tmp_path, session):
    monkeypatch.setattr(lfp, "_gso_max_segs", lambda ns, dev: 4)
    monkeypatch.setattr(lfp, "_set_gso_max_segs", lambda ns, dev, segs: None)
    monkeypatch.setattr(lfp, "_set_stack", lambda ns, stack: None)

    def ttcp_fails(bed, spec):
        raise LinkemuError("ttcp sender failed (1): connect: Connection refused")

    monkeypatch.setattr(lfp.ttcp, "run", ttcp_fails)
    o = lfp.LfpOptions.quick_defaults(senders=("cubic",), windows_kb=(32,), quiet=True)
    with pytest.raises(LinkemuError) as e:
        lfp.run(o, tmp_path / "r.json")
    assert str(e.value) == ("lfp: step 1/5 (cubic, window 32 KB, run 1/1): "
                            "ttcp sender failed (1): connect: Connection refused")
    assert session.left == [LinkemuError]           # the bed was taken down
    assert not (tmp_path / "r.json").exists()


def test_cellular_names_the_link_whose_iperf3_failed(monkeypatch, tmp_path, session):
    def iperf3_fails(*a, **kw):
        raise LinkemuError("iperf3 UDP printed no JSON (1): unable to connect")

    monkeypatch.setattr(cellular.iperf3, "iperf3_run", iperf3_fails)
    monkeypatch.setattr(cellular, "_pings", lambda sess, o: ({}, {}))
    o = cellular.CellularOptions(links=("cell-4g-dec4",), unit_links=(), quiet=True,
                                 keep_raw=False, iperf_runs=1)
    with pytest.raises(LinkemuError) as e:
        cellular.run(o, tmp_path / "r.json")
    assert str(e.value).startswith("cellular: step 2/3 (4G (Dec 4): iperf3 UDP at ")
    assert str(e.value).endswith("run 1): iperf3 UDP printed no JSON (1): unable to connect")
    assert session.left == [LinkemuError]


def test_an_interrupted_lfp_says_where_and_that_nothing_was_written(monkeypatch, tmp_path,
                                                                      session, capfd):
    monkeypatch.setattr(lfp, "_gso_max_segs", lambda ns, dev: 4)
    monkeypatch.setattr(lfp, "_set_gso_max_segs", lambda ns, dev, segs: None)
    monkeypatch.setattr(lfp, "_set_stack", lambda ns, stack: None)

    def ctrl_c(bed, spec):
        raise KeyboardInterrupt

    monkeypatch.setattr(lfp.ttcp, "run", ctrl_c)
    o = lfp.LfpOptions.quick_defaults(senders=("cubic",), windows_kb=(32,), quiet=True)
    with pytest.raises(KeyboardInterrupt):
        lfp.run(o, tmp_path / "r.json")
    assert ("lfp: interrupted in step 1/5 (cubic, window 32 KB, run 1/1) after 0s; "
            "no results file written") in capfd.readouterr().err
    assert session.left == [KeyboardInterrupt]


def test_cellular_quick_plans_the_steps_it_takes(monkeypatch, tmp_path, session):
    # Planned 4 steps and took 3: the progress line ended at [3/4] and the
    # estimate of the time left counted a step that never came.
    from linkemu.lab import cellular_quick as cq
    from linkemu.lab.session import Progress

    def watched(sess, *runs):
        return [{"id": r[0], "server": {}, "problems": []} for r in runs]

    monkeypatch.setattr(cq, "_watched", watched)
    monkeypatch.setattr(cq, "unit_line", lambda rec: rec["id"])
    monkeypatch.setattr(cq, "_from_daemon", lambda runs, link: None)
    monkeypatch.setattr(cq.overhead, "parts", lambda *a: {})
    monkeypatch.setattr(cq.overhead, "summary", lambda parts: {})
    monkeypatch.setattr(cq, "checks", lambda *a: [])
    o = cellular.CellularOptions.quick_defaults(quiet=True)
    prog = Progress(cellular.planned(o), quiet=True)
    cq.run(FakeSession(), o, {"runs": []}, prog, None, tmp_path / "r.json")
    assert prog.i == prog.total


def test_loss_accuracy_names_the_level_whose_run_failed(monkeypatch, tmp_path, session):
    """The delay-precision, loss-accuracy and forwarding runs name the
    step too (the same Progress.naming_failures as lfp and cellular)."""
    from linkemu.lab import loss_accuracy
    monkeypatch.setattr(loss_accuracy, "LabSession", FakeSession)
    monkeypatch.setattr(loss_accuracy, "measure_noise", lambda seconds: {})

    def probe_fails(sess, p, o, run_id):
        raise LinkemuError("owdprobe receiver failed (1): bind: Address in use")

    monkeypatch.setattr(loss_accuracy, "bernoulli_run", probe_fails)
    o = loss_accuracy.LossOptions.quick_defaults(quiet=True)
    with pytest.raises(LinkemuError) as e:
        loss_accuracy.run(o, tmp_path / "r.json")
    assert str(e.value).startswith("loss-accuracy: step 2/")
    assert str(e.value).endswith("owdprobe receiver failed (1): bind: Address in use")
    assert session.left == [LinkemuError]
    assert not (tmp_path / "r.json").exists()
