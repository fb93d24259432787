"""Tables and plots of an lfp results file (linkemu.lab.lfp), with the
study's published figures beside ours (linkemu.lab.published)."""

from __future__ import annotations

from linkemu.lab import published
from linkemu.report.table import Table

KB = 1024


def _kb(b) -> str:
    return "-" if b is None else f"{b / KB:g}"


def _mbps(v, digits: int = 2) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def sweep_table(res: dict, sender: str) -> Table:
    s = res["summary"]["senders"][sender]
    rows = [[_kb(p["window"]), _mbps(p["theory_mbps"]), _mbps(p["mbps_median"]),
             f"{p['mbps_min']:.2f} .. {p['mbps_max']:.2f}", str(p["n"]),
             f"{p['retrans_median']:g}", str(p["snd_wnd_max"])] for p in s["points"]]
    return Table(f"{sender}: throughput vs window (ttcp, 4 KB writes)",
                 ["window KB", "theory Mbit/s", "median Mbit/s", "min .. max", "runs",
                  "retrans (median)", "peer window max B"], rows,
                 note="theory = min(8W/RTT, payload rate): W the whole segments the "
                      "advertised window holds, RTT = "
                      f"{res['summary']['rtt_s'] * 1e3:.2f} ms (the path's for a full-size "
                      "segment and its ACK: delays + each hop's serialization), payload "
                      f"rate {res['summary']['payload_mbps']:.2f} Mbit/s")


def regions_table(res: dict) -> Table:
    pub = res["summary"]["published"]
    rows = [["published (Tokyo-Kyoto, 1994)", str(pub["knee_kb"]), str(pub["collapse_kb"]),
             _mbps(pub["collapse_mbps"], 1), "-", "-", "-", "-", "-"]]
    cls = ["published"]
    for name, s in res["summary"]["senders"].items():
        rows.append([name, _kb(s["knee_window"]), _kb(s["collapse_window"]),
                     _mbps(s["collapse_mbps"]), _mbps(s["plateau_mbps"]),
                     _kb(s.get("best_window")), _kb(s.get("knee_rel_window")),
                     _kb(s.get("collapse_rel_window")), _mbps(s.get("collapse_rel_mbps"))])
        cls.append("ours")
    return Table("Knee and collapse windows",
                 ["sender", "knee KB", "collapse KB", "collapse Mbit/s", "best median Mbit/s",
                  "best at KB", "knee KB (of best)", "collapse KB (of best)",
                  "collapse Mbit/s (of best)"], rows,
                 note="knee: smallest window at >= 90 % of the payload rate; collapse: smallest "
                      "window above it below 80 %. The (of best) columns use the sender's own "
                      "best median instead, which a stretched RTT does not hide. "
                      + published.LFP_SOURCE,
                 row_classes=cls)


def table2(res: dict) -> Table | None:
    rows = res.get("table2")
    if not rows:
        return None
    out = [[f"{r['distance_km']:,}", f"{r['rtt_ms']:g}", _mbps(r["published_mbps"], 3),
            _mbps(r["theory_mbps"], 3), _mbps(r["measured_mbps"], 3),
            f"{r['min_rtt_us'] / 1e3:.2f}", f"{r['fill_window_bytes'] / KB:.0f}"] for r in rows]
    return Table("Table 2: 4 KB window over 155 Mbit/s", ["km", "RTT ms", "published Mbit/s",
                                                          "8W/RTT Mbit/s", "measured Mbit/s",
                                                          "measured RTT ms",
                                                          "window to fill KB"], out,
                 note=f"published: {published.LFP_TABLE2_WINDOW} B window; the study: "
                      f"{published.LFP_FILL_WINDOW_KB_1000KM} KB fill 155 Mbit/s at 1,000 km")


