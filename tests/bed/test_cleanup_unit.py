"""Cleanup paths with fakes (no root, no bed): every step of a removal
runs even when an earlier one fails, and what failed is named."""

from __future__ import annotations

import pytest

from linkemu.bed import isolation, netns, paths, procs, testbed
from linkemu.errors import LinkemuError


@pytest.fixture
def fake_bed(monkeypatch, tmp_path):
    """A bed 'zq' whose every system call is a fake that records what ran."""
    monkeypatch.setattr(paths, "RUN_ROOT", tmp_path / "run")
    calls: list[str] = []
    b = testbed.bed_for("zq")
    b.run_dir.mkdir(parents=True)
    monkeypatch.setattr(procs, "find_linkemud", lambda prefix: [])
    monkeypatch.setattr(testbed, "daemon_pid", lambda bed: None)
    monkeypatch.setattr(netns, "ns_pids", lambda ns: [])
    monkeypatch.setattr(netns, "link_exists", lambda dev, ns=None: True)
    monkeypatch.setattr(netns, "ns_exists", lambda ns: True)
    monkeypatch.setattr(netns, "ns_del", lambda ns: calls.append(f"ns_del {ns}"))
    monkeypatch.setattr(testbed, "remove_dpdk_leftovers",
                        lambda prefix: calls.append(f"dpdk {prefix}") or [])
    monkeypatch.setattr(isolation, "recover_stale", lambda: calls.append("isolation") or [])
    return b, calls


def test_remove_goes_on_after_a_veth_that_will_not_go(fake_bed, monkeypatch):
    b, calls = fake_bed

    def stuck(dev, timeout=5.0):
        calls.append(f"link_del {dev}")
        raise LinkemuError(f"could not delete {dev}")

    monkeypatch.setattr(netns, "link_del_wait", stuck)
    with pytest.raises(LinkemuError) as e:
        testbed.remove(b, [b.ns_src, b.ns_dst])
    # Everything after the stuck veth still ran: the other veth, both
    # namespaces, the runtime files, EAL's files, the isolation records.
    assert calls == ["link_del zq-a", "link_del zq-b", "ns_del zq-src", "ns_del zq-dst",
                     "dpdk linkemu-zq", "isolation"]
    assert not b.run_dir.exists()
    assert "could not delete zq-a" in str(e.value) and "could not delete zq-b" in str(e.value)


def test_remove_goes_on_after_a_process_it_may_not_signal(fake_bed, monkeypatch):
    b, calls = fake_bed
    monkeypatch.setattr(netns, "ns_pids", lambda ns: [4242] if ns == b.ns_src else [])

    def refused(pid, grace, popen=None):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(procs, "terminate", refused)
    monkeypatch.setattr(netns, "link_del_wait", lambda dev, timeout=5.0: calls.append(f"link_del {dev}"))
    with pytest.raises(LinkemuError, match="4242"):
        testbed.remove(b, [b.ns_src, b.ns_dst])
    assert calls == ["link_del zq-a", "link_del zq-b", "ns_del zq-src", "ns_del zq-dst",
                     "dpdk linkemu-zq", "isolation"]
