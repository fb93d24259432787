"""`linkemu units`: the latency of small application units over TCP, QUIC
and UDP (after the 4G/5G study, docs/units.md).

Three ways to run it:
- `server` and `client` on any two hosts. Latency is the server's clock at
  receive minus the client's at generation (both CLOCK_REALTIME), so the
  two clocks must be synchronised: PTP gives microseconds, NTP about a
  millisecond on a LAN and worse over the internet; the offset adds to
  every latency.
- `run` on a test bed: the server in dst, the client in src; one host, one
  clock, no offset.

The server serves one run and prints one JSON document; with --samples it
also writes every unit's (seq, generation, receive) times (.npy).
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from linkemu.bed import netns, procs
from linkemu.bed.cpus import tool_cpus
from linkemu.bed.paths import child_python_env
from linkemu.errors import LinkemuError, UsageError
from linkemu.instruments import units_stats as stats
from linkemu.instruments.units_client import ClientOptions
from linkemu.instruments.units_server import ServerOptions, serve
from linkemu.instruments.units_sink import Sink

READY = "ready"


def server_result(o: ServerOptions, sink: Sink, samples: Path | None, delay_ns: int | None,
                  together_ns: int) -> dict:
    h = sink.hello
    flush = h.flush if h else None
    interval = h.interval_ns if h else None
    if h is None:
        raise LinkemuError("no hello from the client (it announces the schedule): no run "
                           "to analyse" + (f"; {sink.malformed} foreign datagrams" if
                                           sink.malformed else ""))
    if samples is not None:
        stats.write_samples(samples, sink.seq, sink.gen_ns, sink.rx_ns, sink.krx_ns)
    res = stats.analyse(sink.seq, sink.gen_ns, sink.rx_ns, flush=flush, interval_ns=interval,
                        expected=sink.expected(), delay_ns=delay_ns, together_ns=together_ns,
                        krx_ns=sink.krx_ns)
    return {"proto": o.proto, "size": sink.size, "flush": flush, "interval_ns": interval,
            "run_id": h.run_id, "reads": sink.reads, "kernel_stamps": sink.kernel_stamps,
            "malformed": sink.malformed,
            "end_seen": sink.end_count is not None if o.proto == "udp" else None,
            "samples": str(samples) if samples else None, **res}


def serve_and_report(o: ServerOptions, samples: Path | None, delay_ns: int | None,
                     together_ns: int, announce: bool) -> dict:
    def ready() -> None:
        if announce:
            print(READY, flush=True)
    sink = serve(o, ready)
    return server_result(o, sink, samples, delay_ns, together_ns)


# --- across a bed ---------------------------------------------------------------------

@dataclass
class BedRun:
    client: ClientOptions          # its port is the server's too
    delay_ns: int | None = None
    together_ns: int = stats.TOGETHER_NS
    samples: Path | None = None
    start_timeout_s: float = 20.0


def _server_argv(r: BedRun) -> list[str]:
    c = r.client
    argv = [sys.executable, "-m", "linkemu", "units", "server", "--proto", c.proto,
            "--bind", "0.0.0.0", "--port", str(c.port), "--size", str(c.schedule.size),
            "--json", "--announce", "--start-timeout", f"{r.start_timeout_s:g}",
            "--together", f"{r.together_ns}ns"]
    if r.delay_ns is not None:
        argv += ["--delay", f"{r.delay_ns}ns"]
    if r.samples is not None:
        argv += ["--samples", str(r.samples)]
    return argv


def run_on_bed(bed, r: BedRun) -> dict:
    """Server in the bed's dst namespace, client in src (this process
    forks nothing else); returns {"client": ..., "server": ...}."""
    cpus = tool_cpus()
    env = child_python_env()
    server = subprocess.Popen(netns.ns_exec_argv(bed.ns_dst, _server_argv(r), cpus=cpus),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = server.stdout.readline().strip()
        if line != READY:
            server.wait(10)
            raise LinkemuError(f"units server did not start: {server.stderr.read().strip()}")
        client_argv = [sys.executable, "-m", "linkemu", "units", "client", "--json",
                       *client_args(r.client, bed.addr_dst)]
        cp = subprocess.run(netns.ns_exec_argv(bed.ns_src, client_argv, cpus=cpus),
                            capture_output=True, text=True, env=env,
                            timeout=r.client.schedule.count * r.client.schedule.interval_ns / 1e9
                            + 120)
        if cp.returncode == 2:
            raise UsageError(cp.stderr.strip().removeprefix("linkemu: "))
        if cp.returncode != 0:
            raise LinkemuError(f"units client ({r.client.proto}) failed: {cp.stderr.strip()}")
        client = json.loads(cp.stdout)
        out, err = server.communicate(timeout=60)
        if server.returncode != 0:
            raise LinkemuError(f"units server ({r.client.proto}) failed: {err.strip()}")
        return {"client": client, "server": json.loads(out)}
    finally:
        procs.terminate(server.pid, 5.0, server)
        for f in (server.stdout, server.stderr):
            f.close()


def client_args(c: ClientOptions, host: str) -> list[str]:
    s = c.schedule
    args = ["--proto", c.proto, "--connect", host, "--port", str(c.port),
            "--count", str(s.count), "--size", str(s.size), "--interval", f"{s.interval_ns}ns",
            "--flush", str(s.flush), "--spin", f"{s.spin_ns}ns", "--align", f"{s.align_ns}ns",
            "--cc", c.cc,
            "--run-id", str(c.run_id)]
    if not c.nodelay:
        args.append("--no-nodelay")
    if c.flush_times is not None:
        args += ["--flush-times", str(c.flush_times)]
    return args
