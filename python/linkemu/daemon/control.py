"""Client for linkemud's control socket (docs/control.md), and for the
DPDK telemetry socket every linkemud serves.

The control socket is a Unix stream socket carrying lines: each command
line gets exactly one reply line, a JSON object with "ok". The daemon is
the authority on the grammar: a refused command comes back as
{"ok": false, "error": MESSAGE}, which we raise as DaemonRefused with the
daemon's message untouched.

Every way of failing ends in a ControlError whose message says what went
wrong and where: no daemon on the bed, a daemon without a control socket,
a stale socket file, a timeout, a connection closed before the reply.
"""

from __future__ import annotations

import errno
import json
import os
import select
import socket
import stat
import subprocess
import time
from pathlib import Path

from linkemu.bed import paths, procs
from linkemu.errors import LinkemuError

SOCKET_NAME = "control.sock"
DEFAULT_TIMEOUT_S = 5.0
# The daemon's line limit (docs/control.md); replies have none, but a reply
# bigger than this is not a reply from linkemud.
MAX_LINE = 4096
MAX_REPLY = 16 << 20
DIRECTIONS = ("a2b", "b2a")
TELEMETRY_SOCKET = "dpdk_telemetry.v2"


class ControlError(LinkemuError):
    """Talking to the daemon failed (exit 1)."""


class ControlTimeout(ControlError):
    pass


class ControlClosed(ControlError):
    """The daemon closed the connection (it exited, or dropped us)."""


class DaemonRefused(ControlError):
    """The daemon answered {"ok": false}: the command changed nothing.
    str() is the daemon's message, verbatim; .daemon names who refused
    ("linkemud" or "linkemuk"). From set_many, replies holds every
    change's (sent_ns, replied_ns, reply): the others may have been
    taken."""

    def __init__(self, reply: dict, command: str = "", daemon: str = "linkemud",
                 replies: list | None = None):
        self.reply = reply
        self.command = command
        self.daemon = daemon
        self.replies = replies
        super().__init__(str(reply.get("error", "(no error message)")))


def socket_path(bed_name: str) -> Path:
    """Where a bed's daemon listens: /run/linkemu/BED/control.sock."""
    return paths.bed_run_dir(bed_name) / SOCKET_NAME


