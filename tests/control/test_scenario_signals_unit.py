"""`linkemu scenario play` stopped by Ctrl-C or SIGTERM: the log and the
output must list every step the daemon received, whenever the signal
came. A step whose `set` has reached linkemud has changed the link (or is
staged and will, at its time): a log without it tells the user the link is
in a state it is not in.

The player runs in-process (cli.main) against the fake daemon on a bed
whose run directory is a temporary one; the signal is sent to the main
thread, where the CLI's player runs and where a real `kill` of the
single-threaded player lands."""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
import threading
from pathlib import Path

import pytest

from fakedaemon import FakeDaemon
from linkemu.bed import paths
from linkemu.cli import main as cli
from linkemu.daemon import control


@pytest.fixture
def fake_bed(monkeypatch):
    """A bed 'fk' whose run dir is a temporary one (short: a Unix socket
    path has 108 bytes), a fake daemon on its control socket; the CLI is
    made to believe it runs as root."""
    d = tempfile.mkdtemp(prefix="lc", dir="/tmp")
    monkeypatch.setattr(paths, "RUN_ROOT", Path(d))
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    (paths.RUN_ROOT / "fk").mkdir()
    f = FakeDaemon(str(control.socket_path("fk")))
    yield f
    f.close()
    shutil.rmtree(d, ignore_errors=True)


DENSE = ('[[step]]\nat = "0s"\na2b = "delay 1ms"\nb2a = "delay 2ms"\n'
         + "".join(f'[[step]]\nat = "{30 * i}ms"\na2b = "delay {i}ms"\n' for i in range(1, 8)))


@pytest.fixture
def stray_signals_held():
    """A signal that comes after the play returned (a timer late on a busy
    machine) is recorded here, not taken by pytest as the user's Ctrl-C."""
    old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    for s in old:
        signal.signal(s, lambda *a: None)
    yield
    for s, h in old.items():
        signal.signal(s, h)


def _signal_main_when(fake: FakeDaemon, is_the_line, sig: int, after_s: float = 0.0):
    """Send sig to the main thread (where the CLI's player runs) after_s
    after the fake receives the first line for which is_the_line(line);
    at once (after_s 0) means while the fake still holds its reply.
    Returns the timer, or None."""
    answer = FakeDaemon.command.__get__(fake)
    main = threading.main_thread().ident
    timers = []

    def command(line):
        if not timers and is_the_line(line):
            t = threading.Timer(after_s, signal.pthread_kill, (main, sig))
            timers.append(t)
            if after_s:
                t.start()
            else:
                signal.pthread_kill(main, sig)
        return answer(line)

    fake.command = command
    return timers


def _play(fake_bed, tmp_path, text: str) -> tuple[int, dict]:
    f = tmp_path / "s.toml"
    f.write_text(text)
    log = tmp_path / "log.json"
    rc = cli.main(["scenario", "play", str(f), "--bed", "fk", "--log", str(log)])
    return rc, json.loads(log.read_text())


def _received_sets(fake: FakeDaemon) -> list[tuple[str, str]]:
    """(direction, grammar) of every `set` the fake received, in order."""
    out = []
    for line in fake.received:
        w = line.split()
        if w and w[0] == "set":
            rest = w[2:]
            if rest[:1] == ["at"]:
                rest = rest[2:]
            out.append((w[1], " ".join(rest)))
    return out


def _logged_sets(log: dict) -> list[tuple[str, str]]:
    return [(d, x["config"]) for st in log["steps"] for d, x in st["set"].items()]


@pytest.mark.parametrize("timed", [False, True], ids=["untimed", "timed"])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_while_a_step_is_answered_logs_that_step(fake_bed, tmp_path, capsys,
                                                         stray_signals_held, timed, sig):
    """The signal comes while linkemud answers step 3's `set`: the step has
    reached it. It was missing from the log and the output."""
    fake_bed.timed = timed
    fake_bed.reply_delay_s = 0.005
    _signal_main_when(fake_bed, lambda l: l.startswith("set a2b") and l.endswith(" delay 2ms"),
                      sig)
    rc, log = _play(fake_bed, tmp_path, DENSE)
    assert rc == 1 and log["state"] == "cancelled", log
    got = _received_sets(fake_bed)
    assert ("a2b", "delay 2ms") in got
    assert _logged_sets(log) == got
    said = capsys.readouterr().err
    assert "scenario cancelled" in said
    for st in log["steps"]:
        assert f"scenario: step {st['step']} at" in said, said


@pytest.mark.parametrize("timed", [False, True], ids=["untimed", "timed"])
def test_a_signal_at_any_moment_of_the_play_leaves_a_truthful_log(fake_bed, tmp_path,
                                                                  stray_signals_held, timed):
    """Ctrl-C at moments spread over the play (every 7 ms from the first
    `set`): whatever the player was doing (waiting, sending, reading the
    reply, confirming, writing the log), the log lists exactly the steps
    linkemud received and says the play was cancelled."""
    fake_bed.timed = timed
    fake_bed.reply_delay_s = 0.002
    interrupted = 0
    for k in range(0, 200, 7):
        fake_bed.received.clear()
        timers = _signal_main_when(fake_bed, lambda l: l.startswith("set"), signal.SIGINT,
                                   k / 1000 or 1e-6)
        rc, log = _play(fake_bed, tmp_path, DENSE)
        timers[0].cancel()
        if rc == 0:          # the play ended before the signal (a busy machine)
            continue
        interrupted += 1
        assert log["state"] == "cancelled", (k, log["state"])
        assert _logged_sets(log) == _received_sets(fake_bed), (k, log["steps"])
    assert interrupted >= 20
