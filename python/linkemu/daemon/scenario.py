"""Scenarios: the link's configuration changing over time, played against
a running linkemud through its control socket.

A scenario is a TOML file of timed steps, and optionally series (one
template filled in from a table of values at regular times):

    description = "5G uplink degrades to 4G at 10 s"
    end = "30s"                     # optional: the scenario lasts this long

    [[step]]
    at = "0s"
    a2b = "delay 20ms"
    b2a = "delay 20ms"

    [[step]]
    at = "10s"
    a2b = "delay 60ms loss 1%"
    note = "handover to 4G"         # optional, copied into the log

    [[series]]
    start = "20s"                   # default "0s"
    every = "1s"                    # or: at = ["20s", "21s", "23.5s"]
    a2b = "delay {delay}ms loss {loss}%"
    values = { delay = [60, 80, 100], loss = [1, 2, 5] }

or a CSV trace (*.csv): a header `time_s,a2b,b2a` (or `at,...` with time
strings; either direction column may be left out), one row per change, an
empty cell leaving that direction as it was, `#` lines ignored.

Times are strings with a unit: ns, us, ms, s, min, h ("1.5s", "250ms").
A step's grammar is linkemud's (docs/grammar.md); "" means no impairment.

Playing: each step is due at t0 + at on one CLOCK_MONOTONIC schedule.
With a daemon that takes timed changes (`set DIR at T ...`), every step is
sent LEAD_NS ahead, carrying its time on the daemon's model clock (t0 +
at, mapped onto it at the start and again, before a step, when the
mapping is RESYNC_NS old: the clocks drift apart), so it lands exactly
there, whenever the set arrived; the player then reads back the model
time the daemon applied it at. With an older daemon, steps are sent at their time (sleep until
~1 ms before, then spin). Both directions of a step go in one write. For
each step the log records the planned time, when the `set`s were sent,
when the replies came and the daemon's applied time. The log is rewritten
after each step that leaves room before the next goes out (WRITE_MARGIN_NS
and twice the last write's time), so whoever reads it mid-run sees which
step is active.
"""

from __future__ import annotations

import csv
import json
import os
import re
import string
import threading
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from linkemu.bed.interrupts import deferred
from linkemu.daemon.control import (DIRECTIONS, ControlClient, ControlClosed, ControlError,
                                    DaemonRefused, daemon_has_timed_set, daemon_supports)
from linkemu.daemon.daemon import check_link, control_character
from linkemu.errors import LinkemuError, UsageError

# Sleep until this long before a step's time, then spin: a Linux sleep
# overshoots by up to ~100 us (timer slack, wake-up), a spin does not.
SPIN_NS = 1_000_000
# Timed changes are sent this far ahead of their time (a set's round trip
# is ~0.1 ms; 20 ms leaves room for a busy machine). After the time, the
# player waits CONFIRM_NS before it reads back when the change applied.
LEAD_NS = 20_000_000
CONFIRM_NS = 2_000_000
CONFIRM_MAX_NS = 1_000_000_000
# While sleeping, look at the connection and the cancel flag this often.
POLL_S = 0.1
# The log is rewritten after a step only when the next step goes out (its
# time, or LEAD_NS before it when timed) at least this far off, plus twice
# what the last write took (a long scenario's log takes a while to write:
# ~30 ms at 1000 steps); always at the end.
WRITE_MARGIN_NS = 20_000_000
# The daemon's clock (the TSC, calibrated once against CLOCK_MONOTONIC_RAW
# over 200 ms) and the player's (CLOCK_MONOTONIC, which NTP slews) can run
# apart: a calibration error or a slew of 100 ppm used up LEAD_NS after
# 200 s with one mapping for the whole play. Before a step, a mapping this
# old is taken again (RESYNC_TRIES stats round trips, RESYNC_AHEAD_NS
# before the step goes out): 1 ms of drift between two at 1000 ppm.
RESYNC_NS = 1_000_000_000
RESYNC_AHEAD_NS = 10_000_000
RESYNC_TRIES = 3
TIME_MAX_NS = 1 << 62  # the daemon's limit for `set ... at` (src/plane/control.c)
MAX_GRAMMAR = 4000     # a `set` line must fit the daemon's 4096-byte limit

_TIME_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*(ns|us|µs|ms|s|min|h)\s*$")
_UNIT_NS = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000,
            "min": 60_000_000_000, "h": 3_600_000_000_000}
TOP_KEYS = ("description", "end", "step", "series")
STEP_KEYS = ("at", "a2b", "b2a", "note")
SERIES_KEYS = ("start", "every", "at", "a2b", "b2a", "values", "note")


