"""`linkemu stats --watch`: a live view of a running linkemud.

Every interval we read the daemon's live counters (`stats` on the control
socket) and show, per direction, what happened since the last read: frames
and Mbit/s in (rx) and out (tx), drops per second by cause next to their
totals, the queue depth (frames in flight) and the emulation error
percentiles (since start or the last `reset stats`).

The frame is redrawn in place with plain ANSI (cursor home, erase to end of
line/screen): no curses needed. When stdout is not a terminal, frames are
printed one after another instead, separated by a blank line.
"""

from __future__ import annotations

import json
import sys
import time

from linkemu.daemon.summary import DIRECTIONS, DROP_CAUSES, fmt_ns

HOME = "\x1b[H"
EOL = "\x1b[K"
EOS = "\x1b[J"
HIDE_CURSOR = "\x1b[?25l"
SHOW_CURSOR = "\x1b[?25h"
LABEL_W = 22
COL_W = 28


def elapsed_s(prev: dict, cur: dict) -> float | None:
    """Seconds between two snapshots: the daemon's own time_ns if both have
    it, else its uptime, else when we read them (_read_ns)."""
    for key, scale in (("time_ns", 1e-9), ("uptime_s", 1.0), ("_read_ns", 1e-9)):
        a, b = prev.get(key), cur.get(key)
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b > a:
            return (b - a) * scale
    return None


def _delta(prev: dict, cur: dict, key: str) -> int:
    """cur - prev for a counter; a counter that went back (`reset stats`)
    counts from zero."""
    a, b = prev.get(key, 0) or 0, cur.get(key, 0) or 0
    return b - a if b >= a else b


def rates(prev: dict, cur: dict) -> dict:
    """What the view shows, computed from two `stats` objects (pure)."""
    dt = elapsed_s(prev, cur)
    out = {"interval_s": dt, "directions": {}}
    for name in DIRECTIONS:
        c = cur.get("directions", {}).get(name)
        if c is None:
            continue
        p = prev.get("directions", {}).get(name) or {}
        causes = list(DROP_CAUSES) + [k for k in c.get("dropped", {}) if k not in DROP_CAUSES]

        def per_s(n: int) -> float | None:
            return n / dt if dt else None

        drx, dtx = _delta(p, c, "rx"), _delta(p, c, "tx")
        drxb, dtxb = _delta(p, c, "rx_bytes"), _delta(p, c, "tx_bytes")
        pd, cd = p.get("dropped", {}), c.get("dropped", {})
        drops = {k: {"per_s": per_s(_delta(pd, cd, k)), "delta": _delta(pd, cd, k),
                     "total": cd.get(k, 0)} for k in causes}
        e = c.get("emulation_error_ns") or {}
        # What the ports counted outside our books: frames lost before
        # linkemud received them (imissed + ierrors + rx_nombuf) and frames
        # the output port failed to send (oerrors). Absent from old daemons.
        before, pb = c.get("before_rx") or {}, p.get("before_rx") or {}
        after, pa = c.get("after_tx") or {}, p.get("after_tx") or {}
        out["directions"][name] = {
            "config": c.get("config", ""),
            "rx_fps": per_s(drx), "tx_fps": per_s(dtx),
            "rx_mbps": per_s(drxb * 8 / 1e6), "tx_mbps": per_s(dtxb * 8 / 1e6),
            "rx": c.get("rx", 0), "tx": c.get("tx", 0),
            "in_flight": c.get("in_flight", 0),
            "dropped": drops, "dropped_total": c.get("dropped_total", 0),
            "error_count": e.get("count", 0),
            "error_p50_ns": e.get("p50"), "error_p99_ns": e.get("p99"),
            "error_max_ns": e.get("max"),
            "conserved": c.get("conserved"),
            "lost_before_rx": before.get("total"),
            "lost_before_rx_per_s": per_s(_delta(pb, before, "total")) if before else None,
            "port_send_errors": after.get("oerrors"),
        }
    return out


def _num(v: float | None, digits: int = 0) -> str:
    if v is None:
        return "-"
    return f"{v:,.{digits}f}"


def _fit(s: str, w: int) -> str:
    return s if len(s) <= w else s[:w - 3] + "..."


