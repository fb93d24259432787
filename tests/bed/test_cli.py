"""Command-line behaviour: usage errors exit 2 with a message, the daemon's
grammar errors come through as exit 2 naming the bad word."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from kit import cli_env, dpdk_only, linkemu, suite_bed
from linkemu.bed import cpus, isolation, paths, procs, testbed

BED = suite_bed(__file__)


@pytest.mark.parametrize("args, needle", [
    (["bogus"], "invalid choice"),
    ([], "required"),
    (["testbed"], "required"),
    (["testbed", "sideways"], "invalid choice"),
    (["run", "--pmd", "foo"], "invalid choice"),
    (["run", "--layout", "diagonal"], "invalid choice"),
    (["run", "--seed", "x"], "invalid int"),
    (["run", "--lcores", "one"], "--lcores"),
    (["run", "--seed", "-1"], "--seed"),
    (["testbed", "status", "--bed", "NO!"], "bad bed name"),
    (["exec", "src", "--bed", BED], "no command"),
    (["exec", "middle", "--", "true"], "invalid choice"),
    (["stop", "--frobnicate"], "unrecognized"),
    (["run", "--isolate-lcore", "--detach"], "--isolate-lcore needs the run in the foreground"),
    (["run", "--isolate-lcore", "--io", "kernel"], "the kernel plane (--io kernel) has none"),
    # --io dpdk: under LINKEMU_TEST_IO=kernel the kernel plane's refusal
    # of --isolate-lcore (above) would come first.
    (["run", "--io", "dpdk", "--isolate-lcore", "--lcores", "0-1023"],
     "nothing would be left for the others"),
])
def test_usage_errors_exit_2(args, needle):
    cp = linkemu(*args)
    assert cp.returncode == 2, (args, cp.returncode, cp.stdout, cp.stderr)
    assert needle in cp.stderr, cp.stderr
    assert "Traceback" not in cp.stderr


def test_help_and_version():
    cp = linkemu("--help")
    assert cp.returncode == 0 and "testbed" in cp.stdout
    cp = linkemu("--version")
    assert cp.returncode == 0 and "0.1.0" in cp.stdout


def test_stop_without_daemon_exits_1(bed_up):
    cp = linkemu("stop", "--bed", BED)
    assert cp.returncode == 1
    assert "no linkemud is running" in cp.stderr


def test_exec_passes_exit_code(bed_up):
    cp = linkemu("exec", "dst", "--bed", BED, "--", "sh", "-c", "exit 7")
    assert cp.returncode == 7
    cp = linkemu("exec", "src", "--bed", BED, "--", "ip", "-4", "-br", "addr", "show", "eth0")
    assert cp.returncode == 0 and bed_up.addr_src in cp.stdout


def test_exec_without_bed_exits_1(bed):
    testbed.down(bed)
    cp = linkemu("exec", "src", "--bed", BED, "--", "true")
    assert cp.returncode == 1
    assert "testbed up" in cp.stderr


def test_grammar_error_exits_2_naming_the_word(bed_up, linkemud_bin):
    cp = linkemu("run", "--bed", BED, "--a2b", "dealy 5ms", "--detach")
    assert cp.returncode == 2, (cp.stdout, cp.stderr)
    assert "'dealy'" in cp.stderr
    assert "--a2b" in cp.stderr
    assert "Traceback" not in cp.stderr
    # A usage error leaves no daemon and no DPDK state behind.
    assert procs.find_linkemud(bed_up.file_prefix) == []
    assert testbed.status(bed_up)["daemon"]["running"] is False


def test_run_checks_both_links_before_building_the_bed(bed, linkemud_bin):
    """First contact: a misspelt word is refused before anything is built,
    naming the direction and the word probably meant."""
    testbed.down(bed)
    cp = linkemu("run", "--bed", BED, "--a2b", "delay 10ms", "--b2a", "lose 1%", "--detach")
    assert cp.returncode == 2, (cp.stdout, cp.stderr)
    assert "--b2a" in cp.stderr and "unknown word 'lose': did you mean 'loss'?" in cp.stderr
    assert "bringing up" not in cp.stderr
    assert not testbed.status(bed)["up"]
    cp = linkemu("run", "--bed", BED, "--a2b", "delay 10ms lose 1%", "--detach")
    assert cp.returncode == 2 and "did you mean the word 'loss'?" in cp.stderr, cp.stderr
    assert not testbed.status(bed)["up"]


def test_grammar_error_in_b2a(bed_up, linkemud_bin):
    cp = linkemu("run", "--bed", BED, "--b2a", "loss 200%", "--detach")
    assert cp.returncode == 2, (cp.stdout, cp.stderr)
    assert "--b2a" in cp.stderr


def test_run_twice_on_one_bed_is_refused(run_link):
    run_link("delay 1ms", "delay 1ms")
    cp = linkemu("run", "--bed", BED, "--detach")
    assert cp.returncode == 1
    assert "already running" in cp.stderr


FAILING_AF_XDP = """#!/bin/sh
# Stand-in for a machine where af_xdp cannot work: fail like linkemud would.
case "$*" in *net_af_xdp*) echo "linkemud: af_xdp: cannot create socket" >&2; exit 1;; esac
exec {real} "$@"
"""


def test_af_xdp_failure_falls_back_to_af_packet(bed_up, linkemud_bin, tmp_path):
    dpdk_only("the af_xdp -> af_packet fallback is linkemud's")
    wrapper = tmp_path / "linkemud"
    wrapper.write_text(FAILING_AF_XDP.format(real=linkemud_bin))
    wrapper.chmod(0o755)
    env = {"LINKEMUD": str(wrapper)}
    cp = linkemu("run", "--bed", BED, "--a2b", "delay 1ms", "--detach", env=env)
    try:
        assert cp.returncode == 0, cp.stderr
        assert "retrying with af_packet" in cp.stderr
        assert "cannot create socket" in cp.stderr
        assert "af_packet" in _daemon_log()
    finally:
        stop = linkemu("stop", "--bed", BED, "--json")
    assert stop.returncode == 0, stop.stderr
    # An explicit --pmd af_xdp is not second-guessed.
    cp = linkemu("run", "--bed", BED, "--pmd", "af_xdp", "--detach", env=env)
    assert cp.returncode == 1, cp.stderr
    assert "retrying" not in cp.stderr
    assert procs.find_linkemud(bed_up.file_prefix) == []


def _daemon_log() -> str:
    from linkemu.bed import paths
    return paths.daemon_log_file(BED).read_text()


@pytest.mark.parametrize("pmd", ["af_xdp", "af_packet"])
def test_each_pmd_forwards_on_the_bed(run_link, bed_up, pmd):
    """Every --pmd choice starts on the bed with its devargs
    (testbed.PMD_DEVARGS: af_packet's qdisc bypass and 4096-frame ring,
    bench/bed_attach.py) and carries traffic both ways."""
    dpdk_only("--pmd chooses linkemud's DPDK driver")
    from linkemu.instruments import ping
    run_link("delay 1ms", "", "--pmd", pmd)
    argv = json.loads((paths.daemon_run_info_file(BED)).read_text())["argv"]
    want = [f"--vdev=net_{pmd}{i},iface={dev}" + (f",{testbed.PMD_DEVARGS[pmd]}"
                                                   if pmd in testbed.PMD_DEVARGS else "")
            for i, dev in enumerate((bed_up.host_a, bed_up.host_b))]
    assert [a for a in argv if a.startswith("--vdev=")] == want
    r = ping.ping(bed_up, count=20, interval=0.02)
    assert r.received == 20, f"{r.received}/{r.transmitted} replies over --pmd {pmd}"
    assert min(r.rtts_ms) >= 1.0


@contextlib.contextmanager
def _isolating_run():
    """A sleeper allowed on every CPU (as PID 1's workers are), and a
    foreground `linkemu run --isolate-lcore` read up to its "Ctrl-C to
    stop": yields (sleeper, run, what it said, every CPU, the lcore's).
    Afterwards the run is stopped (killed if need be), a record it left
    is recovered, so the machine gets its CPUs back whatever the test did,
    and the sleeper is killed."""
    dpdk_only("--isolate-lcore moves threads off linkemud's lcores")
    every = os.sched_getaffinity(0)
    lcore = isolation.cpus_of(cpus.default_lcores())
    if not every - lcore:
        pytest.skip("one CPU: nothing to move threads to")
    other = subprocess.Popen(["sleep", "120"], preexec_fn=lambda: os.sched_setaffinity(0, every))
    run = subprocess.Popen([sys.executable, "-m", "linkemu", "run", "--bed", BED, "--isolate-lcore",
                            "--a2b", "delay 1ms"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, env=cli_env())
    try:
        said = ""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and "Ctrl-C to stop" not in said:
            line = run.stderr.readline()
            if not line and run.poll() is not None:
                break
            said += line
        assert "Ctrl-C to stop" in said, said
        yield other, run, said, every, lcore
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
        isolation.recover_stale()
        other.kill()
        other.wait()


def test_isolate_lcore_moves_threads_for_the_run_and_gives_them_back(bed_up, linkemud_bin):
    """`linkemu run --isolate-lcore`: while the run lasts, the sleeper may
    not use the lcore's CPU; after Ctrl-C it may again."""
    with _isolating_run() as (other, run, said, every, lcore):
        assert "until the run ends (--isolate-lcore)" in said, said
        assert os.sched_getaffinity(other.pid) == every - lcore
        run.send_signal(signal.SIGINT)
        _, rest = run.communicate(timeout=120)
        assert run.returncode == 0, rest
        assert "moved threads their CPUs back" in rest, rest
        assert os.sched_getaffinity(other.pid) == every


def test_a_killed_isolating_run_is_undone_by_testbed_down(bed_up, linkemud_bin):
    """SIGKILL gives `linkemu run --isolate-lcore` no chance to give the
    threads back; its record lets `testbed down` do it."""
    with _isolating_run() as (other, run, said, every, lcore):
        assert os.sched_getaffinity(other.pid) == every - lcore
        run.kill()
        run.wait()
        assert os.sched_getaffinity(other.pid) == every - lcore  # nobody gave it back
        cp = linkemu("testbed", "down", "--bed", BED)
        assert cp.returncode == 0, cp.stderr
        assert "an ended run" in cp.stdout + cp.stderr, (cp.stdout, cp.stderr)
        assert os.sched_getaffinity(other.pid) == every
