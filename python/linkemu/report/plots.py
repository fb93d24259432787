"""Plots of a results file, drawn from the file alone (matplotlib, Agg: no
display, no network). Each function returns (title, PNG bytes)."""

from __future__ import annotations

from linkemu.lab import analysis, published
from linkemu.report.figure import plt, png
from linkemu.report.tables import fmt_conf, fmt_inserted


def _label(ns: int) -> str:
    return f"{fmt_inserted(ns)} us" if ns < 1_000_000 else f"{ns / 1e6:g} ms"


def _us_or_nan(ns) -> float:
    return float("nan") if ns is None else ns / 1e3


def _group_runs(res: dict, size: int, rc: str) -> list[dict]:
    return sorted((r for r in res["runs"] if r["ip_len"] == size and r["rate_class"] == rc),
                  key=lambda r: r["inserted_ns"])


# --- delay-precision ------------------------------------------------------------------

def delay_series(res: dict, size: int, rc: str):
    """Delay over consecutive frames for each inserted delay (after the
    paper's Fig. 5): y = delay - inserted, so every panel shares a scale."""
    runs = _group_runs(res, size, rc)
    if not runs:
        return None
    n = len(runs)
    cols = min(4, n)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 2.6 * rows), squeeze=False,
                             sharey=True)
    for ax, r in zip(axes.flat, runs):
        ys = [(v - r["inserted_ns"]) / 1e3 for v in r["series"]["delay_ns"]]
        ax.plot(range(r["series"]["first_index"], r["series"]["first_index"] + len(ys)), ys,
                ls="", marker=".", ms=1.2, color="tab:blue")
        ax.set_title(f"inserted {_label(r['inserted_ns'])}", fontsize=9)
        ax.set_yscale("log")
        ax.grid(alpha=0.3)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    for ax in axes[:, 0]:
        ax.set_ylabel("delay - inserted (us)", fontsize=8)
    for ax in axes[-1, :]:
        ax.set_xlabel("frame (arrival order)", fontsize=8)
    fig.suptitle(f"One-way delay over {len(runs[0]['series']['delay_ns']):,} consecutive frames, "
                 f"{size} B, {rc} rate ({runs[0]['requested_pps']:,.0f} pps)", fontsize=10)
    fig.tight_layout()
    return (f"Delay over consecutive frames ({size} B, {rc})", png(fig))


def delay_distributions(res: dict, size: int, rc: str):
    """Histogram (left) and CDF (right) of delay - inserted per inserted delay."""
    runs = _group_runs(res, size, rc)
    if not runs:
        return None
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 3.8))
    cmap = plt.get_cmap("viridis")
    for i, r in enumerate(runs):
        h = r["histogram"]
        c = cmap(i / max(1, len(runs) - 1))
        edges = [(h["lo_ns"] + k * h["width_ns"]) / 1e3 for k in range(len(h["counts"]) + 1)]
        a1.stairs(h["counts"], edges, color=c, label=_label(r["inserted_ns"]))
        q = r["quantiles"]
        a2.plot([x / 1e3 for x in q["excess_ns"]], q["q"], color=c, marker=".", ms=3, lw=1,
                label=_label(r["inserted_ns"]))
    a1.set_yscale("log")
    a1.set_xlabel("delay - inserted (us), up to each run's p99.9")
    a1.set_ylabel("frames")
    a2.set_xscale("log")
    a2.set_xlabel("delay - inserted (us)")
    a2.set_ylabel("fraction of frames <= x")
    for a in (a1, a2):
        a.grid(alpha=0.3)
    a2.legend(fontsize=7, title="inserted", title_fontsize=7)
    fig.suptitle(f"Delay distributions, {size} B, {rc} rate", fontsize=10)
    fig.tight_layout()
    return (f"Delay distributions ({size} B, {rc})", png(fig))


def emulation_error(res: dict):
    """linkemud's own emulation error and the probe's excess delay per inserted delay."""
    groups = res["summary"].get("groups", [])
    if not groups:
        return None
    fig, ax = plt.subplots(figsize=(8, 3.8))
    for g in groups:
        xs = [max(c["inserted_ns"], 100) / 1e3 for c in g["columns"]]
        lab = f"{g['ip_len']} B {g['rate_class']}"
        # A run whose daemon reported no emulation error is left out (NaN),
        # as the table shows it '-': drawn at 0 it would read as perfect.
        ax.plot(xs, [_us_or_nan(c["emu_p99_ns"]) for c in g["columns"]], marker="o",
                label=f"{lab}: emulator error p99")
        ax.plot(xs, [_us_or_nan(c["emu_p50_ns"]) for c in g["columns"]], marker=".", ls=":",
                label=f"{lab}: emulator error p50")
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=0.1)
    ax.set_xlabel("inserted delay (us; 0 drawn at 0.1)")
    ax.set_ylabel("us")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    ax.set_title("linkemud's own certificate: send time - deadline", fontsize=10)
    fig.tight_layout()
    return ("Emulation error per inserted delay", png(fig))


