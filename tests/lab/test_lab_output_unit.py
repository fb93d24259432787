"""`linkemu lab ... -o FILE`: a results path that cannot be written is
refused before the study runs (no bed, no daemon), not after it."""

from __future__ import annotations

import importlib

import pytest

from linkemu.cli.main import main

STUDIES = {"delay-precision": "delay_precision", "loss-accuracy": "loss_accuracy",
           "lfp": "lfp", "cellular": "cellular", "forwarding": "forwarding"}


@pytest.fixture
def ran(monkeypatch):
    """The studies' run() replaced by a recorder: which ran."""
    seen = []
    for study, module in STUDIES.items():
        monkeypatch.setattr(importlib.import_module(f"linkemu.lab.{module}"), "run",
                            lambda o, path, study=study: seen.append(study))
    monkeypatch.setattr("os.geteuid", lambda: 0)
    return seen


@pytest.mark.parametrize("study", sorted(STUDIES))
def test_an_output_under_a_plain_file_is_refused_before_the_run(tmp_path, ran, capsys, study):
    (tmp_path / "plain").write_text("x")
    out = tmp_path / "plain" / "r.json"
    assert main(["lab", study, "--quick", "-o", str(out)]) == 2
    assert ran == []
    assert f"-o {out}: cannot write the results file" in capsys.readouterr().err


def test_an_output_that_is_a_directory_is_refused(tmp_path, ran, capsys):
    (tmp_path / "r.json").mkdir()
    assert main(["lab", "lfp", "--quick", "-o", str(tmp_path / "r.json")]) == 2
    assert ran == []
    assert "is a directory" in capsys.readouterr().err
