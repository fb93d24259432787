"""The forwarding study's arithmetic, apart from any I/O: ratios against
SWA (Table 8), what limited each run, the per-frame cost of each path and
the --quick checks. Everything here works on results-file records."""

from __future__ import annotations

import statistics

from linkemu.lab import analysis
from linkemu.lab import published_forwarding as pub

# Loss under this share of what was sent counts as "carried everything".
LOSS_SHARE = 0.01
# --quick: SWC with 1 % through IPC against SWB (issue 9).
SWC_MIN_RATIO = 0.9
# --quick makes three one-sided tests (SWC 1 % via FIFO and via shm >=
# 0.9x SWB, shm not slower than the FIFO), and one invocation fails if any
# of them does. FAMILY_ALPHA is how often that may happen when every
# tested claim holds exactly at its bound (one invocation in a hundred).
# Bonferroni: P(any fails) <= the sum of the tests' levels whatever their
# dependence (the two ratio tests share SWB's rounds), so the levels are
# split to sum to FAMILY_ALPHA: "shm not slower" keeps its 0.001 (the two
# may carry the same, so it should almost never fail on noise) and each
# ratio test gets half the rest, 0.0045. Each at 0.01, as they were, the
# invocation could fail 2.1 % of the time.
FAMILY_ALPHA = 0.01
NOT_SLOWER_ALPHA = 0.001
RATIO_ALPHA = (FAMILY_ALPHA - NOT_SLOWER_ALPHA) / 2


def median_of(runs: list[dict], path: str, proto: str, size: int,
              key: str = "mbit_s") -> float | None:
    vals = [r[key] for r in runs if r.get("path") == path and r.get("kind") == proto
            and r.get("size") == size and r.get(key) is not None]
    return statistics.median(vals) if vals else None


def values_of(runs: list[dict], path: str, proto: str, size: int,
              key: str = "mbit_s") -> list[float]:
    return [r[key] for r in runs if r.get("path") == path and r.get("kind") == proto
            and r.get("size") == size and r.get(key) is not None]


def spread(vals: list[float]) -> float:
    """(max - min) / median of repeated runs: the run-to-run variation the
    machine showed in this invocation (0 for a single run)."""
    if len(vals) < 2:
        return 0.0
    m = statistics.median(vals)
    return (max(vals) - min(vals)) / m if m > 0 else float("inf")


# --- Table 8 ------------------------------------------------------------------------------

TABLE8_COLUMNS = (("swb", "tcp"), ("swb", "udp"), ("swc-all-fifo", "udp"),
                  ("swc-1pct-fifo", "udp"), ("swc-all-shm", "udp"), ("swc-1pct-shm", "udp"))


def table8(runs: list[dict], sizes: list[int]) -> list[dict]:
    """Per payload size and column: our ratio against SWA (medians of the
    runs) and the published one beside it."""
    rows = []
    for size in sizes:
        cols = []
        for path, proto in TABLE8_COLUMNS:
            base = median_of(runs, "swa", proto, size)
            ours = median_of(runs, path, proto, size)
            cols.append({"path": path, "proto": proto,
                         "ours": round(ours / base, 3) if ours is not None and base else None,
                         "published": pub.ratio(size, path, proto)})
        rows.append({"size": size, "valid_published": pub.VALID.get(size), "columns": cols})
    return rows


# --- what limited a run ---------------------------------------------------------------------

