"""A --stats-file that cannot be written (src/plane/final.c): the final
report is lost, so the daemon says so at its stop, naming the file and
the reason, and exits 1 (the environment's status) instead of 0 as if
the report had been kept. Two ways it fails: the write (/dev/full opens,
and the disk is full when the report is flushed) and the open (a
directory that does not exist).

linkemud runs on two net_null ports (hugepages, no interface); linkemuk
on two veth interfaces in a network namespace of its own (unshare -n),
which goes away with it."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest

from kit.vdev import run_on_vdevs

# Root for hugepages (linkemud) and for a namespace and AF_PACKET (linkemuk).
pytestmark = pytest.mark.needs_root

NULL_PORTS = ["net_null0", "net_null1"]
EXIT_ENV = 1   # src/dataplane/main.c, src/kernel/main.c


def _unwritable(tmp_path: Path) -> dict[str, tuple[str, str]]:
    """name: (the --stats-file, the reason the message must give)."""
    return {"write": ("/dev/full", "No space left on device"),
            "open": (str(tmp_path / "no-such-dir" / "final.json"), "No such file or directory")}


def _assert_named(prog: str, rc: int, err: str, path: str, why: str) -> None:
    assert f"{prog}: cannot write {path}: {why}" in err, err
    assert rc == EXIT_ENV, f"exit {rc} (want {EXIT_ENV}): {err}"


@pytest.mark.parametrize("fails_at", ["write", "open"])
def test_linkemud_says_it_cannot_write_the_stats_file(linkemud_bin, tmp_path, fails_at):
    path, why = _unwritable(tmp_path)[fails_at]
    rc, err = run_on_vdevs(linkemud_bin, NULL_PORTS, ["--no-control", "--stats-file", path],
                           0.2, name="statsfile")
    _assert_named("linkemud", rc, err, path, why)


def _run_linkemuk(linkemuk_bin: Path, options: list[str], seconds: float) -> tuple[int, str]:
    """linkemuk on two veth interfaces in a fresh network namespace, until
    `seconds` after its ready line, then stopped by SIGINT (Ctrl-C)."""
    # Two veth pairs whose far ends stay down: the near ends can be bound
    # and carry nothing (no carrier, so not even the kernel's own IPv6
    # chatter). The dummy driver is not in every kernel.
    setup = ("ip link add ka type veth peer name pa && ip link add kb type veth peer name pb && "
             "ip link set ka up && ip link set kb up && exec \"$0\" \"$@\"")
    argv = ["unshare", "-n", "sh", "-c", setup, str(linkemuk_bin),
            "--iface-a", "ka", "--iface-b", "kb", *options]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = " "
        while line and "ready" not in line:
            line = p.stdout.readline()
        assert "ready" in line, p.stderr.read()
        time.sleep(seconds)
    finally:
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=30)
    return p.returncode, err


@pytest.mark.parametrize("fails_at", ["write", "open"])
def test_linkemuk_says_it_cannot_write_the_stats_file(linkemuk_bin, tmp_path, fails_at):
    path, why = _unwritable(tmp_path)[fails_at]
    rc, err = _run_linkemuk(linkemuk_bin, ["--no-control", "--stats-file", path], 0.2)
    _assert_named("linkemuk", rc, err, path, why)
