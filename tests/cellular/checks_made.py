"""How the cellular bed tests read `linkemu lab cellular --quick`'s check
rows (python/linkemu/lab/cellular_quick.py). A row with pass None is a
check not made (its detail says why: no unit received, linkemud reported
no lateness); it is neither a pass nor a failure, as the lab's own
all_pass reads it. A row with pass False failed. And a verdict needs
checks made: a run that made none of a protocol's says nothing about it,
and counted as passed would hide a run that measured nothing."""

from __future__ import annotations


def problems(checks: dict[str, dict], names, least_made: dict[str, int]) -> list[str]:
    """What fails the checks `names` of a run (name -> check row): each
    named check missing from the report, each made that failed, and for
    each name prefix in least_made (e.g. "TCP:") fewer checks made among
    `names` than it asks."""
    out = [f"{n}: not in the report" for n in names if n not in checks]
    rows = [checks[n] for n in names if n in checks]
    out += [f"{c['name']}: {c['detail']}" for c in rows if c["pass"] is False]
    for prefix, least in least_made.items():
        made = [c for c in rows if c["name"].startswith(prefix) and c["pass"] is not None]
        if len(made) < least:
            unmade = [f"{c['name']} ({c['detail']})" for c in rows
                      if c["name"].startswith(prefix) and c["pass"] is None]
            out.append(f"{prefix} {len(made)} checks made, at least {least} needed"
                       + (f"; not made: {'; '.join(unmade)}" if unmade else ""))
    return out
