"""`linkemu demo`: the whole story in one command, and nothing left after it,
whether it finishes or is interrupted."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

from kit import cli_env, leftovers, linkemu, suite_bed

BED = suite_bed(__file__)


def test_demo_runs_and_cleans_up(bed, linkemud_bin):
    cp = linkemu("demo", "--bed", BED, "--seconds", "1", timeout=180)
    assert cp.returncode == 0, (cp.stdout, cp.stderr)
    out = cp.stdout
    for needle in ("[1/7] bringing up test bed", "[7/7] tearing down", "(owdprobe)",
                   "iperf3 TCP:", "iperf3 UDP:", "a2b  [delay 10ms loss 0.1% limit 10000]",
                   "conservation (rx + dup = tx + dropped + in flight): yes"):
        assert needle in out, (needle, out)
    # 0.1 % loss each way loses a ping in ~4 % of runs, so the reply count
    # is not fixed; what must hold is that the emulator counted every
    # missing reply as a loss (nothing lost without a counter).
    replies = int(re.search(r"ping: (\d+)/20 replies", out).group(1))
    drop_lines = re.findall(r"^\s*dropped \d+:.*$", out, re.M)
    losses = [int(m.group(1)) if (m := re.search(r"\bloss (\d+)", line)) else 0
              for line in drop_lines]
    assert len(losses) == 2, out
    # The demo's limit holds what the bed carries through 10 ms: TCP is not
    # cut by queue drops (with netem's 1000 it was, thousands per run).
    assert not any(re.search(r"queue_full [1-9]", line) for line in drop_lines), out
    assert replies >= 1 and 20 - replies <= sum(losses), out
    assert leftovers(BED) == []


def test_demo_interrupted_leaves_nothing(bed, linkemud_bin):
    p = subprocess.Popen([sys.executable, "-m", "linkemu", "demo", "--bed", BED, "--seconds", "3"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         env=cli_env(), start_new_session=True)
    try:
        # Wait until the daemon runs and traffic flows, then Ctrl-C the
        # whole process group, as a terminal would.
        deadline = time.monotonic() + 60
        seen = ""
        while "[4/7]" not in seen:
            line = p.stdout.readline()
            assert line, f"demo ended early: {seen}"
            seen += line
            assert time.monotonic() < deadline
        time.sleep(1)
        os.killpg(p.pid, signal.SIGINT)
        out, _ = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    assert p.returncode == 1
    assert "interrupted" in out and "tearing down" in out
    assert leftovers(BED) == []