class ScenarioError(UsageError):
    """A scenario file that cannot be played (exit 2); the message names the
    file, the line where known, the step and the problem."""


class Cancelled(LinkemuError):
    pass


@dataclass
class Step:
    at_ns: int
    a2b: str | None = None        # None: this step leaves the direction as it is
    b2a: str | None = None
    source: str = ""              # "step 2 (line 7)", "series 1 row 3 (line 12)", "row 4"
    note: str | None = None
    line: int | None = None

    def changes(self) -> list[tuple[str, str]]:
        return [(d, g) for d, g in (("a2b", self.a2b), ("b2a", self.b2a)) if g is not None]


@dataclass
class Scenario:
    path: str
    description: str = ""
    steps: list[Step] = field(default_factory=list)
    end_ns: int | None = None

    @property
    def duration_ns(self) -> int:
        last = self.steps[-1].at_ns if self.steps else 0
        return max(last, self.end_ns or 0)


# --- times ---------------------------------------------------------------------------

def exact_ns(number: str, scale: int) -> int:
    """A decimal number ('1.5', '.5', '2.') times `scale` ns, in exact
    decimal arithmetic: "0.1" s is 100000000 ns, not 100000000.00000001,
    and "1.001" ms is not 1000999.9999999999. ValueError when the result
    is finer than 1 ns."""
    whole, _, frac = number.partition(".")
    ns = int(whole or "0") * scale
    if frac:
        part = int(frac) * scale
        if part % 10 ** len(frac):
            raise ValueError("finer than 1 ns")
        ns += part // 10 ** len(frac)
    return ns


def parse_time(value) -> int:
    """"1.5s" -> 1_500_000_000 ns. Raises ValueError with the reason."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        raise ValueError(f"bad time {value!r}: write it as a string with a unit, "
                         f"e.g. \"{value}s\"")
    if not isinstance(value, str):
        raise ValueError(f"bad time {value!r} (a string with a unit, e.g. \"10s\")")
    m = _TIME_RE.match(value)
    if not m:
        raise ValueError(f"bad time '{value}' (a number and a unit: ns, us, ms, s, min, h; "
                         f"e.g. '1.5s', '250ms')")
    num, unit = m.groups()
    try:
        ns = exact_ns(num, _UNIT_NS[unit])
    except ValueError as e:
        raise ValueError(f"bad time '{value}': {e}") from None
    # The daemon's `set ... at` takes model times up to 2^62 ns (about 146
    # years, control.c LE_TIME_AT_MAX): refused here, at check time, not
    # by the daemon in the middle of a play.
    if ns > TIME_MAX_NS:
        raise ValueError(f"bad time '{value}': beyond 2^62 ns (about 146 years), the daemon's limit")
    return ns


def format_time(ns: int) -> str:
    if ns % 1_000_000_000 == 0:
        return f"{ns // 1_000_000_000}s"
    if ns % 1_000_000 == 0:
        return f"{ns // 1_000_000}ms"
    if ns % 1_000 == 0:
        return f"{ns // 1_000}us"
    return f"{ns}ns"


# --- loading ---------------------------------------------------------------------------

def load(path: str | os.PathLike) -> Scenario:
    """Read and check a scenario file (structure only: see check_grammar)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError as e:
        raise ScenarioError(f"{p}: no such file") from e
    except (OSError, UnicodeDecodeError) as e:
        raise ScenarioError(f"{p}: cannot read: {e}") from e
    scn = parse_csv(text, str(p)) if p.suffix.lower() == ".csv" else parse_toml(text, str(p))
    # A trace or .dist file named relatively belongs beside the scenario,
    # as in a profile: the daemon, whose working directory is elsewhere,
    # gets absolute paths.
    from linkemu.profiles import absolute_files
    base = p.resolve().parent
    for st in scn.steps:
        for d in DIRECTIONS:
            if getattr(st, d):
                setattr(st, d, absolute_files(getattr(st, d), base))
    return scn


def _err(name: str, line: int | None, what: str) -> ScenarioError:
    return ScenarioError(f"{name}:{line}: {what}" if line else f"{name}: {what}")


