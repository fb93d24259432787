"""Bad input on the bed: `linkemu run` refuses a link it cannot build with
exit status 2 and a message naming the file (and line), and starts
nothing."""

from __future__ import annotations

import pytest

from kit import linkemu, suite_bed

from linkemu.bed import paths, procs, testbed

BED = suite_bed(__file__)


def _run_fails(a2b: str) -> str:
    cp = linkemu("run", "--bed", BED, "--a2b", a2b, "--detach")
    assert cp.returncode == 2, f"exit {cp.returncode}: {cp.stdout}{cp.stderr}"
    assert "Traceback" not in cp.stderr
    b = testbed.bed_for(BED)
    assert testbed.daemon_pid(b) is None and not procs.find_linkemud(b.file_prefix)
    assert not paths.daemon_pid_file(BED).exists()
    return cp.stderr


def test_missing_trace_file(bed):
    err = _run_fails("trace /nonexistent")
    assert "/nonexistent" in err and "trace" in err, err


@pytest.mark.parametrize("word,lines,bad_line,what", [
    ("trace", ["1", "2", "x3", "4"], 3, "'x3'"),
    ("trace", ["5", "3"], 2, "must not decrease"),           # timestamps must not decrease
    ("trace-us", ["100", "", "300"], 2, ""),              # an empty line
    ("distribution", ["1 2", "3", "12a"], 3, "'12a' is not an integer"),
])
def test_bad_line_names_file_and_line(bed, tmp_path, word, lines, bad_line, what):
    f = tmp_path / ("bad.dist" if word == "distribution" else "bad.trace")
    f.write_text("\n".join(lines) + "\n")
    link = f"delay 10ms 1ms distribution {f}" if word == "distribution" else f"{word} {f}"
    err = _run_fails(link)
    assert f"{f}:{bad_line}" in err and what in err, err