def limiter(rec: dict) -> dict:
    """Where a UDP run's frames were lost, and so what limited it:
    before the forwarder's input (the sender side's veth and socket or the
    forwarder's RX ring/socket: the forwarder did not keep up), inside it
    (its drop causes), after its output (the receiver's socket: the tool
    CPU did not keep up), or nowhere (the path carried all that was sent:
    the sender, on the shared tool CPU, was the limit)."""
    sent = rec.get("sent_pkts", 0) + rec.get("control", {}).get("sent_pkts", 0)
    got = rec.get("recv_pkts", 0) + rec.get("control", {}).get("recv_pkts", 0)
    f = rec.get("forwarder")
    if f is None:
        parts = {"after": max(0, sent - got)}
    else:
        # The forwarder also carries ping and iperf3's control frames: a
        # few per second, not enough to matter against LOSS_SHARE.
        parts = {"before": max(0, sent - f["rx"]), "inside": sum(f["dropped"].values()),
                 "after": max(0, f["tx"] - got)}
    lost = sum(parts.values())
    rcv = rec.get("receiver", {})
    parts_detail = {"receiver_socket": rcv.get("socket_drops", 0),
                    "input_backlog": rcv.get("backlog_drops", 0)}
    if sent <= 0:
        return {"where": "nothing sent", "lost": parts, "sent": sent, **parts_detail}
    if lost < LOSS_SHARE * sent:
        where = "sender"
    else:
        where = {"before": "forwarder input", "inside": "forwarder",
                 "after": "receiver"}[max(parts, key=parts.get)]
    return {"where": where, "lost": parts, "sent": sent, **parts_detail}


LIMIT_TEXT = {
    "sender": "the sender (iperf3 on the shared tool CPU): the path carried all it sent",
    "forwarder input": "the forwarder's input: frames were lost before it read them (it did "
                       "not keep up)",
    "forwarder": "the forwarder itself (its own drop counters)",
    "receiver": "the receiver (iperf3 and the kernel's receive path on the tool CPU): frames "
                "sent towards its namespace were dropped at a CPU's input backlog or at its "
                "socket",
    "nothing sent": "nothing was sent",
}


# --- per-frame cost ---------------------------------------------------------------------------

def frame_cost(runs: list[dict], paths: list[str], size: int = 64) -> list[dict]:
    """Per path at `size`: the received packet rate (median), its inverse
    in ns per frame, the forwarder's own CPU time per frame it forwarded
    (linkemud busy-polls, so its figure is CPU held, not CPU needed) and
    what limited the runs."""
    out = []
    for path in paths:
        recs = [r for r in runs if r.get("path") == path and r.get("kind") == "udp"
                and r.get("size") == size]
        if not recs:
            continue
        pps = statistics.median(r["pps"] for r in recs)
        cpu = [r["forwarder_cpu_s"] / r["forwarder"]["tx"] * 1e9 for r in recs
               if r.get("forwarder_cpu_s") is not None and r.get("forwarder", {}).get("tx")]
        limits = sorted({r.get("limit", {}).get("where", "?") for r in recs})
        out.append({"path": path, "size": size, "pps": round(pps, 1),
                    "ns_per_frame": round(1e9 / pps, 1) if pps > 0 else None,
                    "forwarder_cpu_ns_per_frame": round(statistics.median(cpu), 1) if cpu
                    else None,
                    "limits": limits})
    return out


# --- --quick checks ------------------------------------------------------------------------------

def check(name: str, ok: bool | None, detail: str, measured=None, bound=None) -> dict:
    """ok None: not checked (the detail says why)."""
    return {"name": name, "pass": ok, "measured": measured, "bound": bound, "detail": detail}


def forwards_checks(runs: list[dict], paths: list[str]) -> list[dict]:
    out = []
    for path in paths:
        recs = [r for r in runs if r.get("path") == path]
        udp = [r for r in recs if r["kind"] == "udp"]
        tcp = [r for r in recs if r["kind"] == "tcp"]
        got = sum(r["recv_pkts"] for r in udp)
        pings = sum(r["ping"]["received"] for r in udp)
        tcp_ok = all(r["mbit_s"] > 0 for r in tcp)
        out.append(check(f"{path}: forwards", bool(udp) and got > 0 and pings > 0 and tcp_ok,
                         f"UDP datagrams received {got} in {len(udp)} runs, ping replies "
                         f"{pings}, TCP runs with data {sum(r['mbit_s'] > 0 for r in tcp)}"
                         f"/{len(tcp)}", measured=got, bound=1))
    return out


