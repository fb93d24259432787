"""Tables of a `lab forwarding` results file: Table 8's layout (ratio
against SWA per payload size and protocol, ours beside the published),
the measured rates, jitter and latency per path, the per-frame cost at 64 B
with what limited each path, and the --quick checks."""

from __future__ import annotations

import statistics

from linkemu.lab import forwarding_analysis as fa
from linkemu.lab.analysis import sample_sd
from linkemu.lab import published_forwarding as pub
from linkemu.lab.forwarding_paths import LABELS
from linkemu.report.table import Table

COL_NAMES = {("swb", "tcp"): "SWB TCP", ("swb", "udp"): "SWB UDP",
             ("swc-all-fifo", "udp"): "SWC UDP all via FIFO",
             ("swc-1pct-fifo", "udp"): "SWC UDP 1 % via FIFO",
             ("swc-all-shm", "udp"): "SWC UDP all via shm",
             ("swc-1pct-shm", "udp"): "SWC UDP 1 % via shm"}


def _r(v) -> str:
    return "-" if v is None else f"{v:.2f}"


def table8(res: dict) -> Table:
    avail = {p["path"]: p for p in res.get("paths", [])}
    cols = [c for c in fa.TABLE8_COLUMNS if c[0] in avail]
    head = ["payload B"]
    for c in cols:
        head += [f"{COL_NAMES[c]} ours", "published"]
    head.append("published valid")
    rows = []
    for row in res["summary"]["table8"]:
        by = {(c["path"], c["proto"]): c for c in row["columns"]}
        cells = [f"{row['size']:,}"]
        for c in cols:
            x = by.get(c, {})
            ours = ("n/a" if not avail[c[0]]["available"] else _r(x.get("ours")))
            cells += [ours, _r(x.get("published"))]
        cells.append({True: "yes", False: "-"}.get(row.get("valid_published"), "?"))
        rows.append(cells)
    gone = [f"{LABELS[p['path']]}: {p['reason']}" for p in res.get("paths", [])
            if not p["available"]]
    note = ("Throughput ratio against SWA (median of the runs), ours beside the published "
            "Table 8 (2 Gbit/s, 10 GbE, iperf 2.0.10). shm columns: the study named shared "
            "memory as future work, so there is no published figure. "
            + (" ".join(gone) if gone else ""))
    return Table("Table 8 layout: throughput ratio vs SWA", head, rows, note=note)


def rates_table(res: dict, proto: str) -> Table:
    runs = res["runs"]
    paths = [p["path"] for p in res.get("paths", []) if p["available"]
             and any(r["path"] == p["path"] and r["kind"] == proto for r in runs)]
    sizes = res["config"]["sizes"]
    head = ["payload B"] + [LABELS[p] for p in paths]
    rows = []
    for s in sizes:
        rows.append([f"{s:,}"] + [_mbit(fa.median_of(runs, p, proto, s)) for p in paths])
    return Table(f"{proto.upper()} throughput (Mbit/s of payload, median)", head, rows,
                 note=(f"iperf3 UDP offered {res['config']['offered']}bit/s per run; received "
                       f"payload rate" if proto == "udp" else
                       "iperf3 TCP writing the payload size (Nagle on: the sender coalesces)"))


def _mbit(v) -> str:
    return "-" if v is None else (f"{v:,.1f}" if v >= 10 else f"{v:.2f}")


def quality_table(res: dict) -> Table:
    runs = res["runs"]
    paths = [p["path"] for p in res.get("paths", []) if p["available"]
             and any(r["path"] == p["path"] for r in runs)]
    head = ["payload B"] + [f"{LABELS[p]} {k}" for p in paths for k in ("jitter ms", "RTT ms")]
    rows = []
    for s in res["config"]["sizes"]:
        cells = [f"{s:,}"]
        for p in paths:
            j = fa.median_of(runs, p, "udp", s, "jitter_ms")
            rtt = [r["ping"]["median_ms"] for r in runs if r["path"] == p and r["kind"] == "udp"
                   and r["size"] == s and r["ping"].get("median_ms") is not None]
            cells += ["-" if j is None else f"{j:.4f}",
                      f"{statistics.median(rtt):.3f}" if rtt else "-"]
        rows.append(cells)
    return Table("UDP jitter (iperf3) and ping RTT median during the UDP run", head, rows,
                 note="ping sends the payload size every 10 ms while iperf3 loads the path")


def cost_table(res: dict) -> Table:
    cost = res["summary"].get("frame_cost", [])
    size = cost[0]["size"] if cost else 64
    head = ["path", f"pps at {size} B", "ns per frame", "forwarder CPU ns/frame", "limited by"]
    rows = [[LABELS[c["path"]], f"{c['pps']:,.0f}",
             "-" if c["ns_per_frame"] is None else f"{c['ns_per_frame']:,.0f}",
             "-" if c["forwarder_cpu_ns_per_frame"] is None
             else f"{c['forwarder_cpu_ns_per_frame']:,.0f}",
             "; ".join(c["limits"])] for c in cost]
    why = "; ".join(f"{k}: {v}" for k, v in fa.LIMIT_TEXT.items() if k != "nothing sent")
    return Table(f"Per-frame cost at {size} B (UDP received rate) and what limited each path",
                 head, rows, note="forwarder CPU: its process's CPU time over the frames it "
                                  "sent (linkemud busy-polls its lcore, so its figure is the "
                                  "CPU it held, not what it needed). " + why + ". "
                                  + res["summary"].get("swb_layout", ""))


def latency_table(res: dict) -> Table | None:
    lat = res.get("latency") or []
    if not lat:
        return None
    head = ["path", "replies", "min ms", "median ms", "p90 ms", "max ms", "sd ms"]
    rows = []
    for x in lat:
        sd = sample_sd(x["rtts_ms"]) if len(x["rtts_ms"]) > 1 else None
        rows.append([LABELS[x["path"]], f"{x['received']}/{x['transmitted']}",
                     *(("-" if x.get(k) is None else f"{x[k]:.3f}")
                       for k in ("min_ms", "median_ms", "p90_ms", "max_ms")),
                     "-" if sd is None else f"{sd:.3f}"])
    return Table(f"Latency distribution: ping at {res['config']['long_size']} B every "
                 f"{res['config']['ping_interval_s'] * 1000:g} ms, "
                 f"{res['config']['long_seconds']:g} s, unloaded (the study's Fig. 8)",
                 head, rows)


def checks_table(res: dict) -> Table | None:
    checks = res["summary"].get("checks")
    if not checks:
        return None
    rows = [[c["name"], {True: "pass", False: "FAIL", None: "not checked"}[c["pass"]],
             c["detail"]] for c in checks]
    return Table("--quick checks", ["check", "result", "detail"], rows)


def tables(res: dict) -> list[Table]:
    out = [table8(res), rates_table(res, "udp"), rates_table(res, "tcp"), quality_table(res),
           cost_table(res), latency_table(res), checks_table(res)]
    published = Table("Published Table 8 (2 Gbit/s), for reference",
                      ["payload B", "SWB TCP", "SWB UDP", "SWC UDP all via IPC",
                       "SWC UDP 1 % control via IPC", "valid"],
                      [[f"{s:,}", *(f"{v:.2f}" for v in pub.TABLE8[s]),
                        "yes" if pub.VALID[s] else "-"] for s in pub.SIZES],
                      note=pub.CONCLUSIONS,
                      row_classes=["published"] * len(pub.SIZES))
    out.append(published)
    return [t for t in out if t is not None]
