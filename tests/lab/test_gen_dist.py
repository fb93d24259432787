"""gen_dist (src/tools/gen_dist.c), which writes the standard .dist tables
into a directory (`ninja -C build dist-tables`): it writes the four files
it names, or says why not and fails; never other files."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

GEN_DIST = Path(__file__).resolve().parents[2] / "build" / "src" / "tools" / "gen_dist"
TABLES = ["uniform.dist", "normal.dist", "pareto.dist", "paretonormal.dist"]


@pytest.fixture(autouse=True)
def _built():
    if not GEN_DIST.exists():
        pytest.fail(f"{GEN_DIST} is not built (make build)")


def run(*args):
    return subprocess.run([str(GEN_DIST), *args], capture_output=True, text=True, timeout=30)


def test_writes_the_four_tables(tmp_path):
    r = run(str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(TABLES)
    assert r.stdout.split() == [str(tmp_path / t) for t in TABLES]


def test_a_path_too_long_is_refused_not_cut(tmp_path):
    """The file's path was cut at 4 kB without a word: a directory named
    that long (here 'x/./././...') made it write 'uni', 'nor', 'par'
    into x and exit 0."""
    (tmp_path / "x").mkdir()
    long_dir = str(tmp_path / "x") + "/." * ((4096 - len(str(tmp_path)) - 6) // 2)
    r = run(long_dir)
    assert r.returncode == 1, r.stdout
    assert "path too long" in r.stderr and r.stderr.startswith("gen_dist: ")
    assert list((tmp_path / "x").iterdir()) == []


def test_a_full_disk_is_named(tmp_path):
    (tmp_path / "uniform.dist").symlink_to("/dev/full")
    r = run(str(tmp_path))
    assert r.returncode == 1
    assert "uniform.dist" in r.stderr and "No space left on device" in r.stderr


def test_wrong_arguments_give_the_usage():
    r = run()
    assert r.returncode == 2 and "usage: gen_dist DIR" in r.stderr
