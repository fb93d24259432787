"""What `linkemu capture` leaves and says about its output, with the fake
dumpcap (fakedumpcap.py) in a process of its own: the -w name checked
before any dumpcap starts, the file as private as dumpcap makes it, and a
daemon that exits mid-capture said out loud."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from capture_runner import capture_argv, capture_env
from linkemu.daemon import capture


def _run(cwd: Path, args: list[str], **env) -> subprocess.CompletedProcess:
    return subprocess.run(capture_argv(*args), env=capture_env(**env), cwd=cwd,
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("name,says", [
    ("", "-w needs a file name"),
    ("adir", "is a directory"),
    ("new/", "is a directory"),
    ("none/x.pcapng", "does not exist"),
])
def test_w_that_names_no_file_is_refused(tmp_path, name, says):
    """A directory made os.replace raise IsADirectoryError and an empty
    name Path.with_name ValueError (tracebacks, after the capture ran);
    'new/' wrote a file named 'new'."""
    (tmp_path / "adir").mkdir()
    cp = _run(tmp_path, ["--duration", "0.2", "-w", name])
    assert cp.returncode == 2 and says in cp.stderr, cp.stderr
    assert "Traceback" not in cp.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir"]
    assert list((tmp_path / "adir").iterdir()) == []


def test_the_file_is_as_private_as_dumpcap_makes_it(tmp_path):
    """dpdk-dumpcap creates its file 0600 (frames can carry anything);
    the merge wrote ours with the umask's 0644."""
    os.umask(old := os.umask(0o022))
    cp = _run(tmp_path, ["--port", "both", "--duration", "0.2", "-w", "x.pcapng"])
    assert cp.returncode == 0, cp.stderr
    assert stat.S_IMODE((tmp_path / "x.pcapng").stat().st_mode) == 0o600


def test_a_daemon_that_exits_mid_capture_is_said_and_the_file_kept(tmp_path):
    """dumpcap stops on its own when linkemud exits ('Primary process is
    no longer active'), and prints no counts: linkemu said '5 frames' and
    exited 0, as if the capture had ended as asked."""
    cp = _run(tmp_path, ["--port", "both", "-c", "1000", "--duration", "30", "-w", "x.pcapng"],
              FAKEDUMPCAP_PRIMARY_EXITS="0.3")
    assert cp.returncode == 1, cp.stderr
    assert "linkemud exited during the capture" in cp.stderr, cp.stderr
    assert "Traceback" not in cp.stderr
    assert len(capture.read_pcapng(tmp_path / "x.pcapng").packets) == 10


def test_no_file_of_the_capture_follows_a_planted_symlink(tmp_path):
    """dumpcap's per-port files were '.NAME.portN' beside the output and
    the merge wrote 'NAME.tmp', both opened without O_EXCL: in a shared
    directory such as /tmp, a symlink planted at those names made the
    capture (run as root) write through it into any file. Now the ports'
    files are in a private directory and the merge's file is new."""
    victims = {}
    for name in (".x.pcapng.port0", ".x.pcapng.port1", "x.pcapng.tmp"):
        victim = tmp_path / f"victim-{name.strip('.')}"
        victim.write_text("untouched\n")
        (tmp_path / name).symlink_to(victim)
        victims[name] = victim
    cp = _run(tmp_path, ["--port", "both", "--duration", "0.2", "-w", "x.pcapng"])
    assert cp.returncode == 0, cp.stderr
    for name, victim in victims.items():
        assert victim.read_text() == "untouched\n", name
        assert (tmp_path / name).is_symlink(), name      # not replaced either
    assert len(capture.read_pcapng(tmp_path / "x.pcapng").packets) > 0
    # Nothing of ours is left beside the capture.
    assert sorted(p.name for p in tmp_path.iterdir()
                  if not p.name.startswith("victim-")) == sorted(
                      ["x.pcapng", *victims])
