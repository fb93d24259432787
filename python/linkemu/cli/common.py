"""What every `linkemu` command module shares: how errors are printed and
the --bed/--timeout options.

Conventions for command modules (cli/*.py): each has register(sub), which
adds its subcommand(s) to the main parser and sets func; a command returns
its exit code, raises UsageError (exit 2) for bad input and LinkemuError
(exit 1) for a failed step; main.py prints those as one message.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

from linkemu.bed.testbed import DEFAULT_BED
from linkemu.daemon.control import DEFAULT_TIMEOUT_S, DaemonRefused


def err(msg: str) -> None:
    print(f"linkemu: {msg}", file=sys.stderr)


def refused(e: DaemonRefused) -> int:
    """A command the daemon refused: its message verbatim, after the name
    of the daemon that refused it (linkemud, or linkemuk for --io kernel),
    exit 1."""
    print(f"{e.daemon}: {e}", file=sys.stderr)
    return 1


MAX_SECONDS = 86_400.0


def seconds(text: str) -> float:
    """An argparse type: a number of seconds above 0, at most a day. float()
    alone lets "-1", "nan" and "inf" through, which socket.settimeout
    refuses with a traceback (or, as an interval, never ends a sleep); past
    ~9.2e9 s settimeout raises OverflowError. No timeout or interval of
    ours needs more than a day."""
    return _seconds_up_to(text, MAX_SECONDS, "a day")


# A run's length (capture --duration) is no timer's timeout: a week-long
# capture is a thing people do. Only kept finite and plainly sized.
MAX_RUN_SECONDS = 365 * 86_400.0


def run_seconds(text: str) -> float:
    """An argparse type: how long a run lasts, above 0, at most a year."""
    return _seconds_up_to(text, MAX_RUN_SECONDS, "a year")


def _seconds_up_to(text: str, most: float, most_words: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not (0 < v <= most):
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of seconds above 0 and "
                                         f"at most {most:.0f} ({most_words})")
    return v


def output_file(text: str) -> Path:
    """An argparse type: a file a command writes when it ends (a run's
    samples). Checked when the options are read: found only at the end, a
    directory or a missing directory cost the whole run (and was a
    traceback)."""
    p = Path(text)
    if not text:
        raise argparse.ArgumentTypeError("an empty name is not a file name")
    if p.is_dir():
        raise argparse.ArgumentTypeError(f"'{text}' is a directory, not a file name")
    parent = p.parent
    if not parent.is_dir():
        raise argparse.ArgumentTypeError(f"'{text}': directory '{parent}' does not exist")
    if not os.access(parent, os.W_OK):
        raise argparse.ArgumentTypeError(f"'{text}': directory '{parent}' is not writable")
    return p


def port(text: str) -> int:
    """An argparse type: a TCP/UDP port, 1 .. 65535 (bind() raises
    OverflowError beyond, and connect() reports a port it wrapped)."""
    try:
        v = int(text)
    except ValueError:
        v = -1
    if not 1 <= v <= 65535:
        raise argparse.ArgumentTypeError(f"'{text}' is not a port (1 .. 65535)")
    return v


def bed_parent() -> argparse.ArgumentParser:
    """A parent parser with --bed, for commands without an action word."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--bed", default=DEFAULT_BED, metavar="NAME",
                   help="test bed name (default: %(default)s; others: 1-8 of [a-z0-9])")
    return p


def daemon_options(p: argparse.ArgumentParser, top: bool) -> None:
    """--bed and --timeout for commands that talk to a running daemon.
    The options may come before or after the action word; only the
    top-level copy has a default (a subparser's default would overwrite a
    value given before the action)."""
    d = (lambda v: v) if top else (lambda v: argparse.SUPPRESS)
    p.add_argument("--bed", default=d(DEFAULT_BED), metavar="NAME",
                   help="test bed name (default: %s)" % DEFAULT_BED)
    p.add_argument("--timeout", type=seconds, default=d(DEFAULT_TIMEOUT_S), metavar="S",
                   help="seconds to wait for the daemon (default: %g)" % DEFAULT_TIMEOUT_S)
