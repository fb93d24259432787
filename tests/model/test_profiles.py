"""Link profiles: the shipped six, `profile check`, broken profile files,
and `linkemu run --profile` on the bed (with a direction overridden)."""

from __future__ import annotations

import math
import subprocess

import pytest

from kit import linkemu, on_time, suite_bed

from .lmkit import DIST_DIR, dist_table, table_moments

from linkemu.bed import paths
from linkemu.instruments import ping

BED = suite_bed(__file__)

SHIPPED = ["cell-4g-dec2", "cell-4g-dec4", "cell-5g-dec2", "cell-5g-dec4", "dc-10g",
           "geo-satellite", "lfp-tokyo-kyoto-ds3", "lte-uplink", "nr5g-uplink", "transpacific"]


def test_profile_list_and_check(linkemud_bin):
    cp = linkemu("profile", "list")
    assert cp.returncode == 0, cp.stderr
    names = [line.split()[0] for line in cp.stdout.splitlines() if line.strip()]
    assert names == SHIPPED, names
    for line in cp.stdout.splitlines():
        assert len(line.split(None, 1)) == 2, f"no description: {line!r}"
    cp = linkemu("profile", "check")
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert f"{len(SHIPPED)} profile(s): every link parses" in cp.stdout


GOOD = ('name = "{name}"\nversion = 1\ndescription = "a test profile"\n'
        '[a2b]\nlink = "delay 10ms"\n[b2a]\nlink = "delay 10ms"\n')

