"""Check and format linkemud's final counters for humans.

The daemon's final JSON (written to --stats-file on exit) is the contract:
    {"version", "layout", "lcores", "seed", "tsc_hz", "uptime_s",
     "directions": {"a2b": {"config", "rx", "tx", "rx_bytes", "tx_bytes",
                            "in_flight", "dropped": {cause: n}, "dropped_total",
                            "dup", "events": {event: n}, "classes": [...],
                            "emulation_error_ns": {"count", "min", "mean", "p50",
                                                   "p90", "p99", "p999", "max"}},
                    "b2a": {...}},
     "conserved": bool}
We re-check conservation here rather than trusting "conserved": the check is
cheap, and a daemon bug in its own check must not hide a leak.
"""

from __future__ import annotations

DIRECTIONS = ("a2b", "b2a")
# The daemon's drop causes in its order (counters.h); the JSON carries them
# all, this is for views that list them before any has happened.
DROP_CAUSES = ("loss", "queue_full", "ring_full", "shutdown", "malformed",
               "queue_head", "codel", "stalled", "punt_full", "punt_down", "punt_dropped")


def conservation_problems(final: dict) -> list[str]:
    """rx + dup (+ injected + in_flight_at_reset) == tx + dropped_total +
    in_flight (dup: copies made by `duplicate`, new frames) and
    dropped_total == sum of causes, per direction; returns a description of
    every violation."""
    problems = []
    dirs = final.get("directions", {})
    for name in DIRECTIONS:
        d = dirs.get(name)
        if d is None:
            problems.append(f"{name}: missing from the daemon's report")
            continue
        try:
            rx, tx, fl = d["rx"], d["tx"], d["in_flight"]
            total = d["dropped_total"]
            causes = d["dropped"]
        except KeyError as e:
            problems.append(f"{name}: field {e} missing")
            continue
        if sum(causes.values()) != total:
            problems.append(f"{name}: dropped_total {total} != sum of causes "
                            f"{sum(causes.values())} ({causes})")
        dup = d.get("dup", 0)
        inj = d.get("injected", 0)   # new frames from punted classes' processes (docs/punt.md)
        # Since a `reset stats`, the frames held at the reset were received
        # before it and may leave after it (docs/control.md, "The books").
        base = d.get("in_flight_at_reset", 0)
        if rx + dup + inj + base != tx + total + fl:
            at_reset = f" + in flight at reset {base}" if base else ""
            problems.append(f"{name}: rx {rx} + dup {dup} + injected {inj}{at_reset} != tx {tx} "
                            f"+ dropped {total} + in_flight {fl} "
                            f"(off by {rx + dup + inj + base - tx - total - fl})")
    if final.get("conserved") is False and not problems:
        problems.append("the daemon reports conserved=false although the totals add up")
    return problems


def fmt_ns(ns: float | None) -> str:
    """A duration in the unit that keeps 3 significant figures readable."""
    if ns is None:
        return "-"
    a = abs(ns)
    if a < 1e3:
        return f"{ns:.0f} ns"
    if a < 1e6:
        return f"{ns / 1e3:.1f} us"
    if a < 1e9:
        return f"{ns / 1e6:.2f} ms"
    return f"{ns / 1e9:.3f} s"


