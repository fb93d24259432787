"""Tables of a results file, in the published layout, with the published
numbers beside ours; rendered as text (terminal) or HTML (report)."""

from __future__ import annotations

from linkemu.lab import published
from linkemu.report.table import Table, render_html, render_text  # noqa: F401 (the report's names)

SIZE_NAME = {1500: "1500 B", 46: "46 B"}


def fmt_us(ns, digits: int | None = None) -> str:
    """ns as microseconds, one decimal like the papers (two below 10 us)."""
    if ns is None:
        return "-"
    us = float(ns) / 1e3
    if digits is None:
        digits = 2 if abs(us) < 10 else 1
    return f"{us:,.{digits}f}"


def fmt_inserted(ns: int) -> str:
    """An inserted delay in microseconds, to the nanosecond it was set:
    1500 ns -> '1.5' (whole microseconds wrote '2'), 10 ms -> '10,000'."""
    return f"{ns / 1e3:,.3f}".rstrip("0").rstrip(".")


def fmt_pct(frac, digits: int = 5) -> str:
    """A fraction as a percentage with up to `digits` decimals; a rate too
    small for them keeps two significant digits (1e-9 -> '1e-07'), so a
    nonzero loss never reads as none."""
    if frac is None:
        return "-"
    if not frac:
        return "0"
    text = f"{frac * 100:.{digits}f}".rstrip("0").rstrip(".")
    return f"{frac * 100:.2g}" if text in ("0", "-0") else text


def fmt_us_value(us) -> str:
    """A value already in microseconds, one decimal; '-' where none was measured."""
    return "-" if us is None else f"{us:,.1f}"


def fmt_conf(conf: float) -> str:
    """A confidence level as set (0.99 -> 99%, 0.999 -> 99.9%): never rounded
    to whole percent, where 0.995 and 0.999 would both read 100%."""
    return f"{round(conf * 100, 6):g}%"


def fmt_int(v) -> str:
    return "-" if v is None else f"{int(v):,}"


# --- delay-precision ----------------------------------------------------------------

def delay_group_table(group: dict) -> Table:
    cols = group["columns"]
    head = ["inserted (us)"] + [fmt_inserted(c["inserted_ns"]) for c in cols]

    def row(name, key, f=fmt_us):
        return [name] + [f(c.get(key)) for c in cols]

    rows = [row("max", "max_ns"), row("min", "min_ns"), row("mean", "mean_ns"), row("sd", "sd_ns"),
            row("repro. error", "repro_ns"), row("repro. bound", "repro_bound_ns"),
            ["repro. within bound"] + ["-" if c.get("repro_ok") is None else
                                       ("yes" if c["repro_ok"] else "NO") for c in cols],
            row("p50", "p50_ns"), row("p99", "p99_ns"), row("p99.9", "p999_ns"),
            row("emulator error p50", "emu_p50_ns"), row("emulator error p99", "emu_p99_ns"),
            row("emulator error p99.9", "emu_p999_ns"), row("emulator error max", "emu_max_ns"),
            row("frames", "frames", fmt_int), row("lost", "lost", fmt_int),
            row("achieved pps", "achieved_pps", fmt_int)]
    title = (f"linkemu, {SIZE_NAME.get(group['ip_len'], str(group['ip_len']) + ' B')}, "
             f"{group['rate_class']} rate ({fmt_int(group.get('pps'))} pps), one-way delay (us)")
    note = ("max/min/mean/sd/percentiles: owdprobe's one-way delay (kernel RX timestamp - send "
            "stamp, CLOCK_REALTIME). repro. error = |mean(D) - (mean(0) + D)|; repro. bound = "
            "t (two-sided 6e-5, Welch df) x the batch-means standard error of the difference "
            "+ twice the two CPUs' stall residual + 10 ppm of D. "
            "Emulator error: linkemud's own (send time - deadline) histogram for the run.")
    return Table(title, head, rows, note)


def delay_comparison_table(group: dict) -> Table:
    """Ours beside the published tables for the same IP length: mean, sd,
    reproduction error per inserted delay (us)."""
    names = published.DELAY_TABLES_FOR_LEN.get(group["ip_len"], ())
    ours = {c["inserted_ns"]: c for c in group["columns"]}
    inserted = sorted(set(ours) | {int(u * 1000) for u in published.INSERTED_US})
    head = ["inserted (us)"] + [fmt_inserted(i) for i in inserted]
    rows, classes = [], []
    for stat, key, pkey in (("mean", "mean_ns", "mean"), ("sd", "sd_ns", "sd"),
                            ("max", "max_ns", "max"), ("repro. error", "repro_ns", "repro")):
        rows.append([f"{stat}: linkemu"] + [fmt_us(ours[i].get(key)) if i in ours else "-"
                                            for i in inserted])
        classes.append("ours")
        for n in names:
            t = published.DELAY_TABLES[n]
            vals = dict(zip((int(u * 1000) for u in published.INSERTED_US), t[pkey]))
            label = f"{stat}: {t['emulator']} {t['link_gbps']}G"
            rows.append([label] + [("-" if vals.get(i) is None else f"{vals[i]:,.1f}")
                                   for i in inserted])
            classes.append("published")
    title = (f"Beside the published numbers: {SIZE_NAME.get(group['ip_len'], '')}, "
             f"linkemu at {group['rate_class']} rate ({fmt_int(group.get('pps'))} pps)")
    note = ("Published: " + "; ".join(published.DELAY_TABLES[n]["title"] for n in names)
            + f". Source: {published.DELAY_SOURCE}. They used an FPGA tester at 10 or 1 Gbit/s "
            "on physical NICs; we use a veth/AF_XDP bed on a 2-vCPU VM (docs/lab.md).")
    return Table(title, head, rows, note, classes)


