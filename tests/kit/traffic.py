"""Mixed traffic through a bed for the reliability suites (soak, faults,
sanitize): iperf3 TCP and UDP and ping, both directions at once, every tool
in its namespace on CPUs away from the daemon's lcore.

    t = Traffic(bed, seconds=60, udp_rate="20M", tcp_rate="50M").start()
    ...
    results = t.finish()            # {label: (returncode, stdout, stderr)}
    iperf_bytes(results["iperf3 tcp a2b"])
"""

from __future__ import annotations

import json
import subprocess
import time

from linkemu.bed.cpus import tool_cpus
from linkemu.bed.netns import ns_exec_argv

# One iperf3 server per direction and protocol: a server runs one test at a time.
IPERF_PORTS = {("tcp", "a2b"): 5301, ("udp", "a2b"): 5302, ("tcp", "b2a"): 5303, ("udp", "b2a"): 5304}


def in_ns(bed, side: str, argv: list[str]) -> list[str]:
    """argv in the bed's src or dst namespace, pinned off the lcore's CPU."""
    return ns_exec_argv(bed.ns_src if side == "src" else bed.ns_dst, argv, cpus=tool_cpus())


class Traffic:
    """iperf3 TCP and UDP and ping, both directions, for `seconds`. TCP is
    unpaced unless tcp_rate is given (iperf3 -b)."""

    def __init__(self, bed, seconds: float, udp_rate: str = "20M", tcp_rate: str = "0",
                 ping_interval: float = 0.05):
        self.bed, self.seconds = bed, seconds
        self.udp_rate, self.tcp_rate, self.ping_interval = udp_rate, tcp_rate, ping_interval
        self.procs: list[tuple[str, subprocess.Popen]] = []

    def _spawn(self, label: str, side: str, argv: list[str]) -> None:
        p = subprocess.Popen(in_ns(self.bed, side, argv), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        self.procs.append((label, p))

    def start(self) -> "Traffic":
        b = self.bed
        for (proto, d), port in IPERF_PORTS.items():
            self._spawn(f"iperf3 server {proto} {d}", "dst" if d == "a2b" else "src",
                        ["iperf3", "-s", "-1", "-p", str(port)])
        time.sleep(0.5)
        for (proto, d), port in IPERF_PORTS.items():
            side, dst = ("src", b.addr_dst) if d == "a2b" else ("dst", b.addr_src)
            argv = ["iperf3", "-c", dst, "-p", str(port), "-t", str(int(self.seconds)), "-J",
                    "--connect-timeout", "3000"]
            argv += ["-u", "-b", self.udp_rate] if proto == "udp" else ["-b", self.tcp_rate]
            self._spawn(f"iperf3 {proto} {d}", side, argv)
        count = str(int(self.seconds / self.ping_interval))
        for side, dst in (("src", b.addr_dst), ("dst", b.addr_src)):
            self._spawn(f"ping {side}", side, ["ping", "-q", "-i", str(self.ping_interval), "-W", "1",
                                               "-c", count, dst])
        return self

    def finish(self, timeout: float = 60) -> dict[str, tuple[int, str, str]]:
        """Waits for every tool; exit status, stdout and stderr by label."""
        out = {}
        deadline = time.monotonic() + self.seconds + timeout
        for label, p in self.procs:
            try:
                o, e = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                o, e = p.communicate()
            out[label] = (p.returncode, o, e)
        return out

    def kill(self) -> None:
        for _label, p in self.procs:
            if p.poll() is None:
                p.kill()
                p.communicate()


def iperf_bytes(result: tuple[int, str, str]) -> int:
    """Bytes an iperf3 client run delivered, from its -J report."""
    rc, out, err = result
    assert rc == 0, f"iperf3 exit {rc}: {err or out[-500:]}"
    end = json.loads(out)["end"]
    s = end.get("sum_received") or end.get("sum")
    return int(s["bytes"])


def clients(results: dict) -> dict:
    """The iperf3 clients' results (not the servers', not ping's)."""
    return {k: v for k, v in results.items() if k.startswith("iperf3 ") and "server" not in k}
