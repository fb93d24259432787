"""What a test needs from the machine, and what happens when it is missing.

need(ok, why): on a developer's machine a missing daemon, tool or kernel
feature skips the test with the reason; under CI=true it fails it, so a
CI run can never pass by skipping what it was meant to run.
"""

from __future__ import annotations

import os

import pytest

_bed_usable: tuple[bool, str] | None = None


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def need(ok: object, why: str) -> None:
    """Skip (or under CI=true fail) the current test unless ok."""
    if ok:
        return
    if in_ci():
        pytest.fail(f"CI=true and {why}", pytrace=False)
    pytest.skip(why)


def bed_usable() -> tuple[bool, str]:
    """(True, "") when this process can build a test bed: root and a
    working `ip netns`; else (False, why). Asked once per session."""
    global _bed_usable
    if _bed_usable is None:
        from linkemu.bed import netns
        if os.geteuid() != 0:
            _bed_usable = (False, "needs root (namespaces, veths, hugepages)")
        else:
            _bed_usable = netns.netns_usable()
    return _bed_usable