class _Lines:
    """Line numbers of tables and keys in a TOML text (tomllib gives none):
    the n-th `[[step]]` header, and a key's line within a table's block."""

    def __init__(self, text: str):
        self.lines = text.splitlines()
        self.arrays: dict[str, list[int]] = {}
        self.headers: list[int] = []          # every [table] and [[array]] header
        for i, l in enumerate(self.lines, 1):
            m = re.match(r"^\s*\[\[\s*([A-Za-z0-9_\-]+)\s*\]\]", l)
            if m:
                self.arrays.setdefault(m.group(1), []).append(i)
            if re.match(r"^\s*\[", l):
                self.headers.append(i)

    def table(self, name: str, n: int) -> int | None:
        """Line of the n-th (1-based) [[name]] header."""
        h = self.arrays.get(name, [])
        return h[n - 1] if 0 < n <= len(h) else None

    def key(self, key: str, start: int | None = None) -> int | None:
        """Line of `key =` in the block under the header at line start (the
        top level when start is None); start itself when not found."""
        begin = start or 0
        end = next((h for h in self.headers if h > begin), len(self.lines) + 1)
        pat = re.compile(rf"^\s*{re.escape(key)}\s*=")
        for i in range(begin + 1, end):
            if pat.match(self.lines[i - 1]):
                return i
        return start


def _grammar(value, where: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{where} must be a string of link grammar, e.g. \"delay 20ms\" "
                         f"(got {value!r})")
    if "\n" in value or "\r" in value:
        raise ValueError(f"{where} must be one line")
    # As in a profile: the daemon reads a C string (a NUL cut the check's
    # argument short, in fact raised a traceback) and no word holds one.
    bad = control_character(value)
    if bad is not None:
        raise ValueError(f"{where} holds the control character {bad!r}")
    if len(value.encode()) > MAX_GRAMMAR:
        raise ValueError(f"{where} is longer than {MAX_GRAMMAR} bytes")
    return " ".join(value.split())


def parse_toml(text: str, name: str = "<scenario>") -> Scenario:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        # tomllib's message ends with "(at line L, column C)".
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(e))
        msg = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(e))
        if m:
            raise ScenarioError(f"{name}:{m.group(1)}:{m.group(2)}: TOML syntax error: "
                                f"{msg}") from e
        raise ScenarioError(f"{name}: TOML syntax error: {e}") from e
    lines = _Lines(text)
    for k in doc:
        if k not in TOP_KEYS:
            hint = (" (a direction is set inside a [[step]])" if k in DIRECTIONS else "")
            raise _err(name, lines.key(k), f"unknown key '{k}' (expected "
                                           f"{', '.join(TOP_KEYS)}){hint}")
    desc = doc.get("description", "")
    if not isinstance(desc, str):
        raise _err(name, lines.key("description"), "description must be a string")
    end_ns = None
    if "end" in doc:
        try:
            end_ns = parse_time(doc["end"])
        except ValueError as e:
            raise _err(name, lines.key("end"), f"end: {e}") from None
    raw_steps = doc.get("step", [])
    raw_series = doc.get("series", [])
    if not isinstance(raw_steps, list) or not all(isinstance(s, dict) for s in raw_steps):
        raise _err(name, lines.key("step"), "'step' must be a list of tables: write each "
                                            "as [[step]]")
    if not isinstance(raw_series, list) or not all(isinstance(s, dict) for s in raw_series):
        raise _err(name, lines.key("series"), "'series' must be a list of tables: write "
                                              "each as [[series]]")
    if not raw_steps and not raw_series:
        raise ScenarioError(f"{name}: no steps (add [[step]] tables with at = \"...\" and "
                            f"a2b/b2a = \"GRAMMAR\")")
    steps: list[Step] = []
    prev: Step | None = None
    for n, raw in enumerate(raw_steps, 1):
        hdr = lines.table("step", n)
        label = f"step {n}"
        for k in raw:
            if k not in STEP_KEYS:
                hint = " (directions are a2b and b2a)" if re.fullmatch(r"[ab]2[ab]|\w2\w", k) \
                    else ""
                raise _err(name, lines.key(k, hdr), f"{label}: unknown key '{k}' (expected "
                                                    f"{', '.join(STEP_KEYS)}){hint}")
        if "at" not in raw:
            raise _err(name, hdr, f"{label}: missing 'at' (when the step starts, e.g. "
                                  f"at = \"10s\")")
        try:
            at = parse_time(raw["at"])
        except ValueError as e:
            raise _err(name, lines.key("at", hdr), f"{label}: at: {e}") from None
        st = Step(at, source=f"{label}" + (f" (line {hdr})" if hdr else ""), line=hdr)
        for d in DIRECTIONS:
            if d in raw:
                try:
                    setattr(st, d, _grammar(raw[d], d))
                except ValueError as e:
                    raise _err(name, lines.key(d, hdr), f"{label}: {e}") from None
        if "note" in raw:
            if not isinstance(raw["note"], str):
                raise _err(name, lines.key("note", hdr), f"{label}: note must be a string")
            st.note = raw["note"]
        if st.a2b is None and st.b2a is None:
            raise _err(name, hdr, f"{label}: sets neither a2b nor b2a")
        if prev is not None and at <= prev.at_ns:
            raise _err(name, lines.key("at", hdr),
                       f"{label}: at {format_time(at)} is not after {prev.source.split(' (')[0]}"
                       f"'s {format_time(prev.at_ns)} (steps must be in time order)")
        steps.append(st)
        prev = st
    for n, raw in enumerate(raw_series, 1):
        steps += _series(raw, n, name, lines)
    scn = Scenario(name, desc, _merge(steps, name), end_ns)
    if end_ns is not None and scn.steps and end_ns < scn.steps[-1].at_ns:
        raise _err(name, lines.key("end"), f"end {format_time(end_ns)} comes before the last "
                                           f"step ({format_time(scn.steps[-1].at_ns)})")
    return scn