def checks_table(res: dict) -> Table:
    rows = []
    whys = sorted({c["why"] for c in res["summary"]["checks"] if c["ok"] is None and c.get("why")})
    for c in res["summary"]["checks"]:
        ok = {True: "pass", False: "FAIL", None: "not checked"}[c["ok"]]
        rows.append([c["sender"], _kb(c["window"]), c["region"], _mbps(c["expected_mbps"]),
                     _mbps(c["measured_mbps"]),
                     "-" if c["error"] is None else f"{c['error'] * 100:+.1f} %", ok])
    return Table("What physics fixes (tolerance 10 %)", ["sender", "window KB", "check",
                                                          "expected", "measured", "error",
                                                          "result"], rows,
                 note="; ".join(f"not checked: {w}" for w in whys))


def bpf_table(res: dict) -> Table | None:
    runs = [r for r in res["runs"] if r.get("bpf")]
    if not runs:
        return None
    rows = []
    for r in runs:
        b = r["bpf"]
        s = "-" if b.get("s_share") is None else f"{b['s_share']:.2f}"
        rows.append([r["sender"], _kb(r["window"]), _mbps(r["mbps"]), str(b["losses"]),
                     str(b["resets"]), s, str(b["raise_y"]), str(b["raise_x"]), str(b["relax"]),
                     str(b["small_bdp"]), f"{b['max_x']}/{b['max_y']}"])
    return Table("The BPF algorithms per run: losses, S and how x, y moved",
                 ["sender", "window KB", "Mbit/s", "losses", "cwnd resets", "S", "y raised",
                  "x raised", "relaxed", "small BDP", "max x/y"], rows,
                 note="S = stalled time / elapsed time over the run's loss epochs (bpf/"
                      "lfp_cc.bpf.c); lfp_fixed counts S but never moves x, y")


def tables(res: dict) -> list[Table]:
    out = [regions_table(res)]
    out += [sweep_table(res, s) for s in res["summary"]["senders"]]
    for t in (table2(res), checks_table(res), bpf_table(res)):
        if t is not None:
            out.append(t)
    return out


def plots(res: dict, png, plt) -> list:
    return [p for p in (_sweep_plot(res, png, plt), _anatomy_plot(res, png, plt))
            if p is not None]


def _sweep_plot(res: dict, png, plt):
    sm = res["summary"]
    if not sm["senders"]:
        return None
    fig, ax = plt.subplots(figsize=(9, 4.8))
    wmax = max(p["window"] for s in sm["senders"].values() for p in s["points"])
    xs = [w * KB for w in range(1, int(wmax / KB) + 2, 2)]
    rtt, pay = sm["rtt_s"], sm["payload_mbps"]
    nominal = sm.get("nominal_rtt_s")
    if nominal:     # the study's dashed line: the window as set, the nominal RTT
        ax.plot([x / KB for x in xs], [min(8 * x / nominal / 1e6, pay) for x in xs], ":",
                color="0.5", lw=1, label=f"min(8W/RTT), nominal {nominal * 1e3:.0f} ms")
    # ours: the bytes in flight each window allows over the path's RTT
    pts = sorted({(p["window"], p["theory_mbps"]) for s in sm["senders"].values()
                  for p in s["points"]})
    ax.plot([w / KB for w, _ in pts], [t for _, t in pts], "k--", lw=1,
            label=f"theory (whole segments, RTT {rtt * 1e3:.2f} ms)")
    for name, s in sm["senders"].items():
        w = [p["window"] / KB for p in s["points"]]
        med = [p["mbps_median"] for p in s["points"]]
        lo = [p["mbps_median"] - p["mbps_min"] for p in s["points"]]
        hi = [p["mbps_max"] - p["mbps_median"] for p in s["points"]]
        ax.errorbar(w, med, yerr=[lo, hi], marker="o", ms=3, capsize=2, lw=1, label=name)
    pub = sm["published"]
    ax.axvspan(0, pub["knee_kb"], color="#e8f0ff", zorder=0)
    ax.axvspan(pub["knee_kb"], pub["collapse_kb"], color="#e8ffe8", zorder=0)
    ax.axvspan(pub["collapse_kb"], max(wmax / KB, pub["collapse_kb"] + 10), color="#ffecec",
               zorder=0)
    ax.axhline(pub["collapse_mbps"], color="r", lw=0.8, ls=":",
               label=f"published collapse {pub['collapse_mbps']:g} Mbit/s")
    for i, t in enumerate(("region 1", "region 2", "region 3 (LFP syndrome)")):
        x = (pub["knee_kb"] / 2, (pub["knee_kb"] + pub["collapse_kb"]) / 2,
             pub["collapse_kb"] + 40)[i]
        ax.text(x, pay * 1.08, t, ha="center", fontsize=7, color="#555")
    ax.set_xlabel("window (KB); shaded: the study's regions (knee 100 KB, collapse 170 KB)")
    ax.set_ylabel("throughput (Mbit/s)")
    ax.set_ylim(0, pay * 1.18)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title("Window vs throughput through lfp-tokyo-kyoto-ds3 (the study's Fig. 3)",
                 fontsize=10)
    fig.tight_layout()
    return ("Throughput vs window, theory line and the three regions", png(fig))


