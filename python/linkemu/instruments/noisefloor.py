"""noisefloor (src/tools/noisefloor.c): the machine's own scheduling noise.

A busy loop pinned to the CPU it is asked to measure records the gaps in
its own execution; the histogram is the floor under any timing figure
measured on that CPU.
"""

from __future__ import annotations

import json
import subprocess

from linkemu.errors import LinkemuError
from linkemu.instruments.tools import require_tool


def noise_floor(cpu: int, seconds: float) -> dict:
    """The gap histogram of a busy loop pinned to `cpu` (see noisefloor.c)."""
    binary = require_tool("noisefloor")
    cp = subprocess.run([str(binary), "--cpu", str(cpu), "--seconds", f"{seconds:g}"],
                        capture_output=True, text=True, timeout=seconds + 30)
    if cp.returncode != 0:
        raise LinkemuError(f"noisefloor on CPU {cpu} failed ({cp.returncode}): "
                           f"{cp.stderr.strip()}")
    return json.loads(cp.stdout)