def render(prev: dict, cur: dict, bed: str = "", interval: float | None = None,
           footer: str = "Ctrl-C quits") -> str:
    """One frame of the view, as plain text lines (no ANSI)."""
    r = rates(prev, cur)
    dirs = r["directions"]
    names = [n for n in DIRECTIONS if n in dirs]
    head = ["linkemu stats" + (f"  bed {bed}" if bed else "")
            + f"  linkemud {cur.get('version', '?')}  layout {cur.get('layout', '?')}"
            + f"  up {cur.get('uptime_s', 0):.1f} s"]
    sub = []
    if r["interval_s"]:
        sub.append(f"rates over the last {r['interval_s']:.2f} s")
    if "mempool_in_use" in cur:
        sub.append(f"mbufs in use {cur['mempool_in_use']:,}")
    if footer:
        sub.append(footer)
    head.append("  ".join(sub))
    lines = head + [""]

    def row(label: str, values: list[str]) -> None:
        lines.append((f"{label:<{LABEL_W}}" + "".join(f"{_fit(v, COL_W - 2):>{COL_W}}"
                                                       for v in values)).rstrip())

    row("", names)
    row("link", [dirs[n]["config"] or "(no impairment)" for n in names])
    row("in   frames/s", [_num(dirs[n]["rx_fps"]) for n in names])
    row("     Mbit/s", [_num(dirs[n]["rx_mbps"], 2) for n in names])
    row("out  frames/s", [_num(dirs[n]["tx_fps"]) for n in names])
    row("     Mbit/s", [_num(dirs[n]["tx_mbps"], 2) for n in names])
    row("in flight (queue)", [_num(dirs[n]["in_flight"]) for n in names])
    row("frames in / out", [f"{dirs[n]['rx']:,} / {dirs[n]['tx']:,}" for n in names])
    lines.append("")
    row("drops   per s  (total)", ["" for _ in names])
    causes: list[str] = []
    for n in names:
        causes += [c for c in dirs[n]["dropped"] if c not in causes]
    for c in causes:
        vals = []
        for n in names:
            d = dirs[n]["dropped"].get(c)
            vals.append("-" if d is None else f"{_num(d['per_s'])}  ({d['total']:,})")
        row(f"  {c}", vals)
    row("  all", [f"({dirs[n]['dropped_total']:,})" for n in names])
    row("books", ["-" if dirs[n]["conserved"] is None else
                  "conserved" if dirs[n]["conserved"] else "NOT CONSERVED" for n in names])
    lines.append("")
    row("ports (not in books)", ["" for _ in names])
    row("  lost before rx", ["-" if dirs[n]["lost_before_rx"] is None else
                             f"{_num(dirs[n]['lost_before_rx_per_s'])}  "
                             f"({dirs[n]['lost_before_rx']:,})" for n in names])
    row("  send errors", ["-" if dirs[n]["port_send_errors"] is None else
                          f"({dirs[n]['port_send_errors']:,})" for n in names])
    lines.append("")
    row("emulation error", [f"over {dirs[n]['error_count']:,} frames" for n in names])
    row("  p50", [fmt_ns(dirs[n]["error_p50_ns"]) for n in names])
    row("  p99", [fmt_ns(dirs[n]["error_p99_ns"]) for n in names])
    row("  max", [fmt_ns(dirs[n]["error_max_ns"]) for n in names])
    return "\n".join(lines)


def read_snapshot(client) -> dict:
    st = client.stats()
    st["_read_ns"] = time.monotonic_ns()
    return st


def watch(client, bed: str = "", interval: float = 1.0, count: int | None = None,
          out=None, tty: bool | None = None, as_json: bool = False) -> int:
    """Show frames every interval until count frames (None: until Ctrl-C).
    The first frame needs two reads, so it comes after one interval."""
    out = out or sys.stdout
    tty = out.isatty() if tty is None else tty
    shown = 0
    ansi = tty and not as_json
    if ansi:
        out.write(HIDE_CURSOR + HOME + EOS)
        out.flush()
    try:
        prev = read_snapshot(client)
        next_t = time.monotonic() + interval
        while count is None or shown < count:
            time.sleep(max(0.0, next_t - time.monotonic()))
            next_t += interval
            cur = read_snapshot(client)
            if as_json:
                r = rates(prev, cur)
                r.update(time_ns=cur.get("time_ns"), uptime_s=cur.get("uptime_s"))
                if "mempool_in_use" in cur:
                    r["mempool_in_use"] = cur["mempool_in_use"]
                out.write(json.dumps(r) + "\n")
            else:
                last = count is not None and shown + 1 >= count
                text = render(prev, cur, bed, interval, footer="" if not tty or last
                              else "Ctrl-C quits")
                if ansi:
                    out.write(HOME + "\n".join(l + EOL for l in text.split("\n")) + "\n" + EOS)
                else:
                    out.write(("\n" if shown else "") + text + "\n")
            out.flush()
            prev = cur
            shown += 1
    except (KeyboardInterrupt, BrokenPipeError):
        pass
    finally:
        if ansi:
            out.write(SHOW_CURSOR)
            out.flush()
    return 0
