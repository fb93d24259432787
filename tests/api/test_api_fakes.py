"""Bed and Link against fakes (no root, no namespaces, no daemon): the life
cycle docs/python.md promises (nested `with`, down, stop, exit_code), the
checks on commands, and docs/python.md's own names resolved against the
real classes."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

import linkemu
from linkemu import api
from linkemu.bed import testbed
from linkemu.daemon import daemon
from linkemu.daemon.counters import Stats

from .test_api_unit import FINAL

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def fake_pair(monkeypatch):
    """A pair bed "fk" whose building and removing only flip a flag."""
    state = {"up": False, "ups": 0, "downs": 0}

    def up(layout, say=None):
        state["up"] = True
        state["ups"] += 1

    def remove(layout, namespaces):
        state["up"] = False
        state["downs"] += 1
        return ["removed"]

    monkeypatch.setattr(testbed, "up", up)
    monkeypatch.setattr(testbed, "remove", remove)
    monkeypatch.setattr(testbed, "status", lambda layout: {"up": state["up"]})
    monkeypatch.setattr(testbed, "daemon_pid", lambda layout: None)
    bed = api.Bed("fk", _layout=testbed.bed_for("fk"))
    return bed, state


class FakePopen:
    def __init__(self, pid=4242):
        self.pid = pid
        self.returncode = None

    def poll(self):
        return self.returncode


def _started_link(bed, monkeypatch, popen):
    """A Link as Bed.run makes it, with a stop that terminates the fake."""
    d = daemon.Daemon(popen.pid, SimpleNamespace(pmd="af_packet", io="dpdk"), [], popen)
    link = api.Link(bed, popen.pid, d)
    bed._links.append(link)

    def stop(layout, p=None, timeout=0, pid=None):
        how = "gone" if p.returncode is not None else "terminated"
        if p.returncode is None:
            p.returncode = -15          # our SIGTERM
        return daemon.StopResult(p.pid, how, FINAL)

    monkeypatch.setattr(daemon, "stop", stop)
    return link


# --- the bed's life cycle -------------------------------------------------------------


def test_nested_with_leaves_the_bed_to_the_outer_one(fake_pair):
    """The outer `with` built the bed: it removes it, whatever an inner
    `with` of the same bed did (that one found it up: not its own)."""
    bed, state = fake_pair
    with bed:
        with bed:
            pass
        assert state["up"], "the inner with removed a bed it did not build"
    assert not state["up"], "the outer with left up the bed it built"
    assert state["downs"] == 1


def test_with_twice_in_a_row_builds_and_removes_each_time(fake_pair):
    bed, state = fake_pair
    for _ in range(2):
        with bed:
            assert state["up"]
        assert not state["up"]
    assert (state["ups"], state["downs"]) == (2, 2)


def test_with_on_a_bed_up_before_leaves_it_up(fake_pair):
    bed, state = fake_pair
    bed.up()
    with bed:
        with bed:
            pass
    assert state["up"] and state["downs"] == 0


def test_down_forgets_every_link(fake_pair):
    """down() drops all the bed's links (a later `with` exit must not stop
    them again): it removed from the list it iterated, forgetting every
    other one."""
    bed, _ = fake_pair
    links = [api.Link(bed, pid, None) for pid in (11, 12, 13)]
    bed._links.extend(links)
    bed.down()
    assert bed._links == []


# --- a link after it stopped --------------------------------------------------------------

def test_stopped_link_refuses_control_clearly(fake_pair, monkeypatch):
    bed, _ = fake_pair
    link = _started_link(bed, monkeypatch, FakePopen())
    report = link.stop()
    assert link.stop() is report                     # idempotent
    assert not link.running
    for call in (lambda: link.set(a2b="delay 1ms"), link.stats, link.show, link.reset_stats):
        with pytest.raises(linkemu.LinkemuError, match="is stopped"):
            call()


def test_exit_code_is_none_when_we_stopped_the_daemon(fake_pair, monkeypatch):
    """docs/python.md: exit_code() is set only if the daemon exited by
    itself; after link.stop() it was our SIGTERM's -15."""
    bed, _ = fake_pair
    link = _started_link(bed, monkeypatch, FakePopen())
    assert link.exit_code() is None
    link.stop()
    assert link.exit_code() is None


def test_exit_code_of_a_daemon_that_exited_by_itself_survives_stop(fake_pair, monkeypatch):
    bed, _ = fake_pair
    popen = FakePopen()
    link = _started_link(bed, monkeypatch, popen)
    popen.returncode = 3                                  # it crashed
    assert link.exit_code() == 3
    link.stop()
    assert link.exit_code() == 3