def published_delay_table(name: str) -> Table:
    t = published.DELAY_TABLES[name]
    head = ["inserted (us)"] + [f"{u:,}" for u in published.INSERTED_US]
    rows = [[k] + [("-" if v is None else f"{v:,.1f}") for v in t[key]]
            for k, key in (("max", "max"), ("min", "min"), ("mean", "mean"), ("sd", "sd"),
                           ("repro. error", "repro"))]
    return Table(t["title"] + " (us)", head, rows, f"Source: {published.DELAY_SOURCE}",
                 ["published"] * len(rows))


def noise_table(noise: dict) -> Table:
    """noise: {label: noisefloor JSON}."""
    head = ["CPU", "seconds", "reads", "p50 gap", "p99", "p99.9", "p99.99", "max",
            "gaps > 10 us", "> 100 us", "> 1 ms", "time lost", "stall residual"]
    rows = []
    for label, n in noise.items():
        g = n["gap_ns"]
        rows.append([label, f"{n['seconds']:.1f}", fmt_int(n["reads"]), f"{g['p50']} ns",
                     f"{g['p99']} ns", f"{g['p999']} ns", f"{g.get('p9999', '-')} ns",
                     fmt_us(g["max"]) + " us", fmt_int(n["gaps_over"]["10us"]),
                     fmt_int(n["gaps_over"]["100us"]), fmt_int(n["gaps_over"]["1ms"]),
                     f"{n.get('lost_fraction', 0) * 100:.2f} %",
                     f"{n.get('stall_residual_ns', 0):.0f} ns"])
    note = ("noisefloor: a busy loop pinned to the CPU reads CLOCK_MONOTONIC back to back; a gap "
            "is the time between two reads (one read is ~25 ns, longer gaps are time the CPU was "
            "taken away). Time lost: share of the run in gaps > 10 us. Stall residual: the mean "
            "extra wait of a frame arriving at a random instant, sum(g^2)/(2T) over gaps > 10 us.")
    return Table("Machine noise floor", head, rows, note)


# --- loss-accuracy ----------------------------------------------------------------------

def loss_table(res: dict) -> Table:
    conf = res["config"]["confidence"]
    head = ["specified %", "frames", "lost", "measured %", f"Wilson {fmt_conf(conf)} interval %",
            "pass", "lost outside model", "linkemud's count %", "pass (count)",
            "loss-run chi2 p", "good-run chi2 p",
            "mean delay us", "sd us",
            "DEMU loss %", "DEMU mean us", "DEMU sd us", "netem loss %", "netem mean us",
            "netem sd us"]
    rows = []
    for r in res["runs"]:
        c = r["check"]
        pub = published.loss_row(r["specified"] * 100) or (None,) * 6
        t = r["run_tests"]
        rows.append([fmt_pct(r["specified"], 6), fmt_int(r["frames"]), fmt_int(r["lost"]),
                     fmt_pct(c["measured"], 6),
                     f"[{fmt_pct(c['wilson'][0], 6)}, {fmt_pct(c['wilson'][1], 6)}]",
                     "yes" if c["pass"] else "NO", fmt_int(r["non_model_losses"]),
                     fmt_pct((r.get("daemon_check") or {}).get("measured"), 6),
                     {True: "yes", False: "NO", None: "-"}[(r.get("daemon_check") or {})
                                                           .get("pass")],
                     _p(t.get("loss_runs")), _p(t.get("good_runs")),
                     fmt_us_value(r["delay_us"]["mean"]), fmt_us_value(r["delay_us"]["sd"])]
                    + ["-" if v is None else f"{v:g}" for v in pub])
    note = (f"Measured rate = lost / frames over one probe run of "
            f"{res['config'].get('ip_len', 1500)} B frames through "
            f"`delay 1ms loss P` (a2b). pass: the specified rate lies in the Wilson interval of "
            f"the measured one. linkemud's count: the same test on the daemon's own loss "
            f"drops over the frames that reached it (unaffected by frames the bed lost on the "
            f"way, not independent of the model). chi2 p: goodness of fit of the run lengths "
            f"of consecutive "
            f"losses / receptions to the geometric law of Bernoulli loss (bins pooled to "
            f"expect >= 5; '-' = too few runs to test). Published: "
            f"{published.LOSS_TABLE_TITLE}; {published.LOSS_SOURCE} (their latency columns "
            f"include their whole path; ours is one-way through the bed).")
    return Table("Loss accuracy: specified vs measured, beside DEMU and netem", head, rows, note)


