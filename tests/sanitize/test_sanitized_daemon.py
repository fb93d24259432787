"""linkemud itself under AddressSanitizer + UndefinedBehaviorSanitizer, on
bed "lz": every stage on, ping and iperf3 both ways, live `set`s, a clean
stop, and not one sanitizer report (docs/reliability.md says what DPDK's
libraries need and what lsan.supp suppresses).

The sanitized binary is $LINKEMU_SAN_BUILD/src/dataplane/linkemud
(`make sanitize` builds it in build-san)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from kit import REPO, need
from kit.traffic import Traffic, clients, iperf_bytes
from linkemu.daemon.summary import conservation_problems

SAN_BUILD = Path(os.environ.get("LINKEMU_SAN_BUILD", REPO / "build-san"))
TRACE = REPO / "traces" / "pantheon_12mbps.trace"

# Every stage: jitter with reordering and a table, a loss chain, duplicate,
# corrupt, reorder with a gap, rate with overhead and a queue under CoDel
# with ECN, a slot serializer, a trace serializer, ECN on loss, classes.
A2B = (f"delay 10ms 2ms 20% distribution normal loss gemodel 1% 30% 70% 0% duplicate 1% "
       f"corrupt 0.5% reorder 2% 50% gap 3 rate 200mbit 20 limit 2000 codel ecn seed 7 ; "
       f"class icmp match proto icmp : delay 2ms slot 1ms 2ms packets 4 ; "
       f"class udp match proto udp dport 5302 : trace {TRACE} limit 3000")
B2A = "delay 5ms 1ms noreorder loss 0.5% 25% ecn duplicate 0.5% rate 100mbit limit-bytes 1mb drop-head"
# The bed starts lossless (see Traffic.start); every stage follows, live.
START = "delay 5ms"
LIVE_SETS = [
    ("a2b", A2B),
    ("b2a", B2A),
    ("a2b", "delay 3ms 1ms distribution pareto loss state 1% 20% 5% 50% 0.1% rate 150mbit limit 1500"),
    ("b2a", "slot distribution paretonormal 2ms 1ms bytes 64kb limit 4000"),
    ("a2b", A2B),
    ("b2a", f"trace {TRACE} once limit 2000 drop-head"),
    ("b2a", B2A),
]


def sanitizer_env(logdir: Path) -> dict:
    """halt_on_error: the first report ends the run (and fails the test);
    log_path: reports go to files we can find (the daemon's stderr is its
    log, shared with EAL's chatter)."""
    supp = Path(__file__).resolve().parent / "lsan.supp"
    return {
        "LINKEMUD": str(SAN_BUILD / "src" / "dataplane" / "linkemud"),
        "ASAN_OPTIONS": f"halt_on_error=1:detect_leaks=1:log_path={logdir}/asan:"
                        "detect_stack_use_after_return=1:strict_string_checks=1",
        "LSAN_OPTIONS": f"suppressions={supp}:print_suppressions=0",
        "UBSAN_OPTIONS": f"halt_on_error=1:print_stacktrace=1:log_path={logdir}/ubsan",
    }


def test_sanitized_daemon_with_every_stage(bed_up, run_link, monkeypatch, tmp_path):
    daemon = SAN_BUILD / "src" / "dataplane" / "linkemud"
    need(daemon.exists(), f"{daemon} not built: run `make sanitize`")
    for k, v in sanitizer_env(tmp_path).items():
        monkeypatch.setenv(k, v)        # the kit's `linkemu run` passes our environment on
    link = run_link(START, START)
    traffic = Traffic(bed_up, seconds=10, udp_rate="5M", ping_interval=0.1).start()
    with link.client() as ctl:
        for d, grammar in LIVE_SETS:
            ctl.call(f"set {d} {grammar}")
            time.sleep(1.0)
        results = traffic.finish()
        stats = ctl.stats()
    assert not conservation_problems(stats)
    for label, r in clients(results).items():
        assert iperf_bytes(r) > 0, label
    for side in ("src", "dst"):
        rc, out, err = results[f"ping {side}"]
        assert " 0 received" not in out, (side, out, err)
    link.stop()                         # clean stop; conservation, classes included
    reports = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(("asan", "ubsan")))
    texts = "\n".join((tmp_path / r).read_text(errors="replace")[:4000] for r in reports)
    assert not reports, f"sanitizer reports: {reports}\n{texts}"
    log = (bed_up.run_dir / "linkemud.log").read_text(errors="replace")
    for needle in ("AddressSanitizer", "LeakSanitizer", "runtime error:"):
        assert needle not in log, log[-4000:]
