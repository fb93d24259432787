"""The control client and `linkemu ctl` against a fake control server
(no root, no DPDK)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import tempfile
import threading
import time

import pytest

from fakedaemon import FakeDaemon
from linkemu.cli import main as cli
from linkemu.bed import paths, testbed
from linkemu.daemon import control
from linkemu.daemon.control import (ControlClient, ControlClosed, ControlError, ControlTimeout,
                             DaemonRefused)


@pytest.fixture
def short_dir():
    # Unix socket paths are limited to 108 bytes: pytest's tmp_path can be longer.
    d = tempfile.mkdtemp(prefix="lc", dir="/tmp")
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def fake(short_dir):
    f = FakeDaemon(os.path.join(short_dir, "control.sock"))
    yield f
    f.close()


@pytest.fixture
def fake_bed(short_dir, monkeypatch):
    """A bed 'fk' whose run dir is a temporary one, with a fake daemon on
    its control socket; the CLI is made to believe it runs as root."""
    monkeypatch.setattr(paths, "RUN_ROOT", __import__("pathlib").Path(short_dir))
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    (paths.RUN_ROOT / "fk").mkdir()
    f = FakeDaemon(str(control.socket_path("fk")))
    yield f
    f.close()


def client(f: FakeDaemon, timeout: float = 2.0) -> ControlClient:
    return ControlClient(f.path, timeout).connect()


# --- replies -------------------------------------------------------------------------

def test_commands_and_replies(fake):
    with client(fake) as c:
        r = c.set("a2b", "delay   20ms  loss 1%")
        assert r["ok"] is True and r["config"] == "delay 20ms loss 1%"
        assert isinstance(r["applied_ns"], int)
        assert c.show() == {"a2b": "delay 20ms loss 1%", "b2a": ""}
        st = c.stats()
        assert st["directions"]["a2b"]["config"] == "delay 20ms loss 1%"
        assert c.reset_stats() == {"ok": True}
        assert "show" in c.help()
    # The grammar's whitespace is normalised, the line is one `set`.
    assert fake.received[0] == "set a2b delay 20ms loss 1%"


def test_empty_grammar_is_set_without_words(fake):
    with client(fake) as c:
        c.set("b2a", "")
    assert fake.received == ["set b2a"]


def test_refusal_carries_the_daemons_message_verbatim(fake):
    with client(fake) as c:
        with pytest.raises(DaemonRefused) as ei:
            c.set("a2b", "dealy 5ms")
        assert str(ei.value) == ("set a2b: unknown word 'dealy' (expected delay, loss, limit, "
                                 "seed)")
        assert ei.value.reply["ok"] is False
        # request() returns refusals instead of raising.
        r = c.request("sett a2b delay 1ms")
        assert r["ok"] is False and "unknown command 'sett'" in r["error"]
        # The connection is still usable after errors.
        assert c.show()["a2b"] == ""


def test_several_commands_on_one_connection_and_pipelined(fake):
    with client(fake) as c:
        res = c.set_many([("a2b", "delay 1ms"), ("b2a", "delay 2ms")])
        assert [r[2]["dir"] for r in res] == ["a2b", "b2a"]
        for sent, replied, _r in res:
            assert sent <= replied
        for i in range(50):
            c.set("a2b", f"delay {i}ms")
        assert c.show()["a2b"] == "delay 49ms"


def test_set_many_reads_every_reply_before_raising(fake):
    with client(fake) as c:
        with pytest.raises(DaemonRefused):
            c.set_many([("a2b", "bogus 1"), ("b2a", "delay 2ms")])
        # Both replies were consumed: the next command gets its own reply.
        assert c.show() == {"a2b": "", "b2a": "delay 2ms"}


def test_reply_in_pieces_is_reassembled(fake):
    fake.split_reply = True
    with client(fake) as c:
        assert c.show() == {"a2b": "", "b2a": ""}


def test_a_command_must_be_one_line(fake):
    with client(fake) as c:
        with pytest.raises(ControlError, match="one line"):
            c.request("show\nset a2b delay 1ms")
        with pytest.raises(ControlError, match="unknown direction"):
            c.set("x2y", "delay 1ms")
    assert fake.received == []


# --- failures ------------------------------------------------------------------------

def test_timeout_names_the_command(fake):
    fake.reply_delay_s = 1.0
    c = ControlClient(fake.path, timeout=0.2).connect()
    t = time.monotonic()
    with pytest.raises(ControlTimeout, match=r"did not answer 'show' within 0.2 s"):
        c.show()
    assert time.monotonic() - t < 0.8
    c.close()


def test_daemon_hangs_up_before_replying(fake):
    fake.hang_up = True
    with client(fake) as c:
        with pytest.raises(ControlClosed, match="closed the control connection"):
            c.stats()


def test_garbage_and_replies_without_ok(fake):
    fake.garbage = True
    with client(fake) as c:
        with pytest.raises(ControlError, match="not JSON"):
            c.show()
    fake.garbage = False
    fake.no_ok = True
    with client(fake) as c:
        with pytest.raises(ControlError, match='has no "ok"'):
            c.show()


def test_send_after_the_daemon_went_away(fake):
    c = client(fake)
    c.show()                  # the server has accepted us
    fake.close()
    with pytest.raises(ControlError):
        for _ in range(3):      # the first write may still land in the socket buffer
            c.show()
    c.close()


def test_missing_socket(short_dir):
    with pytest.raises(ControlError, match="no control socket at"):
        ControlClient(os.path.join(short_dir, "nope.sock")).connect()


def test_stale_socket_is_refused(short_dir):
    path = os.path.join(short_dir, "stale.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.close()                       # the file stays, nobody listens
    with pytest.raises(ControlError, match="stale socket"):
        ControlClient(path).connect()


def test_not_a_socket(short_dir):
    path = os.path.join(short_dir, "plain")
    open(path, "w").close()
    with pytest.raises(ControlError, match="not a socket|cannot connect|stale"):
        ControlClient(path).connect()


def test_connect_waits_for_a_starting_daemon(short_dir):
    path = os.path.join(short_dir, "late.sock")
    holder = {}
    t = threading.Timer(0.3, lambda: holder.setdefault("f", FakeDaemon(path)))
    t.start()
    try:
        c = ControlClient(path).connect(wait_s=3.0)
        assert c.show() == {"a2b": "", "b2a": ""}
        c.close()
    finally:
        t.join()
        holder["f"].close()


def test_peer_closed(fake):
    c = client(fake)
    c.show()                  # the server has accepted us
    assert c.peer_closed() is False
    fake.disconnect_all()
    time.sleep(0.05)
    assert c.peer_closed() is True
    c.close()


def test_connect_bed_explains_no_daemon(fake_bed, monkeypatch):
    bed = testbed.bed_for("fk")
    # A daemon is running (the fake): connecting works.
    control.connect_bed(bed).close()
    # No socket, no daemon:
    other = testbed.bed_for("fk2")
    with pytest.raises(ControlError, match=r"no linkemud is running on bed 'fk2' "
                                           r"\(start one: linkemu run --bed fk2 --detach\)"):
        control.connect_bed(other)
    # A daemon without a control socket (started by an older linkemud):
    monkeypatch.setattr(testbed, "daemon_pid", lambda b: 4242)
    with pytest.raises(ControlError, match=r"linkemud \(pid 4242\) on bed 'fk2' has no "
                                           r"control socket .*without --control"):
        control.connect_bed(other)


# --- the CLI -----------------------------------------------------------------------------

def test_cli_set_show_and_refusal(fake_bed, capsys):
    assert cli.main(["ctl", "--bed", "fk", "set", "a2b", "delay 5ms", "loss", "1%"]) == 0
    assert capsys.readouterr().out == "a2b: delay 5ms loss 1%\n"
    assert cli.main(["ctl", "show", "--bed", "fk"]) == 0       # --bed after the action too
    assert capsys.readouterr().out == "a2b: delay 5ms loss 1%\nb2a: (no impairment)\n"
    # A refusal: the daemon's message on stderr, verbatim, exit 1.
    assert cli.main(["ctl", "--bed", "fk", "set", "a2b", "dealy 5ms"]) == 1
    err = capsys.readouterr().err
    assert err == ("linkemud: set a2b: unknown word 'dealy' (expected delay, loss, limit, "
                   "seed)\n")


def test_cli_raw_stats_reset_help(fake_bed, capsys):
    assert cli.main(["ctl", "--bed", "fk", "raw", "bogus"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is False and "unknown command 'bogus'" in out["error"]
    assert cli.main(["ctl", "--bed", "fk", "raw", "show"]) == 0
    assert json.loads(capsys.readouterr().out)["ok"] is True
    assert cli.main(["ctl", "--bed", "fk", "stats", "--json"]) == 0
    assert "directions" in json.loads(capsys.readouterr().out)
    assert cli.main(["ctl", "--bed", "fk", "stats"]) == 0
    assert "a2b  [(no impairment)]" in capsys.readouterr().out
    assert cli.main(["ctl", "--bed", "fk", "reset-stats"]) == 0
    assert "reset" in capsys.readouterr().out
    assert cli.main(["ctl", "--bed", "fk", "help"]) == 0
    assert "set DIR GRAMMAR" in capsys.readouterr().out


def test_cli_errors(fake_bed, capsys):
    assert cli.main(["ctl", "--bed", "fk2", "show"]) == 1
    assert "no linkemud is running on bed 'fk2'" in capsys.readouterr().err
    fake_bed.reply_delay_s = 1.0
    assert cli.main(["ctl", "--bed", "fk", "--timeout", "0.2", "show"]) == 1
    assert "did not answer 'show' within 0.2 s" in capsys.readouterr().err
    fake_bed.reply_delay_s = 0
    fake_bed.hang_up = True
    assert cli.main(["ctl", "--bed", "fk", "stats"]) == 1
    assert "closed the control connection" in capsys.readouterr().err
    with pytest.raises(SystemExit) as ei:
        cli.main(["ctl", "--bed", "fk", "set", "x2y", "delay 1ms"])
    assert ei.value.code == 2


@pytest.mark.parametrize("argv", [
    ["ctl", "--bed", "fk", "--timeout", "-1", "show"],
    ["ctl", "--bed", "fk", "show", "--timeout", "nan"],
    ["ctl", "--bed", "fk", "--timeout", "inf", "show"],
    ["ctl", "--bed", "fk", "--timeout", "0", "show"],
    ["stats", "--bed", "fk", "--timeout", "-5"],
    ["stats", "--bed", "fk", "--interval", "nan"],
    ["stats", "--bed", "fk", "--interval", "inf"],
    ["stats", "--bed", "fk", "--interval", "-1"],
])
def test_cli_bad_seconds_are_usage_errors(fake_bed, capsys, argv):
    # A negative, zero, NaN or infinite wait was a ValueError traceback from
    # socket.settimeout (or, for --interval, a NaN that passed `<= 0`).
    with pytest.raises(SystemExit) as ei:
        cli.main(argv)
    assert ei.value.code == 2
    e = capsys.readouterr().err
    assert "Traceback" not in e
    opt = "--interval" if "--interval" in argv else "--timeout"
    assert f"argument {opt}: '{argv[argv.index(opt) + 1]}' is not a number of seconds above 0" in e


def test_cli_set_with_a_non_utf8_word(fake_bed, capsys):
    # A file name that is not UTF-8 reaches Python as a surrogate escape
    # (sys.argv); encoding the line raised UnicodeEncodeError (a traceback).
    word = os.fsdecode(b"/tmp/\xff.up")
    assert cli.main(["ctl", "--bed", "fk", "set", "a2b", "trace", word]) == 1
    e = capsys.readouterr().err
    assert "Traceback" not in e and "not UTF-8" in e and "/tmp/\\xff.up" in e


def test_cli_stats_once(fake_bed, capsys):
    assert cli.main(["stats", "--bed", "fk", "--once", "--interval", "0.05"]) == 0
    out = capsys.readouterr().out
    assert "linkemu stats  bed fk" in out and "in   frames/s" in out and "\x1b[" not in out
    assert cli.main(["stats", "--bed", "fk", "--count", "2", "--interval", "0.05",
                     "--json"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2
    assert json.loads(lines[0])["directions"]["a2b"]["rx_fps"] > 0


# --- daemon options and telemetry ----------------------------------------------------------

def _fake_binary(d: str, help_text: str) -> str:
    p = os.path.join(d, "linkemud")
    with open(p, "w") as f:
        f.write("#!/bin/sh\ncat <<'EOF'\n" + help_text + "\nEOF\n")
    os.chmod(p, os.stat(p).st_mode | stat.S_IXUSR)
    return p


def test_daemon_args_only_when_linkemud_has_control(short_dir, monkeypatch):
    monkeypatch.setattr(paths, "RUN_ROOT", __import__("pathlib").Path(short_dir))
    old = _fake_binary(short_dir, "usage: linkemud [EAL options] -- [--a2b GRAMMAR]")
    assert control.daemon_args(old, "lc") == []
    os.unlink(old)
    time.sleep(0.01)
    new = _fake_binary(short_dir, "  --control PATH    control socket")
    os.utime(new, (time.time() + 5, time.time() + 5))   # a new mtime: not the cached answer
    assert control.daemon_args(new, "lc") == ["--control", f"{short_dir}/lc/control.sock"]


def test_build_argv_passes_control(short_dir, monkeypatch):
    from linkemu.daemon import daemon
    monkeypatch.setattr(paths, "RUN_ROOT", __import__("pathlib").Path(short_dir))
    b = _fake_binary(short_dir, "--control PATH")
    argv = daemon.build_argv(__import__("pathlib").Path(b),
                             daemon.DaemonConfig(testbed.bed_for("lc"), lcores="1"))
    i = argv.index("--control")
    assert argv[i + 1] == f"{short_dir}/lc/control.sock" and argv.index("--") < i


def test_telemetry_query(short_dir):
    path = os.path.join(short_dir, "dpdk_telemetry.v2")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    srv.bind(path)
    srv.listen(1)

    def serve():
        conn, _ = srv.accept()
        conn.send(json.dumps({"version": "DPDK 22.11", "pid": 1,
                              "max_output_len": 16384}).encode())
        cmd = conn.recv(1024).decode()
        conn.send(json.dumps({cmd: {"directions": {"a2b": {"rx": 5}}}}).encode())
        conn.close()

    t = threading.Thread(target=serve)
    t.start()
    r = control.telemetry_query(path, "/linkemu/stats")
    t.join()
    srv.close()
    assert r == {"/linkemu/stats": {"directions": {"a2b": {"rx": 5}}}}
    with pytest.raises(ControlError, match="no DPDK telemetry socket"):
        control.telemetry_query(os.path.join(short_dir, "none"), "/linkemu/stats")


@pytest.mark.parametrize("st", [
    {"directions": []},
    {"directions": {"a2b": "x"}},
    {"uptime_s": None, "directions": {}},
    {"directions": {"a2b": {"rx": 1, "tx": 1, "dropped": None}}},
    {"directions": {"a2b": {"rx": "10", "tx": 1}}},
    {"directions": {"a2b": {"rx": 1, "tx": 1, "classes": [{}, {}]}}},
])
@pytest.mark.parametrize("argv", [["ctl", "--bed", "fk", "stats"],
                                  ["stats", "--bed", "fk", "--once", "--interval", "0.01"]])
def test_cli_malformed_stats_reply_is_an_error_not_a_traceback(fake_bed, capsys, st, argv):
    """A stats object not shaped as docs/control.md says (another program on
    the socket, a daemon of another version) is named, exit 1."""
    fake_bed.command = lambda line: {"ok": True, "stats": json.loads(json.dumps(st))}
    assert cli.main(argv) == 1
    assert "stats reply" in capsys.readouterr().err