def test_repr_says_a_daemon_that_exited_by_itself_is_not_running(fake_pair, monkeypatch):
    bed, _ = fake_pair
    popen = FakePopen()
    link = _started_link(bed, monkeypatch, popen)
    assert repr(link) == "linkemu.Link(bed='fk', pid=4242, running)"
    popen.returncode = 3                                  # it crashed
    assert repr(link) == "linkemu.Link(bed='fk', pid=4242, exited with 3)"
    link.stop()
    assert repr(link) == "linkemu.Link(bed='fk', pid=4242, stopped)"


# --- commands on a side -----------------------------------------------------------------------


@pytest.fixture
def local_sides(monkeypatch):
    """Commands "on a side" run right here (no namespace, no root)."""
    monkeypatch.setattr(api.netns, "ns_exec_argv", lambda ns, cmd, cpus: list(cmd))


def test_exec_check_names_a_command_with_path_words(fake_pair, local_sides):
    """check=True on a failing command whose words include a Path (which
    subprocess takes) raises the LinkemuError, not a TypeError from
    building its message."""
    bed, _ = fake_pair
    with pytest.raises(linkemu.LinkemuError, match="cat /nonexistent on src exited with 1: "
                                                   "cat: /nonexistent: No such file"):
        bed.exec("src", ["cat", Path("/nonexistent")], check=True, cpus=None)


def test_empty_command_is_a_usage_error(fake_pair):
    bed, _ = fake_pair
    for cmd in ([], ()):
        with pytest.raises(linkemu.UsageError, match="empty command"):
            bed.argv("src", cmd)


@pytest.mark.parametrize("role", ["a", "SRC", "", "b2a"])
def test_bad_sides(fake_pair, role):
    bed, _ = fake_pair
    for call in (lambda: bed.addr(role), lambda: bed.ref(role),
                 lambda: bed.argv(role, ["true"])):
        with pytest.raises(linkemu.UsageError, match="unknown side"):
            call()


# --- docs/python.md against the real classes ---------------------------------------------------

DOC = (REPO / "docs" / "python.md").read_text()


def _resolve(dotted: str):
    import importlib
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for p in parts[i:]:
            obj = getattr(obj, p)
        return obj
    raise ImportError(dotted)


def test_docs_dotted_names_exist():
    names = set(re.findall(r"\blinkemu(?:\.[A-Za-z_]\w*)+", DOC))
    assert names
    for n in sorted(names):
        if n.startswith("linkemu.bed") and n.count(".") == 1:
            continue                                  # `linkemu.Bed` is matched above
        try:
            _resolve(n)
        except (ImportError, AttributeError) as e:
            pytest.fail(f"docs/python.md names {n}, which does not exist ({e})")


def test_docs_methods_and_attributes_exist():
    bed_names = set(re.findall(r"(?<![\w.])bed\.(\w+)", DOC)) | set(
        re.findall(r"linkemu\.Bed\.(\w+)", DOC))
    link_names = set(re.findall(r"(?<![\w.])link\.(\w+)", DOC))
    stats_names = set(re.findall(r"\bstats\.(\w+)", DOC))
    assert {"up", "down", "exec", "popen", "addr", "ref", "run", "between"} <= bed_names
    for n in bed_names:
        assert hasattr(api.Bed, n), f"docs/python.md: bed.{n}"
    for n in link_names:
        assert hasattr(api.Link, n) or n in ("report", "pid"), f"docs/python.md: link.{n}"
    for n in stats_names:
        assert hasattr(Stats, n) or n in Stats.__dataclass_fields__, f"docs: stats.{n}"


def test_docs_results_fields_exist():
    """Every field the Results section lists is one of the dataclass's."""
    from linkemu.daemon import counters
    section = DOC.split("## Results")[1].split("## Errors")[0]
    for cls_name in ("Stats", "DirectionCounters", "ErrorSummary", "FinalReport"):
        head = f"**`{cls_name}(Stats)`**" if cls_name == "FinalReport" else f"**`{cls_name}`**"
        body = section.split(head)[1].split("\n- ")[0]
        cls = getattr(counters, cls_name)
        for f in re.findall(r"`(\w+)`", body):
            if f in ("terminated", "killed", "a2b", "b2a") or f[0].isupper():
                continue
            assert hasattr(cls, f) or f in cls.__dataclass_fields__, f"{cls_name}.{f}"


def test_docs_signatures():
    import inspect
    between = inspect.signature(api.Bed.between).parameters
    assert between["dev"].default == "linkemu0" and between["name"].default == "default"
    assert inspect.signature(api.Bed.shell).parameters["name"].default is None
    run = inspect.signature(api.Bed.run).parameters
    assert {"a2b", "b2a", "profile", "pmd", "lcores", "layout", "seed"} <= set(run)
    ex = inspect.signature(api.Bed.exec).parameters
    assert {"check", "timeout", "capture", "env", "cpus"} <= set(ex)
    assert ex["cpus"].default == "auto"
    assert {"env", "cpus"} <= set(inspect.signature(api.Bed.popen).parameters)


def test_every_lazy_export_imports():
    for name in linkemu.__all__:
        assert getattr(linkemu, name) is not None, name
