"""One run of `linkemu units` across the lab's bed, as lab cellular records it."""

from __future__ import annotations

from pathlib import Path

from linkemu.instruments import units as units_run
from linkemu.instruments import units_stats
from linkemu.instruments.units_client import ClientOptions
from linkemu.instruments.units_schedule import Schedule
from linkemu.lab.session import LabSession

UNITS_PORT = 9400


def schedule(count: int, align_ns: int = 0) -> Schedule:
    return Schedule(count=count, align_ns=align_ns)   # the study's: 8 B, 1 ms, flushes of 10


def units_once(sess: LabSession, rid: str, proto: str, count: int, delay_ns: int | None,
               samples_dir: Path, keep: bool, out_path: Path, run_id: int,
               series: bool, port: int = UNITS_PORT, align_ns: int = 0) -> dict:
    """One run of `linkemu units` across the bed; its raw samples go to
    samples_dir (referenced from the results file when keep)."""
    samples = (samples_dir / f"{rid}.npy").resolve()
    client = ClientOptions(proto=proto, port=port, schedule=schedule(count, align_ns),
                           run_id=run_id, flush_times=flush_times_path(samples))
    r = units_run.run_on_bed(sess.bed, units_run.BedRun(client=client, delay_ns=delay_ns,
                                                        samples=samples))
    srv, cli = r["server"], r["client"]
    rec = {"id": rid, "kind": "units", "proto": proto, "count": count,
           "client": {k: cli[k] for k in ("timing", "flushes") if k in cli}
           | {k: cli.get(k) for k in ("cc", "nodelay", "send_errors") if k in cli},
           "server": {k: v for k, v in srv.items() if k != "samples"},
           "samples": (str(samples.relative_to(out_path.resolve().parent)) if keep
                       else None),
           "flush_times": (str(flush_times_path(samples).relative_to(
               out_path.resolve().parent)) if keep else None),
           "problems": []}
    if series:
        a = units_stats.read_samples(samples)
        seq, lat = units_stats.series_us(a["seq"], a["gen_ns"], a["rx_ns"])
        rec["series"] = {"seq": seq, "latency_us": lat}
    if srv["lost"]:
        rec["problems"].append(f"{srv['lost']} of {srv['expected']} units lost")
    return rec


def flush_times_path(samples: Path) -> Path:
    """Where the client writes each flush's send time, beside the samples."""
    return samples.with_name(samples.stem + "-flushes.npy")


def unit_line(rec: dict) -> str:
    s = rec["server"]
    lat = s["latency_ns"]
    band = s.get("band", {})
    return (f"{rec['id']}: {s['received']}/{s['expected']} units, latency p1 "
            f"{lat.get('p1', 0) / 1e6:.1f} p50 {lat.get('p50', 0) / 1e6:.1f} p99 "
            f"{lat.get('p99', 0) / 1e6:.1f} ms, outside band {band.get('share_outside', 0):.1%}, "
            f"largest arrival group {s['groups']['max']}")
