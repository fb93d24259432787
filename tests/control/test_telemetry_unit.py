"""`linkemu ctl telemetry` against fake DPDK telemetry sockets (no root, no
DPDK): every way the socket can fail is one line naming the socket and
the cause, exit 1, never a traceback."""

from __future__ import annotations

import errno
import json
import os
import shutil
import socket
import tempfile
import threading
import time
from pathlib import Path

import pytest

from linkemu.cli import main as cli
from linkemu.daemon import control
from linkemu.daemon.control import ControlClosed, ControlError, ControlTimeout

HELLO = json.dumps({"version": "DPDK 22.11.11", "pid": 1, "max_output_len": 16384}).encode()


@pytest.fixture
def short_dir():
    # Unix socket paths are limited to 108 bytes: pytest's tmp_path can be longer.
    d = tempfile.mkdtemp(prefix="lt", dir="/tmp")
    yield d
    shutil.rmtree(d, ignore_errors=True)


class FakeTelemetry:
    """A SOCK_SEQPACKET server that serves one connection with `serve(conn)`."""

    def __init__(self, path: str, serve):
        self.path = path
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.srv.bind(path)
        self.srv.listen(1)
        self.thread = threading.Thread(target=self._run, args=(serve,), daemon=True)
        self.thread.start()

    def _run(self, serve):
        conn, _ = self.srv.accept()
        with conn:
            serve(conn)

    def close(self):
        self.thread.join(5)
        self.srv.close()


def _query(path, timeout=1.0):
    return control.telemetry_query(path, "/linkemu/stats", timeout)


def _served(short_dir, serve, timeout=1.0):
    """The error telemetry_query raises against a server that does `serve`."""
    f = FakeTelemetry(os.path.join(short_dir, "tel"), serve)
    try:
        with pytest.raises(ControlError) as e:
            _query(f.path, timeout)
    finally:
        f.close()
    return e


def _one_line_naming(e, path, *words):
    msg = str(e.value)
    assert "\n" not in msg and str(path) in msg, msg
    for w in words:
        assert w in msg, msg


# --- connecting ---------------------------------------------------------------------------

def test_a_socket_nobody_listens_on(short_dir):
    """A stale socket file: bound, then its process gone (ECONNREFUSED)."""
    path = os.path.join(short_dir, "tel")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.bind(path)
    try:
        with pytest.raises(ControlError) as e:
            _query(path)
    finally:
        s.close()
    _one_line_naming(e, path, "refused", "nobody listens")


@pytest.mark.parametrize("kind", ["file", "directory"])
def test_a_path_that_is_not_a_socket(short_dir, kind):
    path = os.path.join(short_dir, "tel")
    if kind == "file":
        Path(path).write_text("")
    else:
        os.mkdir(path)
    with pytest.raises(ControlError) as e:
        _query(path)
    _one_line_naming(e, path, f"is a {kind}, not a socket")


def test_a_stream_socket_is_not_dpdk_telemetry(short_dir):
    path = os.path.join(short_dir, "tel")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(1)
    try:
        with pytest.raises(ControlError) as e:
            _query(path)
    finally:
        s.close()
    _one_line_naming(e, path, "not a SOCK_SEQPACKET socket")


def test_permission_denied(short_dir, monkeypatch):
    """EACCES (not root, or a directory closed to us): faked, since root
    passes every permission check."""
    path = os.path.join(short_dir, "tel")
    f = FakeTelemetry(path, lambda c: None)

    def refuse(self, address):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))

    monkeypatch.setattr(socket.socket, "connect", refuse)
    try:
        with pytest.raises(ControlError) as e:
            _query(path)
    finally:
        monkeypatch.undo()
        socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET).connect(path)   # frees the server
        f.close()
    _one_line_naming(e, path, "Permission denied")


# --- the exchange ------------------------------------------------------------------------

def test_closed_before_the_greeting(short_dir):
    e = _served(short_dir, lambda c: None)
    assert isinstance(e.value, ControlClosed)
    _one_line_naming(e, os.path.join(short_dir, "tel"), "closed the connection", "greeting")


def test_closed_after_the_greeting(short_dir):
    """The daemon exits between greeting and reply: the send may fail
    (EPIPE), or the reply never comes."""
    e = _served(short_dir, lambda c: c.send(HELLO))
    assert isinstance(e.value, ControlClosed), e.value
    assert "closed the connection" in str(e.value) and "\n" not in str(e.value)


def test_closed_mid_exchange(short_dir):
    def serve(c):
        c.send(HELLO)
        c.recv(100)
    e = _served(short_dir, serve)
    assert isinstance(e.value, ControlClosed), e.value
    assert "before the reply to /linkemu/stats" in str(e.value)


def test_reset_mid_exchange(short_dir):
    """Closed with our command unread: the kernel resets the connection."""
    def serve(c):
        c.send(HELLO)
        time.sleep(0.2)          # our command arrives and stays unread
    e = _served(short_dir, serve)
    assert isinstance(e.value, ControlError) and "\n" not in str(e.value), e.value


@pytest.mark.parametrize("hello,words", [
    (b"[1]", "greeting"),
    (b"not json", "greeting is not JSON"),
    (b'{"max_output_len": "x"}', "max_output_len"),
    (b'{"max_output_len": -5}', "max_output_len"),
    (b'{"max_output_len": 1000000000000}', "max_output_len"),
])
def test_a_greeting_that_is_not_dpdk_telemetry(short_dir, hello, words):
    def serve(c):
        c.send(hello)
        c.recv(100)
    e = _served(short_dir, serve)
    assert words in str(e.value) and "\n" not in str(e.value), e.value
    assert "/tel" in str(e.value)


@pytest.mark.parametrize("reply,words", [(b"[1]", "unexpected reply"),
                                         (b"{", "reply to /linkemu/stats is not JSON")])
def test_a_reply_that_is_not_an_object(short_dir, reply, words):
    def serve(c):
        c.send(HELLO)
        c.recv(100)
        c.send(reply)
    e = _served(short_dir, serve)
    assert words in str(e.value) and "/tel" in str(e.value), e.value


def test_no_reply_in_time_names_the_socket(short_dir):
    def serve(c):
        c.send(HELLO)
        c.recv(100)
        c.recv(100)              # until we give up and close
    e = _served(short_dir, serve, timeout=0.2)
    assert isinstance(e.value, ControlTimeout)
    _one_line_naming(e, os.path.join(short_dir, "tel"), "no reply to /linkemu/stats within 0.2 s")


# --- the command line ----------------------------------------------------------------------

@pytest.mark.parametrize("setup", ["stale", "file", "closes"])
def test_cli_says_one_line_and_exits_1(short_dir, monkeypatch, capsys, setup):
    path = os.path.join(short_dir, "tel")
    keep = []
    if setup == "stale":
        keep.append(socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET))
        keep[0].bind(path)
    elif setup == "file":
        Path(path).write_text("")
    else:
        keep.append(FakeTelemetry(path, lambda c: c.send(HELLO)))
    monkeypatch.setattr(control, "telemetry_path", lambda prefix: Path(path))
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    try:
        rc = cli.main(["ctl", "--bed", "fk", "telemetry", "/linkemu/stats"])
    finally:
        for k in keep:
            k.close()
    err = capsys.readouterr().err
    assert rc == 1
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert path in err, err
