"""The Python API: one way to build a bed and drive linkemud.

    import linkemu
    with linkemu.Bed("la") as bed, bed.run(a2b="delay 10ms", b2a="delay 10ms") as link:
        print(bed.exec("src", ["ping", "-c", "3", bed.addr("dst")]).stdout)
        link.set(a2b="delay 50ms loss 1%")
        print(link.stats().a2b.rx)
    print(link.report.a2b.tx)            # FinalReport, after the daemon stopped

A Bed is a place the emulator sits: linkemu's own pair of namespaces
(`Bed(name)`), the user's namespaces or containers (`Bed.between`), a
namespace for a wrapped command whose other end is the host (`Bed.shell`),
or two existing interfaces or DPDK ports (`Bed.ports`). A Link is a running
linkemud on a bed. The `linkemu` command, the lab and the tests drive the
daemon through these two classes only (docs/python.md).
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Sequence

from linkemu import profiles
from linkemu.bed import attached, grouprun, netns, paths, ports, procs, testbed
from linkemu.bed.interrupts import shielded
from linkemu.bed.cpus import tool_cpus
from linkemu.bed.nsref import NsRef
from linkemu.daemon import control, daemon
from linkemu.daemon.counters import FinalReport, Stats
from linkemu.errors import LinkemuError, UsageError

ROLES = ("src", "dst")
_SHELL_AUTO = "sh"       # `Bed.shell()` without a name: sh0, sh1, ...


def resolve_links(a2b: str | None, b2a: str | None, profile: str | None) -> tuple[str, str]:
    """The (a2b, b2a) grammar: a profile's, overridden by any direction
    given explicitly; no profile and no direction: no impairment."""
    if not profile:
        return a2b or "", b2a or ""
    prof = profiles.find(profile)
    return (a2b if a2b is not None else prof.a2b, b2a if b2a is not None else prof.b2a)


def _load_layout(name: str):
    """What the bed of this name is, from its state file (a pair bed, the
    default, has none that says otherwise)."""
    return attached.load(name) or ports.load(name) or testbed.bed_for(name)


def _raise_unless_in_flight(failed: list[LinkemuError], in_flight: BaseException | None) -> None:
    """A `with` block's cleanup that failed: its first error is raised when
    the block ended normally; when it ended by an exception, that one is
    what the caller must see (raising ours would put it out of sight in
    __context__), so ours are said on stderr instead of being dropped."""
    if not failed:
        return
    if in_flight is None:
        raise failed[0]
    for e in failed:
        print(f"linkemu: while cleaning up after {type(in_flight).__name__}: {e}",
              file=sys.stderr)


class Bed:
    """A place for the emulator, with its two sides "src" (A, DPDK port 0)
    and "dst" (B, port 1). Direction a2b is src -> dst.

    As a context manager: builds the bed on entry if it is not up, and on
    exit stops any Link it started and removes what the entry built (a bed
    that was up before is left up)."""

    def __init__(self, name: str = testbed.DEFAULT_BED, *, _layout=None):
        self.layout = _layout if _layout is not None else _load_layout(name)
        self.name = self.layout.name
        # One entry per `with` in progress (they may nest): whether that
        # entry built the bed, so that its exit removes it.
        self._built_here: list[bool] = []
        self._links: list[Link] = []

    # --- kinds of bed ------------------------------------------------------------------

    @classmethod
    def between(cls, ns_a: str, ns_b: str, *, name: str = testbed.DEFAULT_BED,
                dev: str = attached.DEFAULT_DEV, addr_a: str = "", addr_b: str = "") -> "Bed":
        """The user's namespaces (`ip netns` names, or process ids whose
        network namespace to use, e.g. a container's): a veth named dev into
        each; addresses (CIDR) only if given."""
        return cls(name, _layout=attached.between(name, ns_a, ns_b, dev, addr_a, addr_b))

    @classmethod
    def shell(cls, name: str | None = None) -> "Bed":
        """A namespace for a wrapped command (side A, "src") whose link leads
        to the host (side B, "dst" = the root namespace, at addr("dst")).
        Without a name: the first of sh0, sh1, ... not in use."""
        if name:
            return cls(name, _layout=attached.shell(name))
        name = _free_shell_name()
        try:
            return cls(name, _layout=attached.shell(name))
        except BaseException:
            paths.bed_run_dir(name).rmdir()     # the claim, still empty
            raise

    @classmethod
    def ports(cls, port_a: str, port_b: str, *, name: str = testbed.DEFAULT_BED) -> "Bed":
        """Two existing host interfaces (AF_XDP/AF_PACKET) or DPDK-bound PCI
        addresses; nothing is built or changed on them."""
        return cls(name, _layout=ports.parse(name, f"{port_a},{port_b}"))

    @property
    def kind(self) -> str:
        return getattr(self.layout, "kind", "pair")

    # --- life cycle ---------------------------------------------------------------------

    def up(self, pmd: str = "af_xdp") -> dict:
        """Build (or repair and re-check) the bed; returns its status."""
        if self.kind == "ports":
            ports.up(self.layout, pmd)
        elif self.kind in attached.KINDS:
            self.layout = attached.up(self.layout)
        else:
            testbed.up(self.layout)
        return self.status()

    def down(self) -> list[str]:
        """Remove everything linkemu created for the bed (what was done)."""
        for link in list(self._links):     # _forget removes it from _links
            link._forget()
        if self.kind == "ports":
            return ports.down(self.layout)
        if self.kind in attached.KINDS:
            return attached.down(self.name)
        # Also a shell's namespace of this name: its state file may be gone
        # (a crash), and the name is all that is left to find it by.
        return testbed.remove(self.layout, [self.layout.ns_src, self.layout.ns_dst,
                                            attached.shell_ns(self.name)])

    def is_up(self) -> bool:
        return bool(self.status()["up"])

    def status(self) -> dict:
        if self.kind == "ports":
            return ports.status(self.layout)
        if self.kind in attached.KINDS:
            return attached.status(self.layout)
        return testbed.status(self.layout)

    def format_status(self, st: dict | None = None) -> str:
        st = st or self.status()
        if self.kind == "ports":
            return ports.format_status(st)
        if self.kind in attached.KINDS:
            return attached.format_status(st)
        return testbed.format_status(st)

    def __enter__(self) -> "Bed":
        was_up = self.is_up()
        try:
            self.up()     # on a bed that is up: repairs it and re-checks it
        except BaseException:
            if not was_up:
                with shielded():
                    self.down()
            raise
        # setdefault: a subclass may skip __init__ (tests/bed's stand-ins do)
        self.__dict__.setdefault("_built_here", []).append(not was_up)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        # Shielded (in the main thread): a second Ctrl-C while a first one's
        # cleanup runs would leave the daemon, its hugepages or the bed.
        failed: list[LinkemuError] = []
        with shielded():
            try:
                # The links this bed started (run()), not those it attached
                # to: a daemon from `linkemu run --detach` is someone else's.
                for link in list(self._links):
                    if link.started_here and link.running:
                        try:
                            link.stop()
                        except LinkemuError as e:
                            failed.append(e)
            finally:
                built = self.__dict__.get("_built_here")
                if built and built.pop():
                    self.down()
        _raise_unless_in_flight(failed, exc)

    # --- the daemon ------------------------------------------------------------------------

    def run(self, a2b: str | None = None, b2a: str | None = None, *,
            profile: str | None = None, pmd: str | None = None, lcores: str | None = None,
            layout: str | None = None, seed: int | None = None, io: str = "dpdk",
            wait: str | None = None, spin: str | None = None,
            warn=lambda m: print(m, file=sys.stderr)) -> "Link":
        """Start linkemud on this bed (which must be up) and wait until it
        forwards. pmd None: af_xdp, falling back to af_packet once if
        af_xdp does not start. io "kernel": linkemuk, the kernel-socket
        data plane, instead (no DPDK; pmd and lcores do not apply). spin:
        with wait "adaptive", "auto" (the daemon's default) or microseconds
        to wake before a deadline (--spin-us). Raises
        UsageError with the daemon's own message for a bad link."""
        a2b, b2a = resolve_links(a2b, b2a, profile)
        cfg = daemon.DaemonConfig(bed=self.layout, a2b=a2b, b2a=b2a, pmd=pmd or "af_xdp",
                                  lcores=lcores or "", layout=layout, seed=seed, io=io, wait=wait,
                                  spin=spin)
        daemon.validate(cfg)
        binary = daemon.require_binary(io)
        self.require_no_daemon()
        fallback = pmd is None and not getattr(self.layout, "pci", False)
        try:
            d = daemon.start_auto(cfg, binary, fallback=fallback, warn=warn)
        except OSError as e:
            raise LinkemuError(f"cannot start {binary}: {e.strerror or e}") from e
        link = Link(self, d.pid, d)
        self._links.append(link)
        return link

    def require_no_daemon(self) -> None:
        running = testbed.daemon_pid(self.layout)
        if running is not None:
            raise daemon.already_running(self.layout, running)

    def control(self, timeout: float = control.DEFAULT_TIMEOUT_S,
                wait_s: float = 0.0) -> control.ControlClient:
        """A connected client of the running daemon's control socket (for
        what Link does not wrap: raw lines, help, watch). The error says
        why when there is none: no daemon, no socket, a stale socket."""
        return control.connect_bed(self.layout, timeout, wait_s)

    def attach(self) -> "Link":
        """The daemon already running on this bed (e.g. `linkemu run --detach`)."""
        pid = testbed.daemon_pid(self.layout)
        if pid is None:
            raise LinkemuError(f"no linkemud is running on bed '{self.name}'")
        link = Link(self, pid, None)
        self._links.append(link)
        return link

    # --- the sides ------------------------------------------------------------------------

    def ref(self, role: str) -> NsRef:
        if self.kind == "ports":
            raise UsageError(f"bed '{self.name}' runs on ports {self.layout.port_a},"
                             f"{self.layout.port_b}: it has no namespaces of its own")
        if role not in ROLES:
            raise UsageError(f"unknown side '{role}' (expected src or dst)")
        return self.layout.ref(role)

    def addr(self, role: str) -> str:
        """The address of a side ("" when the bed has none there)."""
        if role not in ROLES:
            raise UsageError(f"unknown side '{role}' (expected src or dst)")
        return getattr(self.layout, "addr_src" if role == "src" else "addr_dst", "") or ""

    def argv(self, role: str, cmd: Sequence[str], cpus: str | None = "auto") -> list[str]:
        """argv running cmd on a side. cpus "auto": off the daemon's CPU
        (tool_cpus()); None: wherever the scheduler likes."""
        if isinstance(cmd, str):
            raise UsageError("give the command as a list of words, e.g. ['ping', '-c', '3', ADDR]")
        cmd = list(cmd)
        if not cmd:
            raise UsageError(f"empty command for side '{role}': give at least the program")
        cpus = tool_cpus() if cpus == "auto" else cpus
        return netns.ns_exec_argv(self.ref(role), cmd, cpus)

    def exec(self, role: str, cmd: Sequence[str], *, check: bool = False,
             timeout: float | None = None, capture: bool = True, env: dict | None = None,
             cpus: str | None = "auto", **kw) -> subprocess.CompletedProcess:
        """Run cmd on a side to completion (text output captured unless
        capture=False). check=True raises LinkemuError on a non-zero exit;
        past timeout seconds the command and every process it started are
        killed and ExecTimeout (a LinkemuError) is raised."""
        argv = self.argv(role, cmd, cpus)
        _check_timeout(timeout)
        if capture:
            kw.setdefault("stdout", subprocess.PIPE)
            kw.setdefault("stderr", subprocess.PIPE)
        try:
            cp = grouprun.run(argv, timeout=timeout, text=True, env=_env(env), **kw)
        except grouprun.GroupTimeout as e:
            raise ExecTimeout(role, cmd, e.timeout, e.stdout, e.stderr) from None
        except OSError as e:      # the namespace tool itself (ip, nsenter, taskset) missing
            raise LinkemuError(f"cannot run {_words(cmd)} on {role}: {e.strerror or e}") from e
        if check and cp.returncode != 0:
            msg = (cp.stderr or cp.stdout or "").strip() if capture else ""
            raise LinkemuError(f"{_words(cmd)} on {role} exited with {cp.returncode}"
                               + (f": {msg}" if msg else ""))
        return cp

    def popen(self, role: str, cmd: Sequence[str], *, env: dict | None = None,
              cpus: str | None = "auto", **kw) -> subprocess.Popen:
        """Start cmd on a side; the caller waits for it (subprocess.Popen)."""
        return subprocess.Popen(self.argv(role, cmd, cpus), env=_env(env), **kw)

    # Names the instruments read off a bed (testbed.Bed's), so that
    # `measure.ping(bed)` and friends take an API bed as they are.
    def __getattr__(self, attr: str):
        if attr in ("ns_src", "ns_dst", "addr_src", "addr_dst", "ns_dev", "host_a", "host_b",
                    "file_prefix", "run_dir", "prefix_len"):
            return getattr(self.__dict__["layout"], attr)
        raise AttributeError(attr)

    def __repr__(self) -> str:
        return f"linkemu.Bed({self.name!r}, kind={self.kind!r})"


class ExecTimeout(LinkemuError):
    """Bed.exec ran past its timeout: the command and what it started were
    killed. stdout and stderr hold what it wrote until then."""

    def __init__(self, role: str, cmd: Sequence, timeout: float, stdout=None, stderr=None):
        super().__init__(f"{_words(cmd)} on {role} did not finish within {timeout:g} s "
                         f"(killed, with every process it started)")
        self.role = role
        self.cmd = list(cmd)
        self.timeout = timeout
        self.stdout = stdout
        self.stderr = stderr


def _words(cmd: Sequence) -> str:
    return " ".join(map(os.fsdecode, cmd))


def _check_timeout(timeout) -> None:
    """None or a finite number of seconds above 0: subprocess takes 0, -1
    or nan as a deadline already past (the command killed at once) and
    cannot wait for inf."""
    if timeout is None:
        return
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) \
            or not 0 < timeout < float("inf"):
        raise UsageError(f"timeout={timeout!r}: give seconds above 0, or None for no limit")


