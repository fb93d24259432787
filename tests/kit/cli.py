"""`linkemu ARGS` from a test, exactly as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# Which data plane the suites run against: LINKEMU_TEST_IO=kernel makes
# every `linkemu run` and `linkemu demo` of a test use linkemuk (the
# kernel-socket plane) instead of linkemud, so one suite covers both
# (docs/testing.md). A test that is about DPDK itself says dpdk_only().
TEST_IO = os.environ.get("LINKEMU_TEST_IO", "dpdk")
if TEST_IO not in ("dpdk", "kernel"):
    raise RuntimeError(f"LINKEMU_TEST_IO={TEST_IO!r}: expected dpdk or kernel")
_IO_COMMANDS = ("run", "demo")


def with_test_io(args: tuple[str, ...]) -> tuple[str, ...]:
    """args with `--io kernel` after the command when the suites run on the
    kernel plane and the test did not choose an --io itself."""
    if TEST_IO == "dpdk" or not args or args[0] not in _IO_COMMANDS or "--io" in args:
        return args
    return (args[0], "--io", TEST_IO, *args[1:])


def cli_env(extra: dict | None = None) -> dict:
    """The environment for a child `python -m linkemu` (or a child of the
    tests' own scripts): this checkout's package whether or not it is
    pip-installed, plus `extra` variables."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO / "python") + (os.pathsep + env["PYTHONPATH"]
                                                 if env.get("PYTHONPATH") else "")
    env.update(extra or {})
    return env


def linkemu(*args: str, timeout: float = 600,
            env: dict | None = None) -> subprocess.CompletedProcess[str]:
    """Run `linkemu ARGS` in a child process; never raises on the exit code
    (the test asserts it). env: extra environment variables. timeout only
    guards against a hang (a report renders in seconds on a quiet machine,
    minutes on a loaded one), it is no bound on anything. With
    LINKEMU_TEST_IO=kernel, run and demo get --io kernel (with_test_io)."""
    return subprocess.run([sys.executable, "-m", "linkemu", *with_test_io(args)], capture_output=True,
                          text=True, timeout=timeout, env=cli_env(env))


def dpdk_only(why: str) -> None:
    """Skip the calling test when the suites run on the kernel plane: it
    checks something only linkemud has (EAL, PMDs, lcores, hugepages)."""
    if TEST_IO != "dpdk":
        import pytest
        pytest.skip(f"DPDK only: {why}")
