"""The reliability suites' kit: a bed held under its lock, the daemon driven
through the `linkemu` command as a user drives it, a direct control-socket
client (fast enough for a `set` every 100 ms), traffic (ping, iperf3) and
the checks every suite makes (conservation, nothing left behind).

Everything goes through the command line or the control socket, never
through linkemu's internals, so these suites test what users get.
Imported by name (not as conftest) so that suites can share it."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO / "python") not in sys.path:
    sys.path.insert(0, str(REPO / "python"))

from linkemu.cpus import tool_cpus  # noqa: E402  (CPUs away from the daemon's lcore)
RUN_ROOT = Path(os.environ.get("LINKEMU_RUN_DIR", "/run/linkemu"))
ADDR_SRC, ADDR_DST = "198.18.0.1", "198.18.0.2"   # the bed's addresses (linkemu testbed)


def cli_env(extra: dict | None = None) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO / "python") + (os.pathsep + env["PYTHONPATH"]
                                                 if env.get("PYTHONPATH") else "")
    env.update(extra or {})
    return env


def linkemu(*args: str, timeout: float = 120, env: dict | None = None) -> subprocess.CompletedProcess:
    """`linkemu ARGS` as a user runs it; never raises on the exit code."""
    return subprocess.run([sys.executable, "-m", "linkemu", *args], capture_output=True,
                          text=True, timeout=timeout, env=cli_env(env))


def must(cp: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert cp.returncode == 0, f"{cp.args}: exit {cp.returncode}\n{cp.stdout}\n{cp.stderr}"
    return cp


def missing_prerequisites() -> str | None:
    """Why the bed suites cannot run here, or None. Under CI=true the
    caller fails instead of skipping (a missing daemon is a failure)."""
    if os.geteuid() != 0:
        return "needs root (namespaces, veths, hugepages)"
    for tool in ("ip", "ping", "iperf3"):
        if shutil.which(tool) is None:
            return f"{tool} not installed"
    if not (REPO / "build" / "src" / "dataplane" / "linkemud").exists():
        return "linkemud not built (make build)"
    return None


@dataclass
class Bed:
    name: str

    @property
    def ns_src(self) -> str:
        return f"{self.name}-src"

    @property
    def ns_dst(self) -> str:
        return f"{self.name}-dst"

    @property
    def run_dir(self) -> Path:
        return RUN_ROOT / self.name

    @property
    def control_path(self) -> Path:
        return self.run_dir / "control.sock"

    def ns(self, side: str) -> str:
        return self.ns_src if side == "src" else self.ns_dst

    def exec_argv(self, side: str, argv: list[str]) -> list[str]:
        """argv in the side's namespace, on CPUs other than the lcore's (a
        tool sharing the polling lcore's CPU would delay its frames)."""
        cpus = tool_cpus()
        pin = ["taskset", "-c", cpus] if cpus else []
        return ["ip", "netns", "exec", self.ns(side), *pin, *argv]

    def daemon_pid(self) -> int | None:
        try:
            pid = int((self.run_dir / "linkemud.pid").read_text())
        except (OSError, ValueError):
            return None
        return pid if Path(f"/proc/{pid}").exists() else None

    def log(self) -> str:
        try:
            return (self.run_dir / "linkemud.log").read_text(errors="replace")
        except OSError:
            return ""

    def final(self) -> dict | None:
        try:
            return json.loads((self.run_dir / "final.json").read_text())
        except (OSError, ValueError):
            return None

    # -- life cycle -------------------------------------------------------
    def up(self) -> None:
        must(linkemu("testbed", "up", "--bed", self.name))

    def run(self, a2b: str = "", b2a: str = "", env: dict | None = None, more: tuple = (),
            timeout: float = 90) -> subprocess.CompletedProcess:
        return linkemu("run", "--bed", self.name, "--a2b", a2b, "--b2a", b2a, "--detach", *more,
                       env=env, timeout=timeout)

    def stop(self) -> subprocess.CompletedProcess:
        return linkemu("stop", "--bed", self.name, timeout=60)

    def down(self) -> subprocess.CompletedProcess:
        return linkemu("testbed", "down", "--bed", self.name, timeout=60)

    def leftovers(self) -> list[str]:
        """What of this bed still exists (namespaces, veths, run files,
        DPDK runtime files, a daemon)."""
        left = []
        ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        left += [n for n in (self.ns_src, self.ns_dst) if n in ns.split()]
        for dev in (f"{self.name}-a", f"{self.name}-b"):
            if Path(f"/sys/class/net/{dev}").exists():
                left.append(f"veth {dev}")
        if self.daemon_pid() is not None:
            left.append(f"linkemud pid {self.daemon_pid()}")
        if self.run_dir.exists():
            left.append(str(self.run_dir))
        for p in Path("/dev/hugepages").glob(f"linkemu-{self.name}*"):
            left.append(str(p))
        return left


@contextlib.contextmanager
def held_bed(name: str):
    """The bed, built under /tmp/linkemu-bed-NAME.lock (so no other suite
    uses it meanwhile) and removed afterwards, leaving nothing behind."""
    with open(f"/tmp/linkemu-bed-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        bed = Bed(name)
        bed.stop()
        bed.down()
        bed.up()
        try:
            yield bed
        finally:
            bed.stop()
            bed.down()
            left = bed.leftovers()
            assert not left, f"bed {name} left behind: {left}"


# -- the control socket -------------------------------------------------------

class Control:
    """One connection to the daemon's control socket, one request at a time."""

    def __init__(self, bed: Bed, timeout: float = 5.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(str(bed.control_path))
        self.buf = b""

    def request(self, line: str | bytes) -> dict:
        data = line if isinstance(line, bytes) else line.encode()
        self.sock.sendall(data + b"\n")
        while b"\n" not in self.buf:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError(f"daemon closed the control connection after {data[:60]!r}")
            self.buf += chunk
        reply, self.buf = self.buf.split(b"\n", 1)
        return json.loads(reply)

    def stats(self) -> dict:
        r = self.request("stats")
        assert r["ok"], r
        return r["stats"]

    def close(self) -> None:
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def conservation_problems(stats: dict) -> list[str]:
    """The books of each direction and class: rx + dup = tx + dropped +
    in flight (docs/control.md), from the numbers, not the daemon's flag."""
    problems = []
    for d, s in stats["directions"].items():
        dropped = sum(s["dropped"].values())
        if dropped != s["dropped_total"]:
            problems.append(f"{d}: dropped causes sum to {dropped}, total says {s['dropped_total']}")
        if s["rx"] + s["dup"] != s["tx"] + dropped + s["in_flight"]:
            problems.append(f"{d}: rx {s['rx']} + dup {s['dup']} != tx {s['tx']} + dropped {dropped}"
                            f" + in flight {s['in_flight']}")
        if not s["conserved"]:
            problems.append(f"{d}: the daemon says not conserved")
    return problems


# -- traffic --------------------------------------------------------------------

class Traffic:
    """iperf3 TCP and UDP and ping, both directions at once, for `seconds`.
    TCP is unlimited unless tcp_rate is given (iperf3 -b)."""

    def __init__(self, bed: Bed, seconds: float, udp_rate: str = "20M", tcp_rate: str = "0",
                 ping_interval: float = 0.05):
        self.bed, self.seconds = bed, seconds
        self.udp_rate, self.tcp_rate, self.ping_interval = udp_rate, tcp_rate, ping_interval
        self.procs: list[tuple[str, subprocess.Popen]] = []

    def _spawn(self, label: str, side: str, argv: list[str]) -> None:
        p = subprocess.Popen(self.bed.exec_argv(side, argv), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        self.procs.append((label, p))

    def start(self) -> "Traffic":
        t = str(int(self.seconds))
        # One server per direction and protocol (an iperf3 server serves one test at a time).
        ports = {("tcp", "a2b"): 5301, ("udp", "a2b"): 5302, ("tcp", "b2a"): 5303, ("udp", "b2a"): 5304}
        for (proto, d), port in ports.items():
            server_side = "dst" if d == "a2b" else "src"
            self._spawn(f"iperf3 server {proto} {d}", server_side,
                        ["iperf3", "-s", "-1", "-p", str(port)])
        time.sleep(0.5)
        for (proto, d), port in ports.items():
            client_side, dst = ("src", ADDR_DST) if d == "a2b" else ("dst", ADDR_SRC)
            argv = ["iperf3", "-c", dst, "-p", str(port), "-t", t, "-J", "--connect-timeout", "3000"]
            argv += ["-u", "-b", self.udp_rate] if proto == "udp" else ["-b", self.tcp_rate]
            self._spawn(f"iperf3 {proto} {d}", client_side, argv)
        count = str(int(self.seconds / self.ping_interval))
        for side, dst in (("src", ADDR_DST), ("dst", ADDR_SRC)):
            self._spawn(f"ping {side}", side, ["ping", "-q", "-i", str(self.ping_interval), "-W", "1",
                                               "-c", count, dst])
        return self

    def finish(self, timeout: float = 60) -> dict[str, tuple[int, str, str]]:
        """Exit status, stdout and stderr of every tool, by label."""
        out = {}
        deadline = time.monotonic() + self.seconds + timeout
        for label, p in self.procs:
            try:
                o, e = p.communicate(timeout=max(1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                o, e = p.communicate()
            out[label] = (p.returncode, o, e)
        return out

    def kill(self) -> None:
        for _label, p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()


def iperf_bytes(result: tuple[int, str, str]) -> int:
    """Bytes an iperf3 client run delivered (its -J report)."""
    rc, out, err = result
    assert rc == 0, f"iperf3 exit {rc}: {err or out[-500:]}"
    end = json.loads(out)["end"]
    s = end.get("sum_received") or end.get("sum")
    return int(s["bytes"])
