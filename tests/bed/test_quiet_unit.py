"""The kit's decisions on whether a timing check may run (kit.quiet): the
steal of the lcore's vCPU, and the path's share of a stream's variance.
Each decides whether a test checks anything, so each is held to its rule
here, without a bed."""

from __future__ import annotations

import pytest

from kit import quiet


def test_cpu_ticks_reads_the_machine_and_each_cpu():
    steal, total = quiet.cpu_ticks()
    assert 0 <= steal <= total and total > 0
    steal0, total0 = quiet.cpu_ticks("0")
    assert 0 <= steal0 <= total0 < total
    assert quiet.cpu_ticks("99999") == (0, 0)


def test_steal_share_is_steal_over_all_ticks(monkeypatch):
    ticks = iter([(100, 10_000), (130, 12_000)])
    monkeypatch.setattr(quiet, "cpu_ticks", lambda cpu="": next(ticks))
    w = quiet.StealWatch("1")
    assert w.pct() == pytest.approx(100 * 30 / 2000)


def test_require_vcpus_skips_above_the_share_and_not_at_it():
    quiet.require_vcpus({"kit": {"steal_pct": quiet.MAX_STEAL_PCT}}, "x")
    quiet.require_vcpus({}, "a report from elsewhere")          # not recorded: checked
    with pytest.raises(pytest.skip.Exception, match="took 1.5 % of linkemud's vCPU"):
        quiet.require_vcpus({"kit": {"steal_pct": 1.5}}, "x")


def test_require_quiet_path_returns_the_share_or_skips():
    n = 10_000                                   # allowed share: 2/sqrt(n) = 2 %
    assert quiet.require_quiet_path(0.0, 1.0, n, "x") == 0.0
    # path sd 0.1 against model sd 1: 0.01 / 1.01 of the variance
    assert quiet.require_quiet_path(0.1, 1.0, n, "x") == pytest.approx(0.01 / 1.01)
    with pytest.raises(pytest.skip.Exception, match="path's own spread"):
        quiet.require_quiet_path(0.2, 1.0, n, "x")   # 0.04 / 1.04 > 2 %
