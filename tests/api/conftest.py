"""Suite `api` (marker `api`): `linkemu shell`, `testbed up --between`,
`run --ports` and the Python API (with docs/python.md's example).

It uses three beds, "la" (shell, pair), "lh" (between) and "lk" (ports),
and namespaces standing for a user's own whose names start with those
(lhuser1, lkuser1, ...). A test on them uses the `bed_session` fixture
(so the kit marks it `live`): every bed is taken down at the start, and
at the end the session fails if anything of them is left. The kit's rules
apply (tests/kit, docs/testing.md); the tests without a bed run as any
user.
"""

from __future__ import annotations

import pytest

from kit import need
from kit.need import bed_usable
from linkemu import api
from linkemu.bed import netns

from .apikit import BEDS, USER_NS_PREFIXES, leftovers


def _clean() -> None:
    for name in BEDS:
        api.Bed(name).down()
    for ns in netns.ns_list():
        if ns.startswith(USER_NS_PREFIXES):
            netns.ns_del(ns)


@pytest.fixture(scope="session")
def bed_session(linkemud_bin):
    need(*bed_usable())
    _clean()
    yield BEDS
    left = leftovers()
    _clean()
    if left:
        pytest.fail(f"left behind after the API suite: {left}")
