"""iperf3 across a bed: one-off server in dst, client in src, -J output.

The server is started first and waited for (it must be listening before
the client connects), and always stopped, even when the client fails.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from linkemu.bed import netns, procs
from linkemu.bed.cpus import tool_cpu_pair, tool_cpus
from linkemu.bed.testbed import Bed
from linkemu.errors import LinkemuError


def wait_listening(ns: str, port: int, proto: str, timeout: float, proc) -> None:
    """Returns once a socket in namespace ns listens on port (tcp or udp);
    raises if proc (the server) exits first or timeout seconds pass."""
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


# iperf3's errors in setting up a data stream. A UDP stream is set up with
# one datagram each way and no retry (the client gives up after 30 s), so on
# a link with loss a lost setup datagram fails the run before any data moved:
# worth one more try, which is said on stderr.
SETUP_ERRORS = ("unable to read from stream socket", "unable to write to stream socket",
                "unable to connect stream")


def setup_failed(out: dict) -> bool:
    """iperf3 failed while setting up its streams, before measuring."""
    err = str(out.get("error") or "")
    return not out.get("intervals") and any(e in err for e in SETUP_ERRORS)


def iperf3_run(bed: Bed, client_args: list[str], seconds: float, port: int,
               server_cpus: str | None, client_cpus: str | None, label: str = "iperf3",
               setup_retries: int = 1) -> dict:
    """One iperf3 measurement src -> dst: a one-off server in dst, the client
    in src with `client_args` after `-c ADDR -p PORT -J`; returns the
    client's -J output. The server is always stopped. A run that fails in
    setting up its streams (SETUP_ERRORS) is tried again, up to
    `setup_retries` times. Raises, prefixed with `label`, if iperf3 prints
    no JSON or reports an error."""
    for attempt in range(setup_retries + 1):
        out = _iperf3_once(bed, client_args, seconds, port, server_cpus, client_cpus, label)
        if not setup_failed(out) or attempt == setup_retries:
            break
        print(f"{label}: {out['error']} (a setup datagram lost on the link?); trying again",
              file=sys.stderr, flush=True)
    if out.get("error"):
        raise LinkemuError(f"{label}: {out['error']}")
    return out


def _iperf3_once(bed: Bed, client_args: list[str], seconds: float, port: int,
                 server_cpus: str | None, client_cpus: str | None, label: str) -> dict:
    server = subprocess.Popen(
        netns.ns_exec_argv(bed.ns_dst, ["iperf3", "-s", "-1", "-p", str(port), "-B", bed.addr_dst],
                           cpus=server_cpus),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        # iperf3 listens on TCP for its control connection in both modes.
        wait_listening(bed.ns_dst, port, "tcp", 10.0, server)
        cmd = ["iperf3", "-c", bed.addr_dst, "-p", str(port), "-J", *client_args]
        cp = netns.ns_run(bed.ns_src, cmd, cpus=client_cpus, check=False, timeout=seconds + 60)
        try:
            return json.loads(cp.stdout)
        except json.JSONDecodeError as e:
            raise LinkemuError(f"{label} printed no JSON ({cp.returncode}): "
                               f"{(cp.stderr or cp.stdout).strip()[:500]}") from e
    finally:
        procs.terminate(server.pid, 5.0, popen=server)
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
    """What arrived (mbit_s), what was sent (sent_mbit_s), loss and jitter
    of an iperf3 -J UDP run. A UDP client's end.sum is the sender's rate
    (its bytes are the bytes sent); the receiver's is end.sum_received
    (iperf3 >= 3.10 or so). Without it, the received rate is the sent one
    times the share of datagrams that arrived (all are -l bytes)."""
    end = out.get("end", {})
    s = end.get("sum", {})
    sent_bps = float(end.get("sum_sent", s).get("bits_per_second", 0))
    rcv = end.get("sum_received")
    if rcv is not None:
        got_bps = float(rcv.get("bits_per_second", 0))
    else:
        pkts, lost = int(s.get("packets") or 0), int(s.get("lost_packets") or 0)
        got_bps = sent_bps * (pkts - lost) / pkts if pkts > 0 else 0.0
    return {"mbit_s": got_bps / 1e6, "sent_mbit_s": sent_bps / 1e6,
            "lost_percent": (rcv or s).get("lost_percent"),
            "jitter_ms": (rcv or s).get("jitter_ms")}


def available_ccs() -> list[str]:
    try:
        return Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    except OSError:
        return []


def iperf3_tcp(bed: Bed, seconds: float, cc: str, interval: float = 0.1,
               port: int = 5211) -> dict:
    """iperf3 TCP src -> dst with congestion control `cc`, reporting every
    `interval` s. Returns iperf3's -J output."""
    if shutil.which("iperf3") is None:
        raise LinkemuError("iperf3 not found: install it (apt-get install iperf3)")
    snd_cpus, rcv_cpus = tool_cpu_pair()
    args = ["-t", f"{seconds:g}", "-C", cc, "-i", f"{interval:g}"]
    return iperf3_run(bed, args, seconds, port, server_cpus=rcv_cpus, client_cpus=snd_cpus,
                              label=f"iperf3 ({cc})")


def tcp_series(out: dict) -> dict:
    """Throughput, retransmits and the sender's cwnd per interval from
    iperf3 -J (the sender's TCP_INFO, sampled by iperf3 each interval)."""
    t, mbit, cwnd, retr, rtt = [], [], [], [], []
    for iv in out.get("intervals", []):
        s = iv.get("sum", {})
        st = (iv.get("streams") or [{}])[0]
        t.append(round(float(s.get("end", 0.0)), 4))
        mbit.append(round(float(s.get("bits_per_second", 0.0)) / 1e6, 3))
        cwnd.append(int(st.get("snd_cwnd", 0)))
        retr.append(int(st.get("retransmits", 0) or 0))
        rtt.append(int(st.get("rtt", 0) or 0))
    end = out.get("end", {})
    sent = end.get("sum_sent", {})
    recvd = end.get("sum_received", {})
    stream = (end.get("streams") or [{}])[0].get("sender", {})
    return {"mbit_s": float(recvd.get("bits_per_second", 0.0)) / 1e6,
            "sender_mbit_s": float(sent.get("bits_per_second", 0.0)) / 1e6,
            "retransmits": sent.get("retransmits"),
            "bytes": recvd.get("bytes"),
            "max_snd_cwnd": stream.get("max_snd_cwnd"),
            "mean_rtt_us": stream.get("mean_rtt"),
            "t_s": t, "interval_mbit_s": mbit, "snd_cwnd": cwnd,
            "interval_retransmits": retr, "rtt_us": rtt}
