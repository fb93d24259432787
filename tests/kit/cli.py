"""`linkemu ARGS` from a test, exactly as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


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
    minutes on a loaded one), it is no bound on anything."""
    return subprocess.run([sys.executable, "-m", "linkemu", *args], capture_output=True,
                          text=True, timeout=timeout, env=cli_env(env))
