"""The link grammar the documentation shows is the grammar linkemud takes.

Every example in docs/grammar.md (the `example` column of its tables, the
examples in its code blocks), every `--a2b`/`--b2a` link in README.md and
docs/*.md, and every documented error go through `linkemud --check` (no
hugepages, no ports):

- an example must be accepted, alone or with the words its text says it
  needs (a jitter, a delay, a serializer);
- the "## Errors" transcript's links must be refused with exactly the
  message shown (`linkemud: --a2b: MSG` there, `linkemud: MSG` from --check);
- each short error example of a word's section must be refused;
- each error message shown for classes, hops and punted classes must be
  what linkemud says for the input in ERROR_INPUTS below, and every such
  message the docs show must have an input there.

A file the docs name but the repository does not ship (`lte.us.trace`,
`up.tr`) is made up as a valid one in the test's working directory, except
for the Errors transcript's `bad.trace`, which gets the bad line it shows.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GRAMMAR_MD = ROOT / "docs" / "grammar.md"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# The words a link's text may start with (linkemud's unknown-word message).
WORDS = {"delay", "distribution", "noreorder", "loss", "ecn", "duplicate", "corrupt", "reorder",
         "gap", "rate", "slot", "trace", "trace-us", "limit", "limit-bytes", "limit-queue",
         "drop-head", "drop-tail", "codel", "seed"}

# What an example may lean on, as the docs say: a distribution or noreorder
# needs a jitter, reorder and gap a delay, the queue's words a serializer.
CONTEXTS = ["delay 10ms 2ms", "rate 10mbit", "delay 10ms 2ms rate 10mbit"]

# Documented error messages (in backticks in docs/grammar.md's error lists,
# not the transcript): the input that makes each.
_C65 = "".join(f" ; class c{i} match port {i} :" for i in range(65))
ERROR_INPUTS = {
    "distribution: x.dist:3: '12a' is not an integer": "delay 10ms 2ms distribution x.dist",
    "trace: x.trace:3: 'x3' is not a whole number of milliseconds": "trace x.trace",
    "rule 1: 'klass' where 'class' was expected": "; klass a match port 1 :",
    "class a: missing ':'": "; class a match port 1",
    "class a: match: needs at least one filter word": "; class a match : delay 1ms",
    "class a: vlan: '4096' is out of range (0 .. 4095)": "; class a match vlan 4096 :",
    "class a: ether: '0x05dc' is an 802.3 length, not an EtherType (0x0600 .. 0xffff)":
        "; class a match ether 0x05dc :",
    "class a: proto icmp: has no ports": "; class a match proto icmp port 5 :",
    "class a: src: '10.0.0.1/8' has address bits set beyond its prefix length":
        "; class a match src 10.0.0.1/8 :",
    "class a: ether arp: IP filters (proto, src, dst, ports, dscp) need ether ipv4 or ipv6":
        "; class a match ether arp proto tcp :",
    "class a: dst: an IPv6 prefix cannot match IPv4 frames":
        "; class a match ether ipv4 dst 2001:db8::/32 :",
    "class a: proto 44: an IPv6 extension header, skipped to find the protocol, so no IPv6 frame has it":
        "; class a match ether ipv6 proto 44 :",
    "class a: the name is used twice": "; class a match port 1 : ; class a match port 2 :",
    "class c64: more than 64 classes": _C65,
    "class a: delay: '1x' is not a time": "; class a match port 1 : delay 1x",
    "hop 1 is empty: '>>' at the start": ">> delay 1ms",
    "hop 2 is empty: '>>' at the end": "delay 1ms >>",
    "hop 2 is empty: '>>' twice in a row": "delay 1ms >> >> delay 2ms",
    "hop 2: delay: '1x' is not a time": "delay 1ms >> delay 1x",
    "class a: hop 2: ...": "; class a match port 1 : delay 1ms >> delay 1x",
    "class a: punt: missing the transport after 'punt' (punt fifo PATH or punt shm NAME)":
        "; class a match port 1 : punt",
    "class a: punt: 'fifi' is not a transport (fifo or shm): did you mean 'fifo'?":
        "; class a match port 1 : punt fifi /x",
    "class a: punt shm: 'a/b' is not a shared-memory name (...)":
        "; class a match port 1 : punt shm a/b",
    "class a: punt: must come right after ':' (...)":
        "; class a match port 1 : delay 1ms punt fifo /x",
    "punt: only a class can be punted (...)": "punt fifo /x",
    "class b: punt fifo p: already used by class a (one channel per class)":
        "; class a match port 1 : punt fifo p ; class b match port 2 : punt fifo p",
}


def _sections(text: str) -> list[tuple[str, str]]:
    """(heading, body) for each ## or ### section."""
    parts = re.split(r"^(#{2,3} .*)$", text, flags=re.M)
    return [(parts[i].lstrip("# ").strip(), parts[i + 1]) for i in range(1, len(parts) - 1, 2)]


