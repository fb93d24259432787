"""ping across a bed, parsed per reply.

ping is the tool people already trust for round-trip time; we keep every
reply's time= value and compute medians ourselves rather than trusting
ping's avg/mdev. It runs inside the bed's source namespace, pinned to the
tool CPUs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from linkemu.bed import netns
from linkemu.bed.cpus import tool_cpus
from linkemu.bed.testbed import Bed
from linkemu.errors import LinkemuError
from linkemu.instruments.stats import percentile

# One reply line. A line ending "(DUP!)" is a second copy of a reply already
# counted (a link that duplicates, e.g. `duplicate 1%`): ping itself counts
# it apart ("+N duplicates") and leaves it out of "received" and of its own
# min/avg/max, so it must not add a reply or an RTT here either.
_REPLY_RE = re.compile(r"\btime=([0-9.]+) ms(?P<dup>[^\n]*\(DUP!\))?")


@dataclass
class PingResult:
    transmitted: int
    rtts_ms: list[float] = field(default_factory=list)
    duplicates: int = 0        # "(DUP!)" replies, not in rtts_ms

    @property
    def received(self) -> int:
        return len(self.rtts_ms)

    def summary(self) -> dict:
        r = self.rtts_ms
        return {"transmitted": self.transmitted, "received": self.received,
                "duplicates": self.duplicates,
                "min_ms": min(r) if r else None,
                "median_ms": percentile(r, 50) if r else None,
                "p90_ms": percentile(r, 90) if r else None,
                "max_ms": max(r) if r else None}


def parse_ping(text: str) -> PingResult:
    """Per-reply parsing of `ping -n` output (replies' time= values, so we
    compute medians ourselves rather than trusting ping's avg/mdev)."""
    replies = list(_REPLY_RE.finditer(text))
    rtts = [float(m.group(1)) for m in replies if not m.group("dup")]
    m = re.search(r"(\d+) packets transmitted", text)
    return PingResult(int(m.group(1)) if m else len(rtts), rtts,
                      duplicates=sum(1 for m in replies if m.group("dup")))


def ping(bed: Bed, count: int = 20, interval: float = 0.2, size: int = 56,
         deadline_s: float | None = None) -> PingResult:
    """ping src -> dst. Replies lost to the emulator are fine (not an error).
    With deadline_s, ping stops after that long (-w) even if fewer than
    `count` went out: on a busy machine ping's own timer slips."""
    cmd = ["ping", "-n", "-c", str(count), "-i", str(interval), "-s", str(size),
           "-W", "2", bed.addr_dst]
    if deadline_s is not None:
        cmd[-1:-1] = ["-w", f"{deadline_s:g}"]
    limit = deadline_s if deadline_s is not None else count * interval
    cp = netns.ns_run(bed.ns_src, cmd, cpus=tool_cpus(), check=False, timeout=limit + 30)
    if cp.returncode not in (0, 1):   # 1 = some replies missing
        raise LinkemuError(f"ping failed ({cp.returncode}): {cp.stderr.strip()}")
    return parse_ping(cp.stdout)
