"""OwdRun (linkemu.instruments.owd) when a side misbehaves, with stand-in
processes for owdprobe (no namespaces, no root): each failure is a
LinkemuError naming the side, its exit status and its stderr's tail, never
a json, subprocess or KeyError traceback."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from linkemu.errors import LinkemuError, UsageError
from linkemu.instruments import owd

SENDER_SUMMARY = {"tool": "owdprobe", "mode": "send", "sent": 10, "error": None}
RECEIVER_SUMMARY = {"tool": "owdprobe", "mode": "recv", "received": 10, "lost": 0, "error": None}


def stand_in(script: str) -> subprocess.Popen:
    """A process that plays one side of owdprobe: script is Python."""
    return subprocess.Popen([sys.executable, "-c", "import os, signal, sys, time\n" + script],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def prints(summary: dict, code: int = 0, stderr: str = "") -> str:
    return f"sys.stderr.write({stderr!r}); print({json.dumps(summary)!r}); sys.exit({code})"


def finish(send_script: str, recv_script: str, spec: owd.ProbeSpec | None = None) -> dict:
    run = owd.OwdRun(None, spec or owd.ProbeSpec(count=10))
    run.send, run.recv = stand_in(send_script), stand_in(recv_script)
    return run.finish()


class ShortWaits(owd.ProbeSpec):
    """A spec whose sides get 0.5 s to end (a stand-in that hangs)."""

    def sender_wait_s(self) -> float:
        return 0.5

    def receiver_wait_s(self) -> float:
        return 0.5


def test_both_sides_summaries():
    out = finish(prints(SENDER_SUMMARY), prints(RECEIVER_SUMMARY))
    assert out == {"sender": SENDER_SUMMARY, "receiver": RECEIVER_SUMMARY}


def test_receiver_printing_garbage():
    """Exit 0 but no JSON (was: json.JSONDecodeError)."""
    with pytest.raises(LinkemuError) as e:
        finish(prints(SENDER_SUMMARY), "print('Segmentation fault?'); sys.stderr.write('hm\\n')")
    msg = str(e.value)
    assert "owdprobe receiver printed no JSON summary" in msg
    assert "exit status 0" in msg and "'Segmentation fault?'" in msg and msg.endswith(": hm")


def test_receiver_killed_mid_output():
    """Half a summary, then SIGKILL: the side, the signal, its last words
    (was: "receiver failed (-9)")."""
    half = json.dumps(RECEIVER_SUMMARY)[:30]
    with pytest.raises(LinkemuError) as e:
        finish(prints(SENDER_SUMMARY),
               f"sys.stderr.write('owdprobe: recv: going\\n'); sys.stderr.flush(); "
               f"sys.stdout.write({half!r}); sys.stdout.flush(); os.kill(os.getpid(), signal.SIGKILL)")
    msg = str(e.value)
    assert "owdprobe receiver" in msg and "killed by SIGKILL" in msg
    assert "owdprobe: recv: going" in msg


def test_receiver_timeout():
    """A receiver that never ends is killed after its wait, and named
    (was: subprocess.TimeoutExpired)."""
    with pytest.raises(LinkemuError) as e:
        finish(prints(SENDER_SUMMARY),
               "sys.stderr.write('waiting for frames\\n'); sys.stderr.flush(); time.sleep(60)",
               ShortWaits(count=10))
    msg = str(e.value)
    assert "owdprobe receiver did not end within 0.5 s (killed)" in msg
    assert msg.endswith(": waiting for frames")


def test_sender_timeout():
    with pytest.raises(LinkemuError) as e:
        finish("time.sleep(60)", prints(RECEIVER_SUMMARY), ShortWaits(count=10))
    assert "owdprobe sender did not end within 0.5 s (killed): (nothing on stderr)" in str(e.value)


@pytest.mark.parametrize("side", ["sender", "receiver"])
@pytest.mark.parametrize("printed", [{}, [1, 2], {"tool": "owdprobe", "mode": "other"}])
def test_json_that_is_not_this_sides_summary(side, printed):
    """Valid JSON, but not owdprobe's summary of this side: refused here,
    not a KeyError in the caller (was: returned as the summary)."""
    scripts = {"sender": prints(SENDER_SUMMARY), "receiver": prints(RECEIVER_SUMMARY)}
    scripts[side] = prints(printed)
    with pytest.raises(LinkemuError) as e:
        finish(scripts["sender"], scripts["receiver"])
    assert f"owdprobe {side} printed no JSON summary" in str(e.value)


def test_sender_error_exit_with_summary():
    failed = dict(SENDER_SUMMARY, error="sendmmsg: Connection refused")
    err = "".join(f"line {i}\n" for i in range(8))
    with pytest.raises(LinkemuError) as e:
        finish(prints(failed, code=1, stderr=err), prints(RECEIVER_SUMMARY))
    msg = str(e.value)
    assert msg.startswith("owdprobe sender failed (exit status 1): sendmmsg: Connection refused: ")
    # the tail of stderr: its last STDERR_TAIL_LINES lines
    assert msg.endswith("line 3 / line 4 / line 5 / line 6 / line 7") and "line 2" not in msg


def test_bad_arguments_are_a_usage_error():
    with pytest.raises(UsageError, match="owdprobe: send: --ip-len 9"):
        finish("sys.stderr.write('owdprobe: send: --ip-len 9\\n'); sys.exit(2)",
               prints(RECEIVER_SUMMARY))


@pytest.fixture
def start_with(monkeypatch):
    """OwdRun.start() with the stand-in receiver script given (the sender
    never starts if the receiver does not)."""
    monkeypatch.setattr(owd, "tool_cpu_pair", lambda: (None, None))
    monkeypatch.setattr(owd.netns, "ns_exec_argv", lambda ns, cmd, cpus=None: cmd)
    monkeypatch.setattr(owd, "RECEIVER_START_GRACE_S", 0.5)
    monkeypatch.setattr(owd, "RECEIVER_READY_WAIT_S", 1.0)

    def start(recv_script: str) -> None:
        recv = [sys.executable, "-c", "import sys, time\n" + recv_script]
        monkeypatch.setattr(owd.OwdRun, "_argv", lambda self: (recv, ["true"], "r", "s"))
        owd.OwdRun(None, owd.ProbeSpec()).start()
    return start


def test_receiver_that_says_something_else_and_goes_on(start_with):
    """Not "ready", and still running: killed after the grace, named
    (was: subprocess.TimeoutExpired from its wait)."""
    with pytest.raises(LinkemuError) as e:
        start_with("print('hello', flush=True); sys.stderr.write('odd\\n'); sys.stderr.flush(); "
                   "time.sleep(60)")
    msg = str(e.value)
    assert "owdprobe receiver did not start (still running after 0.5 s, killed; " in msg
    assert "printed 'hello' instead of 'ready'" in msg and msg.endswith(": odd")


def test_receiver_that_exits_silently(start_with):
    with pytest.raises(LinkemuError) as e:
        start_with("sys.exit(1)")
    assert str(e.value) == ("owdprobe receiver did not start (exit status 1; printed nothing): "
                            "(nothing on stderr)")


def test_receiver_that_hangs_before_saying_anything(start_with):
    """Nothing on stdout, still running: its first line was waited for for
    ever (readline). Now it is killed after the wait, and named."""
    with pytest.raises(LinkemuError) as e:
        start_with("time.sleep(60)")
    assert "owdprobe receiver did not start (still running after 0.5 s, killed; printed " \
           "nothing)" in str(e.value)