def _anatomy_plot(res: dict, png, plt):
    a = res.get("anatomy")
    if not a or not a["t_s"]:
        return None
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(10, 6.5), sharex=True)
    cap = a.get("capture")
    if cap and cap["t_s"]:
        ax1.plot(cap["t_s"], [v / 1e6 for v in cap["seq_bytes"]], lw=1,
                 label="sequence sent (capture)")
        ax1.plot(cap["ack_t_s"], [v / 1e6 for v in cap["ack_bytes"]], lw=1,
                 label="ACK (capture)")
        if cap["retrans_t_s"]:
            ax1.plot(cap["retrans_t_s"], [v / 1e6 for v in cap["retrans_seq"]], "rx", ms=3,
                     label=f"retransmitted ({cap['retransmissions']})")
    else:
        ax1.plot(a["t_s"], [v / 1e6 for v in a["seq_bytes"]], lw=1,
                 label="highest sequence sent (TCP_INFO)")
        ax1.plot(a["t_s"], [v / 1e6 for v in a["ack_bytes"]], lw=1,
                 label="cumulative ACK (TCP_INFO)")
    ax1.set_ylabel("MB")
    ax1.legend(fontsize=8)
    ax1.grid(alpha=0.3)
    ax2.plot(a["t_s"], [v / KB for v in a["unacked_bytes"]], lw=1, color="C2",
             label="unacknowledged KB")
    ax2.plot(a["t_s"], [v / KB for v in a["cwnd_bytes"]], lw=0.7, color="C4", label="cwnd KB")
    ax2.set_ylabel("KB")
    ax2.set_xlabel("time (s)")
    ax2.grid(alpha=0.3)
    ax3 = ax2.twinx()
    ax3.plot(a["t_s"], a["rtt_ms"], lw=0.8, color="C3", label="smoothed RTT ms")
    ax3.set_ylabel("RTT (ms)")
    h1, l1 = ax2.get_legend_handles_labels()
    h3, l3 = ax3.get_legend_handles_labels()
    ax2.legend(h1 + h3, l1 + l3, fontsize=8, loc="upper right")
    f4 = published.LFP_FIG4
    ax1.set_title(f"Anatomy: {a['sender']}, window {a['window'] / KB:g} KB, "
                  f"{a['mbps']:.1f} Mbit/s; stalled {a.get('stalled_share', 0) * 100:.0f} % "
                  f"of the time (longest {a['longest_silence_s']:.2f} s), max "
                  f"unacked {a['max_unacked_bytes']:,} B, max RTT {a['max_rtt_ms']:.0f} ms "
                  f"(study: silent {f4['sending_s']}-{f4['silent_until_s']} s, "
                  f"{f4['unacked_bytes']:,} B, {f4['rtt_ms']:.0f} ms)", fontsize=8)
    fig.tight_layout()
    return ("The syndrome's anatomy (the study's Fig. 4): Seq/Ack from a capture in the "
            "sender's namespace, unacknowledged bytes, cwnd and RTT from TCP_INFO every 2 ms",
            png(fig))
