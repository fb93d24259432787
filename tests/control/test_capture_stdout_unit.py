"""`linkemu capture -w -`: the capture as pcapng on standard output, as
tcpdump and dumpcap do, for `linkemu capture -w - | tshark -r -`. Run with
the fake dumpcap (fakedumpcap.py) and a bed that needs no namespaces, in a
process of its own whose standard output is a pipe."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from capture_runner import capture_argv, capture_env
from linkemu.cli import main as cli
from linkemu.daemon import capture


def _run(cwd: Path, args: list[str], stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    """The capture, in cwd, with TMPDIR a directory of its own (cwd/tmp)."""
    (cwd / "tmp").mkdir()
    return subprocess.run(capture_argv(*args), cwd=cwd, env=capture_env(TMPDIR=str(cwd / "tmp")),
                          stdout=stdout, stderr=subprocess.PIPE, timeout=60)


def test_w_dash_writes_the_capture_to_stdout(tmp_path):
    cp = _run(tmp_path, ["--port", "both", "-c", "3", "--duration", "0.3", "-w", "-"])
    err = cp.stderr.decode()
    assert cp.returncode == 0, err
    (tmp_path / "got.pcapng").write_bytes(cp.stdout)
    pc = capture.read_pcapng(tmp_path / "got.pcapng")
    # 3 per port (the fake writes 5 each), both ports merged, as into a file.
    assert [p.interface for p in pc.packets] == [0, 1, 0, 1, 0, 1], err
    # linkemu's own words go to stderr, so the stream stays pcapng.
    assert "standard output" in err and "6 frames" in err, err
    assert "cut to 3 per port" in err, err
    # Nothing left: no file named '-', no dumpcap file, no temporary directory.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["got.pcapng", "tmp"]
    assert list((tmp_path / "tmp").iterdir()) == []


def test_w_dash_into_a_reader_that_exits_early(tmp_path):
    """`linkemu capture -w - | head -c 10`: the reader is gone; say so,
    leave no temporary file behind."""
    (tmp_path / "tmp").mkdir()
    env = capture_env(TMPDIR=str(tmp_path / "tmp"))
    p = subprocess.Popen(capture_argv("--duration", "0.3", "-w", "-"), cwd=tmp_path, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()                      # the reader exits before the capture ends
    _out, err = p.communicate(timeout=60)
    assert p.returncode == 1, err
    assert b"standard output" in err and b"Traceback" not in err, err
    assert list((tmp_path / "tmp").iterdir()) == []
    assert sorted(x.name for x in tmp_path.iterdir()) == ["tmp"]


def test_w_file_still_reports_on_stdout(tmp_path):
    cp = _run(tmp_path, ["--duration", "0.3", "-w", "x.pcapng"])
    assert cp.returncode == 0, cp.stderr
    assert b"x.pcapng: 5 frames" in cp.stdout
    assert len(capture.read_pcapng(tmp_path / "x.pcapng").packets) == 5


@pytest.mark.parametrize("words,why", [
    (["--json"], "--json"),
    ([], "terminal"),
])
def test_w_dash_refuses_what_would_spoil_the_stream(monkeypatch, capsys, words, why):
    """--json would mix its object into the pcapng; a terminal would show
    binary: both refused before any dumpcap starts."""
    class Tty(io.StringIO):
        def isatty(self):
            return True
    if why == "terminal":
        monkeypatch.setattr(sys, "stdout", Tty())
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(capture, "capture", lambda *a, **k: pytest.fail("capture started"))
    rc = cli.main(["capture", "--bed", "fk", "--file-prefix", "x", "-w", "-"] + words)
    err = capsys.readouterr().err
    assert rc == 2 and why in err and "Traceback" not in err, err
