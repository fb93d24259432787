"""`linkemu profile list|show|check` and `linkemu run --profile NAME`."""

from __future__ import annotations

import argparse
import json
import textwrap

from linkemu import profiles
from linkemu.errors import LinkemuError


def register(sub) -> None:
    p = sub.add_parser("profile", help="list, show or check link profiles (profiles/*.toml)")
    psub = p.add_subparsers(dest="profile_cmd", required=True, metavar="list|show|check")
    lst = psub.add_parser("list", help="every profile with its description")
    lst.add_argument("--json", action="store_true")
    lst.set_defaults(func=cmd_list)
    show = psub.add_parser("show", help="one profile: links, description, source")
    show.add_argument("name", metavar="NAME|FILE.toml")
    show.add_argument("--json", action="store_true")
    show.set_defaults(func=cmd_show)
    chk = psub.add_parser("check", help="ask linkemud whether every profile's links parse")
    chk.add_argument("names", nargs="*", metavar="NAME|FILE.toml", help="default: all")
    chk.set_defaults(func=cmd_check)


def add_run_option(run_parser: argparse.ArgumentParser) -> None:
    run_parser.add_argument("--profile", metavar="NAME|FILE.toml",
                            help="links from a profile; --a2b/--b2a override a direction")


def _as_dict(p: profiles.Profile) -> dict:
    return {"name": p.name, "version": p.version, "description": p.description,
            "source": p.source, "a2b": p.a2b, "b2a": p.b2a, "path": str(p.path)}


def cmd_list(a: argparse.Namespace) -> int:
    all_profiles = profiles.list_profiles()
    if a.json:
        print(json.dumps([_as_dict(p) for p in all_profiles], indent=2))
        return 0
    width = max((len(p.name) for p in all_profiles), default=4)
    for p in all_profiles:
        print(f"{p.name:<{width}}  {p.description}")
    return 0


def cmd_show(a: argparse.Namespace) -> int:
    p = profiles.find(a.name)
    if a.json:
        print(json.dumps(_as_dict(p), indent=2))
        return 0
    print(f"{p.name} (version {p.version}): {p.description}")
    print(f"  a2b (src -> dst): {p.a2b or '(no impairment)'}")
    print(f"  b2a (dst -> src): {p.b2a or '(no impairment)'}")
    if p.source:
        print("  source:")
        print(textwrap.indent(p.source, "    "))
    print(f"  file: {p.path}")
    return 0


def cmd_check(a: argparse.Namespace) -> int:
    chosen = [profiles.find(n) for n in a.names] if a.names else profiles.list_profiles()
    problems = [msg for p in chosen for msg in profiles.check(p)]
    for msg in problems:
        print(msg)
    if problems:
        raise LinkemuError(f"{len(problems)} problem(s) in {len(chosen)} profile(s)")
    print(f"{len(chosen)} profile(s): every link parses")
    return 0
