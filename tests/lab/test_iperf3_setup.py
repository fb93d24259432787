"""iperf3 runs that fail in setting up their streams (a UDP stream's one
setup datagram lost on a lossy link) are tried again, once by default, and
said so; other failures are not (pure Python: the client is replaced)."""

from __future__ import annotations

import pytest

from linkemu.errors import LinkemuError
from linkemu.instruments import iperf3

# What iperf3 3.12 -J printed in CI when a lost setup datagram failed a UDP
# client: exit 0, no intervals, this error.
LOST_SETUP = {"start": {"connected": []}, "intervals": [], "end": {},
              "error": "unable to read from stream socket: Resource temporarily unavailable"}
MEASURED = {"start": {}, "intervals": [{"sum": {"bytes": 1}}],
            "end": {"sum": {"bytes": 1000, "bits_per_second": 8e3}}}


def scripted(monkeypatch, outcomes: list[dict]) -> list[int]:
    """iperf3's client replaced by `outcomes`, one per attempt; returns the
    list of attempt numbers made."""
    made = []

    def once(*_args):
        made.append(len(made))
        return outcomes[len(made) - 1]
    monkeypatch.setattr(iperf3, "_iperf3_once", once)
    return made


def run(retries: int = 1) -> dict:
    return iperf3.iperf3_run(None, ["-u"], 1, 5201, None, None, label="iperf3 UDP",
                             setup_retries=retries)


def test_a_lost_setup_datagram_is_tried_again_and_said(monkeypatch, capsys):
    made = scripted(monkeypatch, [LOST_SETUP, MEASURED])
    assert run() == MEASURED
    assert made == [0, 1]
    err = capsys.readouterr().err
    assert "iperf3 UDP: unable to read from stream socket" in err and "trying again" in err


def test_a_setup_failing_every_time_names_iperf3s_error(monkeypatch):
    made = scripted(monkeypatch, [LOST_SETUP, LOST_SETUP, LOST_SETUP])
    with pytest.raises(LinkemuError, match="iperf3 UDP: unable to read from stream socket"):
        run(retries=1)
    assert made == [0, 1]


def test_no_retry_when_told_or_when_data_moved(monkeypatch):
    made = scripted(monkeypatch, [LOST_SETUP])
    with pytest.raises(LinkemuError):
        run(retries=0)
    assert made == [0]
    # A failure after measuring started is a result, not a setup loss.
    late = dict(MEASURED, error="unable to read from stream socket: Connection reset by peer")
    made = scripted(monkeypatch, [late, MEASURED])
    with pytest.raises(LinkemuError, match="Connection reset"):
        run()
    assert made == [0]
    # Nor for errors other than the stream's set-up.
    made = scripted(monkeypatch, [dict(LOST_SETUP, error="unable to connect to server: Connection refused"),
                                  MEASURED])
    with pytest.raises(LinkemuError, match="Connection refused"):
        run()
    assert made == [0]