BAD = {
    "syntax": (GOOD.replace('version = 1', 'version = = 1'), "TOML syntax"),
    "unknown-key": (GOOD + 'colour = "red"\n', "unknown key(s) colour"),
    "wrong-name": (GOOD.replace('name = "{name}"', 'name = "someone-else"'),
                   "does not match the file name"),
    "no-description": (GOOD.replace('description = "a test profile"\n', ''),
                       "'description' must be a non-empty string"),
    "unknown-dir-key": (GOOD.replace('[b2a]\nlink', '[b2a]\nlnk'), "[b2a]: unknown key(s) lnk"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_profile_files(tmp_path, case):
    text, msg = BAD[case]
    f = tmp_path / f"{case}.toml"
    f.write_text(text.replace("{name}", case))
    for cmd in (("profile", "show", str(f)), ("profile", "check", str(f))):
        cp = linkemu(*cmd)
        out = cp.stdout + cp.stderr
        assert cp.returncode != 0, f"{' '.join(cmd)} accepted a bad profile: {out}"
        assert str(f) in out and msg in out, f"{' '.join(cmd)}: {out}"
        assert "Traceback" not in out, out


def _check_with_a2b(tmp_path, name: str, a2b: str):
    """`linkemu profile check` of the GOOD profile named `name` with its a2b
    link replaced: (the file, the completed process, stdout + stderr)."""
    f = tmp_path / f"{name}.toml"
    f.write_text(GOOD.replace("{name}", name).replace('link = "delay 10ms"\n[b2a]',
                                                      f'link = "{a2b}"\n[b2a]'))
    cp = linkemu("profile", "check", str(f))
    return f, cp, cp.stdout + cp.stderr


def test_bad_grammar_in_a_profile(tmp_path, linkemud_bin):
    f, cp, out = _check_with_a2b(tmp_path, "badlink", "delay 10xs")
    assert cp.returncode == 1, out
    assert f"{f}: [a2b] " in out and "'10xs' is not a time" in out, out


def test_run_with_a_broken_profile_starts_nothing(bed, tmp_path):
    f = tmp_path / "broken.toml"
    f.write_text("name = ")
    cp = linkemu("run", "--bed", BED, "--profile", str(f), "--detach")
    assert cp.returncode != 0 and str(f) in cp.stderr, cp.stderr
    assert not paths.daemon_pid_file(BED).exists()


def _canonical(link: str) -> str:
    binary = str(paths.find_linkemud())
    return subprocess.run([binary, "--check", link], capture_output=True, text=True,
                          check=True).stdout.strip()


def _profile_links(name: str) -> tuple[str, str]:
    import json
    cp = linkemu("profile", "show", name, "--json")
    assert cp.returncode == 0, cp.stderr
    p = json.loads(cp.stdout)
    return p["a2b"], p["b2a"]


PINGS, INTERVAL = 100, 0.05
PING_BYTES = 98                 # 56 bytes of data + ICMP 8 + IP 20 + Ethernet 14


def test_run_lte_uplink_profile(bed, run_link, path_owd):
    a2b, b2a = _profile_links("lte-uplink")
    link = run_link(None, None, "--profile", "lte-uplink")
    pr = ping.ping(bed, count=PINGS, interval=INTERVAL)
    final = link.stop()
    on_time(final, "a2b")
    on_time(final, "b2a")
    assert final["directions"]["a2b"]["config"] == _canonical(a2b)
    assert final["directions"]["b2a"]["config"] == _canonical(b2a)
    assert pr.received == PINGS, f"{pr.received}/{PINGS} replies"
    # Each direction: delay 20 ms + 4.5 ms x normal table entry (noreorder
    # never binds: consecutive pings are 50 ms apart and the table stops
    # at 3.67 sd, so two deadlines differ by at most 33 ms), then the
    # serialization of a 98-byte frame at 21 and 50 Mbit/s. RTT mean:
    # 40 ms + both table means (0) + serialization; RTT sd: sqrt(2) x 4.5 ms
    # x the table's sd = 6.36 ms. The mean of n pings has sd 6.36/sqrt(n)
    # = 0.64 ms; bound 4 sd, plus the path's own round trip (2 x the
    # measured one-way mean, plus 0.1 ms for the kernel's ICMP handling),
    # plus 0.1 ms of ping's resolution (one decimal above 10 ms, truncated).
    tm, ts, _ = table_moments(dist_table(DIST_DIR / "normal.dist"))
    ser = PING_BYTES * 8 / 21e6 * 1e3 + PING_BYTES * 8 / 50e6 * 1e3
    want = 40.0 + 2 * 4.5 * tm + ser
    sd_rtt = math.sqrt(2) * 4.5 * ts
    tol = 4 * sd_rtt / math.sqrt(PINGS)
    path = 2 * path_owd["mean"] + 0.1
    m = sum(pr.rtts_ms) / len(pr.rtts_ms)
    print(f"lte-uplink: mean RTT {m:.2f} ms (want {want:.2f}, -{tol + 0.1:.2f} .. "
          f"+{tol + path:.2f}); sd {math.sqrt(sum((x - m) ** 2 for x in pr.rtts_ms) / (PINGS - 1)):.2f}"
          f" (want {sd_rtt:.2f})")
    assert want - tol - 0.1 <= m <= want + tol + path, f"mean RTT {m:.2f} ms"


def test_run_profile_with_a_direction_overridden(bed, run_link, path_owd):
    _, b2a = _profile_links("lte-uplink")
    link = run_link("delay 5ms", None, "--profile", "lte-uplink")
    pr = ping.ping(bed, count=PINGS, interval=INTERVAL)
    final = link.stop()
    on_time(final, "a2b")
    on_time(final, "b2a")
    assert final["directions"]["a2b"]["config"] == "delay 5ms"
    assert final["directions"]["b2a"]["config"] == _canonical(b2a)
    # RTT: 5 ms + the profile's b2a (20 ms, sd 4.5 ms, 50 Mbit/s): mean of
    # 100 pings within 4 x 4.5/sqrt(100) = 1.8 ms of 25 ms + serialization.
    want = 25.0 + PING_BYTES * 8 / 50e6 * 1e3
    tol = 4 * 4.5 / math.sqrt(PINGS)
    m = sum(pr.rtts_ms) / len(pr.rtts_ms)
    print(f"lte-uplink with --a2b 'delay 5ms': mean RTT {m:.2f} ms (want {want:.2f} +- {tol:.2f})")
    assert want - tol - 0.1 <= m <= want + tol + 2 * path_owd["mean"] + 0.1
    assert min(pr.rtts_ms) >= 5.0 + 20.0 - 4.5 * 30051 / 8192 - 0.1


@pytest.mark.parametrize("name", ["trace", "trace-us", "distribution"])
def test_a_class_named_like_a_file_word_keeps_its_rule(tmp_path, linkemud_bin, name):
    """A class may be called `trace` (docs/grammar.md: NAME is letters,
    digits, '_' or '-'): its name is not a FILE word, so the profile's
    directory must not be put in front of the `match` after it, nor in
    front of a punted class's transport or FIFO."""
    from linkemu import profiles as pr
    link = (f"delay 1ms ; class {name} match dscp ef : delay 2ms"
            f" ; class p match dscp af41 : punt shm {name} delay 3ms")
    assert pr.absolute_files(link, tmp_path) == link
    f = tmp_path / "named.toml"
    f.write_text(GOOD.replace("{name}", "named").replace('link = "delay 10ms"\n[b2a]',
                                                         f'link = "{link}"\n[b2a]'))
    cp = linkemu("profile", "check", str(f))
    assert cp.returncode == 0, cp.stdout + cp.stderr


def test_a_mistyped_distribution_in_a_profile_is_named_as_such(tmp_path, linkemud_bin):
    """`distribution nromal` is neither a built-in nor a .dist file (a path
    with '/' or ending in .dist): the profile must give the daemon the word
    as written, so its error says so, not that '<profile dir>/nromal'
    cannot be opened. A real .dist file named relatively is still found
    beside the profile."""
    from linkemu import profiles as pr
    assert pr.absolute_files("delay 1ms 1ms distribution nromal", tmp_path) == \
        "delay 1ms 1ms distribution nromal"
    assert pr.absolute_files("delay 1ms 1ms distribution my.dist", tmp_path) == \
        f"delay 1ms 1ms distribution {tmp_path.resolve() / 'my.dist'}"
    _f, cp, out = _check_with_a2b(tmp_path, "typo", "delay 10ms 1ms distribution nromal")
    assert cp.returncode == 1, out
    assert "'nromal' is neither uniform, normal, pareto, paretonormal nor a .dist file" in out, out
