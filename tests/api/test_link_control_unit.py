"""A Link's control calls after one of them failed midway (a timeout, a
dropped connection): the next call gets its own reply, not the late reply
of the call that failed. No root, no DPDK: a fake control server on a bed
in a temporary run dir."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pytest

import linkemu
from linkemu import api
from linkemu.bed import paths
from linkemu.daemon import control

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "control"))
from fakedaemon import FakeDaemon  # noqa: E402

BED = "q2c"


@pytest.fixture
def fake_link(monkeypatch):
    # Unix socket paths are limited to 108 bytes: pytest's tmp_path can be longer.
    d = tempfile.mkdtemp(prefix="q2", dir="/tmp")
    monkeypatch.setattr(paths, "RUN_ROOT", Path(d))
    (paths.RUN_ROOT / BED).mkdir()
    f = FakeDaemon(str(control.socket_path(BED)))
    bed = api.Bed(BED)
    # A short timeout, so that a late reply is quick to make.
    monkeypatch.setattr(bed, "control", lambda timeout=0.3, wait_s=0.0:
                        control.connect_bed(bed.layout, 0.3, wait_s))
    link = api.Link(bed, os.getpid(), None)
    yield link, f
    link._close()
    f.close()
    shutil.rmtree(d, ignore_errors=True)


def test_a_call_after_a_timeout_gets_its_own_reply(fake_link):
    link, f = fake_link
    f.reply_delay_s = 0.6
    with pytest.raises(linkemu.ControlError, match="did not answer 'show' within 0.3 s"):
        link.show()
    f.reply_delay_s = 0.0
    time.sleep(0.6)                  # the late reply to show has arrived by now
    assert link.set(a2b="delay 5ms")["a2b"]["config"] == "delay 5ms"
    assert link.show() == {"a2b": "delay 5ms", "b2a": ""}


def test_a_call_after_the_connection_dropped_reconnects(fake_link):
    link, f = fake_link
    assert link.show() == {"a2b": "", "b2a": ""}
    f.disconnect_all()
    with pytest.raises(linkemu.ControlError):
        link.show()
    assert link.show() == {"a2b": "", "b2a": ""}


@pytest.mark.parametrize("value", [5, b"delay 5ms", ["delay", "5ms"]])
def test_set_with_a_link_that_is_not_text_is_a_usage_error(fake_link, value):
    link, f = fake_link
    with pytest.raises(linkemu.UsageError, match=r"set: a2b= takes the link as grammar text"):
        link.set(a2b=value)
    assert f.received == []                         # nothing was sent
