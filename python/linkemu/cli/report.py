"""`linkemu report FILE... [-o OUT.html]`."""

from __future__ import annotations

from pathlib import Path

from linkemu.errors import UsageError


def register(sub) -> None:
    r = sub.add_parser("report", help="render lab results files to one HTML page",
                       description="Render one or more `linkemu lab` results files (.json or "
                                   ".json.gz) into a self-contained HTML page; several files "
                                   "are also compared.")
    r.add_argument("files", nargs="+", metavar="FILE", help="results files")
    r.add_argument("-o", "--output", type=Path, default=None, metavar="OUT.html",
                   help="HTML page to write (default: the first file's name with .html)")
    r.set_defaults(func=cmd_report, no_root=True)


def default_output(first: str) -> Path:
    p = Path(first)
    name = p.name
    for suf in (".json.gz", ".json", ".gz"):
        if name.endswith(suf):
            name = name[: -len(suf)]
            break
    return p.with_name(name + ".html")


def cmd_report(a) -> int:
    from linkemu.report import render
    out = a.output or default_output(a.files[0])
    if out.suffix.lower() not in (".html", ".htm"):
        raise UsageError(f"-o {out}: the report is an HTML page (name it .html)")
    render.write_report(a.files, out)
    print(f"report: {out} ({len(a.files)} results file{'s' if len(a.files) > 1 else ''})")
    return 0