def _cells(row: str) -> list[str]:
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", row.strip())[1:-1]]


def _code(cell: str) -> list[str]:
    return [m.replace("\\|", "|") for m in re.findall(r"`([^`]+)`", cell)]


def table_examples(text: str) -> list[tuple[str, str]]:
    """(kind, example) from every table with an `example` column: kind is
    "link" for the words' tables, "filter" for the class filter words."""
    out = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not line.startswith("|") or i + 1 >= len(lines) or not lines[i + 1].startswith("|---"):
            continue
        head = _cells(line)
        if "example" not in head:
            continue
        col = head.index("example")
        kind = "filter" if "matches" in head else "link"
        for row in lines[i + 2:]:
            if not row.startswith("|"):
                break
            for ex in _code(_cells(row)[col]):
                out.append((kind, ex))
    return out


def block_examples(text: str) -> list[str]:
    """Grammar lines of the fenced blocks: not comments, transcripts, the
    stage diagram, nor syntax written with placeholders (LINK, NAME ...)."""
    out = []
    for block in re.findall(r"^```[a-z]*\n(.*?)^```", text, flags=re.M | re.S):
        for line in block.splitlines():
            s = line.strip()
            if (not s or s[0] in "#$" or s.startswith("linkemud") or "->" in s
                    or any(re.fullmatch(r"[A-Z][A-Z0-9-]{2,}", t.strip("[].|"))
                           for t in s.split())):
                continue
            out.append(s)
    return out


def error_paragraph_examples(text: str) -> dict[str, list[str]]:
    """{section: [backticked item, ...]} from the "Errors: ..." paragraphs
    (and the hops' and punt's error lists)."""
    out = {}
    for head, body in _sections(text):
        for para in re.split(r"\n\s*\n|\n(?=- )", body):
            flat = " ".join(para.split())
            m = re.search(r"(?:^|- )Errors?(?::| name)(.*)|An empty hop is an error(.*)", flat)
            if m:
                out.setdefault(head, []).extend(_code(flat[m.start():]))
    return out


def transcript_errors(text: str) -> list[tuple[str, str]]:
    """(link, message) pairs of the "## Errors" section's transcript."""
    body = dict(_sections(text))["Errors"]
    pairs = re.findall(r'^\$ linkemud \.\.\. -- --a2b "([^"]*)"\nlinkemud: --a2b: (.*)$',
                       body, flags=re.M)
    assert len(pairs) == body.count("$ linkemud"), "a transcript line the test cannot read"
    return pairs


def documented_links() -> list[tuple[str, str]]:
    """(file, link) for every quoted --a2b/--b2a value in README.md and docs/*.md."""
    out = []
    for p in DOCS:
        for m in re.finditer(r"--(?:a2b|b2a) +(\"[^\"]*\"|'[^']*')", p.read_text()):
            out.append((p.name, m.group(1)[1:-1]))
    return out


@pytest.fixture(scope="module")
def check(linkemud_bin, tmp_path_factory):
    """check(link) -> (exit status, stdout + stderr) of `linkemud --check`,
    run in a directory that holds the files the docs name."""
    wd = tmp_path_factory.mktemp("docs-grammar")
    (wd / "traces").symlink_to(ROOT / "traces")
    (wd / "profiles").symlink_to(ROOT / "profiles")
    for bad in ("bad.trace", "x.trace"):        # the docs' bad files, as they show them
        (wd / bad).write_text("1\n2\nx3\n")
    (wd / "x.dist").write_text("1\n2\n12a\n")

    def run(link: str) -> tuple[int, str]:
        for m in re.finditer(r"\b(trace|trace-us|distribution) (\S+)", link):
            f = wd / m.group(2).lstrip("/")
            if m.group(1) == "distribution" and not m.group(2).endswith(".dist"):
                continue
            if not f.exists():
                f.parent.mkdir(parents=True, exist_ok=True)
                f.write_text((ROOT / "profiles/dist/normal.dist").read_text()
                             if m.group(1) == "distribution" else "1\n")
        p = subprocess.run([str(linkemud_bin), "--check", link], cwd=wd, capture_output=True,
                           text=True, timeout=30)
        return p.returncode, (p.stdout + p.stderr).strip()
    return run


