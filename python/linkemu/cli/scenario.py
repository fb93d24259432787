"""`linkemu scenario check|play` and the hook that lets `linkemu run
--scenario FILE` play a scenario (in a thread, or in a background
`linkemu scenario play` for --detach)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from linkemu.bed import paths, testbed
from linkemu.bed.cpus import tool_cpus
from linkemu.bed.interrupts import interruptible
from linkemu.cli.common import daemon_options, err, refused
from linkemu.daemon import control, scenario
from linkemu.daemon.control import DEFAULT_TIMEOUT_S, DaemonRefused
from linkemu.errors import LinkemuError, UsageError

SCENARIO_LOG = "scenario.json"
SCENARIO_PID = "scenario.pid"
SCENARIO_OUT = "scenario.log"


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
        # SIGTERM and SIGHUP end it like Ctrl-C; the player holds a signal
        # that comes while a step is out until the log records the step.
        with interruptible():
            player.play()
    except KeyboardInterrupt:
        err("scenario cancelled")
        return 1
    except DaemonRefused as e:
        return refused(e)
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
                    err(f"scenario stopped: {e}")
            finally:
                client.close()

        self.thread = threading.Thread(target=run, name="scenario", daemon=True)
        self.thread.start()

    def start_process(self) -> None:
        run_dir = self.bed.run_dir
        env = paths.child_python_env()
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


def run_scenario_start(scn, link, detach: bool) -> RunScenario | None:
    """After the daemon is ready: start playing on link (an api.Link). If the
    scenario cannot start, the link is stopped before the error is raised:
    `run --scenario` does not leave a link running without it."""
    if scn is None:
        return None
    bed = link.bed.layout
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
        from linkemu.bed.interrupts import shielded
        with shielded():
            if rs.pid is not None:
                from linkemu.bed import procs
                procs.terminate(rs.pid, 2.0)
            try:
                link.stop()
            except LinkemuError:
                pass
        if isinstance(e, LinkemuError):
            raise LinkemuError(f"the scenario did not start, so linkemud was stopped: {e}") \
                from e
        raise
    return rs


def run_scenario_stop(rs: RunScenario | None) -> None:
    if rs is not None:
        rs.stop()


def register(sub) -> None:
    """Add scenario to the main parser."""
    sc = sub.add_parser("scenario", help="check or play a scenario file (timed link changes)")
    ss = sc.add_subparsers(dest="scenario_command", metavar="ACTION", required=True)
    p = ss.add_parser("check", help="validate a scenario and print its timeline")
    p.add_argument("file", metavar="FILE")
    p.set_defaults(func=cmd_scenario)
    p = ss.add_parser("play", help="play a scenario against the bed's running linkemud")
    p.add_argument("file", metavar="FILE")
    daemon_options(p, True)
    p.add_argument("--log", default=None, metavar="FILE",
                   help=f"JSON log of the steps (default: /run/linkemu/BED/{SCENARIO_LOG})")
    p.add_argument("--wait", type=float, default=0.0, metavar="S",
                   help="wait up to S seconds for the control socket")
    p.set_defaults(func=cmd_scenario)
