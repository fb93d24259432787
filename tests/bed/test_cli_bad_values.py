"""Bad option values and a bad standard output end `linkemu` with one
message and the documented exit code (2 usage, 1 failure), never a
traceback, and before a run's time is spent."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from kit import cli_env, linkemu
from linkemu.cli.main import build_parser
from linkemu.errors import LinkemuError
from linkemu.instruments import units_stats


def _free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _no_traceback(cp: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in cp.stderr, cp.stderr


# --- files a run writes at its end ----------------------------------------------------------

@pytest.mark.parametrize("where", ["dir", "no-parent"])
def test_a_flush_times_file_that_cannot_be_written_is_refused_before_the_run(tmp_path, where):
    # It was a traceback (IsADirectoryError) after the whole run was sent.
    out = tmp_path if where == "dir" else tmp_path / "missing" / "f.npy"
    cp = linkemu("units", "client", "--proto", "udp", "--connect", "127.0.0.1",
                 "--port", str(_free_udp_port()), "--count", "1", "--flush-times", str(out),
                 timeout=60)
    assert cp.returncode == 2, cp.stderr
    assert "--flush-times" in cp.stderr and str(out) in cp.stderr
    assert "client udp:" not in cp.stdout     # nothing was sent
    _no_traceback(cp)


@pytest.mark.parametrize("where", ["dir", "no-parent"])
def test_a_samples_file_that_cannot_be_written_is_refused_before_serving(tmp_path, where):
    # The server waited for a run it could not record (the write came last).
    out = tmp_path if where == "dir" else tmp_path / "missing" / "s.npy"
    cp = linkemu("units", "server", "--proto", "udp", "--bind", "127.0.0.1",
                 "--port", str(_free_udp_port()), "--start-timeout", "0.2",
                 "--samples", str(out), timeout=60)
    assert cp.returncode == 2, cp.stderr
    assert "--samples" in cp.stderr and str(out) in cp.stderr
    assert "no UDP datagram" not in cp.stderr   # it did not serve
    _no_traceback(cp)


def test_a_samples_write_that_fails_names_the_file(tmp_path):
    # Checked before the run, the file can still go away during it.
    with pytest.raises(LinkemuError, match=f"{tmp_path}: cannot write"):
        units_stats.write_samples(tmp_path, [0], [1], [2])


# --- seconds ----------------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["1e308", "1e10"])
def test_seconds_too_large_for_a_timer_are_a_usage_error(value):
    # socket.settimeout raised OverflowError (a traceback) past ~9.2e9 s.
    cp = linkemu("units", "server", "--proto", "udp", "--bind", "127.0.0.1",
                 "--port", str(_free_udp_port()), "--start-timeout", value, timeout=60)
    assert cp.returncode == 2, cp.stderr
    assert f"argument --start-timeout: '{value}'" in cp.stderr and "at most" in cp.stderr
    _no_traceback(cp)



def test_a_capture_may_last_longer_than_a_day():
    """The day's cap is for timeouts and intervals (timers); a capture's
    --duration is a run's length, at most a year, still finite."""
    a = build_parser().parse_args(["capture", "-w", "x.pcapng", "--duration", "172800"])
    assert a.duration == 172800.0
    with pytest.raises(SystemExit):
        build_parser().parse_args(["capture", "-w", "x.pcapng", "--duration", "1e308"])

# --- punt ---------------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["-1", "x", str(1 << 64)])
def test_a_bad_punt_work_ns_is_a_usage_error_before_anything_starts(value, capsys):
    # Checked only once the bed was built and the daemon ready, then exit 1;
    # past 2^64 punt_echo refused it in its log while linkemu said it served.
    with pytest.raises(SystemExit) as e:
        build_parser().parse_args(["run", "--punt-echo", "--punt-work-ns", value])
    assert e.value.code == 2
    assert f"argument --punt-work-ns: '{value}'" in capsys.readouterr().err


def test_punt_work_ns_takes_zero_and_more():
    a = build_parser().parse_args(["run", "--punt-echo", "--punt-work-ns", "0"])
    assert a.punt_work_ns == 0
    a = build_parser().parse_args(["run", "--punt-echo", "--punt-work-ns", "2000"])
    assert a.punt_work_ns == 2000


# --- standard output ----------------------------------------------------------------------

@pytest.mark.parametrize("args", [["profile", "list"], ["profile", "list", "--json"],
                                  ["profile", "show", "dc-10g"]])
def test_a_standard_output_that_cannot_be_written_is_one_message_exit_1(args):
    # /dev/full: every write fails with ENOSPC, as on a full disk.
    with open("/dev/full", "w") as full:
        cp = subprocess.run([sys.executable, "-m", "linkemu", *args], stdout=full,
                            stderr=subprocess.PIPE, text=True, env=cli_env(), timeout=60)
    assert cp.returncode == 1, cp.stderr
    assert cp.stderr == "linkemu: cannot write to standard output: No space left on device\n"