def _series(raw: dict, n: int, name: str, lines: _Lines) -> list[Step]:
    hdr = lines.table("series", n)
    label = f"series {n}"

    def err(key: str | None, what: str) -> ScenarioError:
        return _err(name, lines.key(key, hdr) if key else hdr, f"{label}: {what}")

    for k in raw:
        if k not in SERIES_KEYS:
            raise err(k, f"unknown key '{k}' (expected {', '.join(SERIES_KEYS)})")
    templates = {d: raw[d] for d in DIRECTIONS if d in raw}
    if not templates:
        raise err(None, "sets neither a2b nor b2a (give a template, e.g. "
                        "a2b = \"delay {delay}ms\")")
    values = raw.get("values")
    if not isinstance(values, dict) or not values:
        raise err("values" if "values" in raw else None,
                  "needs values = { NAME = [v1, v2, ...], ... } for the template's {NAME}s")
    length = None
    for k, v in values.items():
        if not isinstance(v, list) or not v:
            raise err("values", f"values.{k} must be a non-empty list")
        for x in v:
            if isinstance(x, bool) or not isinstance(x, (int, float, str)):
                raise err("values", f"values.{k}: {x!r} is not a number or a string")
        if length is None:
            length = len(v)
        elif len(v) != length:
            raise err("values", f"values.{k} has {len(v)} entries, the others {length}")
    assert length is not None
    for d, t in templates.items():
        if not isinstance(t, str):
            raise err(d, f"{d} must be a template string, e.g. \"delay {{delay}}ms\"")
        try:
            fields = list(_fields(t))
        except ValueError as e:
            raise err(d, f"{d}: bad template: {e}") from None
        for f in fields:
            if f not in values:
                raise err(d, f"{d} uses {{{f}}}, which is not in values "
                             f"({', '.join(values)})")
    if ("every" in raw) == ("at" in raw):
        raise err(None, "give either every = \"1s\" (regular times from start) or "
                        "at = [\"0s\", ...] (one time per value)")
    try:
        start = parse_time(raw.get("start", "0s"))
    except ValueError as e:
        raise err("start", f"start: {e}") from None
    if "every" in raw:
        try:
            every = parse_time(raw["every"])
        except ValueError as e:
            raise err("every", f"every: {e}") from None
        if every <= 0:
            raise err("every", "every must be more than 0")
        times = [start + i * every for i in range(length)]
    else:
        at = raw["at"]
        if not isinstance(at, list) or len(at) != length:
            raise err("at", f"at must be a list of {length} times (one per value)")
        try:
            times = [start + parse_time(x) for x in at]
        except ValueError as e:
            raise err("at", f"at: {e}") from None
        for i in range(1, len(times)):
            if times[i] <= times[i - 1]:
                raise err("at", f"at: entry {i + 1} ({at[i]}) is not after entry {i} "
                                f"({at[i - 1]})")
    note = raw.get("note")
    steps = []
    for i, t in enumerate(times):
        row = {k: _fmt_value(v[i]) for k, v in values.items()}
        st = Step(t, source=f"{label} row {i + 1}" + (f" (line {hdr})" if hdr else ""),
                  note=note, line=hdr)
        for d, tmpl in templates.items():
            try:
                st.__setattr__(d, _grammar(tmpl.format(**row), d))
            except ValueError as e:
                raise err(d, f"row {i + 1}: {e}") from None
        steps.append(st)
    return steps


def _fields(template: str):
    """The {NAME}s of a template, also those nested in a field's format
    ("{d:>{w}}"): format() looks every one up, and one missing from values
    would be a KeyError there."""
    for _, f, spec, _ in string.Formatter().parse(template):
        if f is not None:
            yield f
            if spec:
                yield from _fields(spec)


