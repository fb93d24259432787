"""The API's tests: `linkemu shell`, `testbed up --between`, `run --ports`
and the Python API, on beds named "la", "lh" and "lk" (and namespaces
standing for a user's own, whose names start with those too).

They need root, working `ip netns` and a built linkemud; without them
they are skipped with the reason, except under CI=true, where that is a
failure. The session fails if anything of those beds is left behind.
"""

from __future__ import annotations

import os

import pytest

from .apikit import BEDS, leftovers  # noqa: F401  (sets sys.path)

from linkemu import api, netns, paths  # noqa: E402

_usable: tuple[bool, str] | None = None


def usable() -> tuple[bool, str]:
    global _usable
    if _usable is None:
        if os.geteuid() != 0:
            _usable = (False, "needs root (namespaces, veths, hugepages)")
        elif paths.find_linkemud() is None:
            _usable = (False, "linkemud is not built (make build)")
        else:
            _usable = netns.netns_usable()
    return _usable


def pytest_collection_modifyitems(config, items):
    ok, why = usable()
    if ok or os.environ.get("CI") == "true":
        return      # under CI a missing capability fails the tests that need it
    skip = pytest.mark.skip(reason=why)
    for item in items:
        if "needs_root" in item.keywords:
            item.add_marker(skip)


def pytest_configure(config):
    config.addinivalue_line("markers", "needs_root: builds beds and runs linkemud")


@pytest.fixture(scope="session", autouse=True)
def api_session():
    """Clean slate first; at the end, nothing of la/lh/lk may be left."""
    if not usable()[0]:
        yield
        return
    for name in BEDS:
        api.Bed(name).down()
    yield
    left = leftovers()
    for name in BEDS:
        api.Bed(name).down()
    for ns in netns.ns_list():
        if ns.startswith(BEDS):
            netns.ns_del(ns)
    if left:
        pytest.fail(f"left behind after the API tests: {left}")
