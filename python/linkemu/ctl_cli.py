"""The control-side subcommands of `linkemu`: ctl, stats, capture, scenario,
and the hook that lets `linkemu run --scenario FILE` play a scenario.

cli.py calls register(sub) once; everything here follows its conventions:
LinkemuError -> exit 1 with one message, UsageError -> exit 2. A command
the daemon refuses prints the daemon's message verbatim and exits 1.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from linkemu import capture, control, paths, scenario, testbed, watch
from linkemu.control import DEFAULT_TIMEOUT_S, DaemonRefused
from linkemu.cpus import tool_cpus
from linkemu.errors import LinkemuError, UsageError
from linkemu.interrupts import interruptible
from linkemu.summary import fmt_direction

SCENARIO_LOG = "scenario.json"
SCENARIO_PID = "scenario.pid"
SCENARIO_OUT = "scenario.log"


def _err(msg: str) -> None:
    print(f"linkemu: {msg}", file=sys.stderr)


def _refused(e: DaemonRefused) -> int:
    print(f"linkemud: {e}", file=sys.stderr)
    return 1


# --- ctl -------------------------------------------------------------------------------

def format_stats(st: dict) -> str:
    head = (f"linkemud {st.get('version', '?')}: layout {st.get('layout', '?')}, "
            f"{st.get('lcores', '?')} lcore(s), up {st.get('uptime_s', 0):.1f} s (live)")
    if "mempool_in_use" in st:
        head += f", mbufs in use {st['mempool_in_use']}"
    lines = [head]
    for name in ("a2b", "b2a"):
        d = st.get("directions", {}).get(name)
        if d is not None:
            lines += fmt_direction(name, d)
    return "\n".join(lines)


def cmd_ctl(a: argparse.Namespace) -> int:
    bed = testbed.bed_for(a.bed)
    if a.ctl_command == "telemetry":
        reply = control.telemetry_query(control.telemetry_path(bed.file_prefix), a.command,
                                        a.timeout)
        print(json.dumps(reply, indent=2))
        return 0
    with control.connect_bed(bed, a.timeout) as c:
        try:
            if a.ctl_command == "set":
                reply = c.set(a.direction, " ".join(a.grammar))
                if a.json:
                    print(json.dumps(reply))
                else:
                    print(f"{a.direction}: {reply.get('config') or '(no impairment)'}")
            elif a.ctl_command == "show":
                links = c.show()
                if a.json:
                    print(json.dumps(links, indent=2))
                else:
                    for d, g in links.items():
                        print(f"{d}: {g or '(no impairment)'}")
            elif a.ctl_command == "stats":
                st = c.stats()
                print(json.dumps(st, indent=2) if a.json else format_stats(st))
            elif a.ctl_command == "reset-stats":
                c.reset_stats()
                print("counters and histograms reset")
            elif a.ctl_command == "help":
                print(c.help())
            elif a.ctl_command == "raw":
                reply = c.request(a.line)
                print(json.dumps(reply))
                return 0 if reply.get("ok") is True else 1
        except DaemonRefused as e:
            return _refused(e)
    return 0


# --- stats -----------------------------------------------------------------------------

def cmd_stats(a: argparse.Namespace) -> int:
    bed = testbed.bed_for(a.bed)
    if a.interval <= 0:
        raise UsageError("--interval must be more than 0")
    count = 1 if a.once else a.count
    if count is not None and count < 1:
        raise UsageError("--count must be at least 1")
    with control.connect_bed(bed, a.timeout) as c:
        try:
            if a.watch or count is not None:
                return watch.watch(c, bed.name, a.interval, count, as_json=a.json)
            st = c.stats()
        except DaemonRefused as e:
            return _refused(e)
    print(json.dumps(st, indent=2) if a.json else format_stats(st))
    return 0


# --- capture -----------------------------------------------------------------------------

def cmd_capture(a: argparse.Namespace) -> int:
    bed = testbed.bed_for(a.bed)
    if a.file_prefix is None and testbed.daemon_pid(bed) is None:
        raise LinkemuError(f"no linkemud is running on bed '{bed.name}' "
                           f"(start one: linkemu run --bed {bed.name} --detach)")
    plan = capture.port_plan(a.dir, a.port)
    what = f"{a.dir} {a.port} ({capture.describe_plan(a.dir, plan)})"
    stop = (f"after {a.count} frames" if a.count else "") + \
           (" or " if a.count and a.duration else "") + \
           (f"after {a.duration:g} s" if a.duration else "")
    print(f"linkemu: capturing {what} on bed '{bed.name}' into {a.write}; "
          f"stops {stop or 'on Ctrl-C'}", file=sys.stderr)
    res = capture.capture(bed, a.write, count=a.count, port=a.port, direction=a.dir,
                          duration=a.duration, snaplen=a.snaplen, user_filter=a.filter,
                          file_prefix=a.file_prefix)
    if a.json:
        print(json.dumps({k: v for k, v in res.__dict__.items() if k != "stderr"}, indent=2))
    else:
        per = ", ".join(f"port {p}: {n}" for p, n in res.per_port.items())
        print(f"{res.path}: {res.packets} frames ({what}) in {res.duration_s:.1f} s"
              + (f" ({per})" if len(res.per_port) > 1 else ""))
        if res.trimmed:
            print(f"  cut to {a.count} per port: dumpcap wrote {res.written} (it stops after "
                  f"a burst)")
        if res.removed_direction:
            print(f"  removed {res.removed_direction} frames of the other direction")
    dropped = sum(s["dropped"] for s in res.dumpcap_stats)
    if dropped:
        _err(f"dpdk-dumpcap could not keep {dropped} frames (its ring or buffers were full): "
             f"the capture has gaps")
    return 0


# --- scenario ------------------------------------------------------------------------------

def _linkemud():
    return paths.find_linkemud()


def load_checked(path: str, need_control: bool = False) -> tuple[scenario.Scenario, bool]:
    """Load a scenario, and have linkemud check its grammar when it can.
    Returns (scenario, grammar_checked)."""
    scn = scenario.load(path)
    binary = _linkemud()
    if need_control and (binary is None or not control.daemon_supports(binary, "--control")):
        raise LinkemuError("--scenario needs a linkemud with a control socket (--control); "
                           "this one has none: rebuild it")
    return scn, scenario.check_grammar(scn, binary)


def _off_the_lcore() -> None:
    """The player spins for the last ms before each step: keep it off the
    CPU linkemud polls (where it would also steal the lcore's time)."""
    cpus = tool_cpus()
    if cpus:
        try:
            os.sched_setaffinity(0, {int(c) for c in cpus.split(",")})
        except OSError:
            pass


def cmd_scenario(a: argparse.Namespace) -> int:
    scn, checked = load_checked(a.file)
    if a.scenario_command == "check":
        print(scenario.describe(scn))
        print("grammar: " + ("accepted by linkemud --check" if checked else
                             "not checked (this linkemud has no --check): structure only"))
        return 0
    bed = testbed.bed_for(a.bed)
    log = Path(a.log) if a.log else bed.run_dir / SCENARIO_LOG
    if not log.parent.is_dir():
        raise UsageError(f"--log {log}: directory {log.parent} does not exist")
    client = control.connect_bed(bed, a.timeout, wait_s=a.wait)
    _off_the_lcore()
    player = scenario.Player(scn, client, log, bed.name,
                             on_step=lambda e: print(scenario.format_event(e), file=sys.stderr,
                                                     flush=True))
    print(f"linkemu: playing {scn.path} on bed '{bed.name}' ({len(scn.steps)} steps, "
          f"{scn.duration_ns / 1e9:g} s); log {log}", file=sys.stderr, flush=True)
    try:
        with interruptible():     # SIGTERM and SIGHUP end it like Ctrl-C, logged
            player.play()
    except KeyboardInterrupt:
        player.log["state"] = "cancelled"
        player._write()
        _err("scenario cancelled")
        return 1
    except DaemonRefused as e:
        return _refused(e)
    finally:
        client.close()
    print(f"linkemu: scenario finished; log {log}", file=sys.stderr)
    return 0


# --- the `linkemu run --scenario FILE` hook --------------------------------------------------

class RunScenario:
    """A scenario played for `linkemu run`: in a thread of the foreground
    run, or in a background `linkemu scenario play` for --detach."""

    def __init__(self, scn: scenario.Scenario, bed, log: Path):
        self.scn, self.bed, self.log = scn, bed, log
        self.thread: threading.Thread | None = None
        self.cancel = threading.Event()
        self.pid: int | None = None

    def start_thread(self) -> None:
        self.log.unlink(missing_ok=True)      # never a previous run's log
        client = control.connect_bed(self.bed, DEFAULT_TIMEOUT_S, wait_s=5.0)
        player = scenario.Player(self.scn, client, self.log, self.bed.name,
                                 on_step=lambda e: print(scenario.format_event(e),
                                                         file=sys.stderr, flush=True))

        def run() -> None:
            try:
                player.play(self.cancel)
                print(f"linkemu: scenario finished (log {self.log}); the link stays as the "
                      f"last step left it", file=sys.stderr, flush=True)
            except scenario.Cancelled:
                pass
            except LinkemuError as e:
                if not self.cancel.is_set():
                    _err(f"scenario stopped: {e}")
            finally:
                client.close()

        self.thread = threading.Thread(target=run, name="scenario", daemon=True)
        self.thread.start()

    def start_process(self) -> None:
        run_dir = self.bed.run_dir
        env = dict(os.environ)
        pkg_parent = str(Path(__file__).resolve().parent.parent)
        env["PYTHONPATH"] = pkg_parent + (os.pathsep + env["PYTHONPATH"]
                                          if env.get("PYTHONPATH") else "")
        self.log.unlink(missing_ok=True)
        with open(run_dir / SCENARIO_OUT, "ab") as out:
            p = subprocess.Popen([sys.executable, "-m", "linkemu", "scenario", "play",
                                  str(self.scn.path), "--bed", self.bed.name,
                                  "--log", str(self.log), "--wait", "5"],
                                 stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                 start_new_session=True, env=env)
        self.pid = p.pid
        (run_dir / SCENARIO_PID).write_text(f"{p.pid}\n")
        # Report a player that fails to start now, not in a log nobody reads.
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if p.poll() is not None:
                try:
                    said = (run_dir / SCENARIO_OUT).read_text().strip().splitlines()[-3:]
                except OSError:
                    said = []
                raise LinkemuError(f"the scenario player exited with code {p.returncode}"
                                   + "".join(f"\n    {l}" for l in said))
            try:
                if json.loads(self.log.read_text()).get("state") != "waiting":
                    break
            except (FileNotFoundError, json.JSONDecodeError):
                pass
            time.sleep(0.02)

    def stop(self) -> None:
        self.cancel.set()
        if self.thread is not None:
            self.thread.join(2.0)


def run_scenario_load(a: argparse.Namespace):
    """Before `run` starts anything: load and check --scenario (None without)."""
    path = getattr(a, "scenario", None)
    if not path:
        return None
    scn, _checked = load_checked(path, need_control=True)
    return scn


def run_scenario_start(scn, bed, detach: bool, d=None) -> RunScenario | None:
    """After the daemon is ready: start playing. If the scenario cannot
    start, the daemon d (a daemon.Daemon) is stopped before the error is
    raised: `run --scenario` does not leave a link running without it."""
    if scn is None:
        return None
    rs = RunScenario(scn, bed, bed.run_dir / SCENARIO_LOG)
    try:
        if detach:
            rs.start_process()
            print(f"linkemu: scenario {scn.path} playing in the background (pid {rs.pid}); "
                  f"log {rs.log}", file=sys.stderr)
        else:
            print(f"linkemu: playing scenario {scn.path} ({len(scn.steps)} steps, "
                  f"{scn.duration_ns / 1e9:g} s); log {rs.log}", file=sys.stderr)
            rs.start_thread()
    except BaseException as e:
        if d is not None:
            from linkemu import daemon
            from linkemu.interrupts import shielded
            with shielded():
                if rs.pid is not None:
                    from linkemu import procs
                    procs.terminate(rs.pid, 2.0)
                daemon.stop(bed, d.popen)
        if isinstance(e, LinkemuError):
            raise LinkemuError(f"the scenario did not start, so linkemud was stopped: {e}") \
                from e
        raise
    return rs


def run_scenario_stop(rs: RunScenario | None) -> None:
    if rs is not None:
        rs.stop()


# --- parser ------------------------------------------------------------------------------------

def register(sub) -> None:
    """Add ctl, stats, capture and scenario to cli.py's subparsers."""
    from linkemu.testbed import DEFAULT_BED

    def common(p: argparse.ArgumentParser, top: bool) -> None:
        # The options may come before or after the action word; only the
        # top-level copy has a default (a subparser's default would
        # overwrite a value given before the action).
        d = (lambda v: v) if top else (lambda v: argparse.SUPPRESS)
        p.add_argument("--bed", default=d(DEFAULT_BED), metavar="NAME",
                       help="test bed name (default: %s)" % DEFAULT_BED)
        p.add_argument("--timeout", type=float, default=d(DEFAULT_TIMEOUT_S), metavar="S",
                       help="seconds to wait for the daemon (default: %g)" % DEFAULT_TIMEOUT_S)

    c = sub.add_parser("ctl", help="talk to a running linkemud over its control socket",
                       description="Send commands to the bed's running linkemud "
                                   "(/run/linkemu/BED/control.sock, docs/control.md).")
    common(c, True)
    cs = c.add_subparsers(dest="ctl_command", metavar="ACTION", required=True)
    p = cs.add_parser("set", help="change one direction's link, e.g. set a2b delay 20ms")
    common(p, False)
    p.add_argument("direction", choices=control.DIRECTIONS)
    p.add_argument("grammar", nargs="*", metavar="GRAMMAR",
                   help="link grammar (one quoted argument or several words); none = "
                        "no impairment")
    p.add_argument("--json", action="store_true", help="print the daemon's reply")
    p = cs.add_parser("show", help="the current links as grammar")
    common(p, False)
    p.add_argument("--json", action="store_true")
    p = cs.add_parser("stats", help="live counters")
    common(p, False)
    p.add_argument("--json", action="store_true", help="the daemon's stats object")
    p = cs.add_parser("reset-stats", help="counters and histograms restart from zero")
    common(p, False)
    p = cs.add_parser("help", help="the daemon's own help")
    common(p, False)
    p = cs.add_parser("raw", help="send one line as is, print the reply (exit 1 unless ok)")
    common(p, False)
    p.add_argument("line", metavar="LINE")
    p = cs.add_parser("telemetry", help="query the DPDK telemetry socket "
                                        "(default command /linkemu/stats)")
    common(p, False)
    p.add_argument("command", nargs="?", default="/linkemu/stats", metavar="COMMAND")
    c.set_defaults(func=cmd_ctl)

    s = sub.add_parser("stats", help="live counters of a running linkemud; --watch for a live "
                                     "view")
    common(s, True)
    s.add_argument("--watch", "-w", action="store_true",
                   help="redraw every interval until Ctrl-C")
    s.add_argument("--interval", type=float, default=1.0, metavar="S",
                   help="seconds between frames (default: 1)")
    s.add_argument("--once", action="store_true", help="one frame (rates over one interval)")
    s.add_argument("--count", type=int, default=None, metavar="N", help="N frames, then exit")
    s.add_argument("--json", action="store_true",
                   help="JSON: the stats object, or with --watch one line of rates per frame")
    s.set_defaults(func=cmd_stats)

    k = sub.add_parser("capture", help="record frames on linkemud's ports (dpdk-dumpcap) "
                                       "into a pcapng file")
    k.add_argument("--bed", default=DEFAULT_BED, metavar="NAME")
    k.add_argument("-w", "--write", required=True, metavar="FILE.pcapng")
    k.add_argument("-c", "--count", type=int, default=None, metavar="N",
                   help="stop after N frames (per port with --port both)")
    k.add_argument("--duration", type=float, default=None, metavar="S",
                   help="stop after S seconds of capture")
    k.add_argument("--dir", choices=capture.DIR_CHOICES, default="a2b",
                   help="which direction's frames (default: a2b)")
    k.add_argument("--port", choices=capture.PORT_CHOICES, default="out",
                   help="in: as they enter linkemud; out: as the link delivers them "
                        "(default); both")
    k.add_argument("-s", "--snaplen", type=int, default=None, metavar="BYTES")
    k.add_argument("-f", "--filter", default=None, metavar="BPF",
                   help="an extra capture filter in libpcap syntax")
    k.add_argument("--json", action="store_true")
    k.add_argument("--file-prefix", default=None, help=argparse.SUPPRESS)
    k.set_defaults(func=cmd_capture)

    sc = sub.add_parser("scenario", help="check or play a scenario file (timed link changes)")
    ss = sc.add_subparsers(dest="scenario_command", metavar="ACTION", required=True)
    p = ss.add_parser("check", help="validate a scenario and print its timeline")
    p.add_argument("file", metavar="FILE")
    p.set_defaults(func=cmd_scenario)
    p = ss.add_parser("play", help="play a scenario against the bed's running linkemud")
    p.add_argument("file", metavar="FILE")
    common(p, True)
    p.add_argument("--log", default=None, metavar="FILE",
                   help=f"JSON log of the steps (default: /run/linkemu/BED/{SCENARIO_LOG})")
    p.add_argument("--wait", type=float, default=0.0, metavar="S",
                   help="wait up to S seconds for the control socket")
    p.set_defaults(func=cmd_scenario)