def _fmt_value(v) -> str:
    if isinstance(v, float):
        s = repr(v)
        if "e" in s or "E" in s:
            s = f"{v:.12f}".rstrip("0").rstrip(".")
        return s[:-2] if s.endswith(".0") else s
    return str(v)


def _merge(steps: list[Step], name: str) -> list[Step]:
    """Sort by time; steps at the same time are merged into one, unless two
    of them set the same direction."""
    out: list[Step] = []
    for st in sorted(steps, key=lambda s: s.at_ns):
        if out and out[-1].at_ns == st.at_ns:
            last = out[-1]
            for d in DIRECTIONS:
                if getattr(st, d) is not None:
                    if getattr(last, d) is not None:
                        raise _err(name, st.line,
                                   f"{st.source} and {last.source} both set {d} at "
                                   f"{format_time(st.at_ns)}")
                    setattr(last, d, getattr(st, d))
            last.source += f" + {st.source}"
            if st.note:
                last.note = f"{last.note}; {st.note}" if last.note else st.note
        else:
            out.append(Step(st.at_ns, st.a2b, st.b2a, st.source, st.note, st.line))
    return out


# Python's csv errors for a broken quote, said in the scenario's words.
_CSV_QUOTE_ERRORS = {
    "unexpected end of data": "a quoted cell is not closed (a cell that starts with \" "
                              "ends with \" on the same line)",
    "',' expected after '\"'": "text after a quoted cell's closing quote (write \"\" "
                                "for a quote inside a quoted cell)",
}


def csv_cells(line: str) -> list[str]:
    """One CSV line's cells; ValueError for broken quoting. Strict, because
    the csv reader otherwise takes an unclosed quote to the end of the line
    and text after a closing quote as more of the cell: a broken file would
    be played as something other than what was written. A quoted cell
    cannot span lines (the trace is read a line at a time)."""
    try:
        return next(csv.reader([line], strict=True))
    except csv.Error as e:
        raise ValueError(_CSV_QUOTE_ERRORS.get(str(e), f"bad CSV: {e}")) from None


def parse_csv(text: str, name: str = "<scenario.csv>") -> Scenario:
    rows = [(i, l) for i, l in enumerate(text.splitlines(), 1)
            if l.strip() and not l.lstrip().startswith("#")]
    if not rows:
        raise ScenarioError(f"{name}: empty (expected a header time_s,a2b,b2a and rows)")
    hline, header = rows[0]
    try:
        cols = [c.strip() for c in csv_cells(header)]
    except ValueError as e:
        raise _err(name, hline, str(e)) from None
    if not cols or cols[0] not in ("time_s", "at"):
        raise _err(name, hline, f"the first column must be time_s (seconds) or at (a time "
                                f"with a unit), not '{cols[0] if cols else ''}'")
    for c in cols[1:]:
        if c not in DIRECTIONS:
            raise _err(name, hline, f"unknown column '{c}' (expected a2b, b2a)")
    if len(set(cols)) != len(cols):
        raise _err(name, hline, "a column appears twice")
    if len(cols) < 2:
        raise _err(name, hline, "no a2b or b2a column")
    steps: list[Step] = []
    for n, (ln, line) in enumerate(rows[1:], 1):
        try:
            cells = csv_cells(line)
        except ValueError as e:
            raise _err(name, ln, f"row {n}: {e}") from None
        if len(cells) > len(cols):
            raise _err(name, ln, f"row {n}: {len(cells)} cells, the header has {len(cols)}")
        cells += [""] * (len(cols) - len(cells))
        t = cells[0].strip()
        try:
            if cols[0] == "time_s":
                if not re.fullmatch(r"[0-9]+(\.[0-9]*)?|\.[0-9]+", t):
                    raise ValueError(f"bad time_s '{t}' (seconds, e.g. 1.5)")
                at = parse_time(t + "s")
            else:
                at = parse_time(t)
        except ValueError as e:
            raise _err(name, ln, f"row {n}: {e}") from None
        st = Step(at, source=f"row {n} (line {ln})", line=ln)
        for c, v in zip(cols[1:], cells[1:]):
            if v.strip():
                try:
                    setattr(st, c, _grammar(v, c))   # the checks of a TOML step's
                except ValueError as e:
                    raise _err(name, ln, f"row {n}: {e}") from None
        if st.a2b is None and st.b2a is None:
            raise _err(name, ln, f"row {n}: sets neither a2b nor b2a (every cell empty)")
        if steps and at <= steps[-1].at_ns:
            raise _err(name, ln, f"row {n}: time {format_time(at)} is not after the row "
                                 f"before ({format_time(steps[-1].at_ns)})")
        steps.append(st)
    if not steps:
        raise ScenarioError(f"{name}: no rows after the header")
    return Scenario(name, "", steps)


