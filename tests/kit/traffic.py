"""Mixed traffic through a bed for the reliability suites (soak, faults,
sanitize): iperf3 TCP and UDP and ping, both directions at once, every tool
in its namespace on CPUs away from the daemon's lcore.

    t = Traffic(bed, seconds=60, udp_rate="20M", tcp_rate="50M").start()
    ...                             # impair the links only now (see start)
    results = t.finish()            # {label: (returncode, stdout, stderr)}
    iperf_bytes(results["iperf3 tcp a2b"])
"""

from __future__ import annotations

import json
import subprocess
import time

from linkemu.bed.cpus import tool_cpus
from linkemu.bed.netns import ns_exec_argv, ns_run
from linkemu.errors import LinkemuError
from linkemu.instruments.iperf3 import wait_listening

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

    def start(self, timeout: float = 20.0) -> "Traffic":
        """Starts every tool and returns once every iperf3 client's streams
        are up. Call it while both links lose nothing: iperf3 sets up a UDP
        stream with one datagram each way and no retry, so a link that drops
        either one fails that client after 30 s ("unable to read from stream
        socket"), and a TCP client gives up if its SYN is lost twice within
        --connect-timeout. Once the streams are up, any impairment is fair."""
        b = self.bed
        servers = []
        for (proto, d), port in IPERF_PORTS.items():
            side = "dst" if d == "a2b" else "src"
            self._spawn(f"iperf3 server {proto} {d}", side, ["iperf3", "-s", "-1", "-p", str(port)])
            servers.append((self._ns(side), port, self.procs[-1][1]))
        try:
            for ns, port, server in servers:     # its control connection: TCP in both modes
                wait_listening(ns, port, "tcp", timeout, server)
        except LinkemuError as e:
            self.kill()
            raise AssertionError(f"iperf3 servers: {e}") from e
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
        self._await("iperf3 streams up", timeout, self._streams_not_up)
        return self

    def _ns(self, side: str) -> str:
        return self.bed.ns_src if side == "src" else self.bed.ns_dst

    def _sockets(self, side: str, args: list[str]) -> int:
        """How many sockets `ss -Hn ARGS` lists in the side's namespace."""
        return len(ns_run(self._ns(side), ["ss", "-Hn", *args]).stdout.splitlines())

    def _streams_not_up(self) -> list[str]:
        """The clients whose streams are not up yet. TCP: the client holds
        its control and its data connection. UDP: the client holds its
        control connection and the server has connected its UDP socket to
        the client, which it does on the client's datagram and right before
        its reply (on a lossless link, in flight or delivered by the time
        we look again)."""
        waiting = []
        for (proto, d), port in IPERF_PORTS.items():
            client, server = ("src", "dst") if d == "a2b" else ("dst", "src")
            tcp = self._sockets(client, ["-t", "state", "established", f"dport = :{port}"])
            up = tcp >= 2 if proto == "tcp" else tcp >= 1 and self._sockets(
                server, ["-u", "state", "established", f"sport = :{port}"]) > 0
            if not up:
                waiting.append(f"iperf3 {proto} {d}")
        return waiting

    def _await(self, what: str, timeout: float, not_ready) -> None:
        """Polls not_ready() (names of what is not ready) until it is empty;
        stops every tool and fails, naming what was missing, on the timeout
        or when a tool exits meanwhile."""
        deadline = time.monotonic() + timeout
        while waiting := not_ready():
            exited = [f"{label}: exit {p.returncode} {tail(p)}".rstrip() for label, p in self.procs
                      if p.poll() is not None]
            if exited or time.monotonic() > deadline:
                self.kill()
                why = f"tools ended ({'; '.join(exited)})" if exited else f"not within {timeout:.0f} s"
                raise AssertionError(f"{what}: {why}; still waiting for {', '.join(waiting)}")
            time.sleep(0.05)
        time.sleep(0.2)     # a UDP reply sent as the server connected has crossed the link

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


def tail(p: subprocess.Popen) -> str:
    """Why a tool that has exited ended: iperf3 -J's error, or the last line
    of its stderr ("" for a tool that simply finished)."""
    out, err = p.communicate()
    try:
        return json.loads(out).get("error") or ""
    except (json.JSONDecodeError, AttributeError):
        return (err.strip().splitlines() or [""])[-1][:200]


def iperf_bytes(result: tuple[int, str, str]) -> int:
    """Bytes an iperf3 client run delivered, from its -J report."""
    rc, out, err = result
    assert rc == 0, f"iperf3 exit {rc}: {err or out[-500:]}"
    report = json.loads(out)
    # iperf3 3.12 can exit 0 with -J and still report a failed test.
    assert "error" not in report, f"iperf3: {report['error']}"
    end = report["end"]
    s = end.get("sum_received") or end.get("sum")
    return int(s["bytes"])


def clients(results: dict) -> dict:
    """The iperf3 clients' results (not the servers', not ping's)."""
    return {k: v for k, v in results.items() if k.startswith("iperf3 ") and "server" not in k}