def fmt_bytes(n: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def fmt_direction(name: str, d: dict) -> list[str]:
    cfg = d.get("config") or "(no impairment)"
    drops = d.get("dropped", {})
    nonzero = ", ".join(f"{c} {n}" for c, n in drops.items() if n) or "none"
    lines = [f"  {name}  [{cfg}]",
             f"    rx {d.get('rx', 0)} frames ({fmt_bytes(d.get('rx_bytes', 0))}), "
             f"tx {d.get('tx', 0)} frames ({fmt_bytes(d.get('tx_bytes', 0))}), "
             f"in flight {d.get('in_flight', 0)}",
             f"    dropped {d.get('dropped_total', 0)}: {nonzero}"]
    events = {k: n for k, n in (d.get("events") or {}).items() if n}
    if d.get("dup") or d.get("injected") or events:
        extra = (([f"dup {d['dup']}"] if d.get("dup") else [])
                 + ([f"injected {d['injected']}"] if d.get("injected") else [])
                 + [f"{k} {n}" for k, n in events.items()])
        lines.append(f"    also: {', '.join(extra)}")
    classes = d.get("classes") or []
    for c in classes:
        if len(classes) > 1 or c.get("hops"):
            lines.append(f"    class {c['name']}: in {c['rx']}, out {c['tx']}, "
                         f"dropped {sum(c.get('dropped', {}).values())}, held {c['in_flight']}")
        for h in c.get("hops") or []:   # a chain: each hop's own books
            lines.append(f"      hop {h['hop']}: in {h['rx']}, out {h['tx']}, "
                         f"dropped {sum(h.get('dropped', {}).values())}, dup {h.get('dup', 0)}, "
                         f"held {h['in_flight']}{'' if h.get('conserved') else '  (NOT CONSERVED)'}")
    ended = d.get("ended_classes") or {}
    ended_drops = sum((ended.get("dropped") or {}).values())
    if any(ended.get(k) for k in ("rx", "tx", "dup", "in_flight", "in_flight_at_reset")) or ended_drops:
        lines.append(f"    classes removed by a live change: in {ended.get('rx', 0)}, "
                     f"out {ended.get('tx', 0)}, dropped {ended_drops}, held {ended.get('in_flight', 0)}")
    for p in d.get("punt") or []:   # punted classes' channels (docs/punt.md)
        lines.append(f"    punt class {p['class']} ({p['transport']} {p['name']}): "
                     f"{'attached' if p['up'] else 'NO PROCESS'}, sent {p['sent']}, returned "
                     f"{p['returned']}, injected {p['injected']}, punt_dropped {p['punt_dropped']}, "
                     f"punt_full {p['punt_full']}, punt_down {p['punt_down']}, held {p['held']}, "
                     f"processes lost {p['peers_lost']}")
    before, after = d.get("before_rx"), d.get("after_tx")
    if before is not None:   # what the ports counted outside the books above
        lines.append(f"    before linkemud: {before.get('total', 0)} lost at the input port "
                     f"(missed {before.get('imissed', 0)}, errors {before.get('ierrors', 0)}, "
                     f"no mbuf {before.get('rx_nombuf', 0)}); after: "
                     f"{(after or {}).get('oerrors', 0)} send errors at the output port")
    xstats = d.get("port_xstats") or {}
    for side in ("in", "out"):            # the drivers' own drop counters
        if xstats.get(side):
            lines.append(f"    {side}put port driver counts: "
                         + ", ".join(f"{k} {v}" for k, v in xstats[side].items()))
    if xstats.get("not_shown"):
        lines.append(f"    ({xstats['not_shown']} more driver drop counters not shown)")
    e = d.get("emulation_error_ns") or {}
    if e.get("count"):
        lines.append(f"    emulation error over {e['count']} frames: p50 {fmt_ns(e.get('p50'))}, "
                     f"p99 {fmt_ns(e.get('p99'))}, max {fmt_ns(e.get('max'))}")
    return lines


def format_final(final: dict) -> str:
    head = (f"linkemud {final.get('version', '?')}: layout {final.get('layout', '?')}, "
            f"{final.get('lcores', '?')} lcore(s), seed {final.get('seed', '?')}, "
            f"up {final.get('uptime_s', 0):.1f} s")
    lines = [head]
    for name in DIRECTIONS:
        d = final.get("directions", {}).get(name)
        if d is not None:
            lines += fmt_direction(name, d)
    problems = conservation_problems(final)
    lines.append("  conservation (rx + dup = tx + dropped + in flight): "
                 + ("yes" if not problems else "NO"))
    lines += [f"    {p}" for p in problems]
    return "\n".join(lines)