# --- grammar ---------------------------------------------------------------------------

def check_grammar(scn: Scenario, binary: str | os.PathLike | None) -> bool:
    """Ask linkemud whether every grammar in the scenario is valid, before
    anything is sent (`linkemud --check GRAMMAR`: exit 0, or 2 and the
    reason). Returns False when this linkemud cannot check (no --check)."""
    if binary is None or not daemon_supports(binary, "--check"):
        return False
    seen: dict[str, str | None] = {}
    for st in scn.steps:
        for d, g in st.changes():
            if g not in seen:
                seen[g] = check_link(binary, g)
            if seen[g] is not None:
                where = f"{scn.path}:{st.line}: " if st.line else f"{scn.path}: "
                raise ScenarioError(f"{where}{st.source.split(' (')[0]}: {d}: {seen[g]}")
    return True


# --- playing ---------------------------------------------------------------------------

def wait_until(deadline_ns: int, client: ControlClient | None = None,
               cancel: threading.Event | None = None) -> None:
    """Sleep until ~SPIN_NS before deadline_ns (CLOCK_MONOTONIC), then spin.
    While sleeping, notices a cancel and a daemon that hung up."""
    while True:
        left = deadline_ns - time.monotonic_ns()
        if left <= SPIN_NS:
            break
        nap = min((left - SPIN_NS) / 1e9, POLL_S)
        if cancel is not None:
            if cancel.wait(nap):
                raise Cancelled("cancelled")
        else:
            time.sleep(nap)
        if client is not None and client.peer_closed():
            raise ControlClosed("linkemud closed the control connection (did it exit?)")
    while time.monotonic_ns() < deadline_ns:
        pass


