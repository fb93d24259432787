"""Fuzzing the profile loader (python/linkemu/profiles.py) with Hypothesis:
whatever a profile file holds, loading it gives a Profile or a
ProfileError naming the file, never another exception; and a Profile that
loads is well-formed.

Two generators: raw bytes (anything a file can hold), and TOML documents
built from the profile's own keys with values of every TOML type, so the
loader's checks past the TOML parser are reached. FUZZ_PY_EXAMPLES sets
the number of examples per test (`make fuzz` raises it); the run is
derandomized unless FUZZ_PY_RANDOM=1, so `make test` is repeatable."""

from __future__ import annotations

import json
import math
import os
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))

hypothesis = pytest.importorskip("hypothesis") if os.environ.get("CI") != "true" else __import__("hypothesis")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from linkemu import profiles  # noqa: E402

EXAMPLES = int(os.environ.get("FUZZ_PY_EXAMPLES", "1000"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=os.environ.get("FUZZ_PY_RANDOM") != "1",
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
                database=None)
NAME = "fuzzed"   # the file's stem, so that a good name can match it
WORDS = ["delay", "10ms", "trace", "trace-us", "distribution", "normal", "x.dist", "../x", "/abs", "rate",
         "1mbit", "loss", "1%", ";", "class", "\x00", "\n", "\u2028", " ", "\t", "."]


def toml_key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else json.dumps(k, ensure_ascii=False)


def toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)   # JSON's escapes are TOML basic-string escapes
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return "{" + ", ".join(f"{toml_key(k)} = {toml_value(x)}" for k, x in v.items()) + "}"


def toml_doc(top: dict) -> str:
    lines, tables = [], []
    for k, v in top.items():
        (tables if isinstance(v, dict) else lines).append((k, v))
    out = [f"{toml_key(k)} = {toml_value(v)}" for k, v in lines]
    for k, v in tables:
        out.append(f"[{toml_key(k)}]")
        out += [f"{toml_key(kk)} = {toml_value(vv)}" for kk, vv in v.items()]
    return "\n".join(out) + "\n"


scalars = st.one_of(st.booleans(), st.integers(min_value=-2**63, max_value=2**63 - 1), st.floats(),
                    st.text(max_size=40), st.sampled_from(["fuzzed", "Fuzzed", "a" * 49, "", " "]))
links = st.lists(st.sampled_from(WORDS) | st.text(max_size=12), max_size=8).map(" ".join)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) |
                      st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=6)
direction = st.one_of(st.fixed_dictionaries({"link": links}),
                      st.dictionaries(st.sampled_from(["link", "delay", ""]), values | links, max_size=2),
                      values)
# Mostly valid documents with some keys changed or missing, so that every
# check of the loader is reached, not only the first.
documents = st.fixed_dictionaries(
    {"name": st.just(NAME) | scalars, "description": st.just("a link") | st.text(max_size=20) | scalars},
    optional={"version": st.integers(-3, 3) | scalars, "source": st.text(max_size=20) | scalars,
              "a2b": direction, "b2a": direction, "extra": values})


def scratch(factory) -> Path:
    """One file, rewritten for each example (a directory per example is slow)."""
    global _SCRATCH
    if _SCRATCH is None:
        _SCRATCH = factory.mktemp("profiles") / f"{NAME}.toml"
    return _SCRATCH


_SCRATCH: Path | None = None


def load(path: Path):
    """The loader's answer: a Profile, or the ProfileError's message."""
    try:
        return profiles.load_file(path)
    except profiles.ProfileError as e:
        assert str(e).startswith(f"{path}: "), f"error does not name the file: {e}"
        return str(e)


def well_formed(p: profiles.Profile) -> None:
    assert re.fullmatch(r"[a-z0-9][a-z0-9-]{0,47}", p.name) and p.name == NAME
    assert type(p.version) is int and p.version >= 1
    assert p.description and isinstance(p.description, str) and isinstance(p.source, str)
    for link in (p.a2b, p.b2a):
        assert isinstance(link, str)
        assert not any(ord(c) < 0x20 and c not in "\t\n\r" for c in link), repr(link)


@FUZZ
@given(raw=st.binary(max_size=400))
def test_profile_bytes(tmp_path_factory, raw):
    path = scratch(tmp_path_factory)
    path.write_bytes(raw)
    got = load(path)
    if isinstance(got, profiles.Profile):
        well_formed(got)


@FUZZ
@given(doc=documents)
def test_profile_documents(tmp_path_factory, doc):
    path = scratch(tmp_path_factory)
    path.write_text(toml_doc(doc), encoding="utf-8", errors="surrogatepass")
    got = load(path)
    if isinstance(got, profiles.Profile):
        well_formed(got)


def test_profile_link_with_a_nul_is_refused(tmp_path):
    """Found by test_profile_documents: a NUL in a link made path resolution
    raise ValueError (a traceback, not a message)."""
    path = tmp_path / f"{NAME}.toml"
    path.write_text(f'name = "{NAME}"\ndescription = "d"\n[a2b]\nlink = "trace a\\u0000b"\n')
    got = load(path)
    assert isinstance(got, str) and "control character" in got


def test_profile_version_true_is_refused(tmp_path):
    """Found by test_profile_documents: `version = true` passed as 1 (a
    TOML boolean is a Python int)."""
    path = tmp_path / f"{NAME}.toml"
    path.write_text(f'name = "{NAME}"\ndescription = "d"\nversion = true\n')
    got = load(path)
    assert isinstance(got, str) and "'version' must be an integer" in got
