"""The test kit's entry point, loaded by pytest for every suite under
tests/ (the kit itself is tests/kit; docs/testing.md describes it).

- Markers: each suite folder's name is its marker (`-m bed`, `-m model`,
  `-m lab`, `-m control`), added here to every test collected from it;
  `live` marks every test that uses a bed (root, namespaces, linkemud), so
  `-m "not live"` runs what needs neither.
- Fixtures for every suite: linkemud_bin, linkemuk_bin, control_bin, tools (the C
  instruments); a suite's bed fixtures come from kit.bed.bed_fixtures in
  its own conftest.py.
- Under CI=true a missing linkemud, tool or kernel feature fails (kit.need).
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
for p in (TESTS.parent / "python", TESTS):     # this checkout's linkemu; the kit
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from kit.need import bed_usable, need  # noqa: E402
from linkemu.bed import paths  # noqa: E402
from linkemu.daemon import control  # noqa: E402

# The fixtures that put a test on a bed; a test using one is `live`.
BED_FIXTURES = {"bed_session", "bed", "bed_up", "run_link"}


def pytest_configure(config):
    config.addinivalue_line("markers", "live: needs root, a test bed and linkemud "
                                       "(set by the kit on tests that use a bed fixture)")
    config.addinivalue_line("markers", "needs_root: runs tools in namespaces as root, "
                                       "without a bed")


def pytest_collection_modifyitems(config, items):
    for item in items:
        rel = Path(str(item.fspath)).resolve().relative_to(TESTS)
        if len(rel.parts) > 1:
            item.add_marker(rel.parts[0])        # the suite: its folder's name
        if BED_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker("live")


def pytest_runtest_setup(item):
    if item.get_closest_marker("needs_root") is not None:
        need(*bed_usable())


@pytest.fixture(autouse=True)
def _signals_as_they_were():
    """Tests that call the CLI's main() in this process get its signal
    set-up (SIGPIPE at its default, for `linkemu ... | head`): give the
    next test the handlers it started with."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGPIPE, signal.SIGINT, signal.SIGTERM,
                                               signal.SIGHUP)}
    yield
    for s, h in saved.items():
        signal.signal(s, h)


@pytest.fixture(scope="session")
def linkemud_bin() -> Path:
    """The built linkemud (or $LINKEMUD)."""
    p = paths.find_linkemud()
    need(p is not None, "linkemud is not built (make build, or meson setup build && "
                        "ninja -C build), nor named by $LINKEMUD")
    return p


@pytest.fixture(scope="session")
def linkemuk_bin() -> Path:
    """The built linkemuk, the kernel-socket data plane (or $LINKEMUK)."""
    p = paths.find_linkemuk()
    need(p is not None, "linkemuk is not built (make build, or meson setup build && "
                        "ninja -C build), nor named by $LINKEMUK")
    return p


@pytest.fixture(scope="session")
def control_bin(linkemud_bin) -> Path:
    """linkemud with its control socket (docs/control.md). A linkemud
    without one is a failure, not a reason to skip: every build has it."""
    assert control.daemon_supports(linkemud_bin, "--control"), \
        f"{linkemud_bin} has no --control: rebuild it"
    return linkemud_bin


@pytest.fixture(scope="session")
def tools(linkemud_bin) -> dict[str, Path]:
    """The lab's C instruments, built: {"owdprobe": path, "noisefloor": path}."""
    from linkemu.instruments.tools import find_tool
    found = {t: find_tool(t) for t in ("owdprobe", "noisefloor")}
    missing = [t for t, p in found.items() if p is None]
    need(not missing, f"not built: {', '.join(missing)} (make build)")
    return found
