"""lab lfp unloads the BPF congestion controls it loaded even when a
second SIGTERM comes while it does: LabSession has put the default
handlers back by then, and the signal ended the process with lfp_fixed
and lfp_adapt still registered in the kernel. Stand-ins, in a process of
its own (it is the one signalled); no root, no BPF."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

PYTHON_DIR = Path(__file__).resolve().parents[2] / "python"

_RUNNER = r"""
import os, signal, sys
from linkemu.lab import lfp

def sweep(o, prof, phys, res, prog, runs, loaded_here):
    loaded_here.append("lfp_fixed")
    raise KeyboardInterrupt          # the first Ctrl-C, mid-study

def unload(names):
    os.kill(os.getpid(), signal.SIGTERM)     # the second, while unloading
    print("unloaded", *names, flush=True)

lfp._sweep = sweep
lfp.bpfcc.unload = unload
try:
    lfp.run(lfp.LfpOptions.quick_defaults(quiet=True), sys.argv[1])
except KeyboardInterrupt:
    sys.exit(130)
"""


def test_a_second_signal_does_not_cut_the_unload_short(tmp_path):
    cp = subprocess.run([sys.executable, "-c", _RUNNER, str(tmp_path / "r.json")],
                        env=dict(os.environ, PYTHONPATH=str(PYTHON_DIR)),
                        capture_output=True, text=True, timeout=60)
    assert cp.returncode != -signal.SIGTERM, "SIGTERM ended it mid-unload"
    assert "unloaded lfp_fixed" in cp.stdout, cp.stderr
