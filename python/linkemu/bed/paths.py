"""Where things live: the linkemud binary and the per-bed runtime files."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

# Runtime state lives under /run so that a reboot clears it, like the
# namespaces and veths it describes.
RUN_ROOT = Path(os.environ.get("LINKEMU_RUN_DIR", "/run/linkemu"))

# DPDK keeps its runtime directory here for root processes.
DPDK_RUN_ROOT = Path("/var/run/dpdk")


def repo_root() -> Path:
    """The source checkout this package runs from (python/linkemu/.. /..)."""
    return package_parent().parent


def package_parent() -> Path:
    """The folder holding the `linkemu` package (python/ in a checkout)."""
    return Path(__file__).resolve().parents[2]


def child_python_env() -> dict:
    """Environment for `python -m linkemu...` in a child process (in a
    namespace, or detached): the same interpreter and the same linkemu
    package as ours, installed or not."""
    env = dict(os.environ)
    parent = str(package_parent())
    env["PYTHONPATH"] = parent + (os.pathsep + env["PYTHONPATH"]
                                  if env.get("PYTHONPATH") else "")
    return env


def _find_daemon(name: str, env_var: str, build_dir: str) -> Path | None:
    """$env_var, then the meson build dir, then $PATH.

    The build dir comes before PATH so that a developer running from a
    checkout tests the binary they just built, not an older installed one.
    Returns None when there is none (callers say how to build it).
    """
    env = os.environ.get(env_var)
    if env:
        p = Path(env)
        return p if p.is_file() and os.access(p, os.X_OK) else None
    built = repo_root() / "build" / "src" / build_dir / name
    if built.is_file() and os.access(built, os.X_OK):
        return built
    found = shutil.which(name)
    return Path(found) if found else None


def find_linkemud() -> Path | None:
    """Locate linkemud (DPDK): $LINKEMUD, the build dir, $PATH."""
    return _find_daemon("linkemud", "LINKEMUD", "dataplane")


def find_linkemuk() -> Path | None:
    """Locate linkemuk (kernel sockets): $LINKEMUK, the build dir, $PATH."""
    return _find_daemon("linkemuk", "LINKEMUK", "kernel")


def bed_run_dir(bed: str) -> Path:
    return RUN_ROOT / bed


def testbed_state_file(bed: str) -> Path:
    return bed_run_dir(bed) / "testbed.json"


def daemon_pid_file(bed: str) -> Path:
    return bed_run_dir(bed) / "linkemud.pid"


def daemon_log_file(bed: str) -> Path:
    return bed_run_dir(bed) / "linkemud.log"


def daemon_final_stats_file(bed: str) -> Path:
    return bed_run_dir(bed) / "final.json"


def daemon_run_info_file(bed: str) -> Path:
    """What `linkemu run` started (command line, pmd): a record for whoever
    debugs a run; the pid file, not this, is what stop and down trust."""
    return bed_run_dir(bed) / "daemon.json"


def dpdk_file_prefix(bed: str) -> str:
    """EAL --file-prefix: one per bed, so two beds' daemons never share
    hugepage files or a runtime directory, and `down` knows what to delete."""
    return f"linkemu-{bed}"
