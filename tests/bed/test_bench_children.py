"""The benchmarks stop what they started, however they end
(bench/children.py): a busy-polling linkemud or testpmd left behind by a
benchmark stopped with SIGTERM would take a CPU until someone killed it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def _bench_with_a_child(tmp_path, child_setup: str) -> tuple[subprocess.Popen, int]:
    """A stand-in benchmark: a child program in running(), its main under
    run_interruptible(), waiting; returns it and its child's pid once the
    child has run child_setup (it says so: a fixed sleep is too short when
    Python starts slowly on a loaded machine)."""
    child = f"import time; {child_setup}; print('ready', flush=True); time.sleep(60)"
    script = tmp_path / "bench.py"
    script.write_text(textwrap.dedent(f"""
        import subprocess, sys, time
        sys.path.insert(0, {str(BENCH)!r})
        from children import run_interruptible, running
        def measure():
            with running([sys.executable, "-c", {child!r}],
                         stdout=subprocess.PIPE, text=True) as p:
                assert p.stdout.readline() == "ready\\n"
                print(p.pid, flush=True)
                time.sleep(60)
        run_interruptible(measure)
    """))
    bench = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    return bench, int(bench.stdout.readline())


def test_sigterm_stops_the_child(tmp_path):
    bench, child = _bench_with_a_child(tmp_path, "pass")
    bench.send_signal(signal.SIGTERM)
    assert bench.wait(timeout=15) == 130
    assert _gone(child), "the benchmark's child outlived it"


def test_a_child_that_ignores_sigint_is_killed(tmp_path):
    # A program stuck past its SIGINT (a wedged EAL exit): SIGKILL after 10 s.
    bench, child = _bench_with_a_child(
        tmp_path, "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN)")
    bench.send_signal(signal.SIGTERM)
    assert bench.wait(timeout=30) == 130
    assert _gone(child)
