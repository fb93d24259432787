"""Scenario files: parsing, the errors for bad files, and playing against a
fake control server (no root, no DPDK)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
import threading
import time

import pytest

from fakedaemon import FakeDaemon, check_grammar
from kit import CpuWatch, require_quiet
from linkemu.daemon import scenario
from linkemu.daemon.control import ControlClient, ControlClosed, DaemonRefused
from linkemu.daemon.scenario import ScenarioError, parse_csv, parse_time, parse_toml

GOOD = """\
description = "5G uplink degrades to 4G at 10 s"

[[step]]
at = "0s"
a2b = "delay 20ms"
b2a = "delay 20ms"

[[step]]
at = "10s"
a2b = "delay 60ms loss 1%"
note = "handover"
"""


def test_good_file():
    s = parse_toml(GOOD, "good.toml")
    assert s.description == "5G uplink degrades to 4G at 10 s"
    assert [(st.at_ns, st.a2b, st.b2a) for st in s.steps] == [
        (0, "delay 20ms", "delay 20ms"), (10_000_000_000, "delay 60ms loss 1%", None)]
    assert s.steps[1].note == "handover"
    assert s.steps[1].source == "step 2 (line 8)"
    assert s.duration_ns == 10_000_000_000


@pytest.mark.parametrize("text,ns", [("0s", 0), ("1.5s", 1_500_000_000), ("250ms", 250_000_000),
                                     ("0.1s", 100_000_000), ("10us", 10_000), ("7ns", 7),
                                     ("2min", 120_000_000_000), ("1h", 3_600_000_000_000),
                                     (" 3 ms ", 3_000_000), (".5s", 500_000_000),
                                     ("1.5us", 1_500), (f"{1 << 62}ns", 1 << 62)])
def test_times(text, ns):
    assert parse_time(text) == ns


@pytest.mark.parametrize("bad,msg", [(10, "write it as a string with a unit"),
                                     ("10", "a number and a unit"), ("ten s", "bad time"),
                                     ("-1s", "bad time"), ("1.5 parsecs", "bad time"),
                                     (True, "bad time"),
                                     # past the daemon's `at` limit: refused at check time
                                     ("99999999999999999999h", "beyond 2\\^62 ns"),
                                     ("1.5ns", "finer than 1 ns")])
def test_bad_times(bad, msg):
    with pytest.raises(ValueError, match=msg):
        parse_time(bad)


BAD = [
    # (file text, expected message)
    ('[[step]]\nat = "0s"\na2b = "delay 1ms"\n[[step]\n', r"bad\.toml:4:\d+: TOML syntax error"),
    ('[[step]]\na2b = "delay 1ms"\n', r"bad\.toml:1: step 1: missing 'at'"),
    ('[[step]]\nat = "2s"\na2b = "delay 1ms"\n\n[[step]]\nat = "1s"\na2b = "delay 2ms"\n',
     r"bad\.toml:6: step 2: at 1s is not after step 1's 2s \(steps must be in time order\)"),
    ('[[step]]\nat = "1s"\na2b = "delay 1ms"\n[[step]]\nat = "1s"\nb2a = "delay 2ms"\n',
     r"bad\.toml:5: step 2: at 1s is not after"),
    ('[[step]]\nat = "0s"\nx2y = "delay 1ms"\n',
     r"bad\.toml:3: step 1: unknown key 'x2y' \(expected at, a2b, b2a, note\) "
     r"\(directions are a2b and b2a\)"),
    ('[[step]]\nat = "10"\na2b = "delay 1ms"\n', r"bad\.toml:2: step 1: at: bad time '10'"),
    ('[[step]]\nat = 10\na2b = "delay 1ms"\n',
     r"bad\.toml:2: step 1: at: bad time 10: write it as a string with a unit, e\.g\. \"10s\""),
    ('[[step]]\nat = "0s"\n', r"bad\.toml:1: step 1: sets neither a2b nor b2a"),
    ('[[step]]\nat = "0s"\na2b = 5\n', r"bad\.toml:3: step 1: a2b must be a string"),
    ('a2b = "delay 1ms"\n', r"bad\.toml:1: unknown key 'a2b' .*inside a \[\[step\]\]"),
    ('description = "x"\n', r"bad\.toml: no steps"),
    ('step = "x"\n', r"bad\.toml:1: 'step' must be a list of tables"),
    ('end = "1s"\n[[step]]\nat = "2s"\na2b = ""\n', r"bad\.toml:1: end 1s comes before"),
    ('[[step]]\nat = "0s"\na2b = "delay 1ms"\n[[series]]\nevery = "1s"\na2b = "delay {d}ms"\n'
     'values = { e = [1, 2] }\n', r"bad\.toml:6: series 1: a2b uses \{d\}, which is not in "
                                 r"values \(e\)"),
    ('[[series]]\nevery = "1s"\na2b = "delay {d}ms"\nvalues = { d = [1, 2], l = [1] }\n',
     r"bad\.toml:4: series 1: values\.l has 1 entries, the others 2"),
    ('[[series]]\na2b = "delay {d}ms"\nvalues = { d = [1, 2] }\n',
     r"bad\.toml:1: series 1: give either every"),
    ('[[step]]\nat = "1s"\na2b = "delay 1ms"\n[[series]]\nat = ["0s", "1s"]\n'
     'a2b = "delay {d}ms"\nvalues = { d = [1, 2] }\n',
     r"bad\.toml:4: series 1 row 2 \(line 4\) and step 1 \(line 1\) both set a2b at 1s"),
]


# A NUL reached `linkemud --check` as an argument: subprocess's ValueError
# "embedded null byte" was a traceback; a nested template field was a
# KeyError traceback.
BAD += [
    ('[[step]]\nat = "0s"\na2b = "delay\\u00001ms"\n',
     r"bad\.toml:3: step 1: a2b holds the control character '\\x00'"),
    ('[[step]]\nat = "0s"\nb2a = "delay 1ms\\u0007"\n',
     r"bad\.toml:3: step 1: b2a holds the control character '\\x07'"),
    ('[[series]]\nevery = "1s"\na2b = "delay {d}ms"\nvalues = { d = ["1", "2\\u0000"] }\n',
     r"bad\.toml:3: series 1: row 2: a2b holds the control character '\\x00'"),
    ('[[series]]\nevery = "1s"\na2b = "delay {d:>{w}}ms"\nvalues = { d = [1, 2] }\n',
     r"bad\.toml:3: series 1: a2b uses \{w\}, which is not in values \(d\)"),
]


@pytest.mark.parametrize("text,msg", BAD)
def test_bad_files_name_file_line_step_and_problem(text, msg):
    with pytest.raises(ScenarioError, match=msg):
        parse_toml(text, "bad.toml")


def test_series_expands_and_merges():
    s = parse_toml('[[step]]\nat = "0s"\nb2a = "delay 5ms"\n'
                   '[[series]]\nstart = "0s"\nevery = "500ms"\n'
                   'a2b = "delay {delay}ms loss {loss}%"\n'
                   'values = { delay = [20, 40, 60.5], loss = [0, 0.1, 1e-7] }\n', "s.toml")
    assert [(st.at_ns, st.a2b, st.b2a) for st in s.steps] == [
        (0, "delay 20ms loss 0%", "delay 5ms"),
        (500_000_000, "delay 40ms loss 0.1%", None),
        (1_000_000_000, "delay 60.5ms loss 0.0000001%", None)]
    assert "series 1 row 1" in s.steps[0].source and "step 1" in s.steps[0].source


def test_series_with_explicit_times():
    s = parse_toml('[[series]]\nstart = "1s"\nat = ["0s", "250ms", "1s"]\n'
                   'b2a = "delay {d}"\nvalues = { d = ["1ms", "2ms", "3ms"] }\n')
    assert [(st.at_ns, st.b2a) for st in s.steps] == [
        (1_000_000_000, "delay 1ms"), (1_250_000_000, "delay 2ms"), (2_000_000_000, "delay 3ms")]


def test_csv_trace():
    s = parse_csv("# uplink trace\ntime_s,a2b,b2a\n0,delay 20ms,delay 20ms\n"
                  "1.5,delay 30ms,\n2,,\"delay 5ms\"\n", "t.csv")
    assert [(st.at_ns, st.a2b, st.b2a) for st in s.steps] == [
        (0, "delay 20ms", "delay 20ms"), (1_500_000_000, "delay 30ms", None),
        (2_000_000_000, None, "delay 5ms")]
    s = parse_csv("at,b2a\n0s,delay 1ms\n250ms,delay 2ms\n")
    assert s.steps[1].at_ns == 250_000_000


@pytest.mark.parametrize("text,msg", [
    ("when,a2b\n0,delay 1ms\n", r"t\.csv:1: the first column must be time_s"),
    ("time_s,a2c\n0,delay 1ms\n", r"t\.csv:1: unknown column 'a2c'"),
    ("time_s,a2b\n1,delay 1ms\n0.5,delay 2ms\n", r"t\.csv:3: row 2: time 500ms is not after"),
    ("time_s,a2b\nsoon,delay 1ms\n", r"t\.csv:2: row 1: bad time_s 'soon'"),
    ("time_s,a2b\n0,\n", r"t\.csv:2: row 1: sets neither"),
    ("time_s,a2b\n0,delay 1ms,extra\n", r"t\.csv:2: row 1: 3 cells, the header has 2"),
    ("time_s,a2b\n0,delay\x001ms\n", r"t\.csv:2: row 1: a2b holds the control character '\\x00'"),
    ("time_s,a2b\n0,delay 1ms " + "x" * 4000 + "\n", r"t\.csv:2: row 1: a2b is longer than 4000 bytes"),
    # Quoting errors: Python's csv reader, unless strict, takes an unclosed
    # quote to the end of the line and text after a closing quote as more
    # of the cell, so a broken file would play something else than written.
    ("at,a2b\n0s,\"delay 1ms\n", r"t\.csv:2: row 1: a quoted cell is not closed"),
    ("\"time_s,a2b\n0,delay 1ms\n", r"t\.csv:1: a quoted cell is not closed"),
    ("time_s,a2b\n0,\"delay\" 1ms\n", r"t\.csv:2: row 1: text after a quoted cell's closing quote"),
])
def test_bad_csv(text, msg):
    with pytest.raises(ScenarioError, match=msg):
        parse_csv(text, "t.csv")


def test_load_missing_file_and_suffix(tmp_path):
    with pytest.raises(ScenarioError, match="no such file"):
        scenario.load(tmp_path / "none.toml")
    p = tmp_path / "x.csv"
    p.write_text("time_s,a2b\n0,delay 1ms\n")
    assert scenario.load(p).steps[0].a2b == "delay 1ms"


def test_describe():
    text = scenario.describe(parse_toml(GOOD, "good.toml"))
    assert "good.toml: 2 step(s), 10s" in text and "a2b 'delay 60ms loss 1%'" in text


# --- grammar checked by linkemud --check ------------------------------------------------------

def _fake_linkemud(d: str, with_check: bool) -> str:
    """A script that behaves like `linkemud --help` / `linkemud --check G`."""
    p = os.path.join(d, "linkemud")
    opts = "  --check GRAMMAR   validate and exit" if with_check else ""
    with open(p, "w") as f:
        f.write(f"""#!/bin/sh
