"""Writing a results file (lab/results.py) where it cannot go, without a bed."""

from __future__ import annotations

import pytest

from linkemu.lab import results


@pytest.fixture(autouse=True)
def _any_document(monkeypatch):
    """What is tested is the writing; schema checks have tests of their own."""
    monkeypatch.setattr(results, "validate", lambda doc, name="results": None)


def _doc() -> dict:
    res = results.new("lfp", quick=True, seed=1, config={})
    res["metadata"]["git_commit"] = None   # no git call needed for what is tested
    return res


def test_a_path_under_a_file_is_a_clear_error(tmp_path):
    # The parent is a regular file: after an hour of measuring, the run
    # ended in a NotADirectoryError traceback and no file.
    (tmp_path / "plain").write_text("x")
    with pytest.raises(results.ResultsError, match=r"plain/r\.json: cannot write"):
        results.write(_doc(), tmp_path / "plain" / "r.json")


def test_a_directory_in_the_way_leaves_no_half_file(tmp_path):
    # os.replace onto a directory fails; the temporary file it was to
    # replace it with was left beside it.
    (tmp_path / "r.json").mkdir()
    with pytest.raises(results.ResultsError, match=r"r\.json: cannot write"):
        results.write(_doc(), tmp_path / "r.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


@pytest.mark.parametrize("name", ["r.json", "r.json.gz"])
def test_a_written_file_loads_and_no_temporary_file_stays(tmp_path, name):
    results.write(_doc(), tmp_path / name)
    assert results.load(tmp_path / name)["experiment"] == "lfp"
    assert [p.name for p in tmp_path.iterdir()] == [name]


def test_check_writable_refuses_before_the_run(tmp_path):
    (tmp_path / "plain").write_text("x")
    with pytest.raises(results.ResultsError, match="cannot write"):
        results.check_writable(tmp_path / "plain" / "r.json")
    (tmp_path / "d.json").mkdir()
    with pytest.raises(results.ResultsError, match="is a directory"):
        results.check_writable(tmp_path / "d.json")
    results.check_writable(tmp_path / "new" / "r.json")    # made as it will be
    assert not any((tmp_path / "new").iterdir())           # and nothing left in it


def test_a_symlink_at_the_old_temporary_name_is_not_written_through(tmp_path):
    """The temporary file was 'PATH.tmp', opened with O_CREAT and no
    O_EXCL: a symlink planted there (a shared directory) was written
    through, and two runs with one -o shared it. Now it is a new file of
    its own name."""
    victim = tmp_path / "victim"
    victim.write_text("untouched\n")
    (tmp_path / "r.json.tmp").symlink_to(victim)
    results.check_writable(tmp_path / "r.json")
    results.write(_doc(), tmp_path / "r.json")
    assert victim.read_text() == "untouched\n"
    assert results.load(tmp_path / "r.json")["experiment"] == "lfp"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "r.json.tmp", "victim"]