class Player:
    """Plays a scenario over one control connection and keeps the log."""

    def __init__(self, scn: Scenario, client: ControlClient, log_path: str | os.PathLike | None,
                 bed: str | None = None, on_step=None):
        self.scn = scn
        self.client = client
        self.log_path = Path(log_path) if log_path else None
        self.on_step = on_step
        self.log: dict = {
            "scenario": str(scn.path), "description": scn.description, "bed": bed,
            "clock": "CLOCK_MONOTONIC ns (one clock for the host and its namespaces)",
            "t0_ns": None, "t0_unix": None, "end_ns": scn.end_ns,
            # linkemud's applied_ns is its own clock (TSC ns since it
            # started); daemon_clock_offset_ns maps it: mono = applied - offset.
            # These are the mapping at the start; each step has the one it
            # was played with (re-taken as the play goes: RESYNC_NS).
            "daemon_clock_offset_ns": None, "daemon_clock_uncertainty_ns": None,
            "state": "waiting", "error": None, "timed": None, "steps": [],
        }
        self.offset: int | None = None        # the mapping in use
        self.uncertainty: int | None = None
        self.synced_ns = 0                    # when it was last taken (or confirmed)
        self._write_ns = 0                    # how long the last log write took

    def measure_clock(self, tries: int) -> tuple[int, int] | None:
        """The daemon's clock (stats time_ns) against CLOCK_MONOTONIC: the
        tightest of a few stats round trips, offset at their midpoint, and
        its uncertainty (half that round trip). None without time_ns."""
        best = None
        for _ in range(tries):
            a = time.monotonic_ns()
            st = self.client.stats()
            b = time.monotonic_ns()
            t = st.get("time_ns")
            if not isinstance(t, int):
                return None
            if best is None or b - a < best[0]:
                best = (b - a, t - (a + b) // 2)
        self.synced_ns = time.monotonic_ns()
        return best[1], best[0] // 2

    def sync_clock(self, tries: int = 5) -> None:
        """Take the mapping at the start."""
        m = self.measure_clock(tries)
        if m is not None:
            self.offset, self.uncertainty = m
            self.log["daemon_clock_offset_ns"], self.log["daemon_clock_uncertainty_ns"] = m

    def resync_clock(self) -> None:
        """Take the mapping again. The new one replaces the one in use only
        when they disagree by more than their uncertainties together, i.e.
        when the clocks have drifted apart: otherwise the steps keep their
        model times spaced exactly as the file says."""
        m = self.measure_clock(RESYNC_TRIES)
        if m is not None and abs(m[0] - self.offset) > m[1] + self.uncertainty:
            self.offset, self.uncertainty = m

    def to_monotonic(self, daemon_ns) -> int | None:
        if not isinstance(daemon_ns, int) or self.offset is None:
            return None
        return daemon_ns - self.offset

    def play(self, cancel: threading.Event | None = None, t0_ns: int | None = None) -> dict:
        """Plays the scenario. A cancel (the event, or in the main thread
        Ctrl-C, SIGTERM or SIGHUP made KeyboardInterrupt by interruptible())
        stops it with the log telling which steps linkemud got: until a
        step is sent, the play stops at once; from its send until it is in
        the log (and, timed, confirmed), the signal waits (deferred())."""
        try:
            self.sync_clock()
            timed = daemon_has_timed_set(self.client.help()) and self.offset is not None
            self.log.update(state="running", timed=timed)
            with deferred():
                self._write()
            # Timed, t0 is LEAD_NS from now, so that a step at 0 (and any in
            # the first LEAD_NS) is sent ahead like every other: sent at its
            # time, its model time has passed when the daemon stages it,
            # which applies it then, not at t0.
            t0 = t0_ns if t0_ns is not None else time.monotonic_ns() + (LEAD_NS if timed else 0)
            self.log.update(t0_ns=t0, t0_unix=time.time() - (time.monotonic_ns() - t0) / 1e9)
            steps = self.scn.steps
            for i, st in enumerate(steps, 1):
                planned = t0 + st.at_ns
                ahead = LEAD_NS if timed else 0       # a step goes out this long before its time
                send_at = planned - ahead
                next_out = t0 + steps[i].at_ns - ahead if i < len(steps) else None
                # Untimed, a step is sent at its time: the mapping (only for
                # the log then) is taken again only when there is room.
                if self.offset is not None and send_at - self.synced_ns >= RESYNC_NS \
                        and (timed or send_at - time.monotonic_ns() > RESYNC_AHEAD_NS):
                    wait_until(send_at - RESYNC_AHEAD_NS, self.client, cancel)
                    self.resync_clock()
                wait_until(send_at, self.client, cancel)
                # From the send until the step is in the log, a signal waits.
                with deferred():
                    cancelled = self._play_step(i, st, planned, timed, cancel, next_out)
                if cancelled:
                    raise Cancelled("cancelled")
            if self.scn.end_ns is not None:
                wait_until(t0 + self.scn.end_ns, self.client, cancel)
            self.log["state"] = "finished"
        except (Cancelled, KeyboardInterrupt):
            self.log["state"] = "cancelled"
            raise
        except DaemonRefused as e:
            self.log.update(state="failed", error=f"linkemud refused {e.command!r}: {e}")
            raise
        except (ControlError, OSError) as e:
            self.log.update(state="failed", error=str(e))
            raise
        finally:
            with deferred():
                self.log["stopped_ns"] = time.monotonic_ns()
                self._write()
        return self.log

    def _play_step(self, i: int, st: Step, planned: int, timed: bool, cancel,
                   next_out: int | None) -> bool:
        """Sends step i (its send time has come), records it and, when that
        leaves room before the next goes out (next_out), rewrites the log.
        Returns whether a cancel came meanwhile."""
        try:
            if timed:
                # The next step is sent at its time minus LEAD_NS whether or
                # not this one is confirmed by then.
                res, cancelled = self._play_timed(st, planned, cancel, next_out)
            else:
                res, cancelled = self.client.set_many(st.changes()), False
        except DaemonRefused as e:
            # One direction refused, the other taken (applied, or staged for
            # its time): the log says which.
            if e.replies and any(r[2].get("ok") is True for r in e.replies):
                self._record(i, st, planned, e.replies)
            raise
        self._record(i, st, planned, res)
        if cancelled or next_out is None \
                or next_out - time.monotonic_ns() > WRITE_MARGIN_NS + 2 * self._write_ns:
            self._write()
        return cancelled

    def _play_timed(self, st: Step, planned: int, cancel, next_send: int | None = None) -> list:
        """Sends the step (LEAD_NS ahead: the caller waited until then) with
        its model time, then, once that time has passed, reads back when
        the daemon applied each change: its replies (at_ns) get
        "applied_ns" from stats' changed_at_ns. The read-back stops at
        next_send (when the next step is due to go out): a step that close
        to the next one keeps applied_ns unknown rather than delay the next
        past its time, which the daemon would then apply late (a time
        already passed means now).

        Returns (replies, cancelled). Once sent, the step is staged in the
        daemon, which applies it at its time whatever the player does: a
        cancel after that waits for it to land (LEAD_NS + CONFIRM_NS at
        most, plus the read-back), so that the log records it and no change
        of ours is left pending when the player has gone."""
        model_at = planned + self.offset
        res = self.client.set_many(st.changes(), at_ns=model_at)
        if next_send is not None and next_send < planned + CONFIRM_NS:
            return res, False
        cancelled = False
        try:
            wait_until(planned + CONFIRM_NS, self.client, cancel)
        except Cancelled:
            cancelled = True
            wait_until(planned + CONFIRM_NS, self.client)
        # Applied once no longer staged (a later step cannot be staged yet);
        # a busy daemon may take a little longer: ask again for a while.
        give_up = time.monotonic_ns() + CONFIRM_MAX_NS
        if next_send is not None:
            give_up = min(give_up, next_send)
        pending = {d for d, _g in st.changes()}
        while pending and time.monotonic_ns() < give_up:
            dirs = self.client.stats().get("directions", {})
            for (d, _g), (_s, _r, reply) in zip(st.changes(), res):
                got = dirs.get(d, {})
                if d in pending and got.get("staged_at_ns") is None \
                        and isinstance(got.get("changed_at_ns"), int):
                    reply["applied_ns"] = got["changed_at_ns"]
                    pending.discard(d)
            if pending:
                time.sleep(CONFIRM_NS / 1e9)
        return res, cancelled or (cancel is not None and cancel.is_set())

    def _record(self, i: int, st: Step, planned: int, res) -> None:
        sent = min(r[0] for r in res)
        replied = max(r[1] for r in res)
        applied = [m for m in (self.to_monotonic(r[2].get("applied_ns")) for r in res)
                   if m is not None]
        entry = {
            "step": i, "source": st.source, "note": st.note,
            "at": format_time(st.at_ns), "at_ns": st.at_ns,
            "planned_ns": planned, "sent_ns": sent, "replied_ns": replied,
            "late_ns": sent - planned,
            "daemon_clock_offset_ns": self.offset, "daemon_clock_uncertainty_ns": self.uncertainty,
            "set": {d: {"config": r[2].get("config"), "at_ns": r[2].get("at_ns"),
                        "applied_ns": r[2].get("applied_ns"),
                        "applied_mono_ns": self.to_monotonic(r[2].get("applied_ns")),
                        "sent_ns": r[0], "replied_ns": r[1],
                        **({} if r[2].get("ok") is True
                           else {"refused": str(r[2].get("error", "(no error message)"))})}
                    for (d, _g), r in zip(st.changes(), res)},
            # Active from when the daemon switched (its applied_ns on our
            # clock; an untimed change never after the reply), or from the
            # reply (untimed) or the planned time (timed) if unknown.
            "active_from_ns": (max(applied) if applied else planned) if self.log["timed"]
            else (min(max(applied), replied) if applied else replied),
            "active_until_ns": None,
        }
        steps = self.log["steps"]
        if steps:
            steps[-1]["active_until_ns"] = entry["active_from_ns"]
        steps.append(entry)
        if self.on_step:
            self.on_step(entry)

    def _write(self) -> None:
        if self.log_path is None:
            return
        began = time.monotonic_ns()
        self._save()
        self._write_ns = time.monotonic_ns() - began

    def _save(self) -> None:
        tmp = self.log_path.with_name(self.log_path.name + ".tmp")
        tmp.write_text(json.dumps(self.log, indent=2) + "\n")
        os.replace(tmp, self.log_path)


def describe(scn: Scenario) -> str:
    """The timeline as text (for `linkemu scenario check`)."""
    lines = [f"{scn.path}: {len(scn.steps)} step(s), {format_time(scn.duration_ns)}"
             + (f" - {scn.description}" if scn.description else "")]
    for i, st in enumerate(scn.steps, 1):
        parts = [f"{d} '{g}'" if g else f"{d} (no impairment)" for d, g in st.changes()]
        lines.append(f"  {i:3d}  at {st.at_ns / 1e9:10.3f} s  {', '.join(parts)}"
                     + (f"  # {st.note}" if st.note else ""))
    if scn.end_ns is not None:
        lines.append(f"       end {scn.end_ns / 1e9:9.3f} s")
    return "\n".join(lines)


def format_event(entry: dict) -> str:
    parts = [f"{d} '{v.get('config') or ''}'" for d, v in entry["set"].items()]
    return (f"scenario: step {entry['step']} at {entry['at_ns'] / 1e9:.3f} s "
            f"(sent {entry['late_ns'] / 1e6:+.3f} ms from plan, reply after "
            f"{(entry['replied_ns'] - entry['sent_ns']) / 1e6:.3f} ms): {', '.join(parts)}")
