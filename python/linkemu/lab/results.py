"""Results files: one JSON document per experiment run (optionally gzipped).

    {"schema": "linkemu-lab/1", "experiment": "delay-precision" | "loss-accuracy",
     "metadata": {versions, machine, date, mode, seed, noise_floor, ...},
     "config": {...}, "runs": [...], "summary": {...}, "notes": [...], ...}

Everything a report draws is in the file itself (series of 10,000 delays,
histograms, quantiles, run-length histograms, cwnd series), so a report can
be re-drawn without re-running. Raw per-frame samples, when kept, are in a
sibling directory `<name>.samples/` referenced by relative path.

The schema is schema.json beside this file; validate() checks a document
against it (jsonschema) and adds the checks a schema cannot express.
"""

from __future__ import annotations

import datetime as _dt
import gzip
import json
import os
import platform
import subprocess
from pathlib import Path

from linkemu import __version__, newfile
from linkemu.bed.paths import repo_root
from linkemu.errors import LinkemuError

SCHEMA_ID = "linkemu-lab/1"
SCHEMA_PATH = Path(__file__).with_name("schema.json")
EXPERIMENTS = ("delay-precision", "loss-accuracy", "lfp", "cellular", "forwarding")


class ResultsError(LinkemuError):
    """A results file cannot be read or does not match the schema."""


def new(experiment: str, quick: bool, seed: int | None, config: dict) -> dict:
    return {"schema": SCHEMA_ID, "experiment": experiment,
            "metadata": metadata(quick, seed), "config": config,
            "runs": [], "summary": {}, "notes": []}


def _cmd(argv: list[str], cwd: Path | None = None) -> str | None:
    try:
        cp = subprocess.run(argv, capture_output=True, text=True, timeout=10, cwd=cwd)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return cp.stdout.strip() if cp.returncode == 0 else None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def metadata(quick: bool, seed: int | None) -> dict:
    root = repo_root()
    commit = _cmd(["git", "rev-parse", "HEAD"], root)
    dirty = _cmd(["git", "status", "--porcelain", "--untracked-files=no"], root)
    return {
        "linkemu_version": __version__,
        "git_commit": commit,
        "git_dirty": bool(dirty) if dirty is not None else None,
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "mode": "quick" if quick else "full",
        "seed": seed,
        "kernel": platform.release(),
        "cpu_model": _cpu_model(),
        "cpus": os.cpu_count(),
        "dpdk_version": _cmd(["pkg-config", "--modversion", "libdpdk"]),
        "python": platform.python_version(),
        "hostname": platform.node(),
        "noise_floor": {},
    }


def samples_dir_for(path: Path) -> Path:
    name = path.name
    for suf in (".json.gz", ".json"):
        if name.endswith(suf):
            name = name[: -len(suf)]
            break
    return path.with_name(name + ".samples")


def default_path(experiment: str) -> Path:
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path(f"linkemu-lab-{experiment}-{stamp}.json.gz")


def check_writable(path: Path) -> None:
    """ResultsError unless a results file can be written at `path`: run
    before a study, so that a path that cannot take it is refused in a
    second, not after the hours of measuring whose file it was to hold.
    Makes the directory (as write() would) and tries a temporary file."""
    if path.is_dir():
        raise ResultsError(f"{path}: is a directory, not a results file name")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        f, tmp = newfile.new_beside(path)
        f.close()
        tmp.unlink()
    except OSError as e:
        raise ResultsError(f"{path}: cannot write the results file: {e.strerror or e}")


def write(res: dict, path: Path) -> None:
    """Validate, then write atomically (gzip when the name ends in .gz):
    a crash leaves the old file or the new one whole, never half of one."""
    validate(res, str(path))
    data = (json.dumps(res, indent=None, separators=(",", ":"), allow_nan=False) + "\n").encode()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # fsync: the data on disk before the name points at it
        with newfile.replacing(path, fsync=True) as f:
            if path.name.endswith(".gz"):
                with gzip.GzipFile(fileobj=f, mode="wb", compresslevel=6) as gz:
                    gz.write(data)
            else:
                f.write(data)
    except OSError as e:
        raise ResultsError(f"{path}: cannot write the results file: {e.strerror or e}") from None


def load(path: str | Path) -> dict:
    """Read and validate a results file; ResultsError names the file and
    what is wrong with it."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise ResultsError(f"{p}: no such file")
    except OSError as e:
        raise ResultsError(f"{p}: cannot read: {e.strerror or e}")
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as e:
            raise ResultsError(f"{p}: corrupt gzip data: {e}")
    try:
        doc = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ResultsError(f"{p}: not a results file (not UTF-8 text: {e.reason} at byte "
                           f"{e.start})")
    except json.JSONDecodeError as e:
        raise ResultsError(f"{p}: not valid JSON: {e.msg} at line {e.lineno} column {e.colno}")
    validate(doc, str(p))
    return doc


def _schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text())


def validate(doc, name: str = "results") -> None:
    """Raise ResultsError (naming `name`, the JSON path and the problem) if
    doc does not follow schema.json or is inconsistent in ways the schema
    cannot express."""
    import jsonschema
    if not isinstance(doc, dict):
        raise ResultsError(f"{name}: not a results file (top level is "
                           f"{type(doc).__name__}, expected an object)")
    if doc.get("schema") != SCHEMA_ID:
        raise ResultsError(f"{name}: not a linkemu lab results file (schema is "
                           f"{doc.get('schema')!r}, expected {SCHEMA_ID!r})")
    v = jsonschema.Draft202012Validator(_schema())
    errors = sorted(v.iter_errors(doc), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    if errors:
        e = errors[0]
        where = "/".join(str(x) for x in e.absolute_path) or "(top level)"
        more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
        raise ResultsError(f"{name}: does not match the results schema at {where}: "
                           f"{e.message[:300]}{more}")
    if doc["experiment"] == "delay-precision":
        for r in doc["runs"]:
            h = r["histogram"]
            if len(r["quantiles"]["q"]) != len(r["quantiles"]["excess_ns"]):
                raise ResultsError(f"{name}: run {r['id']}: quantiles q and excess_ns differ "
                                   f"in length")
            if sum(h["counts"]) + h["above"] > r["stats_ns"]["count"]:
                raise ResultsError(f"{name}: run {r['id']}: histogram holds more frames than "
                                   f"the run received")
