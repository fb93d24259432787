"""Link profiles: named, versioned descriptions of real links.

A profile is a TOML file in profiles/ (or a path given directly):

    name = "lte-uplink"            # must match the file name
    version = 1
    description = "4G uplink as measured by the aptpod 4G/5G study"
    source = "where the numbers come from"
    [a2b]
    link = "delay 20ms 4ms distribution normal rate 21mbit"
    [b2a]
    link = "delay 20ms 4ms distribution normal"

a2b is src -> dst. Links are in the daemon's grammar (docs/grammar.md), so
the daemon stays the single authority on what a link means: `check()` asks
`linkemud --check` about each one.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from linkemu.bed.paths import repo_root
from linkemu.daemon import daemon
from linkemu.errors import LinkemuError

PROFILE_DIR = repo_root() / "profiles"
_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,47}$")
_TOP_KEYS = {"name", "version", "description", "source", "a2b", "b2a"}
_DIR_KEYS = {"link"}


@dataclass(frozen=True)
class Profile:
    name: str
    version: int
    description: str
    source: str
    a2b: str
    b2a: str
    path: Path


class ProfileError(LinkemuError):
    """A profile that cannot be used; the message names the file and the problem."""


def profile_dir() -> Path:
    return PROFILE_DIR


def _require(cond: bool, path: Path, msg: str) -> None:
    if not cond:
        raise ProfileError(f"{path}: {msg}")


def load_file(path: Path) -> Profile:
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise ProfileError(f"{path}: cannot read: {e.strerror}") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ProfileError(f"{path}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as e:
        raise ProfileError(f"{path}: TOML syntax: {e}") from None
    unknown = set(data) - _TOP_KEYS
    _require(not unknown, path, f"unknown key(s) {', '.join(sorted(unknown))} "
                                f"(expected {', '.join(sorted(_TOP_KEYS))})")
    for key in ("name", "description"):
        _require(isinstance(data.get(key), str) and data[key].strip() != "", path,
                 f"'{key}' must be a non-empty string")
    _require(_NAME_RE.match(data["name"]) is not None, path,
             f"name '{data['name']}' must be lower-case letters, digits and '-'")
    _require(data["name"] == path.stem, path,
             f"name '{data['name']}' does not match the file name '{path.stem}'")
    version = data.get("version", 1)
    # bool is an int in Python: `version = true` is not a version
    _require(type(version) is int and version >= 1, path, "'version' must be an integer >= 1")
    source = data.get("source", "")
    _require(isinstance(source, str), path, "'source' must be a string")
    links = {}
    for d in ("a2b", "b2a"):
        sect = data.get(d, {})
        _require(isinstance(sect, dict), path, f"[{d}] must be a table with a 'link' key")
        unknown = set(sect) - _DIR_KEYS
        _require(not unknown, path, f"[{d}]: unknown key(s) {', '.join(sorted(unknown))} (expected link)")
        link = sect.get("link", "")
        _require(isinstance(link, str), path, f"[{d}] link must be a string of link grammar")
        # The daemon reads a C string (a NUL would cut the link short) and
        # a NUL in a file name cannot be resolved: text only.
        bad = daemon.control_character(link, "\t\n\r")
        _require(bad is None, path, f"[{d}] link holds the control character {bad!r}")
        links[d] = link.strip()
    base = path.resolve().parent
    return Profile(name=data["name"], version=version, description=data["description"].strip(),
                   source=source.strip(), a2b=absolute_files(links["a2b"], base),
                   b2a=absolute_files(links["b2a"], base), path=path)


_FILE_WORDS = ("trace", "trace-us", "distribution")
_BUILTIN_DISTS = {"uniform", "normal", "pareto", "paretonormal"}
# Words whose next words are names, not link words: `class NAME`, `punt
# TRANSPORT NAME|PATH` (docs/grammar.md). A class or a shm segment may be
# called `trace`.
_NAME_WORDS = {"class": 1, "punt": 2}


def _names_a_file(word: str, arg: str) -> bool:
    """Whether linkemud reads `arg` after `word` as a file: a trace's
    argument always; a distribution's when it is no built-in and has a '/'
    or ends in .dist (config.c dist_value). Any other word is left for the
    daemon to name in its error (a typo: 'nromal' is neither ...)."""
    if word != "distribution":
        return True
    return arg not in _BUILTIN_DISTS and ("/" in arg or (len(arg) > 5 and arg.endswith(".dist")))


def absolute_files(link: str, base: Path) -> str:
    """Rewrites relative FILE arguments (trace, trace-us, distribution
    FILE) against the profile's own directory, so a profile works from
    any working directory; built-in distribution names stay as they are."""
    words = link.split()
    i = 0
    while i < len(words) - 1:
        w, arg = words[i], words[i + 1]
        if w in _NAME_WORDS:
            i += 1 + _NAME_WORDS[w]
            continue
        if w in _FILE_WORDS and _names_a_file(w, arg) and not arg.startswith("/"):
            words[i + 1] = str((base / arg).resolve())
            i += 1
        i += 1
    return " ".join(words)


def list_profiles(directory: Path | None = None) -> list[Profile]:
    directory = directory or profile_dir()
    return [load_file(p) for p in sorted(directory.glob("*.toml"))]


def find(name_or_path: str, directory: Path | None = None) -> Profile:
    """A profile by name (profiles/NAME.toml) or by path to a .toml file."""
    p = Path(name_or_path)
    if p.suffix == ".toml" or "/" in name_or_path:
        return load_file(p)
    directory = directory or profile_dir()
    candidate = directory / f"{name_or_path}.toml"
    if not candidate.exists():
        known = ", ".join(pr.stem for pr in sorted(directory.glob("*.toml"))) or "none"
        raise ProfileError(f"no profile named '{name_or_path}' (known: {known})")
    return load_file(candidate)


def check(profile: Profile, linkemud: str | None = None) -> list[str]:
    """Asks the daemon whether each link parses; returns the problems."""
    binary = linkemud or str(daemon.require_binary())
    problems = []
    for d in ("a2b", "b2a"):
        link = getattr(profile, d)
        why = daemon.check_link(binary, link)
        if why is not None:
            problems.append(f"{profile.path}: [{d}] {why}")
    return problems
