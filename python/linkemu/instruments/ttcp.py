"""ttcp (src/tools/ttcp.c) across a bed: receiver in one namespace, sender
in the other, both pinned off the daemon's CPU; always stopped.

    out = ttcp.run(bed, ttcp.TtcpSpec(window=64 * 1024, cc="reno", seconds=3))
    out["sender"]["mbps"], out["receiver"]["bytes"]
    cols = ttcp.read_samples(path)      # the sender's TCP_INFO samples

Errors: UsageError for what ttcp refused (exit 2), LinkemuError otherwise,
each with ttcp's own message.
"""

from __future__ import annotations

import csv
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from linkemu.bed import netns, procs
from linkemu.bed.cpus import tool_cpu_pair
from linkemu.errors import LinkemuError, UsageError
from linkemu.instruments.tools import require_tool

SAMPLE_COLUMNS = ("t_us", "cwnd", "ssthresh", "mss", "unacked", "in_flight_bytes", "rtt_us",
                  "rttvar_us", "retransmits", "total_retrans", "lost", "delivery_rate_bps",
                  "bytes_sent", "bytes_retrans", "bytes_acked", "snd_wnd", "ca_state")


@dataclass
class TtcpSpec:
    window: int | None = None        # bytes; None: the kernel's autotuning
    cc: str | None = None
    seconds: float | None = None     # else count writes
    count: int = 20_000
    length: int = 4096
    mss: int | None = None
    samples: Path | None = None
    sample_ms: float = 5.0
    port: int = 5001
    window_mode: str = "clamp"
    reverse: bool = False            # dst -> src
    nodelay: bool = False            # sender TCP_NODELAY
    quickack: bool = False           # receiver TCP_QUICKACK after every read

    def expected_seconds(self) -> float:
        return self.seconds if self.seconds else 120.0


def _args(spec: TtcpSpec, sender: bool) -> list[str]:
    a = ["--port", str(spec.port), "--len", str(spec.length), "--json",
         "--window-mode", spec.window_mode]
    if spec.window:
        a += ["--window", str(spec.window)]
    if spec.mss:
        a += ["--mss", str(spec.mss)]
    if sender and spec.nodelay:
        a.append("--nodelay")
    if not sender and spec.quickack:
        a.append("--quickack")
    if sender:
        a += ["--seconds", f"{spec.seconds:g}"] if spec.seconds else ["--count", str(spec.count)]
        if spec.cc:
            a += ["--cc", spec.cc]
        if spec.samples:
            a += ["--samples", str(spec.samples), "--sample-ms", f"{spec.sample_ms:g}"]
    return a


def _json(out: str, who: str, rc: int, err: str) -> dict:
    if rc == 2:
        raise UsageError(f"ttcp {who}: {err.strip()}")
    if rc != 0:
        raise LinkemuError(f"ttcp {who} failed ({rc}): {err.strip()}")
    try:
        return json.loads(out.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        raise LinkemuError(f"ttcp {who}: no JSON summary ({err.strip()})")


def run(bed, spec: TtcpSpec) -> dict:
    binary = str(require_tool("ttcp"))
    tx_ns, rx_ns = (bed.ns_dst, bed.ns_src) if spec.reverse else (bed.ns_src, bed.ns_dst)
    rx_addr = bed.addr_src if spec.reverse else bed.addr_dst
    snd_cpus, rcv_cpus = tool_cpu_pair()
    recv_cmd = [binary, "recv", "--bind", rx_addr, "--timeout", "30", *_args(spec, False)]
    send_cmd = [binary, "send", "--dst", rx_addr, *_args(spec, True)]
    recv = subprocess.Popen(netns.ns_exec_argv(rx_ns, recv_cmd, cpus=rcv_cpus),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = recv.stdout.readline()
        if not line.startswith("ready"):
            recv.wait(5)
            _json("", "receiver", recv.returncode or 1, recv.stderr.read())
        cp = subprocess.run(netns.ns_exec_argv(tx_ns, send_cmd, cpus=snd_cpus),
                            capture_output=True, text=True,
                            timeout=spec.expected_seconds() * 4 + 60)
        sender = _json(cp.stdout, "sender", cp.returncode, cp.stderr)
        out, err = recv.communicate(timeout=60)
        receiver = _json(out, "receiver", recv.returncode, err)
        return {"sender": sender, "receiver": receiver}
    except subprocess.TimeoutExpired as e:
        raise LinkemuError(f"ttcp timed out after {e.timeout:.0f} s") from e
    finally:
        procs.terminate(recv.pid, 5.0, recv)
        for f in (recv.stdout, recv.stderr):
            if f:
                f.close()


def read_samples(path: Path) -> dict[str, list[int]]:
    """The sender's TCP_INFO samples, column -> values."""
    cols: dict[str, list[int]] = {c: [] for c in SAMPLE_COLUMNS}
    with open(path, newline="") as f:
        rd = csv.DictReader(f)
        if tuple(rd.fieldnames or ()) != SAMPLE_COLUMNS:
            raise LinkemuError(f"{path}: not ttcp samples (columns {rd.fieldnames})")
        for row in rd:
            try:
                if None in row:                  # more fields than columns
                    raise ValueError
                vals = [int(row[c]) for c in SAMPLE_COLUMNS]
            except (TypeError, ValueError):      # a short line gives None, a garbled one text
                raise LinkemuError(f"{path} line {rd.line_num}: not a line of ttcp samples "
                                   f"({len(SAMPLE_COLUMNS)} integers; cut off when the "
                                   f"sender was stopped?)") from None
            for c, v in zip(SAMPLE_COLUMNS, vals):
                cols[c].append(v)
    return cols
