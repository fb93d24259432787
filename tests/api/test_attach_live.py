"""A link from Bed.attach() on a real bed ("la") with real daemons: it
stops the daemon it attached to, and never one started on the bed after
that one was stopped by someone else (the unit tests use stand-ins:
test_attached_stop_unit.py)."""

from __future__ import annotations

import pytest

import linkemu
from linkemu import api

from .apikit import leftovers

pytestmark = pytest.mark.usefixtures("bed_session")


def test_attached_link_leaves_a_later_daemon_running():
    with api.Bed("la") as bed:
        first = bed.run(a2b="delay 1ms", pmd="af_packet")
        first.detach()
        attached = bed.attach()
        assert attached.running and attached.pid == first.pid
        bed.attach().stop()                   # someone else stops it (`linkemu stop`)
        second = bed.run(a2b="delay 2ms", pmd="af_packet")
        assert not attached.running
        with pytest.raises(linkemu.LinkemuError, match=rf"pid {second.pid}\), which this link "
                                                       rf"does not stop"):
            attached.stop()
        assert second.running and second.show()["a2b"] == "delay 2ms"
        report = bed.attach().stop()          # the link to the daemon that runs stops it
        assert report.pid == second.pid and report.ok
    assert leftovers() == []
