"""Plots of a `lab cellular` results file (the study's figures): unit-latency
histograms and time series per protocol and link with the ideal band drawn,
ping distributions and iperf3 rates beside the published figures."""

from __future__ import annotations

import numpy as np

from linkemu.lab import published_cellular as pub
from linkemu.report.figure import plt, png

COLORS = {"cell-4g-dec4": "tab:blue", "cell-5g-dec4": "tab:orange",
          "cell-4g-dec2": "tab:green", "cell-5g-dec2": "tab:red"}


def _label(r: dict) -> str:
    return pub.LINKS[r["link"]]["label"] if r.get("link") else r["id"]


def _hist_of(runs: list[dict]):
    """Sum of the runs' latency histograms: (left edges ms, shares)."""
    # A run that received nothing has the placeholder {"lo_ns": 0, "counts":
    # [0]}: its lo of 0 would stretch the axis from 0 ms; it adds nothing.
    runs = [r for r in runs if sum(r["server"]["histogram"]["counts"])] or runs
    width = runs[0]["server"]["histogram"]["width_ns"]
    lo = min(r["server"]["histogram"]["lo_ns"] for r in runs)
    n = max((r["server"]["histogram"]["lo_ns"] - lo) // width
            + len(r["server"]["histogram"]["counts"]) for r in runs)
    tot = np.zeros(int(n))
    for r in runs:
        h = r["server"]["histogram"]
        off = int((h["lo_ns"] - lo) // width)
        tot[off:off + len(h["counts"])] += h["counts"]
    return (lo + np.arange(tot.size) * width) / 1e6, tot / max(tot.sum(), 1), width / 1e6


def _groups(res: dict, proto: str) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for r in res["runs"]:
        if r["kind"] == "units" and r["proto"] == proto:
            out.setdefault(r.get("link") or r["id"], []).append(r)
    return out


def _band(ax, r: dict, color: str, vertical: bool) -> None:
    b = r["server"].get("band")
    if not b:
        return
    lo, hi = b["lo_ns"] / 1e6, b["hi_ns"] / 1e6
    (ax.axvspan if vertical else ax.axhspan)(lo, hi, color=color, alpha=0.12, lw=0)


def unit_histogram(res: dict, proto: str):
    groups = _groups(res, proto)
    if not groups:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 3.4))
    for i, (key, runs) in enumerate(groups.items()):
        color = COLORS.get(key, f"C{i}")
        x, y, w = _hist_of(runs)
        ax.step(x, y, where="post", color=color,
                label=f"{_label(runs[0])} ({len(runs)} run{'s' if len(runs) > 1 else ''})")
        _band(ax, runs[0], color, vertical=True)
    ax.set_xlabel("unit latency (ms): receive - generation")
    ax.set_ylabel(f"share of units per {w:g} ms")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"{proto.upper()}: unit latency (shaded: ideal band, one-way delay + 1..10 ms)",
                 fontsize=10)
    return (f"{proto.upper()} unit-latency histogram", png(fig))


def unit_series(res: dict, proto: str):
    groups = {k: [r for r in v if "series" in r] for k, v in _groups(res, proto).items()}
    groups = {k: v for k, v in groups.items() if v}
    if not groups:
        return None
    fig, axes = plt.subplots(len(groups), 1, figsize=(7.5, 2.4 * len(groups)), squeeze=False,
                             sharex=True)
    for i, (ax, (key, runs)) in enumerate(zip(axes[:, 0], groups.items())):
        r = runs[0]
        color = COLORS.get(key, f"C{i}")
        ax.plot(r["series"]["seq"], np.asarray(r["series"]["latency_us"]) / 1e3, ls="",
                marker=".", ms=1.0, color=color)
        _band(ax, r, "tab:green", vertical=False)
        ax.set_ylabel("latency (ms)", fontsize=8)
        ax.set_title(f"{_label(r)}, run {r.get('run', 1)}", fontsize=9)
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel("unit number (1 ms apart)")
    fig.tight_layout()
    return (f"{proto.upper()} unit latency over time (shaded: ideal band)", png(fig))


def ping_plot(res: dict):
    links = [r for r in res["runs"] if r["kind"] == "link"]
    if not links:
        return None
    fig, axes = plt.subplots(1, len(links), figsize=(3.3 * len(links), 2.8), squeeze=False)
    for ax, r in zip(axes[0], links):
        h = r["ping_fast"].get("histogram") or {}
        if h:
            x = h["lo_ms"] + np.arange(len(h["counts"])) * h["width_ms"]
            c = np.asarray(h["counts"], float)
            ax.step(x, c / max(c.sum(), 1), where="post", color="tab:blue", label="ours, 10 ms")
            # a few replies seconds late would squeeze the rest into one bar
            cum = np.cumsum(c) / max(c.sum(), 1)
            ax.set_xlim(x[np.searchsorted(cum, 0.001)] - 2, x[np.searchsorted(cum, 0.995)] + 2)
        p = pub.LINKS[r["id"]]["ping_ms"]
        for k, ls in (("p10", ":"), ("p50", "-"), ("p90", ":")):
            ax.axvline(p[k], color="grey", ls=ls, lw=1)
            ax.axvline(r["ping_1s"].get(k, np.nan), color="tab:red", ls=ls, lw=1)
        ax.set_title(pub.LINKS[r["id"]]["label"], fontsize=9)
        ax.set_xlabel("RTT (ms)", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=7)
    fig.suptitle("ping RTT: histogram at 10 ms; p10/p50/p90 published (grey) and ours at 1 s "
                 "(red)", fontsize=9)
    fig.tight_layout()
    return ("ping RTT against the published percentiles", png(fig))


def rate_plot(res: dict):
    links = [r for r in res["runs"] if r["kind"] == "link"]
    if not links:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 3.2))
    for i, r in enumerate(links):
        p = pub.LINKS[r["id"]]
        for j, (key, mine) in enumerate((("udp_mbit", r["udp"]), ("tcp_bbr_mbit", r["tcp_bbr"]))):
            x = i * 3 + j
            ax.add_patch(plt.Rectangle((x - 0.35, min(p[key])), 0.7, max(p[key]) - min(p[key]),
                                       color="grey", alpha=0.25))
            ax.plot([x] * len(p[key]), p[key], "_", color="grey", ms=14)
            ax.plot([x] * len(mine), [m["mbit_s"] for m in mine], "o", ms=4,
                    color="tab:blue" if j == 0 else "tab:orange")
    ax.set_xticks([i * 3 + j for i in range(len(links)) for j in (0, 1)])
    ax.set_xticklabels([f"{pub.LINKS[r['id']]['label'].split(',')[0].replace(' (', chr(10) + '(')}"
                        f"\n{k}" for r in links for k in ("UDP", "TCP BBR")], fontsize=7)
    ax.set_ylabel("Mbit/s")
    ax.grid(alpha=0.3, axis="y")
    ax.set_title("iperf3 uplink: published runs (grey, range shaded) and ours (dots)",
                 fontsize=10)
    return ("iperf3 rates against the published ranges", png(fig))


def plots(res: dict) -> list:
    out = [ping_plot(res), rate_plot(res)]
    for proto in ("tcp", "quic", "udp"):
        out += [unit_histogram(res, proto), unit_series(res, proto)]
    return [p for p in out if p is not None]
