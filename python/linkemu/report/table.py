"""One table of a report: its rows, and its rendering as text (terminal)
or HTML (report). The study-specific tables (tables.py and each study's
module) build these; they import this, never each other."""

from __future__ import annotations

import html
from dataclasses import dataclass, field


@dataclass
class Table:
    title: str
    header: list[str]
    rows: list[list[str]]
    note: str = ""
    row_classes: list[str] = field(default_factory=list)   # per row: "", "ours", "published"


def render_text(t: Table) -> str:
    widths = [max(len(str(r[i])) for r in [t.header] + t.rows) for i in range(len(t.header))]
    line = lambda r: "  ".join(str(c).rjust(w) if i else str(c).ljust(w)
                               for i, (c, w) in enumerate(zip(r, widths)))
    out = [t.title, line(t.header), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in t.rows]
    return "\n".join(out)


def render_html(t: Table) -> str:
    e = html.escape
    parts = [f"<table><caption>{e(t.title)}</caption><thead><tr>"]
    parts += [f"<th>{e(h)}</th>" for h in t.header]
    parts.append("</tr></thead><tbody>")
    for i, r in enumerate(t.rows):
        cls = t.row_classes[i] if i < len(t.row_classes) else ""
        parts.append(f'<tr class="{cls}">' if cls else "<tr>")
        parts += [f"<td>{e(str(c))}</td>" if j else f"<th>{e(str(c))}</th>"
                  for j, c in enumerate(r)]
        parts.append("</tr>")
    parts.append("</tbody></table>")
    if t.note:
        parts.append(f'<p class="note">{e(t.note)}</p>')
    return "".join(parts)