if [ "$1" = "--help" ]; then echo "usage: linkemud"; echo "{opts}"; exit 0; fi
case "$2" in *dealy*) echo "linkemud: unknown word 'dealy' (expected delay, ...)" >&2; exit 2;; esac
exit 0
""")
    os.chmod(p, os.stat(p).st_mode | stat.S_IXUSR)
    return p


def test_check_grammar_with_and_without_check(tmp_path):
    s = parse_toml(GOOD.replace('"delay 60ms loss 1%"', '"dealy 60ms"'), "g.toml")
    d1 = tmp_path / "old"
    d1.mkdir()
    assert scenario.check_grammar(s, _fake_linkemud(str(d1), False)) is False
    d2 = tmp_path / "new"
    d2.mkdir()
    with pytest.raises(ScenarioError, match=r"g\.toml:8: step 2: a2b: unknown word 'dealy'"):
        scenario.check_grammar(s, _fake_linkemud(str(d2), True))
    assert scenario.check_grammar(parse_toml(GOOD, "g.toml"), _fake_linkemud(str(d2), True))


# --- playing ---------------------------------------------------------------------------

def _serving(cls):
    """A fake daemon of class cls on a control socket in a fresh directory,
    closed and removed after the test."""
    d = tempfile.mkdtemp(prefix="lc", dir="/tmp")
    f = cls(os.path.join(d, "control.sock"))
    yield f
    f.close()
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def fake():
    yield from _serving(FakeDaemon)


def sets(fake):
    # The player also asks for `stats` (to relate the daemon's clock to
    # ours) and `help` (whether the daemon takes timed changes).
    return [l for l in fake.received if l not in ("stats", "help")]


def test_play_sends_each_step_on_time_and_logs_it(fake, tmp_path):
    s = parse_toml('[[step]]\nat = "0s"\na2b = "delay 1ms"\nb2a = "delay 2ms"\n'
                   '[[step]]\nat = "50ms"\na2b = "delay 3ms"\n'
                   '[[step]]\nat = "120ms"\nb2a = ""\n', "p.toml")
    log = tmp_path / "log.json"
    events = []
    # The player's lateness is this process's: it is a verdict only when
    # the process had its CPU (a step 3.9 ms late was seen on a busy VM).
    watch = CpuWatch.this_process().start()
    with ControlClient(fake.path).connect() as c:
        out = scenario.Player(s, c, log, "fk", on_step=events.append).play()
    watch.stop()
    assert sets(fake) == ["set a2b delay 1ms", "set b2a delay 2ms", "set a2b delay 3ms",
                          "set b2a"]
    assert out["state"] == "finished" and len(events) == 3
    written = json.loads(log.read_text())
    assert written == json.loads(json.dumps(out))
    steps = written["steps"]
    t0 = written["t0_ns"]
    for st, at in zip(steps, (0, 50_000_000, 120_000_000)):
        assert st["planned_ns"] == t0 + at
        # Sent after its time and, spinning for the last ms, promptly: the
        # bound is loose only for a loaded test machine.
        assert st["late_ns"] >= 0, st
        if st["late_ns"] >= 2_000_000:      # only a verdict on a quiet machine
            require_quiet(None, 0, "scenario step timing", watch)
        assert st["late_ns"] < 2_000_000, st
        assert st["sent_ns"] <= st["replied_ns"]
    assert set(steps[0]["set"]) == {"a2b", "b2a"}
    # The fake's clock is CLOCK_MONOTONIC: the offset found is about 0, and
    # applied_ns maps to a moment between sending and the reply.
    assert abs(written["daemon_clock_offset_ns"]) <= written["daemon_clock_uncertainty_ns"]
    for st in steps:
        for d in st["set"].values():
            assert st["sent_ns"] - 1_000_000 <= d["applied_mono_ns"] <= d["replied_ns"] + 1_000_000
        assert st["active_from_ns"] <= st["replied_ns"]
    assert steps[0]["active_until_ns"] == steps[1]["active_from_ns"]
    assert steps[-1]["active_until_ns"] is None


def test_play_waits_for_end(fake):
    s = parse_toml('end = "150ms"\n[[step]]\nat = "0s"\na2b = "delay 1ms"\n')
    t = time.monotonic()
    with ControlClient(fake.path).connect() as c:
        scenario.Player(s, c, None).play()
    assert 0.15 <= time.monotonic() - t < 0.5


def test_refused_step_stops_the_play(fake, tmp_path):
    s = parse_toml('[[step]]\nat = "0s"\na2b = "delay 1ms"\n[[step]]\nat = "10ms"\n'
                   'a2b = "dealy 1ms"\n[[step]]\nat = "20ms"\na2b = "delay 2ms"\n')
    log = tmp_path / "log.json"
    with ControlClient(fake.path).connect() as c:
        with pytest.raises(DaemonRefused, match="unknown word 'dealy'"):
            scenario.Player(s, c, log).play()
    out = json.loads(log.read_text())
    assert out["state"] == "failed" and "dealy" in out["error"] and len(out["steps"]) == 1
    assert sets(fake) == ["set a2b delay 1ms", "set a2b dealy 1ms"]


def test_daemon_going_away_ends_the_wait(fake, tmp_path):
    s = parse_toml('[[step]]\nat = "0s"\na2b = "delay 1ms"\n[[step]]\nat = "60s"\n'
                   'a2b = "delay 2ms"\n')
    log = tmp_path / "log.json"
    threading.Timer(0.3, fake.disconnect_all).start()
    t = time.monotonic()
    with ControlClient(fake.path).connect() as c:
        with pytest.raises(ControlClosed):
            scenario.Player(s, c, log).play()
    assert time.monotonic() - t < 2.0
    assert json.loads(log.read_text())["state"] == "failed"


def test_cancel(fake):
    s = parse_toml('[[step]]\nat = "0s"\na2b = "delay 1ms"\n[[step]]\nat = "60s"\n'
                   'a2b = "delay 2ms"\n')
    cancel = threading.Event()
    threading.Timer(0.2, cancel.set).start()
    with ControlClient(fake.path).connect() as c:
        p = scenario.Player(s, c, None)
        with pytest.raises(scenario.Cancelled):
            p.play(cancel)
    assert p.log["state"] == "cancelled"


def test_fake_grammar_matches_the_doc_examples():
    # The fake daemon's error reads like the daemon's, which the CLI test relies on.
    assert check_grammar("a2b", "dealy 5ms").startswith("set a2b: unknown word 'dealy'")


def test_play_timed_sends_model_times_and_reads_back_when_applied(fake, tmp_path):
    """With a daemon that takes `set DIR at T`, every step goes out with its
    time on the daemon's clock (t0 + at, through the offset found at the
    start) and the log carries the model time the daemon applied it at."""
    fake.timed = True
    s = parse_toml('[[step]]\nat = "0s"\na2b = "delay 1ms"\nb2a = "delay 2ms"\n'
                   '[[step]]\nat = "60ms"\na2b = "delay 3ms"\n'
                   '[[step]]\nat = "90ms"\nb2a = ""\n', "p.toml")
    with ControlClient(fake.path).connect() as c:
        out = scenario.Player(s, c, None, "fk").play()
    assert out["state"] == "finished" and out["timed"] is True
    off = out["daemon_clock_offset_ns"]
    want = []
    for st, at in zip(out["steps"], (0, 60_000_000, 90_000_000)):
        model_at = out["t0_ns"] + at + off
        for d, x in st["set"].items():
            assert x["at_ns"] == model_at, (d, x, model_at)
            assert x["applied_ns"] == model_at, x       # the fake applies exactly at T
            want.append(f"set {d} at {model_at}ns" + (f" {x['config']}" if x["config"] else ""))
        assert st["active_from_ns"] == st["planned_ns"]
    assert sets(fake) == want
    assert fake.links == {"a2b": "delay 3ms", "b2a": ""}


def test_check_link_names_a_nul_instead_of_raising(tmp_path):
    # subprocess refuses an argument with a NUL (ValueError, a traceback
    # for every caller of check_link); it is a reason like any other.
    from linkemu.daemon.daemon import check_link
    assert check_link("/nonexistent/linkemud", "delay\x001ms") == "the link holds a NUL character"


# --- timed play against a daemon that stages as linkemud does ---------------------------------

class StagingFake(FakeDaemon):
    """The fake, timed, with two of linkemud's staging rules
    (src/plane/model_slot.c, docs/live_changes.md "Timed changes"): a time
    already passed when the change is staged means now (the old link cannot
    be taken back to it), and one change is staged at a time per direction
    (a `set` waits until the staged one has been applied)."""

    def __init__(self, path: str):
        super().__init__(path)
        self.timed = True
        self.staged_log: list[tuple[str, int, int]] = []   # (dir, time asked, time applied)

    def command(self, line: str) -> dict:
        w = line.split()
        if len(w) >= 4 and w[0] == "set" and w[2] == "at" and w[1] in self.links:
            give_up = time.monotonic() + 2.0
            while True:
                self._apply_due()
                if w[1] not in self.staged:
                    break
                if time.monotonic() > give_up:
                    return {"ok": False, "error": f"set {w[1]}: the data plane did not take the "
                                                  f"previous change in 2000 ms"}
                time.sleep(0.0002)
            at = int(w[3].removesuffix("ns"))
            now = time.monotonic_ns()
            if check_grammar(w[1], " ".join(w[4:])) is None:
                self.staged_log.append((w[1], at, max(at, now)))
            if at < now:     # the reply names the time asked, as linkemud's does
                w[3] = f"{now}ns"
                reply = super().command(" ".join(w))
                if reply.get("ok"):
                    reply["at_ns"] = at
                return reply
        return super().command(line)


@pytest.fixture
def staging():
    yield from _serving(StagingFake)


def _applied_as_asked(out: dict) -> list:
    return [(st["step"], d, x["at_ns"], x["applied_ns"])
            for st in out["steps"] for d, x in st["set"].items() if x["applied_ns"] != x["at_ns"]]


def test_timed_step_at_zero_lands_at_its_model_time(staging):
    """A step at 0 was sent with T = t0 on the daemon's clock, t0 being the
    moment play began: already past when the set arrived, so linkemud
    applied it when it got it, not at T (applied_ns != at_ns), and the
    steps after it were not spaced from it as the file says."""
    s = parse_toml('[[step]]\nat = "0s"\na2b = "delay 1ms"\nb2a = "delay 2ms"\n'
                   '[[step]]\nat = "40ms"\na2b = "delay 3ms"\n', "z.toml")
    with ControlClient(staging.path).connect() as c:
        out = scenario.Player(s, c, None).play()
    assert out["state"] == "finished"
    assert _applied_as_asked(out) == []
    assert staging.links == {"a2b": "delay 3ms", "b2a": "delay 2ms"}


def test_timed_steps_closer_than_the_confirmation_land_at_their_times(staging):
    """The player waited CONFIRM_NS (2 ms) after each step, and then for
    stats to show it applied, before it sent the next: a step less than
    that after the one before went out after its time and was applied
    late (a trace at 1 ms resolution: every step ~1-2 ms late)."""
    s = parse_csv("time_s,a2b\n" + "".join(f"{i / 1000},delay {i}ms\n" for i in range(6)),
                  "dense.csv")
    with ControlClient(staging.path).connect() as c:
        out = scenario.Player(s, c, None).play()
    assert out["state"] == "finished"
    late = [(d, asked, applied) for d, asked, applied in staging.staged_log if applied != asked]
    assert late == [] and len(staging.staged_log) == 6
    assert staging.links["a2b"] == "delay 5ms"
    # What the log says it read back is what happened.
    assert _applied_as_asked(out) == [] or all(a is None for *_, a in _applied_as_asked(out))


def test_cancel_after_a_timed_step_went_out_logs_it(staging, tmp_path):
    """A timed step is sent LEAD_NS ahead and staged in the daemon, which
    applies it at its time whatever the player does next. A cancel in
    between raised at once: the log said 'cancelled' after step 1, and
    step 2 then changed the link, after the player had gone, unlogged."""
    s = parse_toml('[[step]]\nat = "0s"\na2b = "delay 1ms"\n'
                   '[[step]]\nat = "150ms"\na2b = "delay 2ms"\n', "c.toml")
    cancel = threading.Event()
    answer = staging.command

    def command(line):
        if line.startswith("set a2b at") and line.endswith("delay 2ms"):
            cancel.set()                      # the moment step 2 has gone out
        return answer(line)

    staging.command = command
    log = tmp_path / "log.json"
    with ControlClient(staging.path).connect() as c:
        with pytest.raises(scenario.Cancelled):
            scenario.Player(s, c, log).play(cancel)
    written = json.loads(log.read_text())
    assert written["state"] == "cancelled"
    time.sleep(0.2)
    staging._apply_due()
    assert staging.links["a2b"] == "delay 2ms"          # the daemon applied step 2
    assert [st["set"]["a2b"]["config"] for st in written["steps"]] == ["delay 1ms", "delay 2ms"]


@pytest.mark.parametrize("timed", [False, True], ids=["untimed", "timed"])
def test_a_step_half_refused_logs_the_half_that_was_applied(fake, tmp_path, timed):
    """Both directions of a step go out in one write; linkemud takes a2b
    and refuses b2a (a trace file gone since the check, say). a2b has
    changed (or is staged): the log left the whole step out."""
    fake.timed = timed
    s = parse_toml('[[step]]\nat = "0s"\na2b = "delay 1ms"\n'
                   '[[step]]\nat = "30ms"\na2b = "delay 2ms"\nb2a = "dealy 1ms"\n', "h.toml")
    log = tmp_path / "log.json"
    with ControlClient(fake.path).connect() as c:
        with pytest.raises(DaemonRefused, match="unknown word 'dealy'"):
            scenario.Player(s, c, log).play()
    time.sleep(0.05)
    fake._apply_due()
    assert fake.links["a2b"] == "delay 2ms"
    out = json.loads(log.read_text())
    assert out["state"] == "failed" and "dealy" in out["error"]
    assert [st["step"] for st in out["steps"]] == [1, 2]
    assert out["steps"][1]["set"]["a2b"]["config"] == "delay 2ms"
    assert out["steps"][1]["set"]["b2a"]["refused"].startswith("set b2a: unknown word 'dealy'")
