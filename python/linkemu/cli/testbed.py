"""`linkemu testbed up|down|status` and `linkemu exec {src,dst} -- CMD`."""

from __future__ import annotations

import argparse
import json
import os
import sys

from linkemu import api
from linkemu.bed import attached
from linkemu.bed.interrupts import interruptible, shielded
from linkemu.errors import LinkemuError, UsageError


def bed_from_args(a: argparse.Namespace) -> api.Bed:
    """The bed the options name: --ports, --between, or the bed of --bed."""
    if getattr(a, "ports", None):
        port_a, _, port_b = a.ports.partition(",")
        return api.Bed.ports(port_a, port_b, name=a.bed)
    if getattr(a, "between", None):
        return api.Bed.between(*a.between, name=a.bed, dev=a.dev or attached.DEFAULT_DEV,
                               addr_a=a.addr_a or "", addr_b=a.addr_b or "")
    for opt in ("dev", "addr_a", "addr_b"):
        if getattr(a, opt, None):
            raise UsageError(f"--{opt.replace('_', '-')} is for --between NS_A NS_B")
    return api.Bed(a.bed)


def bring_up(bed: api.Bed, pmd: str = "af_xdp") -> dict:
    """bed.up(), removing what this call built if it fails or is interrupted.
    A bed that was up before is left as it was (it may carry a running
    daemon); `up` reported what is wrong with it."""
    was_up = bed.is_up()
    try:
        return bed.up(pmd)
    except BaseException:
        if not was_up:
            with shielded():
                bed.down()
        raise


def cmd_testbed(a: argparse.Namespace) -> int:
    if a.action != "up" and (a.between or a.dev or a.addr_a or a.addr_b):
        raise UsageError(f"--between, --dev and --addr-a/b are for `testbed up`; "
                         f"`testbed {a.action}` takes only --bed")
    bed = bed_from_args(a)
    if a.action == "up":
        with interruptible():
            st = bring_up(bed)
        _print_status(bed, st, a.json)
        return 0
    if a.action == "down":
        with shielded():
            done = bed.down()
        if a.json:
            print(json.dumps({"bed": bed.name, "done": done}, indent=2))
        else:
            print(f"test bed '{bed.name}': " + ("removed" if done else "nothing to remove"))
            for d in done:
                print(f"  {d}")
        return 0
    _print_status(bed, bed.status(), a.json)
    return 0


def _print_status(bed: api.Bed, st: dict, as_json: bool) -> None:
    print(json.dumps(st, indent=2) if as_json else bed.format_status(st))


def cmd_exec(a: argparse.Namespace) -> int:
    bed = api.Bed(a.bed)
    if not a.cmd:
        raise UsageError("exec: no command given (linkemu exec src -- CMD ...)")
    ref = bed.ref(a.where)
    if not ref.exists():
        raise LinkemuError(f"namespace {ref} does not exist: "
                           f"run `linkemu testbed up --bed {bed.name}` first")
    sys.stdout.flush()
    sys.stderr.flush()
    argv = bed.argv(a.where, a.cmd, cpus=None)
    try:
        os.execvp(argv[0], argv)
    except OSError as e:
        raise LinkemuError(f"cannot run {argv[0]}: {e}") from e
    return 1  # not reached


def register(sub, bed_opt: argparse.ArgumentParser) -> None:
    """Add testbed and exec to the main parser."""
    tb = sub.add_parser("testbed", parents=[bed_opt], help="build, remove or show a test bed")
    tb.add_argument("action", choices=("up", "down", "status"))
    tb.add_argument("--json", action="store_true", help="machine-readable output")
    tb.add_argument("--between", nargs=2, metavar=("NS_A", "NS_B"), default=None,
                    help="put the link between two namespaces you have (ip netns names, or "
                         "process ids whose namespace to use, e.g. a container's): a veth "
                         "into each; `down` removes only those")
    tb.add_argument("--dev", default=None, metavar="NAME",
                    help=f"with --between: the veth's name inside NS_A and NS_B "
                         f"(default {attached.DEFAULT_DEV})")
    tb.add_argument("--addr-a", default=None, metavar="CIDR",
                    help="with --between: address for NS_A's end (default: none)")
    tb.add_argument("--addr-b", default=None, metavar="CIDR",
                    help="with --between: address for NS_B's end (default: none)")
    tb.set_defaults(func=cmd_testbed)

    e = sub.add_parser("exec", parents=[bed_opt], help="run a command in a bed namespace",
                       usage="linkemu exec {src,dst} [--bed NAME] -- CMD ...")
    e.add_argument("where", choices=("src", "dst"))
    # The command after `--` is split off in main(): argparse cannot mix an
    # option (--bed) between a positional and a REMAINDER list.
    e.set_defaults(func=cmd_exec)