def sd_vs_published(res_list: list[tuple[str, dict]]):
    """sd and reproduction error per inserted delay: every file's groups,
    and the published tables (log scale)."""
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4))
    ins = [max(u, 0.1) for u in published.INSERTED_US]
    for name, t in published.DELAY_TABLES.items():
        style = dict(ls="--", marker="x", alpha=0.7)
        a1.plot(ins, t["sd"], label=f"{t['emulator']} {t['link_gbps']}G {t['ip_len']} B "
                                    f"(published)", **style)
        pts = [(x, v) for x, v in zip(ins[1:], t["repro"][1:]) if v]   # log scale: no zeros
        a2.plot([p[0] for p in pts], [p[1] for p in pts], label=f"{t['emulator']} "
                f"{t['link_gbps']}G {t['ip_len']} B", **style)
    for label, res in res_list:
        for g in res["summary"].get("groups", []):
            xs = [max(c["inserted_ns"] / 1e3, 0.1) for c in g["columns"]]
            lab = f"{label}: {g['ip_len']} B {g['rate_class']}"
            a1.plot(xs, [c["sd_ns"] / 1e3 for c in g["columns"]], marker="o", label=lab)
            pts = [(x, c["repro_ns"] / 1e3) for x, c in zip(xs, g["columns"])
                   if c.get("repro_ns") is not None]
            if pts:
                a2.plot([p[0] for p in pts], [max(p[1], 1e-3) for p in pts], marker="o",
                        label=lab)
    for a, y in ((a1, "sd (us)"), (a2, "reproduction error (us)")):
        a.set_xscale("log")
        a.set_yscale("log")
        a.set_xlabel("inserted delay (us; 0 drawn at 0.1)")
        a.set_ylabel(y)
        a.grid(alpha=0.3)
    a1.legend(fontsize=6)
    fig.suptitle("linkemu beside DEMU and netem (published)", fontsize=10)
    fig.tight_layout()
    return ("sd and reproduction error beside the published tables", png(fig))


