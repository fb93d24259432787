"""noise_floor() (instruments/noisefloor.py) names a noisefloor that hangs
or prints no JSON: a raw subprocess.TimeoutExpired or JSONDecodeError
reached the lab's user as a traceback. Stand-in programs, no root."""

from __future__ import annotations

import pytest

from linkemu.errors import LinkemuError
from linkemu.instruments import noisefloor


def _stand_in(monkeypatch, tmp_path, script: str):
    exe = tmp_path / "noisefloor"
    exe.write_text("#!/bin/sh\n" + script + "\n")
    exe.chmod(0o755)
    monkeypatch.setattr(noisefloor, "require_tool", lambda name: exe)


def test_a_noisefloor_that_hangs_is_named(monkeypatch, tmp_path):
    _stand_in(monkeypatch, tmp_path, "exec sleep 60")
    monkeypatch.setattr(noisefloor.subprocess, "run", _with_timeout(noisefloor.subprocess.run, 0.5))
    with pytest.raises(LinkemuError, match=r"noisefloor on CPU 1 did not end within"):
        noisefloor.noise_floor(1, 0.1)


def test_a_noisefloor_that_prints_no_json_is_named(monkeypatch, tmp_path):
    _stand_in(monkeypatch, tmp_path, "echo 'not json'")
    with pytest.raises(LinkemuError, match=r"noisefloor on CPU 1 printed no JSON"):
        noisefloor.noise_floor(1, 0.1)


def _with_timeout(run, timeout: float):
    """subprocess.run with its timeout cut to `timeout` (the real one is
    the run's seconds plus 30)."""
    def cut(*a, **kw):
        kw["timeout"] = timeout
        return run(*a, **kw)
    return cut