def _p(t: dict | None) -> str:
    if not t or t.get("p_value") is None:
        return "-"
    return f"{t['p_value']:.3g}" + ("" if t["pass"] else " (reject)")


def ge_table(ge: dict) -> Table:
    head = ["", "value"]
    p = ge["params"]
    rows = [["grammar", ge["grammar"]],
            ["p, r, 1-h, 1-k", f"{p['p']:g}, {p['r']:g}, {p['loss_bad']:g}, {p['loss_good']:g}"],
            ["theory: loss rate", f"{ge['theory']['loss_rate']:.5g}"],
            ["theory: mean loss run", f"{ge['theory']['mean_loss_run']:.4g}"],
            ["theory: mean good run", f"{ge['theory']['mean_good_run']:.4g}"]]
    if ge["status"] == "ran":
        c = ge["check"]
        rows += [["measured loss rate", f"{c['measured']:.5g} ({fmt_int(c['lost'])} of "
                                        f"{fmt_int(c['frames'])})"],
                 ["Wilson interval", f"[{c['wilson'][0]:.5g}, {c['wilson'][1]:.5g}]"],
                 ["theory inside", "yes" if c["pass"] else "NO"],
                 ["loss-run chi2 p", _p(ge["run_tests"].get("loss_runs"))],
                 ["good-run chi2 p", _p(ge["run_tests"].get("good_runs"))]]
    else:
        rows.append(["status", "skipped: " + (ge.get("reason") or "")])
    return Table("Gilbert-Elliott loss against its theory", head, rows)


def tcp_table(res: dict) -> Table:
    tcp = res.get("tcp", [])
    levels = sorted({t["specified"] for t in tcp})
    ccs = sorted({t["cc"] for t in tcp})
    head = ["loss %"] + [f"{cc} Mbit/s" for cc in ccs] + [f"{cc} retransmits" for cc in ccs] \
        + [f"{cc} cwnd cuts" for cc in ccs]
    by = {(t["specified"], t["cc"]): t for t in tcp}
    rows = []
    for p in levels:
        row = [fmt_pct(p, 6)]
        row += [f"{by[(p, cc)]['mbit_s']:.1f}" if (p, cc) in by else "-" for cc in ccs]
        row += [fmt_int(by[(p, cc)]["retransmits"]) if (p, cc) in by else "-" for cc in ccs]
        row += [fmt_int(by[(p, cc)]["cwnd_reductions"]) if (p, cc) in by else "-" for cc in ccs]
        rows.append(row)
    secs = tcp[0]["seconds"] if tcp else 0
    note = (f"iperf3 -J -i 0.1, {secs:g} s per run, src -> dst through `delay 1ms loss P` "
            f"(a2b; ACKs unimpaired). cwnd cuts: 0.1 s samples of the sender's snd_cwnd that "
            f"went down. Published (DEMU loss paper, Fig. 2, no numbers printed): "
            f"{published.TCP_NOTE}")
    return Table("TCP throughput vs loss", head, rows, note)


# --- rendering ----------------------------------------------------------------------------

def noise_of(res: dict) -> dict:
    nf = res["metadata"].get("noise_floor", {})
    out = {}
    for role, label in (("daemon_cpu", "daemon's"), ("tool_cpu", "tools'")):
        if role in nf:
            out[f"{nf[role]['cpu']} ({label})"] = nf[role]
    return out


def tables_for(res: dict) -> list[Table]:
    if res["experiment"] == "forwarding":
        from linkemu.report import forwarding
        return forwarding.tables(res)
    if res["experiment"] == "cellular":
        from linkemu.report import cellular_tables
        return cellular_tables.tables(res)
    out = []
    if res["experiment"] == "delay-precision":
        for g in res["summary"].get("groups", []):
            out.append(delay_group_table(g))
            out.append(delay_comparison_table(g))
    elif res["experiment"] == "lfp":
        from linkemu.report import lfp
        out += lfp.tables(res)
    else:
        out.append(loss_table(res))
        if res.get("ge"):
            out.append(ge_table(res["ge"]))
        if res.get("tcp"):
            out.append(tcp_table(res))
    if noise_of(res):
        out.append(noise_table(noise_of(res)))
    return out


def text_summary(res: dict) -> str:
    parts = [render_text(t) for t in tables_for(res)]
    if res.get("notes"):
        parts.append("notes:\n" + "\n".join(f"  - {n}" for n in res["notes"]))
    probs = [f"{r.get('id')}: {p}" for r in res.get("runs", []) for p in r.get("problems", [])]
    if probs:
        parts.append("problems:\n" + "\n".join(f"  - {p}" for p in probs))
    return "\n\n".join(parts)