def _is_utf8(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _short(line: str, n: int = 60) -> str:
    line = line.rstrip("\n")
    return line if len(line) <= n else line[:n] + "..."


class ControlClient:
    """One connection to a control socket. Usable as a context manager.

    timeout bounds every wait: connecting, and each reply (from the moment
    its command was sent)."""

    def __init__(self, path: str | os.PathLike, timeout: float = DEFAULT_TIMEOUT_S,
                 daemon: str = "linkemud"):
        self.path = Path(path)
        self.timeout = timeout
        # Who answers, for messages that speak of it: linkemud or linkemuk
        # serve the same protocol, and no reply says which (connect_bed
        # learns it from the bed's daemon process).
        self.daemon = daemon
        self.sock: socket.socket | None = None
        self._buf = bytearray()

    # --- connection -------------------------------------------------------------

    def connect(self, wait_s: float = 0.0) -> "ControlClient":
        """Connect; with wait_s > 0, keep trying that long while the socket
        is missing or refuses (a daemon that is still starting)."""
        deadline = time.monotonic() + wait_s
        # A full listen queue (many clients at once) answers EAGAIN: that is
        # worth waiting for, up to the timeout.
        busy_deadline = time.monotonic() + self.timeout
        while True:
            try:
                self._connect_once()
                return self
            except (FileNotFoundError, ConnectionRefusedError) as e:
                if time.monotonic() >= deadline:
                    raise self._connect_error(e) from e
                time.sleep(0.02)
            except BlockingIOError as e:
                if time.monotonic() >= busy_deadline:
                    raise ControlTimeout(f"{self.path}: the daemon accepts no more connections "
                                         f"(its queue stayed full for {self.timeout:g} s)") from e
                time.sleep(0.01)
            except OSError as e:
                raise self._connect_error(e) from e

    def _connect_once(self) -> None:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        try:
            s.connect(str(self.path))
        except BaseException:
            s.close()
            raise
        self.sock = s
        self._buf.clear()

    def _connect_error(self, e: OSError) -> ControlError:
        p = self.path
        if isinstance(e, FileNotFoundError):
            return ControlError(f"no control socket at {p}")
        if isinstance(e, ConnectionRefusedError):
            return ControlError(f"nothing listens on {p} (a stale socket: the daemon "
                                f"that made it is gone)")
        if isinstance(e, PermissionError):
            return ControlError(f"permission denied on {p} (the control socket is root's: "
                                f"run as root)")
        if isinstance(e, (socket.timeout, TimeoutError)):
            return ControlTimeout(f"connecting to {p} timed out after {self.timeout:g} s")
        if e.errno == errno.ENOTSOCK or (p.exists() and not p.is_socket()):
            return ControlError(f"{p} is not a socket")
        return ControlError(f"cannot connect to {p}: {e.strerror or e}")

    def close(self) -> None:
        if self.sock is not None:
            try:
                self.sock.close()
            finally:
                self.sock = None

    def __enter__(self) -> "ControlClient":
        if self.sock is None:
            self.connect()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def fileno(self) -> int:
        return self._require().fileno()

    def _require(self) -> socket.socket:
        if self.sock is None:
            raise ControlError(f"not connected to {self.path}")
        return self.sock

    # --- lines ---------------------------------------------------------------------

    def send_lines(self, lines: list[str]) -> None:
        """Send command lines in one write (their replies come back in order)."""
        for line in lines:
            if "\n" in line or "\r" in line:
                raise ControlError(f"a command must be one line: {line!r}")
        text = "".join(line + "\n" for line in lines)
        try:
            data = text.encode()
        except UnicodeEncodeError:
            # A word that is not UTF-8 (a file name given in another
            # encoding reaches sys.argv as surrogate escapes): the daemon
            # takes UTF-8 lines only, and encode() would raise a traceback.
            bad = next(line for line in lines if not _is_utf8(line))
            shown = bad.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            raise ControlError(f"a command must be UTF-8 text, and this one is not UTF-8: "
                               f"'{_short(shown, 200)}'") from None
        s = self._require()
        try:
            # MSG_NOSIGNAL: a daemon that hung up is an error we report, not
            # a SIGPIPE (the CLI runs with SIGPIPE at its default, to die quietly
            # in a closed pipeline).
            s.sendall(data, socket.MSG_NOSIGNAL)
        except (socket.timeout, TimeoutError) as e:
            raise ControlTimeout(f"{self.daemon} did not take the command "
                                 f"'{_short(lines[0])}' within {self.timeout:g} s") from e
        except (BrokenPipeError, ConnectionResetError) as e:
            raise ControlClosed(f"{self.daemon} closed the control connection ({self.path}) "
                                f"before '{_short(lines[0])}' was sent: did it exit?") from e

    def read_reply(self, command: str = "") -> dict:
        """The next reply line as a dict (ok or not)."""
        line = self._read_line(command)
        try:
            reply = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ControlError(f"{self.daemon}'s reply to '{_short(command)}' is not JSON: "
                               f"{line[:200]!r}") from e
        if not isinstance(reply, dict) or "ok" not in reply:
            raise ControlError(f"{self.daemon}'s reply to '{_short(command)}' has no \"ok\": "
                               f"{line[:200]!r}")
        return reply

    def _read_line(self, command: str) -> bytes:
        s = self._require()
        deadline = time.monotonic() + self.timeout
        while True:
            i = self._buf.find(b"\n")
            if i >= 0:
                line = bytes(self._buf[:i])
                del self._buf[:i + 1]
                return line
            if len(self._buf) > MAX_REPLY:
                raise ControlError(f"{self.daemon}'s reply to '{_short(command)}' is longer than "
                                   f"{MAX_REPLY} bytes")
            left = deadline - time.monotonic()
            if left <= 0:
                raise ControlTimeout(f"{self.daemon} did not answer '{_short(command)}' within "
                                     f"{self.timeout:g} s ({self.path})")
            s.settimeout(left)
            try:
                chunk = s.recv(65536)
            except (socket.timeout, TimeoutError):
                continue
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                what = "a whole reply" if self._buf else "a reply"
                raise ControlClosed(f"{self.daemon} closed the control connection before {what} to "
                                    f"'{_short(command)}' (did it exit? see `linkemu testbed "
                                    f"status` and its log)")
            self._buf += chunk

    # --- commands --------------------------------------------------------------------

    def request(self, line: str) -> dict:
        """Send one line, return its reply whatever "ok" says."""
        self.send_lines([line])
        return self.read_reply(line)

    def call(self, line: str) -> dict:
        """Send one line; raise DaemonRefused unless the reply is ok."""
        reply = self.request(line)
        if reply.get("ok") is not True:
            raise DaemonRefused(reply, line, self.daemon)
        return reply

    def set(self, direction: str, grammar: str) -> dict:
        return self.call(set_line(direction, grammar))

    def set_many(self, changes: list[tuple[str, str]],
                 at_ns: int | None = None) -> list[tuple[int, int, dict]]:
        """Several `set`s written at once (so both directions of one step
        change as close together as the daemon allows); with at_ns, each
        takes effect at that model time (`set DIR at Tns ...`). Returns, per
        change, (sent_ns, replied_ns, reply) in CLOCK_MONOTONIC; raises
        DaemonRefused on the first refusal, after reading every reply."""
        lines = [set_line(d, g, at_ns) for d, g in changes]
        sent = time.monotonic_ns()
        self.send_lines(lines)
        out = []
        for line in lines:
            reply = self.read_reply(line)
            out.append((sent, time.monotonic_ns(), reply))
        for line, (_s, _r, reply) in zip(lines, out):
            if reply.get("ok") is not True:
                raise DaemonRefused(reply, line, self.daemon, out)
        return out

    def show(self) -> dict:
        r = self.call("show")
        return {d: r.get(d, "") for d in DIRECTIONS}

    def stats(self) -> dict:
        r = self.call("stats")
        st = r.get("stats")
        if not isinstance(st, dict):
            raise ControlError(f"{self.daemon}'s stats reply has no \"stats\" object: {r}")
        problem = stats_shape_problem(st)
        if problem:
            raise ControlError(f"{self.daemon}'s stats reply is not shaped as docs/control.md "
                               f"says: {problem}")
        return st

    def reset_stats(self) -> dict:
        return self.call("reset stats")

    def help(self) -> str:
        return str(self.call("help").get("help", ""))

    def peer_closed(self) -> bool:
        """True if the daemon has closed the connection (without blocking).
        Unsolicited data (the protocol has none) is left in the buffer."""
        s = self._require()
        r, _, _ = select.select([s], [], [], 0)
        if not r:
            return False
        try:
            chunk = s.recv(65536, socket.MSG_DONTWAIT)
        except (BlockingIOError, InterruptedError):
            return False
        except ConnectionResetError:
            return True
        if not chunk:
            return True
        self._buf += chunk
        return False


def _is_num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


# What the views (ctl stats, stats --watch, the summary) read of a
# direction and of each class: counters that must be numbers when present.
_DIRECTION_COUNTS = ("rx", "tx", "rx_bytes", "tx_bytes", "in_flight", "dropped_total", "dup",
                     "injected")
_CLASS_COUNTS = ("rx", "tx", "in_flight")


def stats_shape_problem(st: dict) -> str | None:
    """Why a `stats` object cannot be shown (None if it can): the fields
    the views read have the types docs/control.md gives them."""
    for key in ("uptime_s", "time_ns"):
        if key in st and not _is_num(st[key]):
            return f"\"{key}\" is {st[key]!r}, not a number"
    dirs = st.get("directions", {})
    if not isinstance(dirs, dict):
        return f"\"directions\" is {type(dirs).__name__}, not an object"
    for name, d in dirs.items():
        if not isinstance(d, dict):
            return f"direction {name!r} is {type(d).__name__}, not an object"
        for key in _DIRECTION_COUNTS:
            if key in d and not _is_num(d[key]):
                return f"{name}: \"{key}\" is {d[key]!r}, not a number"
        for key in ("dropped", "events", "emulation_error_ns", "before_rx", "after_tx",
                    "port_xstats", "ended_classes"):
            if key in d and d[key] is not None and not isinstance(d[key], dict):
                return f"{name}: \"{key}\" is {d[key]!r}, not an object"
        if "dropped" in d and d["dropped"] is None:
            return f"{name}: \"dropped\" is null, not an object"
        if not all(_is_num(v) for v in (d.get("dropped") or {}).values()):
            return f"{name}: a drop count is not a number: {d['dropped']!r}"
        classes = d.get("classes") or []
        if not isinstance(classes, list):
            return f"{name}: \"classes\" is {type(classes).__name__}, not a list"
        for c in classes:
            if not isinstance(c, dict) or "name" not in c or \
                    not all(_is_num(c.get(k)) for k in _CLASS_COUNTS):
                return f"{name}: a class without its name and counters: {c!r}"
    return None


def set_line(direction: str, grammar: str, at_ns: int | None = None) -> str:
    """`set DIR [at Tns] GRAMMAR`; an empty grammar (no impairment) is
    `set DIR`. at_ns: the daemon's model time at which the change lands."""
    if direction not in DIRECTIONS:
        raise ControlError(f"unknown direction '{direction}' (a2b or b2a)")
    g = " ".join(grammar.split())
    head = f"set {direction}" + (f" at {int(at_ns)}ns" if at_ns is not None else "")
    return f"{head} {g}" if g else head


def daemon_has_timed_set(help_text: str) -> bool:
    """Whether the daemon's `help` names `set ... at` (timed changes)."""
    return "[at +DURATION" in help_text


# --- beds -------------------------------------------------------------------------

def connect_bed(bed, timeout: float = DEFAULT_TIMEOUT_S, wait_s: float = 0.0) -> ControlClient:
    """Connect to a bed's daemon, with an error that says why not when that
    fails: no daemon, a daemon without a control socket, a stale socket."""
    from linkemu.bed.testbed import daemon_pid   # testbed imports nothing of ours
    path = socket_path(bed.name)
    client = ControlClient(path, timeout)
    try:
        client.connect(wait_s)
    except ControlTimeout:
        raise
    except ControlError as e:
        pid = daemon_pid(bed)
        if pid is None:
            raise ControlError(f"no linkemud is running on bed '{bed.name}' "
                               f"(start one: linkemu run --bed {bed.name} --detach)") from e
        name = procs.daemon_word(pid)
        if not path.exists():
            raise ControlError(f"{name} (pid {pid}) on bed '{bed.name}' has no control socket "
                               f"at {path}: it was started without --control (a linkemud "
                               f"built before the control socket? rebuild it, then "
                               f"`linkemu stop --bed {bed.name}` and run again)") from e
        raise ControlError(f"{name} (pid {pid}) on bed '{bed.name}': {e}") from e
    # The bed's daemon (a stale pid file or one not ours: keep the default).
    pid = daemon_pid(bed)
    client.daemon = (procs.daemon_name(pid) if pid is not None else None) or client.daemon
    return client


_control_support: dict[tuple[str, float], bool] = {}


def daemon_supports(binary: str | os.PathLike, option: str) -> bool:
    """Does `linkemud --help` mention option? (cached per binary and mtime)."""
    p = Path(binary)
    try:
        key = (f"{p}:{option}", p.stat().st_mtime)
    except OSError:
        return False
    if key not in _control_support:
        try:
            cp = subprocess.run([str(p), "--help"], capture_output=True, text=True, timeout=10)
            text = cp.stdout + cp.stderr
        except (OSError, subprocess.TimeoutExpired):
            text = ""
        _control_support[key] = option in text
    return _control_support[key]


def daemon_args(binary: str | os.PathLike, bed_name: str) -> list[str]:
    """The application options that give a bed's daemon its control socket,
    or [] for a linkemud that has none yet (its --help does not name it)."""
    if daemon_supports(binary, "--control"):
        return ["--control", str(socket_path(bed_name))]
    return []


# --- DPDK telemetry ---------------------------------------------------------------

def telemetry_path(file_prefix: str) -> Path:
    return paths.DPDK_RUN_ROOT / file_prefix / TELEMETRY_SOCKET


def telemetry_query(path: str | os.PathLike, command: str,
                    timeout: float = DEFAULT_TIMEOUT_S) -> dict:
    """One command on a DPDK telemetry v2 socket (SOCK_SEQPACKET): the
    server greets with {"version", "pid", "max_output_len"}, then answers
    each command with one message {COMMAND: value}. Returns that reply.

    Every failure is a ControlError of one line that names the socket and
    the cause (ControlClosed when the server hung up, ControlTimeout when
    it said nothing in time)."""
    if not command.startswith("/"):
        raise ControlError(f"telemetry commands start with '/': {command!r}")
    where = f"DPDK telemetry socket {path}"
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(timeout)
    try:
        _telemetry_connect(s, path, where)
        hello = _telemetry_message(s, 4096, where, "greeting", timeout)
        limit = hello.get("max_output_len")
        # A bool is an int to Python; a limit beyond MAX_REPLY would have
        # us allocate whatever the socket claims.
        if type(limit) is not int or not 0 < limit <= MAX_REPLY:
            raise ControlError(f"{where}: its greeting has no usable max_output_len "
                               f"({_short(repr(limit))}): not DPDK telemetry v2?")
        try:
            s.send(command.encode(), socket.MSG_NOSIGNAL)
        except (BrokenPipeError, ConnectionResetError) as e:
            raise ControlClosed(f"{where}: closed the connection before the reply to "
                                f"{command} (did linkemud exit?)") from e
        except OSError as e:
            raise ControlError(f"{where}: cannot send {command}: {_cause(e)}") from e
        return _telemetry_message(s, limit + 1, where, f"reply to {command}", timeout)
    finally:
        s.close()


def _cause(e: OSError) -> str:
    return e.strerror or str(e) or type(e).__name__


def _telemetry_connect(s: socket.socket, path: str | os.PathLike, where: str) -> None:
    try:
        s.connect(str(path))
        return
    except FileNotFoundError as e:
        raise ControlError(f"no DPDK telemetry socket at {path} (is linkemud running, "
                           f"with telemetry?)") from e
    except (socket.timeout, TimeoutError) as e:
        raise ControlTimeout(f"{where}: connecting timed out (its listen queue is full: "
                             f"nobody is accepting)") from e
    except OSError as e:
        failure = e
    # Connecting to a path that is no socket fails with ECONNREFUSED, as a
    # stale socket does: tell the two apart by what the path is.
    kind = _not_a_socket(path)
    if kind:
        raise ControlError(f"{path} is a {kind}, not a socket (not DPDK telemetry)") from failure
    if failure.errno == errno.ECONNREFUSED:
        raise ControlError(f"{where}: connection refused (nobody listens: a socket left by a "
                           f"linkemud that exited?)") from failure
    if failure.errno == errno.EPROTOTYPE:
        raise ControlError(f"{where}: not a SOCK_SEQPACKET socket (DPDK telemetry v2 is "
                           f"one)") from failure
    raise ControlError(f"cannot connect to {where}: {_cause(failure)}") from failure


def _not_a_socket(path: str | os.PathLike) -> str | None:
    """What the path is when it is no socket ('file', 'directory', ...),
    or None (a socket, or it cannot be told)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISSOCK(mode):
        return None
    if stat.S_ISDIR(mode):
        return "directory"
    return "file" if stat.S_ISREG(mode) else "special file"


def _telemetry_message(s: socket.socket, size: int, where: str, what: str,
                       timeout: float) -> dict:
    """One message of the telemetry socket, a JSON object."""
    try:
        data = s.recv(size)
    except (socket.timeout, TimeoutError) as e:
        raise ControlTimeout(f"{where}: no {what} within {timeout:g} s") from e
    except ConnectionResetError as e:
        raise ControlClosed(f"{where}: closed the connection before the {what} "
                            f"(did linkemud exit?)") from e
    except OSError as e:
        raise ControlError(f"{where}: reading the {what} failed: {_cause(e)}") from e
    if not data:
        raise ControlClosed(f"{where}: closed the connection before the {what} "
                            f"(did linkemud exit?)")
    try:
        message = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError, ValueError) as e:
        raise ControlError(f"{where}: the {what} is not JSON ({e}): {_short(repr(data))}") from e
    if not isinstance(message, dict):
        raise ControlError(f"{where}: unexpected {what} {_short(repr(message))}")
    return message