def noise_hist(res: dict):
    nf = res["metadata"].get("noise_floor", {})
    if not nf:
        return None
    fig, ax = plt.subplots(figsize=(8, 3.5))
    for role, n in nf.items():
        xs = [(lo + hi) / 2 for lo, hi, _c in n["histogram"]]
        ys = [c for _lo, _hi, c in n["histogram"]]
        ax.step(xs, ys, where="mid", label=f"CPU {n['cpu']} ({role.replace('_', ' ')})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.axvline(10_000, color="grey", ls=":", lw=0.8)
    ax.set_xlabel("gap between consecutive clock reads (ns)")
    ax.set_ylabel("gaps")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("Machine noise floor (busy loop, CLOCK_MONOTONIC)", fontsize=10)
    fig.tight_layout()
    return ("Noise floor", png(fig))


# --- loss-accuracy ----------------------------------------------------------------------

def loss_rates(res: dict):
    runs = [r for r in res["runs"] if r["specified"] > 0]
    if not runs:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    xs = [r["specified"] * 100 for r in runs]
    ys = [max(r["check"]["measured"], 1e-9) * 100 for r in runs]
    lo = [y - max(r["check"]["wilson"][0] * 100, 1e-9) for y, r in zip(ys, runs)]
    hi = [r["check"]["wilson"][1] * 100 - y for y, r in zip(ys, runs)]
    ax.errorbar(xs, ys, yerr=[lo, hi], fmt="o", capsize=3,
                label=f"linkemu ({fmt_conf(res['config']['confidence'])} Wilson)")
    pub = [(k, v) for k, v in published.LOSS_TABLE.items() if k > 0]
    ax.plot([k for k, _ in pub], [v[0] for _k, v in pub], "x", label="DEMU (published)")
    ax.plot([k for k, _ in pub], [v[3] for _k, v in pub], "+", ms=9, label="netem (published)")
    lim = [min(xs) / 3, max(xs) * 3]
    ax.plot(lim, lim, color="grey", lw=0.8, ls=":", label="measured = specified")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("specified loss (%)")
    ax.set_ylabel("measured loss (%)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"Specified vs measured loss ({runs[0]['frames']:,} frames per rate)", fontsize=10)
    fig.tight_layout()
    return ("Specified vs measured loss", png(fig))


def run_lengths(res: dict):
    """CCDF of loss-run and good-run lengths against the law they should follow."""
    runs = [r for r in res["runs"] if r["specified"] > 0 and r["loss_runs"]]
    ge = res.get("ge") if (res.get("ge") or {}).get("status") == "ran" else None
    if not runs and not ge:
        return None
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4))
    cmap = plt.get_cmap("plasma")
    # At 100 % loss there is one run of every frame and no geometric law
    # to draw beside it (stay = 1): its runs are drawn without a theory line.
    items = [(f"loss {r['specified'] * 100:g} %", r,
              analysis.geometric_pmf(r["specified"]) if r["specified"] < 1 else None,
              analysis.geometric_pmf(1 - r["specified"]) if r["specified"] < 1 else None)
             for r in runs]
    if ge:
        g = analysis.GEParams(**ge["params"])
        items.append(("GE", ge, analysis.ge_run_law(g, "loss"), analysis.ge_run_law(g, "good")))
    for i, (lab, r, law_l, law_g) in enumerate(items):
        c = cmap(i / max(1, len(items)))
        for ax, key, law in ((a1, "loss_runs", law_l), (a2, "good_runs", law_g)):
            hist = dict((int(k), int(v)) for k, v in r[key])
            if not hist:
                continue
            n = sum(hist.values())
            ks = sorted(hist)
            # empirical CCDF P(L >= k)
            ccdf, acc = [], n
            for k in ks:
                ccdf.append(acc / n)
                acc -= hist[k]
            ax.step(ks, ccdf, where="post", color=c, label=f"{lab} ({n:,} runs)")
            if law is None:
                continue
            kmax = ks[-1]
            grid = sorted(set([1] + [int(kmax * f) for f in (0.1, 0.25, 0.5, 0.75, 1.0)]
                              + list(range(1, min(kmax, 200) + 1))))
            th, cum, j = [], 0.0, 1
            for k in grid:
                while j < k:
                    cum += law(j)
                    j += 1
                th.append(max(1.0 - cum, 1e-12))
            ax.plot(grid, th, color=c, ls=":", lw=1)
    a1.set_title("consecutive losses per loss event (dotted: theory)", fontsize=9)
    a2.set_title("consecutive receptions between losses (dotted: theory)", fontsize=9)
    for ax in (a1, a2):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("run length (frames)")
        ax.set_ylabel("P(run >= length)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return ("Run lengths against the geometric (and GE) law", png(fig))


def tcp_throughput(res: dict):
    tcp = res.get("tcp", [])
    if not tcp:
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    for cc in sorted({t["cc"] for t in tcp}):
        pts = sorted((max(t["specified"] * 100, 1e-5), t["mbit_s"]) for t in tcp if t["cc"] == cc)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=cc)
    ax.set_xscale("log")
    ax.set_xlabel("specified loss (%; 0 drawn at 1e-5)")
    ax.set_ylabel("throughput (Mbit/s)")
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title("TCP throughput vs loss (iperf3, delay 1 ms)", fontsize=10)
    fig.tight_layout()
    return ("TCP throughput vs loss", png(fig))


def tcp_cwnd(res: dict, level: float = 1e-4):
    tcp = [t for t in res.get("tcp", []) if abs(t["specified"] - level) < 1e-12]
    if not tcp:
        return None
    fig, ax = plt.subplots(figsize=(10, 3.8))
    for t in tcp:
        ax.plot(t["t_s"], [c / 1024 for c in t["snd_cwnd"]], lw=0.9, label=t["cc"])
    ax.set_xlabel("time (s)")
    ax.set_ylabel("sender cwnd (KiB)")
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title(f"Sender congestion window at {level * 100:g} % loss (iperf3 TCP_INFO every "
                 f"0.1 s)", fontsize=10)
    fig.tight_layout()
    return (f"Congestion window at {level * 100:g} % loss", png(fig))


def plots_for(res: dict) -> list:
    if res["experiment"] == "forwarding":
        from linkemu.report import forwarding_plots
        return forwarding_plots.plots(res)
    if res["experiment"] == "cellular":
        from linkemu.report import cellular_plots
        return cellular_plots.plots(res)
    out = []
    if res["experiment"] == "delay-precision":
        keys = []
        for r in res["runs"]:
            if (r["ip_len"], r["rate_class"]) not in keys:
                keys.append((r["ip_len"], r["rate_class"]))
        for size, rc in keys:
            out += [delay_series(res, size, rc), delay_distributions(res, size, rc)]
        out += [emulation_error(res), sd_vs_published([("linkemu", res)])]
    elif res["experiment"] == "lfp":
        from linkemu.report import lfp
        out += lfp.plots(res, png, plt)
    else:
        out += [loss_rates(res), run_lengths(res), tcp_throughput(res), tcp_cwnd(res)]
    out.append(noise_hist(res))
    return [p for p in out if p is not None]
