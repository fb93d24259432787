"""Tables of a `lab cellular` results file: ours beside the 4G/5G study's."""

from __future__ import annotations

from linkemu.lab import published_cellular as pub
from linkemu.report.table import Table

PING_KEYS = ("mean", "p10", "p50", "p90")


def _f(v, d: int = 1) -> str:
    return "-" if v is None else f"{v:.{d}f}"


def _pct(v) -> str:
    return "-" if v is None else f"{v:.1%}"


def ping_table(res: dict) -> Table:
    rows, cls = [], []
    for l in res["summary"].get("links", []):
        rows.append([f"{l['label']}: published"] + [_f(l["published_ping"][k], 2)
                                                     for k in PING_KEYS] + [""])
        cls.append("published")
        rows.append([f"{l['label']}: link model"] + [_f(l["model_ping"][k], 2)
                                                      for k in PING_KEYS] + [""])
        cls.append("")
        rows.append([f"{l['label']}: ours, 1 s x 60"] + [
            _f(l["ping_1s"][k], 2) + ("" if l["ping_within_10pct"][k] else " (!)")
            for k in PING_KEYS] + ["yes" if all(l["ping_within_10pct"].values()) else "no"])
        cls.append("ours")
        rows.append([f"{l['label']}: ours, 10 ms"] + [
            _f(l["ping_fast"][k], 2) + ("" if l["ping_fast_within_10pct"][k] else " (!)")
            for k in PING_KEYS] + ["yes" if all(l["ping_fast_within_10pct"].values()) else "no"])
        cls.append("ours")
    return Table("ping RTT (ms): the study's 60 s at 1 s beside ours", ["link"] + list(PING_KEYS)
                 + ["all within 10 %"], rows,
                 note="(!) marks a figure more than 10 % from the published one. The 1 s run "
                      "has 60 replies, as published: its p10 and p90 have a standard error of "
                      "~1.5 ms; the 10 ms run (6,000 replies) shows the link's distribution. "
                      "Link model: what the profile gives by its definition (trace wait + "
                      "delays + jitter, 200,000 draws), before the bed adds its own overhead.",
                 row_classes=cls)


def rate_table(res: dict) -> Table:
    rows, cls = [], []
    for l in res["summary"].get("links", []):
        rows.append([f"{l['label']}: published", " / ".join(f"{x:g}" for x in l["published_udp"]),
                     " / ".join(f"{x:g}" for x in l["published_tcp_bbr"]), ""])
        cls.append("published")
        rows.append([f"{l['label']}: ours", " / ".join(f"{x:.1f}" for x in l["udp_mbit"]),
                     " / ".join(f"{x:.1f}" for x in l["tcp_bbr_mbit"]),
                     f"UDP {'yes' if l['udp_in_range'] else 'no'}, TCP "
                     f"{'yes' if l['tcp_in_range'] else 'no'}"])
        cls.append("ours")
    return Table("iperf3 uplink (Mbit/s), three runs of 20 s each",
                 ["link", "UDP to saturation", "TCP BBR", "in the published range"], rows,
                 note=pub.UDP_NOTE + " Ours: the receiver's rate.", row_classes=cls)


def units_table(res: dict) -> Table:
    rows, cls = [], []
    for u in res["summary"].get("units", []):
        label = pub.LINKS[u["link"]]["label"]
        rows.append([f"{u['proto'].upper()} {label}: published", u["published"]["text"]] +
                    [""] * 6)
        cls.append("published")
        none = u["p1_ms"] is None          # no run received a unit
        rows.append([f"{u['proto'].upper()} {label}: ours ({u['runs']} runs)",
                     "no unit received" if none else
                     f"p1-p99 {u['p1_ms']:.1f}-{u['p99_ms']:.1f} (spread {u['spread_ms']:.1f})",
                     _f(u["p50_ms"]), "-" if none else f"{u['min_ms']:.1f}-{u['max_ms']:.1f}",
                     f"{u['band_ms'][0]:.1f}-{u['band_ms'][1]:.1f}",
                     _pct(u["share_outside_band"]), _pct(u["share_in_groups_over_flush"]),
                     f"{u['lost']}"])
        cls.append("ours")
    return Table("unit latency (ms): 8 B every 1 ms, flushes of 10",
                 ["protocol, link", "range", "p50", "min-max", "ideal band",
                  "outside band", "in groups > 10", "lost"], rows,
                 note="range: the mean over runs of each run's 1st and 99th percentile. Ideal "
                      "band: the link's one-way base delay + 1 .. 10 ms. Groups: units the "
                      "server received within 1 ms of the previous one. " + pub.UNITS_CONCLUSION,
                 row_classes=cls)


