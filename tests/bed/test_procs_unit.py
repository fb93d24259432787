"""Which processes count as a running linkemud: the leftover and contention
checks (kit.quiet.other_daemons, the lab's other_pollers) rely on it."""

from __future__ import annotations

import subprocess
import sys
import time

from linkemu.bed import procs


def _stand_in(tmp_path, *args):
    """A sleeping process whose argv[1] is a file called linkemud."""
    fake = tmp_path / "linkemud"
    fake.write_text("import time\ntime.sleep(30)\n")
    p = subprocess.Popen([sys.executable, str(fake), *args])
    deadline = time.monotonic() + 5
    while procs.cmdline(p.pid)[1:2] != [str(fake)] and time.monotonic() < deadline:
        time.sleep(0.01)
    return p


def test_a_daemon_counts_and_a_one_shot_run_does_not(tmp_path):
    daemon = _stand_in(tmp_path, "--file-prefix", "zz-test", "--", "--control", "/tmp/x")
    probes = [_stand_in(tmp_path, "--help"), _stand_in(tmp_path, "--check", "delay 1ms"),
              _stand_in(tmp_path, "--version")]
    try:
        found = procs.any_linkemud()
        assert daemon.pid in found
        assert not [p.pid for p in probes if p.pid in found]
        assert procs.find_linkemud("zz-test") == [daemon.pid]
    finally:
        for p in [daemon, *probes]:
            p.kill()
            p.wait()
    assert daemon.pid not in procs.any_linkemud()
