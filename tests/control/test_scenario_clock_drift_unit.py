"""A scenario played against a daemon whose clock drifts from the
player's. linkemud's model clock is the TSC, calibrated once against
CLOCK_MONOTONIC_RAW over 200 ms; the player sleeps on CLOCK_MONOTONIC,
which NTP slews. A calibration error or a slew makes the two run apart.
The player sends each step LEAD_NS ahead, carrying its time on the
daemon's clock: with the clocks' mapping taken once at the start, a
drift of D ppm used that lead up after LEAD_NS / D (200 s at 100 ppm, the
20 ms lead), and every step after arrived when its time had passed on the
daemon's clock (the daemon applies it at once: late, or early on the
host's clock)."""

from __future__ import annotations

import time

import pytest

from fakedaemon import FakeDaemon
from kit import CpuWatch, require_quiet
from linkemu.daemon import scenario
from linkemu.daemon.control import ControlClient
from linkemu.daemon.scenario import parse_toml
from test_scenario_unit import _serving

PPM = 1000


class DriftingFake(FakeDaemon):
    """The fake, timed, with a model clock that runs PPM fast of
    CLOCK_MONOTONIC (stats' time_ns, and the clock timed changes are
    staged on)."""

    def __init__(self, path: str):
        super().__init__(path)
        self.timed = True
        self.start = time.monotonic_ns()

    def model(self, mono_ns: int) -> int:
        """The model time at a CLOCK_MONOTONIC time."""
        return mono_ns + (mono_ns - self.start) * PPM // 1_000_000

    def mono(self, model_ns: int) -> int:
        return self.start + (model_ns - self.start) * 1_000_000 // (1_000_000 + PPM)

    def now(self) -> int:
        return self.model(time.monotonic_ns())


@pytest.fixture
def drifting():
    yield from _serving(DriftingFake)


def test_steps_go_out_ahead_of_their_time_on_a_drifting_daemon_clock(drifting, monkeypatch):
    """1000 ppm fast over 8 s, with the lead cut to 5 ms so that the drift
    (8 ms by the end) uses it up within the test: every step must still be
    sent ahead of its time on the daemon's clock, and land at its planned
    time on the player's (CLOCK_MONOTONIC) within what the mapping may be
    off by."""
    lead = 5_000_000
    monkeypatch.setattr(scenario, "LEAD_NS", lead)
    s = parse_toml("".join(f'[[step]]\nat = "{500 * i}ms"\na2b = "delay {i}ms"\n'
                           for i in range(17)), "drift.toml")
    watch = CpuWatch.this_process().start()
    with ControlClient(drifting.path).connect() as c:
        out = scenario.Player(s, c, None).play()
    watch.stop()
    assert out["state"] == "finished" and out["timed"] is True
    steps = out["steps"]
    assert len(steps) == 17 and drifting.links["a2b"] == "delay 16ms"
    # The drift the player had to follow: 1000 ppm of 8 s, more than the lead.
    assert drifting.model(steps[-1]["planned_ns"]) - steps[-1]["planned_ns"] > lead
    # Each step landed at its time on the daemon's clock, which is its
    # planned time on CLOCK_MONOTONIC off by no more than the drift since
    # the mapping was taken (at most a second before: 1 ms at 1000 ppm)
    # and the uncertainties of the two last takes (a fake's round trip:
    # tens of us).
    worst = max([out["daemon_clock_uncertainty_ns"]]
                + [st.get("daemon_clock_uncertainty_ns") or 0 for st in steps])
    bound = PPM * 1_000_000_000 // 1_000_000 + 2 * worst + 100_000
    off_by = [(st["at"], drifting.mono(st["set"]["a2b"]["at_ns"]) - st["planned_ns"])
              for st in steps]
    assert all(abs(e) <= bound for _, e in off_by), (bound, off_by)
    for st in steps:
        x = st["set"]["a2b"]
        assert x["applied_ns"] in (None, x["at_ns"])
        # The log says which mapping the step was played with.
        assert x["at_ns"] == st["planned_ns"] + st["daemon_clock_offset_ns"]
    # So every step went out ahead of its time, unless the player's own
    # send slipped by what is left of the lead (the machine kept it from
    # its CPU: a verdict only when it was quiet).
    behind = [(st["at"], st["sent_ns"] - st["planned_ns"] + lead) for st in steps
              if st["sent_ns"] >= drifting.mono(st["set"]["a2b"]["at_ns"])]
    if behind:
        require_quiet(None, 0, "scenario steps ahead of a drifting clock", watch)
    assert behind == []
