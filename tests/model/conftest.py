"""Suite `model` (marker `model`): every word of the link grammar, run by
`linkemu run` on a real bed named "lm", checked against what the traffic
tools see and against the daemon's own counters. Statistical tests use
fixed seeds; each bound is derived in a comment. The bed fixtures and
rules are the kit's (tests/kit, docs/testing.md)."""

from __future__ import annotations

import pytest

from kit.bed import Link, bed_fixtures

from .lmkit import mean, probe, sd

bed_session, bed, bed_up, run_link = bed_fixtures("lm", __file__, bed_built=True)


@pytest.fixture(scope="session")
def path_owd(bed_session, linkemud_bin):
    """The bed's own one-way delay through an unimpaired linkemud (ms):
    mean, sd, p99 of 1000 probe datagrams. Bounds on emulated delays add
    this, because the probe measures emulated delay + the path."""
    link = Link(bed_session, "", "", ())
    try:
        r = probe(bed_session, count=1000, rate=1000, port=9001)
    finally:
        link.stop()
    assert r.received == 1000, f"an unimpaired link lost {r.lost} datagrams"
    owd = sorted(r.owd_ms())
    return {"mean": mean(owd), "sd": sd(owd), "p50": owd[len(owd) // 2],
            "p99": owd[int(len(owd) * 0.99)]}
