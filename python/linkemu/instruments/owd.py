"""owdprobe (src/tools/owdprobe.c) across a bed: the one instrument for
one-way delay, loss, reordering and duplicates, used by the lab, the tests
and the demo.

    run = OwdRun(bed, ProbeSpec(...)).start()   # receiver ready, sender going
    out = run.finish()                          # {"sender": ..., "receiver": ...}
    records = read_samples(spec.samples)        # every frame, if samples asked
    probe(bed, spec) does both at once.

The receiver is started first and waited for ("ready"), and always
stopped, even when the sender fails. Sender and receiver run pinned to the
tool CPUs (cpus.tool_cpu_pair()), never on the CPU linkemud polls.
"""

from __future__ import annotations

import json
import select
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from linkemu.bed import netns, procs
from linkemu.bed.cpus import tool_cpu_pair
from linkemu.bed.testbed import Bed
from linkemu.errors import LinkemuError, UsageError
from linkemu.instruments.tools import require_tool

SAMPLES_HEADER = 32
SAMPLES_MAGIC = b"LEOWD001"
SAMPLES_VERSION = 2
# One record: seq, send time, receive time (CLOCK_REALTIME ns), the IP TOS
# byte as received, flags (bit 0: a duplicate of an earlier arrival).
SAMPLES_DTYPE = [("seq", "<u8"), ("send_ns", "<i8"), ("rx_ns", "<i8"), ("tos", "u1"),
                 ("flags", "u1"), ("pad", "V6")]
DUPLICATE = 1
IP_UDP_HEADERS = 28           # a UDP payload of P bytes is an IP packet of P + 28
MODES = {"sender": "send", "receiver": "recv"}   # owdprobe's "mode" of each side
STDERR_TAIL_LINES = 5         # of a failed side's stderr, in the error
RECEIVER_START_GRACE_S = 5.0  # a receiver that did not say "ready": wait this long for its exit
RECEIVER_READY_WAIT_S = 10.0  # for its "ready" line (it binds a socket: milliseconds)


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
    tos: int = 0                      # IP TOS byte of every frame (DSCP << 2 | ECN)
    sport: int = 0                    # sender's UDP source port (0: any)

    def sender_seconds(self) -> float:
        return self.count / self.pps if self.pps else self.count / 1e5

    def sender_wait_s(self) -> float:
        """How long finish() waits for the sender: its schedule three
        times over, and a minute for a slow start."""
        return self.sender_seconds() * 3 + 60

    def receiver_wait_s(self) -> float:
        """How long finish() waits for the receiver once the sender is
        done: it ends by itself within its idle time (start timeout, if
        nothing arrived); two minutes more for a slow machine."""
        return self.idle_s + self.start_timeout_s + 120


