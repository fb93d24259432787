"""One ttcp transfer over loopback for the lfp suite's tests: receiver,
sender, both JSON summaries; the receiver is always stopped."""

from __future__ import annotations

import json
import subprocess

from linkemu.bed import procs

LO = "127.0.0.1"


def loopback_pair(ttcp: str, port: int, recv_args: list[str], send_args: list[str],
                  timeout: float = 60) -> tuple[dict, dict]:
    recv = subprocess.Popen([ttcp, "recv", "--bind", LO, "--port", str(port), "--json",
                             "--timeout", "20", *recv_args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert recv.stdout.readline().startswith("ready")
        cp = subprocess.run([ttcp, "send", "--dst", LO, "--port", str(port), "--json",
                             *send_args], capture_output=True, text=True, timeout=timeout)
        assert cp.returncode == 0, cp.stderr
        out, err = recv.communicate(timeout=30)
        assert recv.returncode == 0, err
        return json.loads(cp.stdout), json.loads(out)
    finally:
        procs.terminate(recv.pid, 5.0, recv)
        recv.stdout.close()
        recv.stderr.close()