def lateness_table(res: dict) -> Table:
    """linkemud's own emulation error per link: what the bed added to every
    figure above (quiet: microseconds; with other busy pollers on its CPU,
    milliseconds)."""
    rows = []
    for r in (r for r in res["runs"] if r["kind"] == "link"):
        row = [pub.LINKS[r["id"]]["label"]]
        for d in ("a2b", "b2a"):
            e = (r.get("daemon", {}).get(d) or {}).get("emulation_error_ns") or {}
            row += [_f(e.get(k, 0) / 1e6, 3) if e else "-" for k in ("p50", "p99", "max")]
        rows.append(row)
    return Table("linkemud's emulation error (send time - deadline, ms) per link",
                 ["link", "a2b p50", "a2b p99", "a2b max", "b2a p50", "b2a p99", "b2a max"], rows,
                 note="Every delay above includes it. On a quiet machine it is a few "
                      "microseconds; milliseconds mean the daemon's CPU was shared (see the "
                      "problems list), and the ping and unit latencies are that much higher.")


def checks_table(res: dict) -> Table:
    # pass None: not checked (cellular_quick says why in the detail)
    rows = [[c["name"], {True: "pass", False: "FAIL"}.get(c["pass"], "not checked"),
             c["detail"]]
            for c in res["summary"].get("checks", [])]
    return Table("quick checks over a fixed delay 20ms link", ["check", "result", "how"], rows)


def quick_runs_table(res: dict) -> Table:
    rows = []
    for r in res["runs"]:
        s = r["server"]
        lat, t = s.get("latency_kernel_ns") or s["latency_ns"], r["client"]["timing"]
        parts = r.get("parts") or {}
        path = parts.get("path_per_flush_ns") or {}
        # without kernel stamps (QUIC) the receive time is the read: nothing to show
        rcv = (parts.get("receiver_ns") or s.get("receiver_wait_ns") or {}) \
            if s.get("kernel_stamps") else {}
        rows.append([r["id"], r.get("grammar") or "(none)", f"{s['received']}/{s['expected']}",
                     f"{lat['min'] / 1e6:.3f}", f"{lat['mean'] / 1e6:.3f}",
                     f"{lat['p99'] / 1e6:.3f}", f"{lat['max'] / 1e6:.3f}",
                     f"{t['flush_late_ns'].get('p99', 0) / 1e6:.3f}",
                     f"{path['p99'] / 1e6:.3f} / {path['max'] / 1e6:.3f}" if path else "-",
                     f"{rcv['p99'] / 1e6:.3f}" if rcv.get("count") else "-",
                     str(s["groups"]["max"])])
    return Table("unit-latency runs (ms)", ["run", "link", "units", "min", "mean", "p99", "max",
                                            "sender's flush lateness p99",
                                            "path beyond the delay, p99 / max",
                                            "receiver's read after the kernel stamp, p99",
                                            "largest group"], rows,
                 note="Latency: the kernel's receive stamp (SO_TIMESTAMPNS) - the unit's "
                      "generation time. Path (UDP): each flush's kernel receive stamp - its "
                      "send call - the link's delay, what the bed added. The sender's "
                      "lateness and the receiver's read are the instrument's own, measured "
                      "and shown apart.")


def tables(res: dict) -> list[Table]:
    if res["config"].get("links"):
        return [ping_table(res), rate_table(res), units_table(res), lateness_table(res)]
    return [checks_table(res), quick_runs_table(res)]
