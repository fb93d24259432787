"""A stand-in for linkemud's control socket (docs/control.md), for the unit
tests: same line protocol and reply shapes, a toy grammar, and switches to
misbehave (answer late, hang up, answer garbage) so the client's error
handling can be tested without DPDK.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time

WORDS = ("delay", "loss", "limit", "seed")


def check_grammar(direction: str, g: str) -> str | None:
    w = g.split()
    i = 0
    while i < len(w):
        if w[i] not in WORDS:
            return f"set {direction}: unknown word '{w[i]}' (expected delay, loss, limit, seed)"
        if i + 1 >= len(w):
            return f"set {direction}: {w[i]}: missing value"
        i += 2
    return None


def stats_object(rx: int = 0, tx: int = 0, t_ns: int | None = None, config: str = "",
                 in_flight: int = 0, loss: int = 0, rx_bytes: int | None = None,
                 tx_bytes: int | None = None, extra: dict | None = None) -> dict:
    d = {"config": config, "seed": 1, "rx": rx, "tx": tx,
         "rx_bytes": rx * 100 if rx_bytes is None else rx_bytes,
         "tx_bytes": tx * 100 if tx_bytes is None else tx_bytes,
         "in_flight": in_flight,
         "dropped": {"loss": loss, "queue_full": 0, "ring_full": 0,
                     "shutdown": 0, "malformed": 0},
         "dropped_total": loss, "conserved": rx == tx + loss + in_flight,
         "emulation_error_ns": {"count": tx, "min": 10, "mean": 300, "p50": 250, "p90": 900,
                                "p99": 11000, "p999": 40000, "max": 90000}}
    st = {"version": "0.1.0", "layout": "single", "lcores": 1, "seed": 1, "tsc_hz": 2.3e9,
          "uptime_s": 1.5, "time_ns": time.monotonic_ns() if t_ns is None else t_ns,
          "directions": {"a2b": d, "b2a": json.loads(json.dumps(d))}, "conserved": True}
    st.update(extra or {})
    return st


class FakeDaemon:
    """Serves one Unix socket in a thread. Attributes that change behaviour:
    reply_delay_s, hang_up (close instead of answering), garbage (answer a
    non-JSON line), split_reply (send the reply in two pieces), no_ok,
    timed (take `set DIR at Tns GRAMMAR` as linkemud does: staged until its
    clock, CLOCK_MONOTONIC, reaches T, then applied at exactly T)."""

    def __init__(self, path: str):
        self.path = path
        self.links = {"a2b": "", "b2a": ""}
        self.received: list[str] = []
        self.reply_delay_s = 0.0
        self.hang_up = False
        self.garbage = False
        self.split_reply = False
        self.no_ok = False
        self.rx = 0
        self.timed = False
        self.staged: dict[str, tuple[int, str]] = {}
        self.changes = {"a2b": 0, "b2a": 0}
        self.changed_at = {"a2b": 0, "b2a": 0}
        self._srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        if os.path.exists(path):
            os.unlink(path)
        self._srv.bind(path)
        self._srv.listen(8)
        self._stop = False
        self._conns: list[socket.socket] = []
        self._t = threading.Thread(target=self._serve, daemon=True)
        self._t.start()

    def close(self) -> None:
        self._stop = True
        try:
            self._srv.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._srv.close()
        for c in list(self._conns):
            try:
                c.close()
            except OSError:
                pass
        self._t.join(2)
        if os.path.exists(self.path):
            os.unlink(self.path)

    def disconnect_all(self) -> None:
        for c in list(self._conns):
            try:
                c.shutdown(socket.SHUT_RDWR)
                c.close()
            except OSError:
                pass

    def _serve(self) -> None:
        while not self._stop:
            try:
                conn, _ = self._srv.accept()
            except OSError:
                return
            self._conns.append(conn)
            threading.Thread(target=self._client, args=(conn,), daemon=True).start()

    def _client(self, conn: socket.socket) -> None:
        buf = b""
        try:
            while True:
                data = conn.recv(65536)
                if not data:
                    return
                buf += data
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    if not self._answer(conn, line):
                        return
        except OSError:
            return
        finally:
            try:
                conn.close()
            except OSError:
                pass

    def _answer(self, conn: socket.socket, raw: bytes) -> bool:
        if len(raw) > 4096:
            reply = {"ok": False, "error": "line longer than 4096 bytes"}
        else:
            try:
                line = raw.decode()
            except UnicodeDecodeError:
                line = None
            self.received.append(line if line is not None else repr(raw))
            reply = ({"ok": False, "error": "line is not text"} if line is None
                     else self.command(line))
        if self.reply_delay_s:
            time.sleep(self.reply_delay_s)
        if self.hang_up:
            conn.close()
            return False
        if self.garbage:
            conn.sendall(b"this is not json\n", socket.MSG_NOSIGNAL)
            return True
        if self.no_ok:
            reply.pop("ok", None)
        out = (json.dumps(reply) + "\n").encode()
        if self.split_reply:
            conn.sendall(out[:5], socket.MSG_NOSIGNAL)
            time.sleep(0.05)
            conn.sendall(out[5:], socket.MSG_NOSIGNAL)
        else:
            conn.sendall(out, socket.MSG_NOSIGNAL)
        return True

    def now(self) -> int:
        """The daemon's clock: CLOCK_MONOTONIC here (a drifting fake
        overrides it)."""
        return time.monotonic_ns()

    def _apply_due(self) -> None:
        now = self.now()
        for d, (at, g) in list(self.staged.items()):
            if at <= now:
                self.links[d] = g
                self.changes[d] += 1
                self.changed_at[d] = at
                del self.staged[d]

    def command(self, line: str) -> dict:
        w = line.split(None, 2)
        if not w:
            return {"ok": False, "error": "empty line"}
        if w[0] == "help":
            if self.timed:
                return {"ok": True, "help": "help | show | set a2b|b2a [at +DURATION|MODELTIME] "
                                            "GRAMMAR | stats | reset stats"}
            return {"ok": True, "help": "help | show | set DIR GRAMMAR | stats | reset stats"}
        self._apply_due()
        if w[0] == "show":
            return {"ok": True, **self.links}
        if w[0] == "set":
            if len(w) < 2 or w[1] not in self.links:
                d = w[1] if len(w) > 1 else ""
                return {"ok": False, "error": f"set: unknown direction '{d}' (a2b or b2a)"}
            g = " ".join(w[2].split()) if len(w) > 2 else ""
            at = None
            if self.timed and g.startswith("at "):
                t, _, g = g[3:].partition(" ")
                at = int(t.removesuffix("ns"))
            e = check_grammar(w[1], g)
            if e:
                return {"ok": False, "error": e}
            if at is not None:
                self.staged[w[1]] = (at, g)
                return {"ok": True, "dir": w[1], "config": g, "at_ns": at}
            self.links[w[1]] = g
            return {"ok": True, "dir": w[1], "config": g, "applied_ns": self.now()}
        if w[0] == "stats":
            self.rx += 1000
            st = stats_object(self.rx, self.rx, config=self.links["a2b"], t_ns=self.now())
            st["directions"]["b2a"]["config"] = self.links["b2a"]
            for d in self.links:
                st["directions"][d].update(changes=self.changes[d], changed_at_ns=self.changed_at[d],
                                           staged_at_ns=self.staged[d][0] if d in self.staged
                                           else None)
            return {"ok": True, "stats": st}
        if line.strip() == "reset stats":
            self.rx = 0
            return {"ok": True}
        return {"ok": False, "error": f"unknown command '{w[0]}' (expected help, show, set, "
                                      f"stats, reset stats)"}
