"""delay-precision: how exactly does `delay D` delay each frame?

DEMU's experiment (docs/published.md [A]) on our bed: for each inserted delay D
(0, 1 us, 10 us, 100 us, 1 ms, 10 ms, 100 ms, 1 s), IP length (1500 B and
46 B) and rate (moderate and high), linkemud runs `delay D` on a2b and
owdprobe sends sequenced, timestamped UDP frames from src to dst. Per run:
the one-way delay of every frame (max, min, mean, sd, percentiles), the
daemon's own emulation-error histogram, loss/reordering, and the sender's
achieved rate. Per (length, rate): the reproduction error
|mean(D) - (mean(0) + D)| and the bound a correct emulator on this machine
stays under (analysis.repro_bound_ns), next to the published tables.

The machine's noise floor (noisefloor on the daemon's CPU before any daemon
runs, and on the tool CPU) is part of every result.

Each run gets its own daemon (start ~0.6 s), so its emulation-error
histogram belongs to that run alone, and `limit` is sized for D x rate.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from linkemu.bed import cpus
from linkemu.errors import LinkemuError, UsageError
from linkemu.instruments import noisefloor, owd
from linkemu.lab import analysis, results
from linkemu.lab.session import LabSession, Progress, limit_for, mbuf_budget

US = 1_000
MS = 1_000_000
S = 1_000_000_000
FULL_DELAYS_NS = (0, 1 * US, 10 * US, 100 * US, 1 * MS, 10 * MS, 100 * MS, 1 * S)
QUICK_DELAYS_NS = (0, 100 * US, 1 * MS, 10 * MS)
SIZES = (1500, 46)
MODERATE_PPS = 10_000.0
# --quick does not search for the high rate: it uses these, which the
# rate search on the reference machine (2 vCPUs, af_xdp bed) found
# sustainable with margin (see docs/lab.md).
QUICK_HIGH_PPS = {46: 100_000.0, 1500: 60_000.0}
# The high rate is this share of the highest loss-free rate found.
HIGH_SHARE = 0.8
SERIES_LEN = 10_000
HIST_BINS = 200
CDF_Q = ([0.0, 0.001, 0.01, 0.025, 0.05] + [i / 20 for i in range(2, 19)]
         + [0.925, 0.95, 0.975, 0.99, 0.995, 0.999, 0.9999, 1.0])


@dataclass
class DelayOptions:
    quick: bool = False
    delays_ns: tuple = FULL_DELAYS_NS
    sizes: tuple = SIZES
    moderate_pps: float = MODERATE_PPS
    high_pps: dict = field(default_factory=dict)    # ip_len -> pps; missing -> search
    rates: tuple = ("moderate", "high")
    seconds: float = 5.0                             # traffic per run
    noise_seconds: float = 3.0
    search_seconds: float = 1.0
    bed: str = "lab"
    pmd: str | None = None
    seed: int = 1
    keep_raw: bool = True
    quiet: bool = False

    @classmethod
    def quick_defaults(cls, **kw) -> "DelayOptions":
        base = dict(quick=True, delays_ns=QUICK_DELAYS_NS, seconds=1.0, noise_seconds=1.0,
                    high_pps=dict(QUICK_HIGH_PPS))
        base.update({k: v for k, v in kw.items() if v is not None})
        return cls(**base)

    def validate(self) -> None:
        if not self.delays_ns or any(d < 0 or d > 3600 * S for d in self.delays_ns):
            raise UsageError("delays must be 0 .. 3600 s")
        if 0 not in self.delays_ns:
            raise UsageError("the delays must include 0: the reproduction error is measured "
                             "against the path's own delay")
        for s in self.sizes:
            if not 46 <= s <= 1500:
                raise UsageError(f"IP length {s} is outside 46 .. 1500 (the af_xdp test bed "
                                 f"carries no jumbo frames)")
        for r in self.rates:
            if r not in ("moderate", "high"):
                raise UsageError(f"unknown rate class '{r}' (expected moderate or high)")
        if not 1 <= self.moderate_pps <= 5e6:
            raise UsageError("--moderate-pps must be 1 .. 5e6")
        if not 0.1 <= self.seconds <= 3600:
            raise UsageError("--seconds must be 0.1 .. 3600")


def fmt_delay(ns: int) -> str:
    if ns == 0:
        return "0"
    for unit, scale in (("s", S), ("ms", MS), ("us", US)):
        if ns % scale == 0:
            return f"{ns // scale}{unit}"
    return f"{ns}ns"


def planned_runs(o: DelayOptions) -> list[tuple[int, str, int]]:
    return [(size, rc, d) for size in o.sizes for rc in o.rates for d in o.delays_ns]


def run(o: DelayOptions, out_path: Path) -> dict:
    """Run the experiment and write the results file; returns the results."""
    o.validate()
    runs = planned_runs(o)
    search = [s for s in o.sizes if "high" in o.rates and s not in o.high_pps]
    planned = [o.noise_seconds * 2 + 1] + [10.0 * o.search_seconds + 3 for _ in search]
    for size, rc, d in runs:
        pps = o.moderate_pps if rc == "moderate" else o.high_pps.get(size, 100_000.0)
        planned.append(1.0 + o.seconds + d / S + (0.5 if pps * o.seconds > 2e5 else 0.1))
    prog = Progress(planned, quiet=o.quiet)
    res = results.new("delay-precision", quick=o.quick, seed=o.seed, config={
        "delays_ns": list(o.delays_ns), "sizes": list(o.sizes), "rates": list(o.rates),
        "moderate_pps": o.moderate_pps, "high_pps": {str(k): v for k, v in o.high_pps.items()},
        "high_share_of_max": HIGH_SHARE, "seconds_per_run": o.seconds, "bed": o.bed,
        "pmd": o.pmd or "af_xdp", "direction": "a2b (src -> dst)"})
    samples_dir = results.samples_dir_for(out_path) if o.keep_raw else None
    prog.step(f"noise floor: CPU {cpus.daemon_cpu()} (daemon's) and tool CPU, "
              f"{o.noise_seconds:g} s each")
    res["metadata"]["noise_floor"] = measure_noise(o.noise_seconds)

    with prog.naming_failures("delay-precision"), LabSession(o.bed, o.pmd, seed=o.seed) as sess, \
            tempfile.TemporaryDirectory(prefix="linkemu-lab-") as tmp:
        res["metadata"]["pmd"] = sess.pmd
        rates: dict = {}
        for size in o.sizes:
            rates[size] = {"moderate": o.moderate_pps}
            if "high" in o.rates:
                if size in o.high_pps:
                    rates[size]["high"] = float(o.high_pps[size])
                    rates[size]["high_from"] = "given" if not o.quick else "quick default"
                else:
                    prog.step(f"rate search, {size} B: the highest loss-free rate through "
                              f"the bed (delay 0)")
                    found = rate_search(sess, size, o.search_seconds, prog)
                    res.setdefault("rate_search", []).append(found)
                    rates[size]["high"] = round(found["max_pps"] * HIGH_SHARE, -2)
                    rates[size]["high_from"] = (f"{HIGH_SHARE:.0%} of the highest loss-free "
                                                f"rate found ({found['max_pps']:.0f} pps)")
        res["config"]["rates_used"] = {str(k): v for k, v in rates.items()}
        if samples_dir is not None:
            samples_dir.mkdir(parents=True, exist_ok=True)
        budget = mbuf_budget()
        run_id = 100
        for size, rc, d in runs:
            pps = rates[size][rc]
            rid = f"{size}B-{rc}-{fmt_delay(d)}"
            run_id += 1
            count = max(100, int(round(pps * o.seconds)))
            limit = limit_for(d, pps)
            prog.step(f"{rid}: delay {fmt_delay(d)}, {size} B, {pps:.0f} pps x {count} frames")
            if limit > budget:
                note = (f"{rid}: skipped: delay x rate needs limit {limit} frames, more than the "
                        f"~{budget} the free hugepages hold")
                res["notes"].append(note)
                prog.note(note)
                continue
            raw = (samples_dir / f"{rid}.owd") if samples_dir else Path(tmp) / f"{rid}.owd"
            rec = one_run(sess, rid, size, rc, pps, d, count, limit, run_id, raw)
            if samples_dir is not None:
                rec["samples"] = {"file": f"{samples_dir.name}/{raw.name}",
                                  "format": "owdprobe-bin-1", "records": rec["stats_ns"]["count"]}
            else:
                raw.unlink(missing_ok=True)
            res["runs"].append(rec)
            prog.note(_run_line(rec))
            for p in rec["problems"]:
                prog.note(f"problem: {p}")
    res["summary"] = summarise(res)
    note_contention(res)
    res["metadata"]["elapsed_s"] = round(prog.elapsed(), 1)
    results.write(res, out_path)
    return res


def measure_noise(seconds: float) -> dict:
    """noisefloor on the daemon's CPU and on the first tool CPU, before any
    daemon runs, with each one's stall residual (analysis.stall_residual_ns)."""
    out = {}
    dcpu = cpus.daemon_cpu()
    tools = cpus.tool_cpu_list()
    for role, cpu in (("daemon_cpu", dcpu), ("tool_cpu", tools[0] if tools else None)):
        if cpu is None:
            continue
        nf = noisefloor.noise_floor(cpu, seconds)
        nf["stall_residual_ns"] = round(analysis.stall_residual_ns(nf), 2)
        out[role] = nf
    return out


