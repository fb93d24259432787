"""linkemud's counters as typed values.

The daemon's JSON (the final report on --stats-file, and the live `stats`
reply, which is the same object plus "time_ns"; docs/control.md) parsed
into dataclasses, so that a script reads `report.a2b.tx` and gets an int,
and a misspelled field is an AttributeError rather than a silent None.
Every object keeps the JSON it came from in `.raw`, for fields this
version does not know yet.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from linkemu.daemon.summary import DIRECTIONS, conservation_problems, format_final


@dataclass(frozen=True)
class ErrorSummary:
    """Emulation error (send time - deadline) in ns over `count` frames."""

    count: int = 0
    min: float = 0
    mean: float = 0
    p50: float = 0
    p90: float = 0
    p99: float = 0
    p999: float = 0
    max: float = 0

    @classmethod
    def from_json(cls, d: dict | None) -> "ErrorSummary":
        d = d or {}
        return cls(**{k: d.get(k, 0) for k in cls.__dataclass_fields__})


@dataclass(frozen=True)
class HopCounters:
    """One hop of a chained class (`LINK >> LINK`): rx from the previous
    hop (or the class's input), tx to the next (or out)."""

    hop: int                    # 1-based
    rx: int
    tx: int
    in_flight: int
    dup: int
    dropped: dict[str, int]
    events: dict[str, int]
    conserved: bool
    from_previous_hop: int      # part of rx
    to_next_hop: int            # part of tx

    @classmethod
    def from_json(cls, d: dict) -> "HopCounters":
        return cls(d.get("hop", 0), d.get("rx", 0), d.get("tx", 0), d.get("in_flight", 0),
                   d.get("dup", 0), dict(d.get("dropped") or {}), dict(d.get("events") or {}),
                   bool(d.get("conserved", False)), d.get("from_previous_hop", 0),
                   d.get("to_next_hop", 0))


@dataclass(frozen=True)
class ClassCounters:
    name: str
    rx: int
    tx: int
    in_flight: int
    dup: int
    dropped: dict[str, int]
    events: dict[str, int]
    raw: dict = field(repr=False, compare=False, default_factory=dict)
    hops: list[HopCounters] = field(default_factory=list)   # empty: a plain link

    @classmethod
    def from_json(cls, d: dict) -> "ClassCounters":
        return cls(d.get("name", ""), d.get("rx", 0), d.get("tx", 0), d.get("in_flight", 0),
                   d.get("dup", 0), dict(d.get("dropped") or {}), dict(d.get("events") or {}), d,
                   [HopCounters.from_json(h) for h in d.get("hops") or []])


@dataclass(frozen=True)
class DirectionCounters:
    """One direction of the link (a2b: side A -> B)."""

    config: str                 # the link, as grammar text
    rx: int
    tx: int
    rx_bytes: int
    tx_bytes: int
    in_flight: int
    dup: int
    dropped: dict[str, int]     # cause -> frames
    dropped_total: int
    events: dict[str, int]
    classes: list[ClassCounters]
    emulation_error_ns: ErrorSummary
    raw: dict = field(repr=False, compare=False, default_factory=dict)
    # Classes that a live change removed, together: what they still held
    # and counted (with `classes`, adds up to the models' counts).
    ended_classes: ClassCounters | None = None

    @classmethod
    def from_json(cls, d: dict | None) -> "DirectionCounters":
        d = d or {}
        return cls(d.get("config", ""), d.get("rx", 0), d.get("tx", 0), d.get("rx_bytes", 0),
                   d.get("tx_bytes", 0), d.get("in_flight", 0), d.get("dup", 0),
                   dict(d.get("dropped") or {}), d.get("dropped_total", 0),
                   dict(d.get("events") or {}),
                   [ClassCounters.from_json(c) for c in d.get("classes") or []],
                   ErrorSummary.from_json(d.get("emulation_error_ns")), d,
                   ClassCounters.from_json({"name": "(ended)", **d["ended_classes"]})
                   if d.get("ended_classes") is not None else None)

    @property
    def loss_rate(self) -> float:
        """Frames the link dropped over frames it received (0 when none)."""
        return self.dropped_total / self.rx if self.rx else 0.0


@dataclass(frozen=True)
class Stats:
    """A snapshot of a running daemon (`link.stats()`). A live snapshot may
    be off by a burst in flight (docs/control.md); the final report is exact."""

    version: str
    layout: str
    lcores: int
    seed: int | None
    uptime_s: float
    time_ns: int | None
    a2b: DirectionCounters
    b2a: DirectionCounters
    conserved: bool
    raw: dict = field(repr=False, compare=False, default_factory=dict)

    @classmethod
    def from_json(cls, d: dict) -> "Stats":
        dirs = d.get("directions") or {}
        return cls(str(d.get("version", "")), str(d.get("layout", "")), d.get("lcores", 0),
                   d.get("seed"), float(d.get("uptime_s", 0.0)), d.get("time_ns"),
                   DirectionCounters.from_json(dirs.get("a2b")),
                   DirectionCounters.from_json(dirs.get("b2a")),
                   bool(d.get("conserved", False)), d)

    def direction(self, name: str) -> DirectionCounters:
        if name not in DIRECTIONS:
            raise KeyError(f"unknown direction '{name}' (a2b or b2a)")
        return getattr(self, name)


@dataclass(frozen=True)
class FinalReport(Stats):
    """What a stopped daemon wrote: exact counters, and our own re-check of
    frame conservation (`problems`, empty when every frame is accounted for)."""

    pid: int = 0
    how: str = ""              # 'terminated' | 'killed' | 'gone'
    problems: tuple[str, ...] = ()

    @classmethod
    def from_final(cls, d: dict, pid: int = 0, how: str = "") -> "FinalReport":
        s = Stats.from_json(d)
        return cls(**{k: getattr(s, k) for k in Stats.__dataclass_fields__},
                   pid=pid, how=how, problems=tuple(conservation_problems(d)))

    @property
    def ok(self) -> bool:
        return not self.problems

    def format(self) -> str:
        """The human summary `linkemu stop` prints."""
        return format_final(self.raw)
