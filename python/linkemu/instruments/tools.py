"""Where the lab's C instruments are: $LINKEMU_TOOLS_DIR, then the meson
build dir (build/src/tools), then $PATH."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from linkemu.bed.paths import repo_root
from linkemu.errors import LinkemuError

TOOLS = ("owdprobe", "noisefloor", "ttcp")


def find_tool(name: str) -> Path | None:
    env = os.environ.get("LINKEMU_TOOLS_DIR")
    if env:
        p = Path(env) / name
        return p if p.is_file() and os.access(p, os.X_OK) else None
    built = repo_root() / "build" / "src" / "tools" / name
    if built.is_file() and os.access(built, os.X_OK):
        return built
    found = shutil.which(name)
    return Path(found) if found else None


def require_tool(name: str) -> Path:
    p = find_tool(name)
    if p is None:
        where = (f"$LINKEMU_TOOLS_DIR ({os.environ['LINKEMU_TOOLS_DIR']})"
                 if os.environ.get("LINKEMU_TOOLS_DIR") else "build/src/tools")
        raise LinkemuError(f"{name} not found in {where}: build it with "
                           f"`meson setup build && ninja -C build` (or `make build`)")
    return p