def _accepted(check, link: str) -> tuple[bool, str]:
    rc, out = check(link)
    if rc == 0:
        return True, out
    words = set(link.split())
    for ctx in CONTEXTS:
        if not words & set(ctx.split()) and check(f"{ctx} {link}")[0] == 0:
            return True, out
    return False, out


def test_the_docs_have_examples():
    text = GRAMMAR_MD.read_text()
    assert len(table_examples(text)) >= 25
    assert len(block_examples(text)) >= 8
    assert len(transcript_errors(text)) >= 10
    assert len(documented_links()) >= 20


@pytest.mark.parametrize("kind, example", table_examples(GRAMMAR_MD.read_text()))
def test_table_example_is_accepted(check, kind, example):
    link = f"; class x match {example} :" if kind == "filter" else example
    ok, out = _accepted(check, link)
    assert ok, f"docs/grammar.md's example `{example}` is refused: {out}"


@pytest.mark.parametrize("example", block_examples(GRAMMAR_MD.read_text()))
def test_block_example_is_accepted(check, example):
    rc, out = check(example)
    assert rc == 0, f"docs/grammar.md's example `{example}` is refused: {out}"


@pytest.mark.parametrize("doc, link", [(d, g) for d, g in documented_links()
                                       if g not in dict(transcript_errors(GRAMMAR_MD.read_text()))])
def test_documented_link_is_accepted(check, doc, link):
    rc, out = check(link)
    assert rc == 0, f"{doc}: --a2b/--b2a '{link}' is refused: {out}"


def test_readme_grammar_block_is_accepted(check):
    readme = (ROOT / "README.md").read_text()
    examples = block_examples(dict(_sections(readme))["Grammar"])
    assert examples, "README's Grammar section lost its example"
    for ex in examples:
        rc, out = check(ex)
        assert rc == 0, f"README.md's example `{ex}` is refused: {out}"


@pytest.mark.parametrize("link, message", transcript_errors(GRAMMAR_MD.read_text()))
def test_transcript_error_is_the_message_shown(check, link, message):
    rc, out = check(link)
    assert rc == 2, f"`{link}` should be refused (exit 2), got {rc}: {out}"
    assert out == f"linkemud: {message}", f"docs/grammar.md shows for `{link}`:\n  {message}"


def _is_message(item: str) -> bool:
    return ": " in item or item.startswith("rule ")


def _word_errors():
    """Short links given as errors in a word's section (`delay 10xs`)."""
    out = []
    for head, items in error_paragraph_examples(GRAMMAR_MD.read_text()).items():
        for it in items:
            if it.split()[0] in WORDS and not _is_message(it):
                out.append((head, it))
    return out


@pytest.mark.parametrize("section, link", _word_errors())
def test_word_error_example_is_refused(check, section, link):
    rc, out = check(link)
    assert rc == 2, f"docs/grammar.md ({section}) gives `{link}` as an error, but it is " \
                    f"accepted: {out}"


def _message_errors():
    """Documented errors that are messages, not links."""
    out = []
    for items in error_paragraph_examples(GRAMMAR_MD.read_text()).values():
        out += [it for it in items if _is_message(it)]
    return out


def test_every_documented_message_has_an_input():
    msgs = _message_errors()
    assert len(msgs) >= 15
    missing = [m for m in msgs if m not in ERROR_INPUTS]
    assert not missing, f"documented errors without an input in ERROR_INPUTS: {missing}"


@pytest.mark.parametrize("message", _message_errors())
def test_documented_message_is_linkemuds(check, message):
    link = ERROR_INPUTS[message]
    rc, out = check(link)
    assert rc == 2, f"`{link}` should be refused, got {rc}: {out}"
    shown = message.removesuffix("...").removesuffix("(...)").strip()
    assert out.startswith(f"linkemud: {shown}"), \
        f"docs/grammar.md shows `{message}`; linkemud says: {out}"
