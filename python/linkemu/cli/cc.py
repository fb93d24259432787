"""`linkemu cc list|load|unload|stats`: our BPF congestion controls.

    linkemu cc list [--json]         every algorithm the kernel offers, and ours
    linkemu cc load [NAME...]        build with clang and register (default: all ours)
    linkemu cc unload [NAME...]
    linkemu cc stats NAME [--json]   the algorithm's counters (losses, x/y steps, S)

The work is in linkemu.bed.bpfcc.
"""

from __future__ import annotations

import json

from linkemu.bed.bpfcc import ALGORITHMS, _pick, listing, load, stats, unload, unsupported


def register(sub) -> None:
    p = sub.add_parser("cc", help="our BPF congestion controls: list, load, unload, stats",
                       description="Build (clang) and register (bpftool struct_ops) the "
                                   "long-fat-pipe study's congestion controls.")
    csub = p.add_subparsers(dest="cc_cmd", metavar="COMMAND", required=True)
    ls = csub.add_parser("list", help="algorithms the kernel offers, and ours")
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=_cmd_list)
    for verb, fn in (("load", _cmd_load), ("unload", _cmd_unload)):
        q = csub.add_parser(verb, help=f"{verb} ours (default: all)")
        q.add_argument("names", nargs="*", metavar="NAME", help=", ".join(ALGORITHMS))
        q.set_defaults(func=fn)
    st = csub.add_parser("stats", help="an algorithm's counters since it was loaded")
    st.add_argument("name", metavar="NAME")
    st.add_argument("--json", action="store_true")
    st.set_defaults(func=_cmd_stats)


def _cmd_list(a) -> int:
    rows = listing()
    if a.json:
        print(json.dumps(rows, indent=2))
        return 0
    for r in rows:
        state = "available" if r["available"] else "not loaded"
        print(f"{r['name']:<12} {r['kind']:<11} {state:<11} {r['what']}")
    why = unsupported()
    if why:
        print(f"(ours cannot be loaded here: {why})")
    return 0


def _cmd_load(a) -> int:
    done = load(a.names)
    names = [x.name for x in _pick(a.names)]
    print(f"registered: {', '.join(done) or 'none (already loaded)'}; "
          f"choose with TCP_CONGESTION, iperf3 -C or ttcp --cc: {', '.join(names)}")
    return 0


def _cmd_unload(a) -> int:
    done = unload(a.names)
    print(f"unregistered: {', '.join(done) or 'none (not loaded)'}")
    return 0


def _cmd_stats(a) -> int:
    s = stats(a.name)
    if a.json:
        print(json.dumps(s, indent=2))
    else:
        for k, v in s.items():
            print(f"{k:<16} {v}")
    return 0
