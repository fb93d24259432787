"""`linkemu capture`: record frames on linkemud's ports (dpdk-dumpcap)."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from linkemu.bed import testbed
from linkemu.bed.testbed import DEFAULT_BED
from linkemu.cli import stdout_copy
from linkemu.cli.common import err, run_seconds
from linkemu.daemon import capture
from linkemu.errors import LinkemuError, UsageError


STDOUT = "-"      # -w -: the capture on standard output, as tcpdump and dumpcap read it


def cmd_capture(a: argparse.Namespace) -> int:
    to_stdout = a.write == STDOUT
    if to_stdout:
        _check_stdout_free(a)
    bed = testbed.bed_for(a.bed)
    if a.file_prefix is None and testbed.daemon_pid(bed) is None:
        raise LinkemuError(f"no linkemud is running on bed '{bed.name}' "
                           f"(start one: linkemu run --bed {bed.name} --detach)")
    plan = capture.port_plan(a.dir, a.port)
    what = f"{a.dir} {a.port} ({capture.describe_plan(a.dir, plan)})"
    stop = (f"after {a.count} frames" if a.count else "") + \
           (" or " if a.count and a.duration else "") + \
           (f"after {a.duration:g} s" if a.duration else "")
    print(f"linkemu: capturing {what} on bed '{bed.name}' into "
          f"{'standard output' if to_stdout else a.write}; stops {stop or 'on Ctrl-C'}",
          file=sys.stderr)
    options = dict(count=a.count, port=a.port, direction=a.dir, duration=a.duration,
                   snaplen=a.snaplen, user_filter=a.filter, file_prefix=a.file_prefix)
    if to_stdout:
        # The file is checked, cut and merged before anyone may read it, so
        # the stream is written once the capture has ended, from a
        # directory of our own (TMPDIR) that is removed afterwards.
        with tempfile.TemporaryDirectory(prefix="linkemu-capture-") as d:
            res = capture.capture(bed, Path(d) / "capture.pcapng", **options)
            stdout_copy.copy_file_to_stdout(res.path)
    else:
        res = capture.capture(bed, a.write, **options)
    # With -w -, standard output is the capture's: every word of ours is on stderr.
    report = sys.stderr if to_stdout else sys.stdout
    name = "standard output" if to_stdout else res.path
    if a.json:
        print(json.dumps({k: v for k, v in res.__dict__.items() if k != "stderr"}, indent=2))
    else:
        per = ", ".join(f"port {p}: {n}" for p, n in res.per_port.items())
        print(f"{name}: {res.packets} frames ({what}) in {res.duration_s:.1f} s"
              + (f" ({per})" if len(res.per_port) > 1 else ""), file=report)
        if res.trimmed:
            print(f"  cut to {a.count} per port: dumpcap wrote {res.written} (it stops after "
                  f"a burst)", file=report)
        if res.removed_direction:
            print(f"  removed {res.removed_direction} frames of the other direction",
                  file=report)
    dropped = sum(s["dropped"] for s in res.dumpcap_stats)
    if dropped:
        err(f"dpdk-dumpcap could not keep {dropped} frames (its ring or buffers were full): "
             f"the capture has gaps")
    if res.daemon_exited:
        err(f"linkemud exited during the capture: {name} holds the {res.packets} frames "
            f"captured until then (dpdk-dumpcap could not count what it missed)")
        return 1
    return 0


def _check_stdout_free(a: argparse.Namespace) -> None:
    """-w - needs a standard output that carries nothing but the pcapng,
    into a program that reads it."""
    if a.json:
        raise UsageError("-w - writes the capture to standard output: --json would be "
                         "mixed into it (write to a file to get the JSON report)")
    if sys.stdout.isatty():
        raise UsageError("-w -: standard output is a terminal; pipe it into a reader "
                         "(linkemu capture -w - | tshark -r -) or name a file")


def _snaplen(text: str) -> int:
    """An argparse type: 0 (no limit) or a byte count. dpdk-dumpcap reads -s
    with strtoul, which takes '-5' as 4294967291 rather than refusing it."""
    try:
        v = int(text)
    except ValueError:
        v = -1
    if not 0 <= v <= 0xFFFFFFFF:
        raise argparse.ArgumentTypeError(f"'{text}' is not a snap length in bytes (0 or more)")
    return v


def register(sub) -> None:
    """Add capture to the main parser."""
    k = sub.add_parser("capture", help="record frames on linkemud's ports (dpdk-dumpcap) "
                                       "into a pcapng file")
    k.add_argument("--bed", default=DEFAULT_BED, metavar="NAME")
    k.add_argument("-w", "--write", required=True, metavar="FILE.pcapng",
                   help="the pcapng file to write; '-': standard output, once the "
                        "capture ends (linkemu capture -w - | tshark -r -)")
    k.add_argument("-c", "--count", type=int, default=None, metavar="N",
                   help="stop after N frames (per port with --port both)")
    k.add_argument("--duration", type=run_seconds, default=None, metavar="S",
                   help="stop after S seconds of capture")
    k.add_argument("--dir", choices=capture.DIR_CHOICES, default="a2b",
                   help="which direction's frames (default: a2b)")
    k.add_argument("--port", choices=capture.PORT_CHOICES, default="out",
                   help="in: as they enter linkemud; out: as the link delivers them "
                        "(default); both")
    k.add_argument("-s", "--snaplen", type=_snaplen, default=None, metavar="BYTES",
                   help="keep at most BYTES of each frame (0: whole frames; default: "
                        "dpdk-dumpcap's, 2176)")
    k.add_argument("-f", "--filter", default=None, metavar="BPF",
                   help="an extra capture filter in libpcap syntax")
    k.add_argument("--json", action="store_true")
    k.add_argument("--file-prefix", default=None, help=argparse.SUPPRESS)
    k.set_defaults(func=cmd_capture)