def conservation_checks(daemons: list[dict]) -> list[dict]:
    """From each daemon's final report: rx + dup = tx + dropped + in
    flight, per direction and class (linkemud computes it; `conserved`)."""
    out = []
    for d in daemons:
        detail = (f"{d['path']} round {d['round']}: final report conserved={d['conserved']} "
                  f"(a2b rx {d['a2b']['rx']}, tx {d['a2b']['tx']}, dropped "
                  f"{d['a2b']['dropped_total']}, in flight {d['a2b']['in_flight']})")
        out.append(check(f"{d['path']} round {d['round']}: conservation", bool(d["conserved"]),
                         detail))
    return out


def ratio_check(name: str, runs: list[dict], num: str, den: str, size: int,
                factor: float, alpha: float = RATIO_ALPHA) -> dict:
    """mean(num) >= factor x mean(den), UDP at `size`, over interleaved
    rounds, by a one-sided Welch t-test at `alpha` on num against den
    scaled by factor: it fails only on a shortfall below factor x that the
    rounds' own noise would explain in fewer than one invocation in
    1/alpha when the true ratio is exactly `factor` (normal rounds
    assumed). A median of three rounds against a fixed factor, as this
    check was before, failed CI at 0.842x on a machine whose quiet runs
    measure 0.96-1.05x: one slow burst can hold two of three rounds. The
    rounds' spread needs no gate of its own: noisier rounds widen the
    margin. Not checked with fewer than 2 rounds of either path (no
    variance to test against), nor when `den` carried nothing (mean 0: no
    ratio to test; the forwards check fails that path)."""
    a, b = values_of(runs, num, "udp", size), values_of(runs, den, "udp", size)
    if not a or not b:
        return check(name, None, f"not checked: no runs of {num if not a else den}")
    ma, mb = statistics.mean(a), statistics.mean(b)
    if mb <= 0:
        # A ratio against nothing is undefined: it was inf, which the
        # results file cannot hold (JSON), and 0 >= factor x 0 passed.
        return check(name, None, f"not checked: {den} carried nothing (mean {mb:.2f} Mbit/s "
                                 f"over {len(b)} rounds; {num} {ma:.2f})")
    sp = max(spread(a), spread(b))
    ratio = ma / mb
    text = (f"mean {ma:.2f} vs {mb:.2f} Mbit/s over {len(a)} and {len(b)} interleaved "
            f"rounds: {ratio:.3f}x (needs >= {factor:g}x); rounds varied by {sp:.1%}")
    if len(a) < 2 or len(b) < 2:
        return check(name, None, f"not checked, one round cannot show its noise: {text}",
                     measured=round(ratio, 4), bound=factor)
    floor = factor * mb - analysis.welch_margin(a, [factor * v for v in b], alpha)
    bound = floor / mb
    text += f"; one-sided Welch t at {alpha:g}: fails below {floor:.2f} Mbit/s ({bound:.3f}x)"
    return check(name, ma >= floor, text, measured=round(ratio, 4), bound=round(bound, 4))


def swc_checks(runs: list[dict], size: int = 64) -> list[dict]:
    """--quick's statistical checks, at levels that hold FAMILY_ALPHA for
    the three together (see there)."""
    out = [ratio_check(f"SWC 1 % via {t} >= {SWC_MIN_RATIO:g}x SWB UDP at {size} B", runs,
                       f"swc-1pct-{t}", "swb", size, SWC_MIN_RATIO) for t in ("fifo", "shm")]
    out.append(not_slower_check(f"shm not slower than the FIFO (all via IPC, UDP {size} B)", runs,
                                "swc-all-shm", "swc-all-fifo", size))
    return out


def not_slower_check(name: str, runs: list[dict], fast: str, slow: str, size: int) -> dict:
    """mean(fast) is not below mean(slow): ratio_check at 1x and
    NOT_SLOWER_ALPHA. The two may carry the same (when something else
    limits both), so equal paths differ by the rounds' noise; the test
    fails only when the shortfall is larger than that noise could make it
    in more than one invocation in 1/NOT_SLOWER_ALPHA."""
    return ratio_check(name, runs, fast, slow, size, 1.0, NOT_SLOWER_ALPHA)
