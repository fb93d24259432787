"""Plots of a `lab forwarding` results file (the study's Figs. 5, 7, 8 and
10): throughput, jitter and ping RTT against payload size per path, our
ratios against SWA beside Table 8's, and the 32 B latency distribution."""

from __future__ import annotations

import statistics

import numpy as np

from linkemu.lab import forwarding_analysis as fa
from linkemu.lab import published_forwarding as pub
from linkemu.lab.forwarding_paths import LABELS, PATHS
from linkemu.report.figure import plt, png

COLORS = dict(zip(PATHS, ("black", "tab:red", "tab:blue", "tab:green", "tab:olive",
                          "tab:purple", "tab:pink")))


def _paths(res: dict) -> list[str]:
    return [p["path"] for p in res.get("paths", []) if p["available"]]


def _series(res: dict, path: str, proto: str, key: str, sub: str | None = None):
    xs, ys = [], []
    for s in res["config"]["sizes"]:
        vals = [(r[key][sub] if sub else r[key]) for r in res["runs"]
                if r["path"] == path and r["kind"] == proto and r["size"] == s]
        vals = [v for v in vals if v is not None]
        if vals:
            xs.append(s)
            ys.append(statistics.median(vals))
    return xs, ys


def vs_size(res: dict, proto: str, key: str, ylabel: str, title: str, sub=None, log=False):
    fig, ax = plt.subplots(figsize=(7.5, 4))
    drawn = False
    for p in _paths(res):
        xs, ys = _series(res, p, proto, key, sub)
        if xs:
            ax.plot(xs, ys, "o-", color=COLORS[p], label=LABELS[p], ms=4)
            drawn = True
    if not drawn:
        plt.close(fig)
        return None
    ax.set_xlabel("payload (B)")
    ax.set_ylabel(ylabel)
    if log:
        ax.set_yscale("log")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return title, png(fig)


def ratios(res: dict):
    rows = res["summary"]["table8"]
    if len(rows) < 2:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 4))
    sizes = [r["size"] for r in rows]
    for path, proto in fa.TABLE8_COLUMNS:
        ours = [next(c["ours"] for c in r["columns"] if (c["path"], c["proto"]) == (path, proto))
                for r in rows]
        if any(v is not None for v in ours):
            ax.plot(sizes, [np.nan if v is None else v for v in ours], marker="o",
                    color=COLORS[path], label=f"{LABELS[path]} {proto.upper()} (ours)", ms=4,
                    ls="-" if proto == "udp" else ":")
        pub_v = [pub.ratio(s, path, proto) for s in sizes]
        if any(v is not None for v in pub_v):
            ax.plot(sizes, [np.nan if v is None else v for v in pub_v], "s--",
                    color=COLORS[path], alpha=0.45, ms=3,
                    label=f"{LABELS[path]} {proto.upper()} (published)")
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xlabel("payload (B)")
    ax.set_ylabel("throughput / SWA")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    t = "Throughput ratio vs SWA: ours (solid) and Table 8 (dashed)"
    ax.set_title(t, fontsize=10)
    fig.tight_layout()
    return t, png(fig)


def latency_density(res: dict):
    lat = res.get("latency") or []
    if not lat:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 4))
    allv = np.concatenate([np.asarray(x["rtts_ms"]) for x in lat if x["rtts_ms"]] or [[0.0]])
    # Log-spaced: the body (tens of microseconds) and a tail of scheduler
    # stalls (milliseconds) both show.
    lo = max(float(allv[allv > 0].min()) if (allv > 0).any() else 1e-3, 1e-3)
    hi = max(float(np.percentile(allv, 99.5)), lo * 2)
    bins = np.geomspace(lo / 1.05, hi, 80)
    for x in lat:
        if x["rtts_ms"]:
            ax.hist(np.clip(x["rtts_ms"], lo, hi), bins=bins, density=False,
                    weights=np.full(len(x["rtts_ms"]), 1 / len(x["rtts_ms"])), histtype="step",
                    color=COLORS[x["path"]], label=f"{LABELS[x['path']]} "
                    f"(median {statistics.median(x['rtts_ms']):.3f} ms)")
    ax.set_xscale("log")
    ax.set_xlabel("ping RTT (ms, log; the top 0.5 % folded into the last bin)")
    ax.set_ylabel("share of replies per bin")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    t = (f"Latency distribution at {res['config']['long_size']} B (Fig. 8), "
         f"{res['config']['long_seconds']:g} s of ping every "
         f"{res['config']['ping_interval_s'] * 1000:g} ms")
    ax.set_title(t, fontsize=10)
    fig.tight_layout()
    return t, png(fig)


def plots(res: dict) -> list:
    out = [vs_size(res, "udp", "mbit_s", "Mbit/s (payload)", "UDP throughput vs payload "
                   "size (Fig. 10)"),
           vs_size(res, "udp", "pps", "packets/s", "UDP packet rate vs payload size", log=True),
           vs_size(res, "tcp", "mbit_s", "Mbit/s (payload)", "TCP throughput vs payload size"),
           vs_size(res, "udp", "jitter_ms", "jitter (ms)", "iperf3 UDP jitter vs payload size "
                   "(Fig. 5)"),
           vs_size(res, "udp", "ping", "RTT median (ms)", "ping RTT during the UDP run vs "
                   "payload size (Fig. 7)", sub="median_ms"),
           ratios(res), latency_density(res)]
    return [p for p in out if p is not None]
