"""Render results files to one self-contained HTML page."""

from __future__ import annotations

import base64
import contextlib
import errno
import html
import os
from pathlib import Path

from linkemu.errors import LinkemuError
from linkemu.lab import results
from linkemu.lab.results import ResultsError
from linkemu.report import tables

CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1250px;color:#222}
h1{font-size:1.5em} h2{font-size:1.25em;border-bottom:1px solid #ccc;margin-top:2em}
h3{font-size:1.05em;margin-top:1.5em}
table{border-collapse:collapse;margin:.6em 0;font-size:.82em}
caption{text-align:left;font-weight:600;padding:.3em 0}
th,td{border:1px solid #ddd;padding:.2em .45em;text-align:right;white-space:nowrap}
thead th{background:#f3f3f3} tbody th{text-align:left;font-weight:500}
tr.published td,tr.published th{color:#555;background:#fafafa;font-style:italic}
tr.ours td,tr.ours th{font-weight:600}
p.note{font-size:.8em;color:#555;max-width:1100px;margin-top:0}
img{max-width:100%;border:1px solid #eee;margin:.4em 0}
.meta td,.meta th{text-align:left}
.warn{color:#a40;font-weight:600}
details{margin:.5em 0}
"""


def _img(title: str, png: bytes) -> str:
    b64 = base64.b64encode(png).decode("ascii")
    return (f'<figure><img alt="{html.escape(title)}" src="data:image/png;base64,{b64}">'
            f"<figcaption>{html.escape(title)}</figcaption></figure>")


def _meta(res: dict, path: str) -> str:
    m = res["metadata"]
    rows = [("file", path), ("experiment", res["experiment"]), ("mode", m.get("mode")),
            ("date", m.get("date")), ("linkemu", f"{m.get('linkemu_version')} (git "
             f"{(m.get('git_commit') or '?')[:12]}{', modified' if m.get('git_dirty') else ''})"),
            ("kernel", m.get("kernel")), ("CPU", f"{m.get('cpu_model')} x {m.get('cpus')}"),
            ("DPDK", m.get("dpdk_version")), ("driver", m.get("pmd")), ("seed", m.get("seed")),
            ("elapsed", f"{m.get('elapsed_s', 0):.0f} s")]
    body = "".join(f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>"
                   for k, v in rows)
    cfg = html.escape(", ".join(f"{k}={v}" for k, v in res.get("config", {}).items()))
    return (f'<table class="meta"><tbody>{body}</tbody></table>'
            f'<details><summary>configuration</summary><p class="note">{cfg}</p></details>')


def _section(res: dict, path: str, idx: int) -> str:
    from linkemu.report import plots
    out = [f"<h2>{idx}. {html.escape(res['experiment'])}: {html.escape(path)}</h2>",
           _meta(res, path)]
    if res.get("notes"):
        out.append("<h3>Notes</h3><ul>" + "".join(f"<li>{html.escape(n)}</li>"
                                                  for n in res["notes"]) + "</ul>")
    probs = [f"{r.get('id')}: {p}" for r in res.get("runs", []) for p in r.get("problems", [])]
    if probs:
        out.append('<h3 class="warn">Problems</h3><ul>' + "".join(
            f'<li class="warn">{html.escape(p)}</li>' for p in probs) + "</ul>")
    if res.get("rate_search"):
        for rs in res["rate_search"]:
            out.append(f"<p>Rate search, {rs['ip_len']} B: highest loss-free rate "
                       f"{rs['max_pps']:,.0f} pps (first failing "
                       f"{rs.get('first_failing_pps') or '-'}); criterion: "
                       f"{html.escape(rs.get('criterion', ''))}.</p>")
    out.append("<h3>Tables</h3>")
    out += [tables.render_html(t) for t in tables.tables_for(res)]
    if res["experiment"] == "delay-precision":
        sizes = sorted({g["ip_len"] for g in res["summary"].get("groups", [])}, reverse=True)
        pub = [n for s in sizes for n in tables.published.DELAY_TABLES_FOR_LEN.get(s, ())]
        if pub:
            out.append("<details><summary>published tables in full</summary>"
                       + "".join(tables.render_html(tables.published_delay_table(n)) for n in pub)
                       + "</details>")
    out.append("<h3>Plots</h3>")
    out += [_img(t, png) for t, png in plots.plots_for(res)]
    return "\n".join(out)


def _comparison(docs: list[tuple[str, dict]]) -> str:
    from linkemu.report import plots
    delay = [(Path(p).name, r) for p, r in docs if r["experiment"] == "delay-precision"]
    loss = [(Path(p).name, r) for p, r in docs if r["experiment"] == "loss-accuracy"]
    out = ["<h2>Comparison of the files</h2>"]
    if len(delay) >= 2:
        head = ["file", "group"]
        ins = sorted({c["inserted_ns"] for _n, r in delay for g in r["summary"]["groups"]
                      for c in g["columns"]})
        head += [f"sd @ {tables.fmt_inserted(i)} us" for i in ins]
        rows = []
        for name, r in delay:
            for g in r["summary"]["groups"]:
                by = {c["inserted_ns"]: c for c in g["columns"]}
                rows.append([name, f"{g['ip_len']} B {g['rate_class']}"]
                            + [tables.fmt_us(by[i]["sd_ns"]) if i in by else "-" for i in ins])
        out.append(tables.render_html(tables.Table("sd of the one-way delay (us) per file",
                                                   head, rows)))
        t, png = plots.sd_vs_published(delay)
        out.append(_img(t, png))
    if len(loss) >= 2:
        head = ["file"] + [f"measured % @ {tables.fmt_pct(p, 6)} %" for p in
                           sorted({r["specified"] for _n, d in loss for r in d["runs"]})]
        levels = sorted({r["specified"] for _n, d in loss for r in d["runs"]})
        rows = []
        for name, d in loss:
            by = {r["specified"]: r for r in d["runs"]}
            rows.append([name] + [tables.fmt_pct(by[p]["check"]["measured"], 6) if p in by
                                  else "-" for p in levels])
        out.append(tables.render_html(tables.Table("measured loss per file", head, rows)))
    return "\n".join(out) if len(out) > 1 else ""


@contextlib.contextmanager
def _reads(name: str, what: str):
    """The schema checks what every file must hold; the tables and plots
    also read fields it leaves free (config, optional records). A file
    without one (partial, or written by an older linkemu) is a
    ResultsError naming the file and the field, not a KeyError traceback."""
    try:
        yield
    except KeyError as e:
        raise ResultsError(f"{name}: {what} lack the field {e.args[0]!r} that the report "
                           f"reads (a partial results file, or one from an older "
                           f"linkemu?)") from None


def render(paths: list[str | Path]) -> str:
    docs = [(str(p), results.load(p)) for p in paths]   # ResultsError names the bad file
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'>",
             "<title>linkemu lab report</title>", f"<style>{CSS}</style></head><body>",
             "<h1>linkemu lab report</h1>",
             "<p class='note'>Drawn from the results files alone. Published numbers (DEMU and "
             "netem, docs/published.md) are shown in grey italics beside ours; they were "
             "measured with an FPGA tester on 10/1 GbE NICs, ours through a veth/AF_XDP test "
             "bed on a small VM: see docs/lab.md for how to read them.</p>"]
    if len(docs) > 1:
        with _reads(", ".join(p for p, _r in docs), "the files compared"):
            parts.append(_comparison(docs))
    for i, (p, res) in enumerate(docs, 1):
        with _reads(p, f"its {res['experiment']} results"):
            parts.append(_section(res, p, i))
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(paths: list[str | Path], out: str | Path) -> Path:
    """Render, then write atomically (OUT.html.tmp renamed over OUT.html);
    an output that cannot be written is a LinkemuError naming it, and the
    temporary file is removed."""
    text = render(paths)
    out = Path(out)
    tmp = out.with_name(out.name + ".tmp")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        if out.is_dir():
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, out)
    except OSError as e:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise LinkemuError(f"{out}: cannot write the report: {e.strerror or e}") from None
    return out
