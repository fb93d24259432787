"""The command lines README.md and docs/*.md show use options that exist.

Every `linkemu SUBCOMMAND ...` line of a code block or inline code span is
resolved through the real parser (linkemu.cli.main.build_parser) to its
subcommand, and each `--option` / `-o` it shows must be one of that
subcommand's (or of its own subcommands', for lines such as `linkemu ctl
show | stats [--json]`). Every option shown for `linkemud` (after `--`) or
`linkemuk` must be in that daemon's `--help`. No root, no bed.
"""

from __future__ import annotations

import argparse
import re
import subprocess
from pathlib import Path

import pytest

from linkemu.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
OPTION = re.compile(r"(?<![\w-])(--?[a-zA-Z][\w-]*)")


def _code(text: str) -> list[str]:
    """The lines of fenced blocks and the inline code spans, with continued
    lines (a trailing backslash, or a next line of `[--options]`) joined."""
    out = []
    for block in re.findall(r"^```[a-z]*\n(.*?)^```", text, flags=re.M | re.S):
        block = re.sub(r"\\\n\s*", " ", block)
        block = re.sub(r"\n\s+(?=\[--)", " ", block)
        out += block.splitlines()
    prose = re.sub(r"^```[a-z]*\n.*?^```", "", text, flags=re.M | re.S)
    out += [" ".join(s.split()) for s in re.findall(r"`([^`]+)`", prose)]
    return out


def _commands(prog: str) -> list[tuple[str, str]]:
    """(file, the text after PROG) for each command line of PROG."""
    found = []
    for doc in DOCS:
        for line in _code(doc.read_text()):
            line = re.sub(r"\$\([^)]*\)", "X", line.split(" # ")[0])   # $(docker inspect -f ...)
            m = re.match(rf"\s*(?:\$ |sudo |\S*/)?{prog} (.*)", line)
            if m:
                found.append((doc.name, m.group(1)))
    return found


def _subparsers(p: argparse.ArgumentParser) -> dict:
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            return a.choices
    return {}


def _options(p: argparse.ArgumentParser) -> set[str]:
    out = {o for a in p._actions for o in a.option_strings}
    for sp in _subparsers(p).values():
        out |= _options(sp)
    return out


def _help_options(binary: Path) -> set[str]:
    p = subprocess.run([str(binary), "--help"], capture_output=True, text=True, timeout=30)
    return set(re.findall(r"--[a-z][\w-]*", p.stdout + p.stderr))


def test_the_docs_show_commands():
    assert len(_commands("linkemu")) >= 60
    assert len(_commands("linkemud")) >= 3


@pytest.mark.parametrize("doc, line", _commands("linkemu"))
def test_linkemu_options_exist(doc, line):
    parser, path, words = build_parser(), [], line.split()
    while words and words[0] in _subparsers(parser):
        path.append(words[0])
        parser = _subparsers(parser)[words.pop(0)]
    assert path, f"{doc}: `linkemu {line}`: no such command"
    known = _options(parser)
    shown = [o.split("=")[0] for w in words[:words.index("--") if "--" in words else None]
             for o in OPTION.findall(w)]
    unknown = [o for o in shown if o not in known]
    assert not unknown, f"{doc}: `linkemu {line}`: linkemu {' '.join(path)} has no {unknown}"


@pytest.mark.parametrize("prog", ["linkemud", "linkemuk"])
def test_daemon_options_exist(prog, linkemud_bin, linkemuk_bin):
    known = _help_options(linkemud_bin if prog == "linkemud" else linkemuk_bin)
    bad = []
    for doc, line in _commands(prog):
        words = line.split()
        if prog == "linkemud":
            if "--" in words:
                words = words[words.index("--") + 1:]      # before it: EAL's options
            elif not words or not words[0].startswith("--"):
                continue
        bad += [f"{doc}: `{prog} {line}`: {o}" for w in words for o in OPTION.findall(w)
                if o.startswith("--") and o.split("=")[0] not in known]
    assert not bad, "options the daemon does not have:\n" + "\n".join(bad)
