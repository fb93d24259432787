"""Which processes count as a running linkemud: the leftover and contention
checks (kit.quiet.other_daemons, the lab's other_pollers) rely on it."""

from __future__ import annotations

import subprocess
import sys

from linkemu.bed import procs


def _stand_in_script(tmp_path):
    """A script called linkemud that says it runs, then sleeps.

    Written once per test: rewriting it for every stand-in truncated the
    file under a stand-in that had exec'd but not yet read it, which then ran
    an empty script and exited (CI, stop 24)."""
    fake = tmp_path / "linkemud"
    fake.write_text("import sys, time\nprint('running', flush=True)\ntime.sleep(30)\n")
    return fake


def _stand_in(fake, *args):
    """Start the stand-in and return once it is running its sleep, not merely
    exec'd: its command line is right from exec on, before it reads fake."""
    p = subprocess.Popen([sys.executable, str(fake), *args], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline() == "running\n", f"stand-in {args} did not start"
    return p


def test_a_daemon_counts_and_a_one_shot_run_does_not(tmp_path):
    fake = _stand_in_script(tmp_path)
    daemon = _stand_in(fake, "--file-prefix", "zz-test", "--", "--control", "/tmp/x")
    probes = [_stand_in(fake, "--help"), _stand_in(fake, "--check", "delay 1ms"),
              _stand_in(fake, "--version")]
    try:
        found = procs.any_linkemud()
        assert daemon.pid in found
        assert not [p.pid for p in probes if p.pid in found]
        assert procs.find_linkemud("zz-test") == [daemon.pid]
    finally:
        for p in [daemon, *probes]:
            p.kill()
            p.wait()
            p.stdout.close()
    assert daemon.pid not in procs.any_linkemud()


def test_another_beds_daemon_is_other_and_ours_is_not(tmp_path):
    # The timing tests' contention check: a data plane started for another
    # bed counts, the bed's own does not, and neither do one-shot runs.
    from kit import other_daemons
    from linkemu.bed import testbed

    fake = _stand_in_script(tmp_path)
    prefix = testbed.bed_for("zq").file_prefix
    daemon = _stand_in(fake, "--file-prefix", prefix, "--", "--control", "/tmp/x")
    probe = _stand_in(fake, "--file-prefix", "zz-other", "--check", "delay 1ms")
    try:
        assert f"pid {daemon.pid} ({prefix})" in other_daemons(None)
        assert f"pid {daemon.pid} ({prefix})" in other_daemons("zr")
        assert not [o for o in other_daemons("zq") if o.startswith(f"pid {daemon.pid} ")]
        assert not [o for o in other_daemons(None) if o.startswith(f"pid {probe.pid} ")]
        assert (daemon.pid, [sys.executable, str(fake), "--file-prefix", prefix, "--", "--control",
                             "/tmp/x"]) in procs.linkemud_argvs()
    finally:
        for p in (daemon, probe):
            p.kill()
            p.wait()
            p.stdout.close()
