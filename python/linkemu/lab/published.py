"""Published numbers the lab's results are shown beside.

The figures, their sources and how they were measured are in
docs/published.md (inside this repository): that file is the one copy, and
this module reads its tables. Delays are in microseconds, loss rates in
percent, exactly as printed.

Names (read on first use; a missing or malformed file raises LinkemuError):
    DELAY_SOURCE, LOSS_SOURCE        citations
    INSERTED_US                      the inserted delays of every delay table
    DELAY_TABLES                     name -> {"title", "emulator", "link_gbps",
                                     "ip_len", "rate_gbps", "max", "min",
                                     "mean", "sd", "repro"} (rows by INSERTED_US)
    DELAY_TABLES_FOR_LEN             IP length -> table names shown beside ours
    LOSS_TABLE_TITLE, LOSS_FRAMES
    LOSS_TABLE                       specified % -> (DEMU loss %, mean us, sd us,
                                     netem loss %, mean us, sd us)
    LOSS_EVENTS_30S                  emulator -> {"events", "packets"}
    TCP_NOTE
"""

from __future__ import annotations

import re
from pathlib import Path

from linkemu.bed.paths import repo_root
from linkemu.errors import LinkemuError

DOC = repo_root() / "docs" / "published.md"

DELAY_SOURCE = ("S. Aketa, T. Hirofuchi, R. Takano: DEMU: A DPDK-based network latency "
                "emulator, IEEE LANMAN 2017, doi:10.1109/LANMAN.2017.7972145 (IPSJ "
                "technical report in Japanese), Tables 2-6; see docs/published.md [A]")
LOSS_SOURCE = ("K. Sasaki, T. Hirofuchi, S. Yamaguchi, R. Takano: Implementation and "
               "evaluation of packet loss in a DPDK-based network emulator (in Japanese), "
               "Table 1 and Figs. 2-4; see docs/published.md [B]")

_STATS = ("max", "min", "mean", "sd", "repro")
_loaded: dict | None = None


def _number(cell: str, where: str) -> float | None:
    cell = cell.strip()
    if cell == "-":
        return None
    try:
        return float(cell.replace(",", ""))
    except ValueError:
        raise LinkemuError(f"{DOC}: {where}: '{cell}' is not a number") from None


def _sections(text: str) -> dict[str, tuple[str, list[str]]]:
    """`### NAME: TITLE` sections: name -> (title, their lines)."""
    out: dict[str, tuple[str, list[str]]] = {}
    name = None
    for line in text.splitlines():
        m = re.match(r"^### ([a-z0-9-]+): (.+)$", line)
        if m:
            name = m.group(1)
            out[name] = (m.group(2).strip(), [])
        elif line.startswith("#"):
            name = None
        elif name is not None:
            out[name][1].append(line)
    return out


def _settings(lines: list[str]) -> dict[str, str]:
    return {m.group(1): m.group(2).strip()
            for m in (re.match(r"^- ([a-z_]+): (.+)$", l) for l in lines) if m}


def _rows(lines: list[str]) -> list[list[str]]:
    """The table rows of a section (header included, separator left out)."""
    rows = [[c.strip() for c in l.strip().strip("|").split("|")]
            for l in lines if l.startswith("|")]
    return [r for r in rows if not all(set(c) <= {"-"} for c in r)]


def _parse(text: str) -> dict:
    secs = _sections(text)
    d: dict = {"DELAY_TABLES": {}, "DELAY_TABLES_FOR_LEN": {}}
    inserted = None
    for name, (title, lines) in secs.items():
        rows = _rows(lines)
        if not rows or rows[0][0] != "inserted us":
            continue
        cols = tuple(int(_number(c, f"{name} header")) for c in rows[0][1:])
        if inserted is not None and cols != inserted:
            raise LinkemuError(f"{DOC}: {name}: inserted delays differ from the other tables")
        inserted = cols
        s = _settings(lines)
        try:
            t = {"title": title, "emulator": s["emulator"], "link_gbps": float(s["link_gbps"]),
                 "ip_len": int(s["ip_len"]), "rate_gbps": float(s["rate_gbps"])}
        except (KeyError, ValueError) as e:
            raise LinkemuError(f"{DOC}: {name}: setting {e} missing or bad") from None
        by = {r[0]: r[1:] for r in rows[1:]}
        for k in _STATS:
            if len(by.get(k, ())) != len(cols):
                raise LinkemuError(f"{DOC}: {name}: row '{k}' missing or of the wrong length")
            t[k] = tuple(_number(c, f"{name} {k}") for c in by[k])
        d["DELAY_TABLES"][name] = t
        d["DELAY_TABLES_FOR_LEN"].setdefault(t["ip_len"], ())
        d["DELAY_TABLES_FOR_LEN"][t["ip_len"]] += (name,)
    if not d["DELAY_TABLES"]:
        raise LinkemuError(f"{DOC}: no delay tables")
    d["INSERTED_US"] = tuple(float(u) if u != int(u) else int(u) for u in inserted)
    if "loss" not in secs or "loss-events" not in secs or "tcp-note" not in secs:
        raise LinkemuError(f"{DOC}: sections loss, loss-events and tcp-note are required")
    title, lines = secs["loss"]
    d["LOSS_TABLE_TITLE"] = title
    d["LOSS_FRAMES"] = int(_number(_settings(lines).get("frames", "x"), "loss frames"))
    d["LOSS_TABLE"] = {_number(r[0], "loss"): tuple(_number(c, "loss") for c in r[1:])
                       for r in _rows(lines)[1:]}
    d["LOSS_EVENTS_30S"] = {r[0]: {"events": int(_number(r[1], "loss-events")),
                                   "packets": int(_number(r[2], "loss-events"))}
                            for r in _rows(secs["loss-events"][1])[1:]}
    d["TCP_NOTE"] = " ".join(l.strip() for l in secs["tcp-note"][1] if l.strip())
    return d


