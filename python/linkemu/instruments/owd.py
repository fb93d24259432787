"""owdprobe (src/tools/owdprobe.c) across a bed: one-way delay and loss.

The receiver is started first and waited for ("ready"), and always
stopped, even when the sender fails. Sender and receiver run pinned to the
tool CPUs (cpus.tool_cpu_pair()), never on the CPU linkemud polls.
"""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from linkemu.bed import netns
from linkemu.bed.cpus import tool_cpu_pair
from linkemu.bed.testbed import Bed
from linkemu.errors import LinkemuError, UsageError
from linkemu.instruments.tools import require_tool

SAMPLES_HEADER = 32
SAMPLES_MAGIC = b"LEOWD001"


@dataclass
class ProbeSpec:
    ip_len: int = 1500
    pps: float | None = 10_000.0       # None = as fast as possible (--max)
    count: int = 10_000
    run_id: int = 1
    port: int = 9000
    batch: int = 64
    # Sender: busy-wait only this long before a frame is due (0: always).
    # Always, because a sender that sleeps leaves its CPU, which also runs
    # the receiver, idle at a random phase when a delayed frame arrives:
    # frames through delay D then pay a wake-up that frames through delay
    # 0 (arriving right after their own send) do not. That systematic
    # (~2 us at 10 kpps) is no emulator error but the noise floor (a busy
    # loop) cannot see it, and it failed the reproduction-error bound.
    spin_us: int = 0
    samples: Path | None = None       # where the receiver writes raw samples
    idle_s: float = 1.0               # receiver: silence after the last frame
    start_timeout_s: float = 10.0     # receiver: wait for the first frame
    reverse: bool = False             # dst -> src (b2a) instead of src -> dst

    def sender_seconds(self) -> float:
        return self.count / self.pps if self.pps else self.count / 1e5


def probe(bed: Bed, spec: ProbeSpec) -> dict:
    """One owdprobe run across the bed. Returns {"sender": ..., "receiver": ...}
    with each side's JSON. Raises LinkemuError with the tool's own message
    when either side fails (bad arguments give UsageError)."""
    binary = str(require_tool("owdprobe"))
    tx_ns, rx_ns = (bed.ns_dst, bed.ns_src) if spec.reverse else (bed.ns_src, bed.ns_dst)
    rx_addr = bed.addr_src if spec.reverse else bed.addr_dst
    snd_cpus, rcv_cpus = tool_cpu_pair()
    recv_cmd = [binary, "recv", "--bind", rx_addr, "--port", str(spec.port),
                "--count", str(spec.count), "--run-id", str(spec.run_id),
                "--idle", f"{spec.idle_s:g}", "--start-timeout", f"{spec.start_timeout_s:g}"]
    if spec.samples is not None:
        recv_cmd += ["--samples", str(spec.samples)]
    send_cmd = [binary, "send", "--dst", rx_addr, "--port", str(spec.port),
                "--ip-len", str(spec.ip_len), "--count", str(spec.count),
                "--run-id", str(spec.run_id), "--batch", str(spec.batch),
                "--spin-us", str(spec.spin_us)]
    send_cmd += ["--pps", f"{spec.pps:.6g}"] if spec.pps else ["--max"]
    recv = subprocess.Popen(netns.ns_exec_argv(rx_ns, recv_cmd, cpus=rcv_cpus),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = recv.stdout.readline()
        if not line.startswith("ready"):
            recv.wait(5)
            err = recv.stderr.read().strip()
            if recv.returncode == 2:
                raise UsageError(err)
            raise LinkemuError(f"owdprobe receiver did not start: {err}")
        # SO_TIMESTAMPNS turns the kernel's RX timestamps on through a
        # deferred static key: give it a moment before the first frame.
        time.sleep(0.05)
        cp = subprocess.run(netns.ns_exec_argv(tx_ns, send_cmd, cpus=snd_cpus),
                            capture_output=True, text=True,
                            timeout=spec.sender_seconds() * 3 + 60)
        if cp.returncode == 2:
            raise UsageError(cp.stderr.strip())
        try:
            sender = json.loads(cp.stdout)
        except json.JSONDecodeError:
            raise LinkemuError(f"owdprobe sender failed ({cp.returncode}): {cp.stderr.strip()}")
        if cp.returncode != 0:
            raise LinkemuError(f"owdprobe sender failed: {sender.get('error')}: "
                               f"{cp.stderr.strip()}")
        out, err = recv.communicate(timeout=spec.idle_s + spec.start_timeout_s + 120)
        if recv.returncode != 0:
            raise LinkemuError(f"owdprobe receiver failed ({recv.returncode}): {err.strip()}")
        receiver = json.loads(out)
        return {"sender": sender, "receiver": receiver}
    finally:
        if recv.poll() is None:
            recv.terminate()
            try:
                recv.wait(5)
            except subprocess.TimeoutExpired:
                recv.kill()
                recv.wait()
        for f in (recv.stdout, recv.stderr):
            if f:
                f.close()


def read_samples(path: Path):
    """owdprobe's binary samples as a numpy structured array
    (seq u64, send_ns i64, rx_ns i64), in arrival order."""
    import numpy as np
    with open(path, "rb") as f:
        head = f.read(SAMPLES_HEADER)
    if len(head) < SAMPLES_HEADER or head[:8] != SAMPLES_MAGIC:
        raise LinkemuError(f"{path}: not an owdprobe samples file (bad header)")
    count = int.from_bytes(head[16:24], "little")
    dt = np.dtype([("seq", "<u8"), ("send_ns", "<i8"), ("rx_ns", "<i8")])
    a = np.fromfile(path, dtype=dt, offset=SAMPLES_HEADER)
    if a.size != count:
        raise LinkemuError(f"{path}: header says {count} records, file holds {a.size}")
    return a


def udp_socket_errors(ns: str) -> dict:
    """UDP counters of a namespace (RcvbufErrors etc., from /proc/net/snmp)."""
    cp = netns.ns_run(ns, ["cat", "/proc/net/snmp"], check=False)
    lines = [l.split() for l in cp.stdout.splitlines() if l.startswith("Udp:")]
    if len(lines) >= 2:
        return {k: int(v) for k, v in zip(lines[0][1:], lines[1][1:])}
    return {}