class OwdRun:
    """One owdprobe run across the bed, in two steps: start() starts the
    receiver, waits for it, then starts the sender; finish() waits for both
    and returns {"sender": ..., "receiver": ...} with each side's JSON.
    Either side failing (an error exit, a timeout, output that is not its
    JSON summary) raises LinkemuError naming the side, its exit status and
    the tail of its stderr (bad arguments: UsageError). kill() (or leaving
    a `with` block) stops both."""

    def __init__(self, bed: Bed, spec: ProbeSpec):
        self.bed, self.spec = bed, spec
        self.recv: subprocess.Popen | None = None
        self.send: subprocess.Popen | None = None

    def _argv(self) -> tuple[list[str], list[str], str, str]:
        spec, bed = self.spec, self.bed
        binary = str(require_tool("owdprobe"))
        tx_ns, rx_ns = (bed.ns_dst, bed.ns_src) if spec.reverse else (bed.ns_src, bed.ns_dst)
        rx_addr = bed.addr_src if spec.reverse else bed.addr_dst
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
        if spec.tos:
            send_cmd += ["--tos", str(spec.tos)]
        if spec.sport:
            send_cmd += ["--sport", str(spec.sport)]
        return recv_cmd, send_cmd, rx_ns, tx_ns

    def start(self) -> "OwdRun":
        recv_cmd, send_cmd, rx_ns, tx_ns = self._argv()
        snd_cpus, rcv_cpus = tool_cpu_pair()
        self.recv = subprocess.Popen(netns.ns_exec_argv(rx_ns, recv_cmd, cpus=rcv_cpus),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            line = _first_line(self.recv, RECEIVER_READY_WAIT_S)
            if not line.startswith("ready"):
                raise _start_failure(self.recv, line)
            # SO_TIMESTAMPNS turns the kernel's RX timestamps on through a
            # deferred static key: give it a moment before the first frame.
            time.sleep(0.05)
            self.send = subprocess.Popen(netns.ns_exec_argv(tx_ns, send_cmd, cpus=snd_cpus),
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         text=True)
        except BaseException:
            self.kill()
            raise
        return self

    def finish(self) -> dict:
        spec = self.spec
        try:
            sender = _summary_of("sender", self.send, spec.sender_wait_s())
            receiver = _summary_of("receiver", self.recv, spec.receiver_wait_s())
            return {"sender": sender, "receiver": receiver}
        finally:
            self.kill()

    def kill(self) -> None:
        """Stop whichever side still runs (SIGTERM; SIGKILL after 5 s)."""
        for p in (self.send, self.recv):
            if p is None:
                continue
            procs.terminate(p.pid, 5.0, popen=p)
            for f in (p.stdout, p.stderr):
                if f:
                    f.close()

    def __enter__(self) -> "OwdRun":
        return self

    def __exit__(self, *exc) -> None:
        self.kill()


def _summary_of(side: str, proc: subprocess.Popen, wait_s: float) -> dict:
    """The JSON summary one side printed, once it ended by itself within
    wait_s. Anything else is a LinkemuError naming the side, its exit
    status and its stderr's tail: a run whose numbers cannot be trusted
    must not come out as a json or subprocess traceback."""
    try:
        out, err = proc.communicate(timeout=wait_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        _out, err = proc.communicate()
        raise LinkemuError(f"owdprobe {side} did not end within {wait_s:g} s (killed): "
                           f"{_stderr_tail(err)}") from None
    if proc.returncode == 2:
        raise UsageError(err.strip())
    summary = _parse_summary(side, out)
    if summary is None:
        raise LinkemuError(f"owdprobe {side} printed no JSON summary ({_exit_status(proc.returncode)}"
                           f", stdout {_excerpt(out)}): {_stderr_tail(err)}")
    if proc.returncode != 0:
        raise LinkemuError(f"owdprobe {side} failed ({_exit_status(proc.returncode)}): "
                           f"{summary.get('error')}: {_stderr_tail(err)}")
    return summary


def _parse_summary(side: str, out: str) -> dict | None:
    """owdprobe's summary of this side, or None if out is not one: not
    JSON (garbage, or cut short by a kill: the object never closes), or
    JSON that is not owdprobe's summary of this side (whose fields the
    callers would miss as KeyErrors)."""
    try:
        summary = json.loads(out)
    except json.JSONDecodeError:
        return None
    if not isinstance(summary, dict) or summary.get("tool") != "owdprobe" \
            or summary.get("mode") != MODES[side]:
        return None
    return summary


def _first_line(p: subprocess.Popen, wait_s: float) -> str:
    """The first line p prints, or "" if it prints none within wait_s (a
    receiver stuck before its "ready" line blocked readline() for ever)."""
    ready, _, _ = select.select([p.stdout], [], [], wait_s)
    return p.stdout.readline() if ready else ""


def _start_failure(recv: subprocess.Popen, line: str) -> LinkemuError:
    """The error for a receiver whose first line was not "ready": bad
    arguments (UsageError), or what it printed and said. One still running
    after RECEIVER_START_GRACE_S (it printed something else and went on)
    is killed, not waited for."""
    try:
        recv.wait(RECEIVER_START_GRACE_S)
        status = _exit_status(recv.returncode)
    except subprocess.TimeoutExpired:
        recv.kill()
        recv.wait()
        status = f"still running after {RECEIVER_START_GRACE_S:g} s, killed"
    err = recv.stderr.read()
    if recv.returncode == 2:
        return UsageError(err.strip())
    said = f"printed {_excerpt(line)} instead of 'ready'" if line else "printed nothing"
    return LinkemuError(f"owdprobe receiver did not start ({status}; {said}): {_stderr_tail(err)}")


def _exit_status(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit status {returncode}"


def _stderr_tail(err: str) -> str:
    """The last lines of a side's stderr: its own last words say why."""
    lines = err.strip().splitlines()
    return " / ".join(lines[-STDERR_TAIL_LINES:]) if lines else "(nothing on stderr)"


def _excerpt(text: str, limit: int = 120) -> str:
    """A short quote of what a side printed, its end kept (a cut summary
    shows where it stopped)."""
    text = text.strip()
    if not text:
        return "empty"
    return repr(text if len(text) <= limit else "..." + text[-limit:])


def probe(bed: Bed, spec: ProbeSpec) -> dict:
    """One owdprobe run across the bed (OwdRun start + finish). Returns
    {"sender": ..., "receiver": ...} with each side's JSON."""
    return OwdRun(bed, spec).start().finish()


def read_samples(path: Path, duplicates: bool = False):
    """owdprobe's binary samples as a numpy structured array (seq u64,
    send_ns i64, rx_ns i64, tos u8, flags u8), in arrival order; without
    duplicates unless asked (flags & DUPLICATE marks a later copy)."""
    import numpy as np
    with open(path, "rb") as f:
        head = f.read(SAMPLES_HEADER)
    if len(head) < SAMPLES_HEADER or head[:8] != SAMPLES_MAGIC:
        raise LinkemuError(f"{path}: not an owdprobe samples file (bad header)")
    version = int.from_bytes(head[8:12], "little")
    dt = np.dtype(SAMPLES_DTYPE)
    if version != SAMPLES_VERSION or int.from_bytes(head[12:16], "little") != dt.itemsize:
        raise LinkemuError(f"{path}: owdprobe samples version {version}, this linkemu reads "
                           f"version {SAMPLES_VERSION}: rebuild owdprobe (make build)")
    count = int.from_bytes(head[16:24], "little")
    a = np.fromfile(path, dtype=dt, offset=SAMPLES_HEADER)
    if a.size != count:
        raise LinkemuError(f"{path}: header says {count} records, file holds {a.size}")
    return a if duplicates else a[(a["flags"] & DUPLICATE) == 0]


def udp_socket_errors(ns: str) -> dict:
    """UDP counters of a namespace (RcvbufErrors etc., from /proc/net/snmp)."""
    cp = netns.ns_run(ns, ["cat", "/proc/net/snmp"], check=False)
    lines = [l.split() for l in cp.stdout.splitlines() if l.startswith("Udp:")]
    if len(lines) >= 2:
        return {k: int(v) for k, v in zip(lines[0][1:], lines[1][1:])}
    return {}