def load(path: Path = DOC) -> dict:
    """The figures of docs/published.md (parsed once)."""
    global _loaded
    if _loaded is None or path != DOC:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            raise LinkemuError(f"the published figures are missing: {e}") from None
        d = _parse(text)
        if path != DOC:
            return d
        _loaded = d
    return _loaded


def __getattr__(name: str):
    # PEP 562: the tables are read from docs/published.md on first use.
    d = load()
    if name in d:
        return d[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def delay_table(name: str) -> dict:
    return load()["DELAY_TABLES"][name]


def loss_row(spec_percent: float) -> tuple | None:
    """Table 1's row for a specified loss in percent (None if not in the table)."""
    for k, row in load()["LOSS_TABLE"].items():
        if abs(k - spec_percent) <= 1e-12 + 1e-9 * k:
            return row
    return None


# --- The long-fat-pipe study (LFP_SOURCE) -------------------------------------
# Y. Amagai, K. Murakami, K. Kugimoto, A. Oka, M. Itoh, S. Gotoh, M. Itoh:
# "An analysis of behavior in a high-speed long-distance Internet" (NTT Basic
# Research Laboratories / NTT Software Laboratories, in Japanese). Tokyo-Kyoto,
# ~880 km of fibre, one DS3 (~45 Mbit/s) of an STM-1, hosts on 100 Mbit/s FDDI
# (MTU 4352), one TCP stream with rttcp (~4 KB writes x 20,000, ~80 MB).
LFP_SOURCE = ("Y. Amagai, K. Murakami, K. Kugimoto, A. Oka, M. Itoh, S. Gotoh, M. Itoh: "
              "An analysis of behavior in a high-speed long-distance Internet "
              "(NTT, in Japanese): Table 2, Fig. 3 (window vs throughput), Fig. 4 "
              "(Seq/Ack numbers in the LFP syndrome), section 3.3 (x, y, S)")

# Table 2: 155 Mbit/s fibre, 4 KB (4,096 B, BSD's default) window.
# (distance km, RTT ms, throughput Mbit/s)
LFP_TABLE2 = ((1_000, 9.6, 3.4), (3_000, 28.6, 1.15), (14_000, 133.0, 0.246))
LFP_TABLE2_RATE_BPS = 155e6
LFP_TABLE2_WINDOW = 4096
# "to use 155 Mbit/s up at 1,000 km a window of 190 KB is needed"
LFP_FILL_WINDOW_KB_1000KM = 190

# Fig. 3: three regions of window vs throughput.
LFP_KNEE_KB = 100          # region 1 (slope 1/RTT) ends, line rate reached
LFP_COLLAPSE_KB = 170      # region 3 (the LFP syndrome) starts
LFP_COLLAPSE_MBPS = 8.0    # throughput in the syndrome
LFP_RTT_MS = 12.0          # RTT between the hosts (the dashed theory line)
LFP_BOTTLENECK_MBPS = 45.0
LFP_WINDOWS_KB = (8, 520)  # the range swept

# Fig. 4 (window above 170 KB): 0.2 s of sending, nothing until 1.5 s;
# unacked ~270,000 B at 0.2 s; RTT grown to ~300 ms; Seq slope ~65 Mbit/s,
# Ack slope ~44 Mbit/s.
LFP_FIG4 = {"sending_s": 0.2, "silent_until_s": 1.5, "unacked_bytes": 270_000,
            "rtt_ms": 300.0, "seq_slope_mbps": 65.0, "ack_slope_mbps": 44.0}
