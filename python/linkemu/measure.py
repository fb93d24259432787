"""Run the measurement tools across a bed and parse what they print.

ping and iperf3 are the tools people already trust; the probe (probe.py) is
ours, for per-datagram loss and one-way delay. Every tool runs inside the
bed's namespaces via `ip netns exec`; servers are started first and waited
for, and always stopped, even when the client fails.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from linkemu import netns
from linkemu.cpus import tool_cpus
from linkemu.errors import LinkemuError
from linkemu.stats import percentile
from linkemu.testbed import Bed

_TIME_RE = re.compile(r"\btime=([0-9.]+) ms")


@dataclass
class PingResult:
    transmitted: int
    rtts_ms: list[float] = field(default_factory=list)

    @property
    def received(self) -> int:
        return len(self.rtts_ms)

    def summary(self) -> dict:
        r = self.rtts_ms
        return {"transmitted": self.transmitted, "received": self.received,
                "min_ms": min(r) if r else None,
                "median_ms": percentile(r, 50) if r else None,
                "p90_ms": percentile(r, 90) if r else None,
                "max_ms": max(r) if r else None}


def parse_ping(text: str) -> PingResult:
    """Per-reply parsing of `ping -n` output (replies' time= values, so we
    compute medians ourselves rather than trusting ping's avg/mdev)."""
    rtts = [float(m.group(1)) for m in _TIME_RE.finditer(text)]
    m = re.search(r"(\d+) packets transmitted", text)
    return PingResult(int(m.group(1)) if m else len(rtts), rtts)


def ping(bed: Bed, count: int = 20, interval: float = 0.2, size: int = 56) -> PingResult:
    """ping src -> dst. Replies lost to the emulator are fine (not an error)."""
    cmd = ["ping", "-n", "-c", str(count), "-i", str(interval), "-s", str(size),
           "-W", "2", bed.addr_dst]
    cp = netns.ns_run(bed.ns_src, cmd, cpus=tool_cpus(), check=False, timeout=count * interval + 30)
    if cp.returncode not in (0, 1):   # 1 = some replies missing
        raise LinkemuError(f"ping failed ({cp.returncode}): {cp.stderr.strip()}")
    return parse_ping(cp.stdout)


# --- iperf3 ------------------------------------------------------------------------

def _wait_listening(ns: str, port: int, proto: str, timeout: float, proc) -> None:
    flag = "-ltnH" if proto == "tcp" else "-lunH"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise LinkemuError(f"server in {ns} exited early: {proc.stderr.read().strip()}")
        cp = netns.ns_run(ns, ["ss", flag, f"sport = :{port}"], check=False)
        if cp.stdout.strip():
            return
        time.sleep(0.05)
    raise LinkemuError(f"server in {ns} not listening on {proto} port {port} after {timeout} s")


def iperf3_run(bed: Bed, client_args: list[str], seconds: float, port: int,
               server_cpus: str | None, client_cpus: str | None, label: str = "iperf3") -> dict:
    """One iperf3 measurement src -> dst: a one-off server in dst, the client
    in src with `client_args` after `-c ADDR -p PORT -J`; returns the
    client's -J output. The server is always stopped. Raises, prefixed with
    `label`, if iperf3 prints no JSON or reports an error."""
    server = subprocess.Popen(
        netns.ns_exec_argv(bed.ns_dst, ["iperf3", "-s", "-1", "-p", str(port), "-B", bed.addr_dst],
                           cpus=server_cpus),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        # iperf3 listens on TCP for its control connection in both modes.
        _wait_listening(bed.ns_dst, port, "tcp", 10.0, server)
        cmd = ["iperf3", "-c", bed.addr_dst, "-p", str(port), "-J", *client_args]
        cp = netns.ns_run(bed.ns_src, cmd, cpus=client_cpus, check=False, timeout=seconds + 60)
        try:
            out = json.loads(cp.stdout)
        except json.JSONDecodeError as e:
            raise LinkemuError(f"{label} printed no JSON ({cp.returncode}): "
                               f"{(cp.stderr or cp.stdout).strip()[:500]}") from e
        if out.get("error"):
            raise LinkemuError(f"{label}: {out['error']}")
        return out
    finally:
        if server.poll() is None:
            server.terminate()
            try:
                server.wait(5)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        if server.stderr:
            server.stderr.close()


def iperf3(bed: Bed, seconds: int = 5, udp: bool = False, bitrate: str = "50M",
           port: int = 5201) -> dict:
    """iperf3 client in src, one-off server in dst; returns the client's -J
    output (a dict). Raises if iperf3 reports an error."""
    args = ["-t", str(seconds)] + (["-u", "-b", bitrate] if udp else [])
    return iperf3_run(bed, args, seconds, port, tool_cpus(), tool_cpus())


def iperf3_tcp_summary(out: dict) -> dict:
    end = out.get("end", {})
    return {"mbit_s": end.get("sum_received", {}).get("bits_per_second", 0) / 1e6,
            "retransmits": end.get("sum_sent", {}).get("retransmits")}


def iperf3_udp_summary(out: dict) -> dict:
    s = out.get("end", {}).get("sum", {})
    return {"mbit_s": s.get("bits_per_second", 0) / 1e6,
            "lost_percent": s.get("lost_percent"), "jitter_ms": s.get("jitter_ms")}


# --- probe -------------------------------------------------------------------------

def _probe_env() -> dict:
    """Environment for `python -m linkemu.probe` in a namespace: the same
    interpreter and the same linkemu package as ours, installed or not."""
    env = dict(os.environ)
    pkg_parent = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = pkg_parent + (os.pathsep + env["PYTHONPATH"]
                                      if env.get("PYTHONPATH") else "")
    return env


def probe(bed: Bed, count: int = 1000, rate: float = 1000.0, size: int = 64,
          port: int = 9000, idle_s: float = 2.0, reverse: bool = False) -> dict:
    """Sequenced UDP probe src -> dst (dst -> src with reverse). Returns the
    receiver's JSON plus a "sender" entry with the sender's own report."""
    tx_ns, rx_ns = (bed.ns_dst, bed.ns_src) if reverse else (bed.ns_src, bed.ns_dst)
    rx_addr = bed.addr_src if reverse else bed.addr_dst
    run_id = int.from_bytes(os.urandom(8), "big") >> 1
    py = [sys.executable, "-m", "linkemu.probe"]
    env = _probe_env()
    recv = subprocess.Popen(
        netns.ns_exec_argv(rx_ns, cpus=tool_cpus(), cmd=py + ["recv", "--bind", rx_addr, "--port", str(port),
                                        "--count", str(count), "--idle", str(idle_s),
                                        "--run-id", str(run_id)]),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = recv.stdout.readline()   # blocks until "ready" or the receiver dies
        if not line.startswith("ready"):
            recv.wait(5)
            raise LinkemuError(f"probe receiver did not start: {recv.stderr.read().strip()}")
        expected_s = count / rate if rate > 0 else 0
        cp = netns.ns_run(tx_ns, cpus=tool_cpus(), cmd=py + ["send", "--dst", rx_addr, "--port", str(port),
                                       "--count", str(count), "--rate", str(rate),
                                       "--size", str(size), "--run-id", str(run_id)],
                          check=False, timeout=expected_s + 60, env=env)
        if cp.returncode != 0:
            raise LinkemuError(f"probe sender failed: {cp.stderr.strip()}")
        out, err = recv.communicate(timeout=idle_s + 30)
        if recv.returncode != 0:
            raise LinkemuError(f"probe receiver failed: {err.strip()}")
        result = json.loads(out.strip().splitlines()[-1])
        result["sender"] = json.loads(cp.stdout)
        return result
    finally:
        if recv.poll() is None:
            recv.kill()
            recv.wait()