def one_run(sess: LabSession, rid: str, size: int, rc: str, pps: float, d: int, count: int,
            limit: int, run_id: int, raw: Path) -> dict:
    import numpy as np
    grammar = f"delay {d}ns limit {limit}"
    spec = owd.ProbeSpec(ip_len=size, pps=pps, count=count, run_id=run_id % 65536,
                                 samples=raw, idle_s=1.0, start_timeout_s=d / S + 10.0)
    with sess.link(grammar) as link:
        pr = owd.probe(sess.bed, spec)
    snd, rcv = pr["sender"], pr["receiver"]
    a = owd.read_samples(raw)
    delays = (a["rx_ns"] - a["send_ns"]).astype(np.int64)
    if delays.size == 0:
        raise LinkemuError(f"{rid}: no frame arrived (sender sent {snd.get('sent')})")
    st = analysis.summary(delays)
    st["se_batch_means"] = analysis.batch_means_se(delays)
    excess = delays - d
    mid = max(0, delays.size // 2 - SERIES_LEN // 2)
    series = delays[mid:mid + SERIES_LEN]
    lo, width, counts, above = analysis.excess_histogram(excess, HIST_BINS)
    a2b = link.a2b
    problems = list(link.problems)
    lost = int(rcv["lost"])
    if lost:
        problems.append(f"{lost} of {count} frames lost: {where_lost(snd, rcv, a2b)}")
    if rcv.get("clock_step_ns") and abs(rcv["clock_step_ns"]) > 1000:
        problems.append(f"CLOCK_REALTIME was stepped by {rcv['clock_step_ns']} ns during the run")
    if snd.get("achieved_pps", 0) < 0.98 * pps:
        problems.append(f"sender achieved {snd.get('achieved_pps', 0):.0f} pps of {pps:.0f}")
    return {
        "id": rid, "ip_len": size, "rate_class": rc, "requested_pps": pps, "inserted_ns": d,
        "grammar": grammar, "limit": limit, "frames": count,
        "sender": _pick(snd, ("sent", "achieved_pps", "achieved_ip_bps", "achieved_l1_bps",
                              "send_span_s", "mean_batch", "calls", "retries", "lateness_ns",
                              "call_ns", "clock", "spin_ns")),
        "receiver": _pick(rcv, ("received", "lost", "duplicates", "reordered",
                                "max_reorder_distance", "socket_drops", "rx_timestamp", "clock",
                                "clock_step_ns", "rx_pps", "rx_wakeup_ns", "delay_ns",
                                "no_kernel_timestamp", "foreign")),
        "daemon": {"config": a2b.get("config"), "rx": a2b.get("rx"), "tx": a2b.get("tx"),
                   "dropped": a2b.get("dropped"), "in_flight": a2b.get("in_flight"),
                   "emulation_error_ns": a2b.get("emulation_error_ns"),
                   "layout": (link.final or {}).get("layout"),
                   "tsc_hz": (link.final or {}).get("tsc_hz")},
        "stats_ns": st,
        "series": {"first_index": int(mid), "delay_ns": [int(x) for x in series]},
        "histogram": {"of": "delay - inserted (ns)", "lo_ns": lo, "width_ns": width,
                      "counts": [int(c) for c in counts], "above": above},
        "quantiles": {"q": CDF_Q, "excess_ns": [float(x) for x in np.quantile(excess, CDF_Q)]},
        "samples": None,
        "contention": list(link.contention),
        "problems": problems,
    }


def note_contention(res: dict) -> None:
    """One note for the whole file when other daemons shared the machine."""
    runs = res["runs"] + list(res.get("tcp", []))
    hit = [r for r in runs if r.get("contention")]
    if hit:
        res["notes"].append(
            f"{len(hit)} of {len(runs)} runs shared the machine with another busy-polling "
            f"linkemud ({hit[0]['contention'][0]}): their figures show CPU sharing, not "
            f"linkemu's precision; rerun on a quiet machine")


def where_lost(snd: dict, rcv: dict, a2b: dict) -> str:
    """Which part of the path lost the frames: before linkemud (sent but
    never received by it: the sender's stack, the veth, the AF_XDP RX ring),
    inside it (its drop causes), after it (sent by it, never delivered:
    veth, the receiver's backlog or socket)."""
    before = int(snd.get("sent", 0)) - int(a2b.get("rx", 0))
    after = int(a2b.get("tx", 0)) - int(rcv.get("received", 0))
    return (f"{before} before linkemud, {sum(a2b.get('dropped', {}).values())} inside it "
            f"({_nonzero(a2b.get('dropped', {}))}), {after} after it (socket drops "
            f"{rcv.get('socket_drops', 0)})")


def _pick(d: dict, keys) -> dict:
    return {k: d[k] for k in keys if k in d}


def _nonzero(drops: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in drops.items() if v) or "none"


def _run_line(rec: dict) -> str:
    st = rec["stats_ns"]
    emu = rec["daemon"].get("emulation_error_ns") or {}
    return (f"mean {st['mean'] / 1e3:.2f} us, sd {st['sd'] / 1e3:.2f} us, min "
            f"{st['min'] / 1e3:.2f}, max {st['max'] / 1e3:.2f} us; emulation error p99 "
            f"{(emu.get('p99') or 0) / 1e3:.1f} us; achieved "
            f"{rec['sender'].get('achieved_pps', 0):.0f} pps; lost {rec['receiver'].get('lost')}")


def rate_search(sess: LabSession, size: int, seconds: float, prog: Progress,
                start_pps: float = 50_000.0, step: float = 1.25, max_pps: float = 2e6,
                bisections: int = 3) -> dict:
    """The highest rate at which probe + bed carry every frame: a geometric
    ladder from start_pps until a trial fails, then bisection between the
    last good and the first bad rate. A trial passes when nothing is lost
    (probe's count and socket drops) and the sender achieves >= 99 % of the
    requested rate. One daemon (`delay 0`, limit 20000) carries all trials."""
    trials = []

    def trial(pps: float, rid: int) -> bool:
        count = max(1000, int(pps * seconds))
        pr = owd.probe(sess.bed, owd.ProbeSpec(
            ip_len=size, pps=pps, count=count, run_id=rid, samples=None, idle_s=0.5))
        s, r = pr["sender"], pr["receiver"]
        ok = (r["lost"] == 0 and r.get("socket_drops", 0) == 0
              and s.get("achieved_pps", 0) >= 0.99 * pps)
        trials.append({"pps": pps, "frames": count, "achieved_pps": s.get("achieved_pps"),
                       "lost": r["lost"], "socket_drops": r.get("socket_drops", 0),
                       "delay_p99_ns": r.get("delay_ns", {}).get("p99"), "pass": ok})
        prog.note(f"{pps:>9.0f} pps: achieved {s.get('achieved_pps', 0):.0f}, lost {r['lost']}"
                  f" -> {'ok' if ok else 'fail'}")
        return ok

    good, bad = 0.0, None
    rid = 30000 + size
    with sess.link("delay 0ns limit 20000"):
        pps = start_pps
        while pps <= max_pps:
            rid += 1
            if trial(pps, rid):
                good = pps
                pps *= step
            else:
                bad = pps
                break
        if bad is not None and good > 0:
            for _ in range(bisections):
                mid = (good + bad) / 2
                rid += 1
                if trial(mid, rid):
                    good = mid
                else:
                    bad = mid
    if good == 0:
        raise LinkemuError(f"rate search ({size} B): even {start_pps:.0f} pps lost frames; "
                           f"see the trials above")
    return {"ip_len": size, "max_pps": good, "first_failing_pps": bad, "trials": trials,
            "criterion": "no frame lost, no socket drop, >= 99 % of the requested rate achieved",
            "seconds_per_trial": seconds}


def summarise(res: dict) -> dict:
    """The published table layout per (IP length, rate class), with the
    reproduction error and its bound."""
    noise = res["metadata"].get("noise_floor", {})
    r_d = (noise.get("daemon_cpu") or {}).get("stall_residual_ns", 0.0)
    r_t = (noise.get("tool_cpu") or {}).get("stall_residual_ns", 0.0)
    groups = []
    keys = []
    for r in res["runs"]:
        k = (r["ip_len"], r["rate_class"])
        if k not in keys:
            keys.append(k)
    for size, rc in keys:
        runs = sorted((r for r in res["runs"] if r["ip_len"] == size and r["rate_class"] == rc),
                      key=lambda r: r["inserted_ns"])
        base = next((r for r in runs if r["inserted_ns"] == 0), None)
        cols = []
        for r in runs:
            st = r["stats_ns"]
            emu = r["daemon"].get("emulation_error_ns") or {}
            col = {"inserted_ns": r["inserted_ns"], "frames": r["frames"],
                   "received": r["receiver"].get("received"), "lost": r["receiver"].get("lost"),
                   "achieved_pps": r["sender"].get("achieved_pps"),
                   "max_ns": st["max"], "min_ns": st["min"], "mean_ns": st["mean"],
                   "sd_ns": st["sd"], "p50_ns": st["p50"], "p99_ns": st["p99"],
                   "p999_ns": st["p999"], "se_ns": st["se_batch_means"],
                   "emu_p50_ns": emu.get("p50"), "emu_p99_ns": emu.get("p99"),
                   "emu_p999_ns": emu.get("p999"), "emu_max_ns": emu.get("max"),
                   "repro_ns": None, "repro_bound_ns": None, "repro_ok": None}
            if base is not None and r is not base:
                bst = base["stats_ns"]
                col["repro_ns"] = analysis.reproduction_error(st["mean"], bst["mean"],
                                                              r["inserted_ns"])
                # Both SEs are estimated (batch means, 19 df each): the
                # bound uses t's quantile, not the normal's (repro_bound_ns).
                col["repro_bound_ns"] = analysis.repro_bound_ns(
                    st["se_batch_means"], bst["se_batch_means"], r["inserted_ns"], r_d, r_t,
                    df_d=analysis.batch_means_df(st["count"]),
                    df_0=analysis.batch_means_df(bst["count"]))
                col["repro_ok"] = col["repro_ns"] <= col["repro_bound_ns"]
            cols.append(col)
        groups.append({"ip_len": size, "rate_class": rc,
                       "pps": runs[0]["requested_pps"] if runs else None, "columns": cols})
    return {"groups": groups, "stall_residual_ns": {"daemon_cpu": r_d, "tool_cpu": r_t}}
