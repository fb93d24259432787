"""`linkemu testbed up|down|status` and `linkemu exec {src,dst} -- CMD`."""

from __future__ import annotations

import argparse
import json
import os
import sys

from linkemu.bed import netns, testbed
from linkemu.bed.interrupts import interruptible, shielded
from linkemu.errors import LinkemuError, UsageError


def cmd_testbed(a: argparse.Namespace) -> int:
    bed = testbed.bed_for(a.bed)
    if a.action == "up":
        was_up = testbed.status(bed)["up"]
        with interruptible():
            try:
                st = testbed.up(bed)
            except BaseException:
                # A half-built bed is worse than none: remove what this call
                # built. A bed that was up before is left as it was (it may
                # carry a running daemon); `up` reported what is wrong with it.
                if not was_up:
                    with shielded():
                        testbed.down(bed)
                raise
        _print_status(st, a.json)
        return 0
    if a.action == "down":
        with shielded():
            done = testbed.down(bed)
        if a.json:
            print(json.dumps({"bed": bed.name, "done": done}, indent=2))
        else:
            print(f"test bed '{bed.name}': " + ("removed" if done else "nothing to remove"))
            for d in done:
                print(f"  {d}")
        return 0
    st = testbed.status(bed)
    _print_status(st, a.json)
    return 0


def _print_status(st: dict, as_json: bool) -> None:
    print(json.dumps(st, indent=2) if as_json else testbed.format_status(st))


def cmd_exec(a: argparse.Namespace) -> int:
    bed = testbed.bed_for(a.bed)
    cmd = a.cmd
    if not cmd:
        raise UsageError("exec: no command given (linkemu exec src -- CMD ...)")
    ns = bed.namespace(a.where)
    if not netns.ns_exists(ns):
        raise LinkemuError(f"namespace {ns} does not exist: "
                           f"run `linkemu testbed up --bed {bed.name}` first")
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execvp("ip", ["ip", "netns", "exec", ns, *cmd])
    except OSError as e:
        raise LinkemuError(f"cannot run ip netns exec: {e}") from e
    return 1  # not reached


def register(sub, bed_opt: argparse.ArgumentParser) -> None:
    """Add testbed and exec to the main parser."""
    tb = sub.add_parser("testbed", parents=[bed_opt], help="build, remove or show a test bed")
    tb.add_argument("action", choices=("up", "down", "status"))
    tb.add_argument("--json", action="store_true", help="machine-readable output")
    tb.set_defaults(func=cmd_testbed)

    e = sub.add_parser("exec", parents=[bed_opt], help="run a command in a bed namespace",
                       usage="linkemu exec {src,dst} [--bed NAME] -- CMD ...")
    e.add_argument("where", choices=("src", "dst"))
    # The command after `--` is split off in main(): argparse cannot mix an
    # option (--bed) between a positional and a REMAINDER list.
    e.set_defaults(func=cmd_exec)
