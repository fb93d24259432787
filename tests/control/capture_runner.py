"""`linkemu capture`'s own code (cli.main) with the fake dumpcap
(fakedumpcap.py) and a bed that needs no namespaces, in a process of its
own: to signal, to give a pipe for standard output, or to look at what it
leaves in a directory, as a shell would run it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

FAKE_DUMPCAP = Path(__file__).resolve().parent / "fakedumpcap.py"
PYTHON_DIR = Path(__file__).resolve().parents[2] / "python"

_RUNNER = r"""
import sys, types
from linkemu.bed import testbed
from linkemu.cli import main as cli
from linkemu.daemon import capture
capture.find_dumpcap = lambda: sys.argv[1]
capture.tool_cpus = lambda: None
capture.sender_mac = lambda bed, direction: "02:00:00:00:00:01"
testbed.bed_for = lambda name: types.SimpleNamespace(name=name, file_prefix="linkemu-" + name)
sys.exit(cli.main(["capture", "--bed", "fk", "--file-prefix", "x"] + sys.argv[2:]))
"""


def capture_argv(*args: str) -> list[str]:
    """The command line of `linkemu capture --bed fk ... ARGS` so run."""
    return [sys.executable, "-c", _RUNNER, str(FAKE_DUMPCAP), *args]


def capture_env(**extra: str) -> dict:
    """Its environment: this checkout's package, plus `extra`."""
    return dict(os.environ, PYTHONPATH=str(PYTHON_DIR), **extra)
