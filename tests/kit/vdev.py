"""linkemud on virtual ports (net_null, net_pcap), without a bed.

A test gives the EAL's --vdev words and linkemud's own options; the
daemon runs until `seconds` after it said "ready", then stops on SIGINT
as a user's Ctrl-C would. The runtime directory that EAL leaves, empty,
even with --in-memory, is removed."""

from __future__ import annotations

import signal
import struct
import subprocess
import time
import uuid
from pathlib import Path
from typing import Callable


def clean_run_dir(prefix: str) -> None:
    """Removes /var/run/dpdk/PREFIX when EAL left it empty."""
    rdir = Path(f"/var/run/dpdk/{prefix}")
    if rdir.exists() and not list(rdir.iterdir()):
        rdir.rmdir()


def run_on_vdevs(linkemud_bin: Path, vdevs: list[str], options: list[str], seconds: float,
                 name: str = "vdev", during: Callable[[int], None] | None = None,
                 lcores: str = "0") -> tuple[int, str]:
    """Runs linkemud with these ports; returns (exit status, stderr). Fails
    the test if it never says "ready" within 30 s. during(pid), when
    given, is called once it is ready, before the `seconds` of running.
    lcores: EAL's --lcores, which may map several lcores onto one CPU
    ("(0-6)@1"): how a 2-vCPU machine runs the layouts of bigger hosts."""
    prefix = f"{name}-{uuid.uuid4().hex[:8]}"
    argv = [str(linkemud_bin), "--lcores", lcores, "--no-pci", "--in-memory", f"--file-prefix={prefix}",
            "--log-level=lib.eal:error", *(f"--vdev={v}" for v in vdevs), "--", *options]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        line = ""
        while time.monotonic() < deadline and "ready" not in line:
            line = p.stdout.readline()
            if not line and p.poll() is not None:
                break
        assert "ready" in line, p.stderr.read()
        if during is not None:
            during(p.pid)
        time.sleep(seconds)
    finally:
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=30)
        clean_run_dir(prefix)
    return p.returncode, err


def write_pcap(path: Path, frames: list[bytes]) -> None:
    """A capture for net_pcap's rx_pcap: the frames 1 us apart."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for k, fr in enumerate(frames):
            f.write(struct.pack("<IIII", 1, k, len(fr), len(fr)))
            f.write(fr)


def read_pcap(path: Path) -> list[bytes]:
    """The frames of a capture net_pcap's tx_pcap wrote."""
    data = path.read_bytes()
    magic = struct.unpack("<I", data[:4])[0]
    assert magic in (0xA1B2C3D4, 0xA1B23C4D), hex(magic)
    out, off = [], 24
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack("<IIII", data[off:off + 16])
        out.append(data[off + 16:off + 16 + incl])
        off += 16 + incl
    return out


def pcap_ports(tmp: Path, frames: list[bytes]) -> list[str]:
    """Two net_pcap ports: port 0 reads `frames` once (tmp/in.pcap),
    port 1 reads nothing; what each sends goes to tmp/out0.pcap and
    tmp/out1.pcap (a2b's frames: read_pcap(tmp / "out1.pcap"))."""
    write_pcap(tmp / "in.pcap", frames)
    write_pcap(tmp / "none.pcap", [])
    return [f"net_pcap0,rx_pcap={tmp / 'in.pcap'},tx_pcap={tmp / 'out0.pcap'}",
            f"net_pcap1,rx_pcap={tmp / 'none.pcap'},tx_pcap={tmp / 'out1.pcap'}"]