def _env(extra: dict | None) -> dict | None:
    return None if extra is None else {**os.environ, **extra}


def _free_shell_name() -> str:
    """The first sh<N> not in use, claimed by creating its run dir (which
    `down` removes): checking alone let two shells started at once both
    take sh0 until the first built it, and the second's up and down then
    tore into the first's link."""
    for i in range(100):
        name = f"{_SHELL_AUTO}{i}"
        if netns.ns_exists(attached.shell_ns(name)) \
                or netns.link_exists(testbed.bed_for(name).host_a):
            continue
        try:
            paths.bed_run_dir(name).parent.mkdir(parents=True, exist_ok=True)
            paths.bed_run_dir(name).mkdir()     # atomic: one claimant wins
        except FileExistsError:
            continue
        return name
    raise LinkemuError("100 shells are running: no free bed name sh0..sh99 (give --bed)")


class Link:
    """A running linkemud on a bed: change it, read it, stop it.

    As a context manager it stops the daemon on exit; `link.report` then
    holds the FinalReport (also returned by stop())."""

    def __init__(self, bed: Bed, pid: int, started: daemon.Daemon | None):
        self.bed = bed
        self.pid = pid
        self._daemon = started
        # Which process pid is: an attached link has no Popen, and once its
        # daemon exits the bed's pid file (and the pid) may name another.
        self._start_time = procs.start_time(pid)
        self._name = (started and daemon.DAEMON_NAMES.get(started.config.io)) \
            or procs.daemon_word(pid)
        self.report: FinalReport | None = None
        self._client: control.ControlClient | None = None
        self._detached = False
        # Once stop() has signalled the daemon: its exit status before that
        # (None: it was running, so whatever it exits with now is ours).
        self._stopped: tuple[int | None] | None = None

    @property
    def pmd(self) -> str | None:
        return self._daemon.config.pmd if self._daemon else None

    @property
    def io(self) -> str | None:
        """"dpdk" (linkemud) or "kernel" (linkemuk); None when attached."""
        return self._daemon.config.io if self._daemon else None

    @property
    def running(self) -> bool:
        if self.report is not None:
            return False
        if self._daemon is not None and self._daemon.popen is not None:
            return self._daemon.popen.poll() is None
        return self._is_the_beds_daemon()

    def _is_the_beds_daemon(self) -> bool:
        """The bed's daemon is still the process this link was made for
        (same pid and start time), not one started since on the bed."""
        return (self._start_time is not None
                and testbed.daemon_pid(self.bed.layout) == self.pid
                and procs.start_time(self.pid) == self._start_time)

    def exit_code(self) -> int | None:
        """The daemon's exit status if it exited on its own, else None."""
        if self._stopped is not None:
            return self._stopped[0]
        if self._daemon is not None and self._daemon.popen is not None:
            return self._daemon.popen.poll()
        return None

    # --- control ------------------------------------------------------------------------

    def _ctl(self) -> control.ControlClient:
        if self.report is not None:
            raise LinkemuError(f"the link on bed '{self.bed.name}' is stopped")
        if self._client is None:
            self._client = self.bed.control(wait_s=2.0)
        return self._client

    def _call(self, fn):
        """fn(client), on a connection that is in step: a call that failed
        midway (a timeout, the daemon hung up) leaves its reply unread or
        the socket dead, so the connection is dropped and the next call
        makes a new one; a refusal has been read whole and keeps it."""
        try:
            return fn(self._ctl())
        except control.DaemonRefused:
            raise
        except control.ControlError:
            self._close()
            raise

    def set(self, a2b: str | None = None, b2a: str | None = None) -> dict:
        """Change one or both directions while frames flow (both in one
        write, so they switch as close together as the daemon allows).
        Raises DaemonRefused with the daemon's message; nothing changes then.
        Returns {direction: the daemon's reply}."""
        changes = [(d, g) for d, g in (("a2b", a2b), ("b2a", b2a)) if g is not None]
        if not changes:
            raise UsageError("set: give a2b=, b2a= or both")
        for d, g in changes:
            if not isinstance(g, str):
                raise UsageError(f"set: {d}= takes the link as grammar text, e.g. "
                                 f"\"delay 20ms loss 1%\" (not {type(g).__name__})")
        out = self._call(lambda c: c.set_many(changes))
        return {d: reply for (d, _g), (_s, _r, reply) in zip(changes, out)}

    def show(self) -> dict:
        """{"a2b": GRAMMAR, "b2a": GRAMMAR}: the links now in force."""
        return self._call(lambda c: c.show())

    def stats(self) -> Stats:
        return Stats.from_json(self._call(lambda c: c.stats()))

    def reset_stats(self) -> None:
        self._call(lambda c: c.reset_stats())

    # --- stopping ----------------------------------------------------------------------

    def stop(self) -> FinalReport:
        """SIGTERM, wait, read the final counters (idempotent)."""
        if self.report is not None:
            return self.report
        self._close()
        popen = self._daemon.popen if self._daemon else None
        if popen is None and not self._is_the_beds_daemon():
            # Attached: stop only the daemon we attached to, never one
            # started on the bed after it exited.
            now = testbed.daemon_pid(self.bed.layout)
            raise LinkemuError(
                f"the {self._name} this link attached to on bed '{self.bed.name}' (pid "
                f"{self.pid}) is no longer running" +
                (f"; the bed now runs another daemon (pid {now}), which this link does not "
                 f"stop: bed.attach() to get a link to it" if now is not None else
                 " (it exited, or something else stopped it)"))
        if self._stopped is None:
            self._stopped = (popen.poll() if popen is not None else None,)
        res = daemon.stop(self.bed.layout, popen, pid=self.pid)
        if self.bed.kind == "ports":
            ports.restore(self.bed.layout)
        if res.final is None:
            raise LinkemuError(res.error or "linkemud wrote no final counters")
        self.report = FinalReport.from_final(res.final, res.pid, res.how)
        return self.report

    def detach(self) -> None:
        """Leave the daemon running after this object is gone (`run --detach`)."""
        self._close()
        self._detached = True
        self._forget()

    def _forget(self) -> None:
        if self in self.bed._links:
            self.bed._links.remove(self)

    def _close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def __enter__(self) -> "Link":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if self.report is None and not self._detached:
            failed: list[LinkemuError] = []
            with shielded():   # as Bed.__exit__
                try:
                    self.stop()
                except LinkemuError as e:
                    failed.append(e)
            _raise_unless_in_flight(failed, exc)

    @property
    def started_here(self) -> bool:
        """Started by Bed.run() (not found by attach())."""
        return self._daemon is not None

    def __repr__(self) -> str:
        # Not "running" just because stop() was not called: a daemon that
        # exited by itself (a crash) shows as such.
        if self.report is not None:
            state = "stopped"
        elif self.running:
            state = "running"
        else:
            code = self.exit_code()
            state = "exited" + (f" with {code}" if code is not None else "")
        return f"linkemu.Link(bed={self.bed.name!r}, pid={self.pid}, {state})"
