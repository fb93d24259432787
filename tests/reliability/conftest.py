"""The reliability suites (issue 8): a sanitized linkemud on bed "lz", the
soak on bed "ls", faults on bed "lf". They need root, a built linkemud and
the bed's tools; without them they skip here and fail under CI=true."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import rkit  # noqa: E402


@pytest.fixture(scope="session")
def prerequisites():
    why = rkit.missing_prerequisites()
    if why:
        if os.environ.get("CI") == "true":
            pytest.fail(f"reliability suite cannot run: {why}")
        pytest.skip(why)
