"""`linkemu cc` against a fake bpftool (no root, nothing loaded into the
kernel): what load and unload do when a step fails or cannot see."""

from __future__ import annotations

import pytest

from linkemu.bed import bpfcc
from linkemu.errors import LinkemuError


class FakeKernel:
    """bpftool and /proc's list of congestion controls, in memory."""

    def __init__(self, monkeypatch, *, fail_build=(), show_error=None):
        self.regs: dict[str, int] = {}
        self.calls: list[list[str]] = []
        self.show_error = show_error
        self.fail_build = set(fail_build)
        monkeypatch.setattr(bpfcc, "require_support", lambda: None)
        monkeypatch.setattr(bpfcc.shutil, "which", lambda t: f"/usr/sbin/{t}")
        monkeypatch.setattr(bpfcc, "available",
                            lambda: ["reno", "cubic", *sorted(self.regs)])
        monkeypatch.setattr(bpfcc, "build", self.build)
        monkeypatch.setattr(bpfcc, "_run", self.run)

    def build(self, alg):
        if alg.name in self.fail_build:
            raise LinkemuError(f"compiling {alg.name} (lfp_cc.bpf.c) failed (exit 1)")
        return f"/build/{alg.name}.bpf.o"

    def run(self, cmd, what, timeout=120):
        import json
        self.calls.append(cmd)
        if cmd[:4] == ["bpftool", "-j", "struct_ops", "show"]:
            if self.show_error:
                raise LinkemuError(f"{what} failed (exit 255):\n  {self.show_error}")
            return json.dumps([{"id": i, "name": n, "kernel_struct_ops": "tcp_congestion_ops"}
                               for n, i in self.regs.items()])
        if cmd[:3] == ["bpftool", "struct_ops", "register"]:
            name = cmd[3].rsplit("/", 1)[1].split(".")[0]
            self.regs[name] = 100 + len(self.regs)
            return ""
        if cmd[:3] == ["bpftool", "struct_ops", "unregister"]:
            del self.regs[cmd[-1]]
            return ""
        raise AssertionError(f"unexpected command {cmd}")


def test_load_twice_registers_once(monkeypatch):
    k = FakeKernel(monkeypatch)
    assert bpfcc.load() == ["lfp_fixed", "lfp_adapt"]
    assert bpfcc.load() == []
    assert sorted(k.regs) == ["lfp_adapt", "lfp_fixed"]
    assert bpfcc.unload(["lfp_fixed"]) == ["lfp_fixed"]
    assert bpfcc.unload(["lfp_fixed"]) == []               # not loaded: nothing to do
    assert list(k.regs) == ["lfp_adapt"]


@pytest.mark.parametrize("names", [["nosuch"], ["lfp_fixed", "LFP_FIXED"], [""]])
def test_names_are_checked_before_anything_runs(monkeypatch, names):
    k = FakeKernel(monkeypatch)
    for fn in (bpfcc.load, bpfcc.unload):
        with pytest.raises(bpfcc.UsageError, match="unknown BPF congestion control"):
            fn(names)
    with pytest.raises(bpfcc.UsageError):
        bpfcc.stats(names[-1])
    assert k.calls == []


def test_a_failed_load_leaves_nothing_registered(monkeypatch):
    """`cc load` of both, the second failing to build: the first, which this
    call registered, is unregistered again (all or nothing), so no
    algorithm stays in the kernel that the command reported as failed."""
    k = FakeKernel(monkeypatch, fail_build={"lfp_adapt"})
    with pytest.raises(LinkemuError, match="compiling lfp_adapt"):
        bpfcc.load()
    assert k.regs == {}
    assert ["bpftool", "struct_ops", "unregister", "name", "lfp_fixed"] in k.calls


def test_a_failed_load_keeps_what_was_there_before(monkeypatch):
    k = FakeKernel(monkeypatch, fail_build={"lfp_adapt"})
    bpfcc.load(["lfp_fixed"])
    with pytest.raises(LinkemuError):
        bpfcc.load()
    assert list(k.regs) == ["lfp_fixed"]


def test_unload_that_cannot_see_says_so(monkeypatch):
    """Without root, bpftool cannot list struct_ops (exit 255, 'Operation
    not permitted'): unload must fail saying why, not report 'none (not
    loaded)' while both stay registered."""
    k = FakeKernel(monkeypatch)
    bpfcc.load()
    k.show_error = "can't get next map: Operation not permitted"
    with pytest.raises(LinkemuError, match="Operation not permitted"):
        bpfcc.unload()
    assert sorted(k.regs) == ["lfp_adapt", "lfp_fixed"]


def test_unload_without_bpftool_says_so(monkeypatch):
    FakeKernel(monkeypatch)
    monkeypatch.setattr(bpfcc.shutil, "which", lambda t: None)
    with pytest.raises(LinkemuError, match="bpftool"):
        bpfcc.unload(["lfp_fixed"])


def test_stats_of_an_algorithm_not_loaded_says_so(monkeypatch):
    """bpftool finds no map lfp_fixed_st and says nothing (exit 255, no
    output): the error was 'reading lfp_fixed_st (is lfp_fixed loaded?)
    failed (exit 255):' and a blank line."""
    k = FakeKernel(monkeypatch)
    run = k.run

    def run_no_map(cmd, what, timeout=120):
        if cmd[:4] == ["bpftool", "-j", "map", "dump"]:
            raise LinkemuError(f"{what} failed (exit 255):\n  ")
        return run(cmd, what, timeout)
    monkeypatch.setattr(bpfcc, "_run", run_no_map)
    with pytest.raises(LinkemuError, match=r"lfp_fixed is not loaded.*linkemu cc load lfp_fixed"):
        bpfcc.stats("lfp_fixed")
