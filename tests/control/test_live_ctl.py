"""`linkemu ctl`, `stats`, `capture` and telemetry against a real linkemud
on bed "lc", and abuse of the control socket while frames flow."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time

from kit import CpuWatch, dpdk_only, linkemu, require_quiet, suite_bed
from lckit import Stream
from test_capture_unit import libpcap_times
from linkemu.bed import netns
from linkemu.bed.cpus import tool_cpus
from linkemu.daemon import capture, control
from linkemu.instruments import ping

BED = suite_bed(__file__)


def test_ctl_commands(run_link):
    run_link("delay 1ms", "")
    cp = linkemu("ctl", "--bed", BED, "set", "a2b", "delay 5ms loss 1%")
    assert cp.returncode == 0, cp.stderr
    assert cp.stdout == "a2b: delay 5ms loss 1%\n"
    cp = linkemu("ctl", "--bed", BED, "show", "--json")
    assert json.loads(cp.stdout) == {"a2b": "delay 5ms loss 1%", "b2a": ""}
    # The daemon names grammar errors; we print its message verbatim, exit 1.
    cp = linkemu("ctl", "--bed", BED, "set", "a2b", "dealy 5ms")
    assert cp.returncode == 1
    assert cp.stderr.startswith("linkemud: set a2b: unknown word 'dealy'"), cp.stderr
    cp = linkemu("ctl", "--bed", BED, "raw", "sett a2b delay 1ms")
    assert cp.returncode == 1
    assert "unknown command 'sett'" in json.loads(cp.stdout)["error"]
    cp = linkemu("ctl", "--bed", BED, "stats", "--json")
    st = json.loads(cp.stdout)
    assert st["directions"]["a2b"]["config"] == "delay 5ms loss 1%" and "time_ns" in st
    assert linkemu("ctl", "--bed", BED, "reset-stats").returncode == 0
    cp = linkemu("ctl", "--bed", BED, "set", "a2b")          # no words: no impairment
    assert cp.stdout == "a2b: (no impairment)\n", cp.stderr
    cp = linkemu("ctl", "--bed", BED, "help")
    assert "set" in cp.stdout


def test_ctl_without_a_daemon(bed_up):
    cp = linkemu("ctl", "--bed", BED, "show")
    assert cp.returncode == 1
    assert f"no linkemud is running on bed '{BED}'" in cp.stderr, cp.stderr


def test_stats_watch_once(run_link, bed_up):
    run_link("delay 1ms", "delay 1ms")
    ping = subprocess.Popen(netns.ns_exec_argv(bed_up.ns_src, ["ping", "-n", "-q", "-c", "300",
                                                               "-i", "0.01", bed_up.addr_dst]),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        cp = linkemu("stats", "--bed", BED, "--once", "--interval", "0.3")
        assert cp.returncode == 0, cp.stderr
        out = cp.stdout
        assert f"linkemu stats  bed {BED}" in out and "\x1b[" not in out
        rx_line = next(l for l in out.splitlines() if l.startswith("in   frames/s"))
        assert float(rx_line.split()[2].replace(",", "")) > 0, out      # pings are flowing
        cp = linkemu("stats", "--bed", BED, "--count", "2", "--interval", "0.2", "--json")
        rows = [json.loads(l) for l in cp.stdout.splitlines()]
        assert len(rows) == 2 and rows[1]["directions"]["a2b"]["rx_fps"] > 0
    finally:
        ping.wait(30)


# --- abuse ---------------------------------------------------------------------------------

class Raw:
    """A control connection that sends bytes as given."""

    def __init__(self, path, wait_s: float = 0.0):
        deadline = time.monotonic() + wait_s
        while True:
            self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.s.settimeout(5)
            try:
                self.s.connect(str(path))
                break
            except BlockingIOError:       # the daemon's listen queue is full
                self.s.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.01)
        self.buf = b""

    def send(self, data: bytes) -> None:
        self.s.sendall(data, socket.MSG_NOSIGNAL)

    def reply(self) -> dict | None:
        """The next reply, or None if the daemon closed the connection."""
        while b"\n" not in self.buf:
            chunk = self.s.recv(65536)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def close(self) -> None:
        self.s.close()


def test_bad_lines_do_not_disturb_forwarding(run_link, bed_up):
    link = run_link("delay 1ms", "")
    path = control.socket_path(BED)
    cpu = CpuWatch(bed_up).start()
    stream = Stream(bed_up, count=4 * 2000, rate=2000, port=9310).start()
    try:
        time.sleep(0.3)
        with link.client() as c:
            r = c.request("dealy 5ms")
            assert r["ok"] is False and "unknown command 'dealy'" in r["error"]
            r = c.request("set a2b dealy 5ms")
            assert r["ok"] is False and "'dealy'" in r["error"]
            r = c.request("set x2y delay 5ms")
            assert r["ok"] is False and "unknown direction 'x2y'" in r["error"]

        # An overlong line: an error, the rest of it skipped, the connection usable.
        raw = Raw(path)
        raw.send(b"set a2b delay " + b"9" * 6000 + b"ms\nshow\n")
        assert raw.reply() == {"ok": False, "error": "line longer than 4096 bytes"}
        assert raw.reply()["a2b"] == "delay 1ms"
        # Binary junk: refused (or the connection dropped), never applied.
        raw.send(b"\x00\xff\xfe set a2b delay 9ms \x01\x02\n")
        r = raw.reply()
        assert r is None or (r["ok"] is False and "not text" in r["error"]), r
        raw.close()
        # Junk without a newline, then gone; half a command, then gone.
        for junk in (os.urandom(3000).replace(b"\n", b""), b"set a2b delay 50"):
            raw = Raw(path)
            raw.send(junk)
            raw.close()
        # Many clients at once: the daemon serves some, closes the ones idle
        # longest to give newcomers a slot (saying so), and serves again when
        # they leave.
        many = []
        for _ in range(100):
            try:
                many.append(Raw(path))
            except OSError:
                break                     # its listen queue is full
        assert len(many) >= 2, f"only {len(many)} control clients at once"
        replies = []
        for raw in many:
            try:
                raw.send(b"show\n")
                replies.append(raw.reply())
            except OSError:
                replies.append(None)
        served = [r for r in replies if r and r.get("ok")]
        refused = [r for r in replies if r and not r.get("ok")]
        assert served, replies[:5]
        assert all(r["error"] == "closed: every control slot was taken and this client was idle longest"
                   for r in refused), refused[:3]
        for raw in many:
            raw.close()
        # The daemon serves again once it has seen them go (until then a new
        # client may find the queue full, or be told there are too many).
        deadline = time.monotonic() + 3
        while True:
            raw = Raw(path, wait_s=3.0)
            raw.send(b"show\n")
            r = raw.reply()
            raw.close()
            if r is not None and r["ok"] is True:
                break
            assert r is None or "too many" in r["error"], r
            assert time.monotonic() < deadline, "not served again after the crowd left"
            time.sleep(0.05)
        # A client that sends and never reads its replies is dropped, and
        # does not hold up the others.
        flood = Raw(path, wait_s=2.0).s
        flood.setblocking(False)
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            try:
                flood.send(b"stats\n" * 1000, socket.MSG_NOSIGNAL)
            except BlockingIOError:
                time.sleep(0.01)
            except OSError:
                break          # dropped by the daemon: fine
        with control.connect_bed(bed_up, timeout=2.0, wait_s=2.0) as c:
            assert c.show() == {"a2b": "delay 1ms", "b2a": ""}
        flood.close()
        frames = stream.finish()
    finally:
        stream.kill()
        cpu.stop()
    # Nothing of the abuse reached the link: it stayed at 1 ms throughout,
    # and every frame linkemud forwarded arrived.
    owd = [r - s for _q, s, r in frames]
    assert min(owd) >= 1_000_000, f"a frame left before its 1 ms: {min(owd)} ns"
    with link.client() as c:
        assert c.show() == {"a2b": "delay 1ms", "b2a": ""}
    final = link.stop()
    a2b = final["directions"]["a2b"]
    assert a2b["tx"] == len(frames), (a2b, stream.receiver_report)
    # And none was lost: on a machine where linkemud had its CPU to itself
    # (elsewhere other daemons' polling can make it drop or miss frames).
    require_quiet(None, 0, "loss during the abuse", cpu)
    assert len(frames) == stream.count and a2b["rx"] == stream.count, (a2b, stream.sender_report)
    assert a2b["dropped_total"] == 0, a2b


# --- capture and telemetry ------------------------------------------------------------------

def _ping(bed, count: int, interval: float) -> subprocess.Popen:
    return subprocess.Popen(netns.ns_exec_argv(bed.ns_src, ["ping", "-n", "-c", str(count), "-i",
                                                            str(interval), "-W", "2",
                                                            bed.addr_dst], cpus=tool_cpus()),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _icmp(pc, port: int, direction: str):
    return [(p, capture.ipv4_info(p.data)) for p in pc.packets
            if p.interface == port and p.direction == direction]


def test_dumpcap_captures_what_the_link_delivers(run_link, bed_up, tmp_path):
    dpdk_only("capture is dpdk-dumpcap attached to linkemud's rte_pdump")
    run_link("delay 1ms", "delay 1ms")
    # 10 s of pings at 5 ms: they outlast the three captures even when
    # dumpcap is slow to attach on a busy machine.
    pinger = _ping(bed_up, 2000, 0.005)
    try:
        time.sleep(0.5)
        out = tmp_path / "a2b-out.pcapng"
        cp = linkemu("capture", "--bed", BED, "-c", "100", "--dir", "a2b", "--port", "out",
                     "-w", str(out), "--duration", "20", "--json", timeout=60)
        assert cp.returncode == 0, cp.stderr
        res = json.loads(cp.stdout)
        pc = capture.read_pcapng(out)
        assert len(pc.packets) == res["packets"] == 100, res
        # Port 1 (side B) transmitting: the echo requests src -> dst.
        got = _icmp(pc, 1, "out")
        assert len(got) == 100, [(p.interface, p.direction) for p in pc.packets[:5]]
        for p, info in got:
            assert (info["src"], info["dst"], info["proto"], info["icmp_type"]) == \
                (bed_up.addr_src, bed_up.addr_dst, 1, 8), info
        # b2a as it enters linkemud: the echo replies received on port 1.
        back = tmp_path / "b2a-in.pcapng"
        cp = linkemu("capture", "--bed", BED, "-c", "50", "--dir", "b2a", "--port", "in",
                     "-w", str(back), "--duration", "20", timeout=60)
        assert cp.returncode == 0, cp.stderr
        got = _icmp(capture.read_pcapng(back), 1, "in")
        assert len(got) == 50
        assert all(i["src"] == bed_up.addr_dst and i["icmp_type"] == 0 for _p, i in got)
        # Both sides of a2b over a window: one dumpcap per port, merged.
        # Within the ping sequence numbers both captured, every request
        # entering on port 0 leaves on port 1, and not before the link's
        # 1 ms. The capture stamps are taken in linkemud (rte_pdump's
        # callbacks) from the TSC at DPDK's nominal rate; the model's 1 ms
        # is counted on the TSC at the rate linkemud measured (stats
        # tsc_hz): in the capture's nanoseconds it is 1 ms x tsc_hz /
        # tsc_nominal_hz (seen: 998.94 us on a VM).
        both = tmp_path / "a2b-both.pcapng"
        cp = linkemu("capture", "--bed", BED, "--port", "both", "--duration", "1", "-w",
                     str(both), "--json", timeout=60)
        assert cp.returncode == 0, cp.stderr
        window = json.loads(cp.stdout)["duration_s"]
        pc = capture.read_pcapng(both)
        seen_in = {i["icmp_seq"]: p.ts_ns for p, i in _icmp(pc, 0, "in")}
        seen_out = {i["icmp_seq"]: p.ts_ns for p, i in _icmp(pc, 1, "out")}
        assert len(seen_in) + len(seen_out) == len(pc.packets)
        lo = max(min(seen_in), min(seen_out))
        hi = min(max(seen_in), max(seen_out))
        span = set(range(lo, hi + 1))
        assert span <= set(seen_in) and span <= set(seen_out), (lo, hi)
        # The two dumpcaps ran over the same window: their overlap holds
        # most of what each saw (ping's own pace is not ours to assert).
        assert len(span) >= 0.7 * min(len(seen_in), len(seen_out)) > 0, (len(span), window)
        delays = [seen_out[q] - seen_in[q] for q in span]
        st = json.loads(linkemu("ctl", "--bed", BED, "stats", "--json").stdout)
        one_ms = 1_000_000 * st["tsc_hz"] / st["tsc_nominal_hz"]
        assert min(delays) >= one_ms - 2, (min(delays), one_ms)   # 2: both stamps' rounding
        # libpcap reads the merge of dumpcap's files in the same order, the
        # same nanoseconds apart. (Not the same absolute times: the stamps
        # of DPDK 22.11's rte_pcapng lie centuries ahead, where libpcap
        # wraps the seconds.)
        ours, theirs = [p.ts_ns for p in pc.packets], libpcap_times(both)
        assert len(theirs) == len(ours)
        assert [b - a for a, b in zip(theirs, theirs[1:])] == [b - a for a, b in zip(ours, ours[1:])]
    finally:
        out_text, _ = pinger.communicate(timeout=60)
    # Capturing cost the link nothing.
    r = ping.parse_ping(out_text)
    assert r.transmitted == 2000 and r.received == 2000, out_text[-300:]


def test_telemetry_serves_the_counters(run_link, bed_up):
    link = run_link("delay 1ms", "")
    r = ping.ping(bed_up, count=50, interval=0.01)
    assert r.received == 50
    time.sleep(0.05)
    tel = control.telemetry_path(bed_up.file_prefix)
    assert "/linkemu/stats" in control.telemetry_query(tel, "/")["/"]
    st = control.telemetry_query(tel, "/linkemu/stats")["/linkemu/stats"]
    dirs = st.get("directions", st)
    with link.client() as c:
        live = c.stats()
    for name in ("a2b", "b2a"):
        d = dirs[name]
        assert d["rx"] == 50 and d["tx"] == 50, d
        assert d["rx"] == d["tx"] + d["dropped_total"] + d["in_flight"]
        assert d["rx"] == live["directions"][name]["rx"]
        assert d["rx_bytes"] == live["directions"][name]["rx_bytes"] >= 50 * 98
        # The ports' own counts, as in `stats` (before_rx, after_tx).
        before = live["directions"][name]["before_rx"]
        assert d["port_in_imissed"] == before["imissed"] and d["port_in_rx_nombuf"] == before["rx_nombuf"]
        assert d["port_in_ierrors"] == before["ierrors"]
        # The drivers' drop-related xstats, as `stats` gives them: only
        # nonzero counters whose names say they count drops.
        xs = live["directions"][name]["port_xstats"]
        assert set(xs) == {"in", "out", "not_shown"}, xs
        for side in ("in", "out"):
            assert all(v > 0 and any(w in k for w in ("drop", "miss", "err", "full", "nombuf"))
                       for k, v in xs[side].items()), xs
            tel = {k[len(f"port_{side}_xstat_"):]: v for k, v in d.items()
                   if k.startswith(f"port_{side}_xstat_")}
            assert tel.keys() == xs[side].keys(), (tel, xs)
        assert d["port_out_oerrors"] == live["directions"][name]["after_tx"]["oerrors"]
    assert dirs["a2b"]["config"] == "delay 1ms"
    assert st["mempool_in_use"] > 0


def _direction_once_applied(c, direction: str, within_s: float = 10.0) -> dict:
    """The direction's stats once its staged change is applied. The lcore
    applies it on its first pass after the time, which a starved lcore on a
    loaded machine reaches late: the time it lands at is checked, not when
    the test happened to look."""
    deadline = time.monotonic() + within_s
    while True:
        d = c.stats()["directions"][direction]
        if d["staged_at_ns"] is None or time.monotonic() > deadline:
            return d
        time.sleep(0.05)


def test_timed_set_lands_at_its_model_time(run_link):
    """`set DIR at TIME` is staged, then applied exactly at that model time
    (the daemon's clock, stats' time_ns), relative (+DURATION) or absolute."""
    link = run_link("delay 1ms", "")
    with link.client() as c:
        now = c.stats()["time_ns"]
        r = c.call(f"set a2b at {now + 200_000_000}ns delay 7ms")
        assert r["at_ns"] == now + 200_000_000 and r["config"] == "delay 7ms", r
        d = c.stats()["directions"]["a2b"]
        assert d["staged_at_ns"] == r["at_ns"] and d["config"] == "delay 1ms", d
        assert c.show()["a2b"] == "delay 1ms"
        d = _direction_once_applied(c, "a2b")
        assert d["changed_at_ns"] == r["at_ns"] and d["staged_at_ns"] is None, d
        assert d["config"] == "delay 7ms" and d["changes"] == 1
        r = c.call("set b2a at +50ms delay 2ms")
        before = c.stats()["time_ns"]
        assert r["at_ns"] <= before + 50_000_000
        d = _direction_once_applied(c, "b2a")
        assert d["changed_at_ns"] == r["at_ns"] and d["config"] == "delay 2ms", d
        for bad, why in (("set a2b at banana delay 1ms", "set a2b at: bad time 'banana'"),
                         ("set a2b at", "set a2b at: missing time")):
            reply = c.request(bad)
            assert reply["ok"] is False and reply["error"].startswith(why), reply


def test_reset_stats_restarts_every_class(run_link, bed_up):
    """`reset stats` restarts the per-class counts too (docs/control.md:
    everything restarts from zero), matching classes by name across a live
    change; the books of each class and of the direction still balance."""
    classes = "delay 1ms ; class icmp match proto icmp : delay 2ms"
    run_link(classes, "")
    ping.ping(bed_up, count=20, interval=0.01)
    c = control.connect_bed(bed_up, 5.0)
    try:
        before = c.stats()["directions"]["a2b"]
        icmp = {k["name"]: k for k in before["classes"]}["icmp"]
        assert icmp["rx"] >= 20, before
        c.reset_stats()
        # Blanks after the command change nothing, as after `show`.
        assert c.request("reset stats \t")["ok"] is True
        # A live change that reorders the rules: counts follow the name.
        c.set("a2b", "delay 1ms ; class other match proto udp : delay 3ms ; "
                     "class icmp match proto icmp : delay 2ms")
        ping.ping(bed_up, count=5, interval=0.01)
        time.sleep(0.1)
        after = c.stats()["directions"]["a2b"]
    finally:
        c.close()
    by_name = {k["name"]: k for k in after["classes"]}
    assert by_name["icmp"]["rx"] == 5 and by_name["icmp"]["tx"] == 5, after
    assert by_name["other"]["rx"] == 0, after
    assert after["rx"] == sum(k["rx"] for k in after["classes"]), after
    assert after["tx"] == sum(k["tx"] for k in after["classes"]), after


def _ended_balance(d: dict) -> None:
    """The removed classes' books: rx + dup + held at the reset == tx +
    dropped + held; and the classes with them add up to the direction."""
    e = d["ended_classes"]
    assert e["rx"] + e["dup"] + e["in_flight_at_reset"] == \
        e["tx"] + sum(e["dropped"].values()) + e["in_flight"], d
    for key in ("rx", "tx"):
        assert d[key] == sum(k[key] for k in d["classes"]) + e[key], (key, d)
    assert d["dropped_total"] == sum(sum(k["dropped"].values()) for k in d["classes"]) \
        + sum(e["dropped"].values()), d


def test_a_removed_class_stays_in_the_books(run_link, bed_up):
    """A live `set` that removes a class while it holds frames: the class
    keeps serving them, and its counts appear as `ended_classes`, so the
    classes of a direction still add up to its totals (docs/control.md),
    across a `reset stats` too."""
    n, held_s = 100, 2.0
    run_link(f"delay 1ms ; class held match proto udp dport 9350 : delay {int(held_s * 1000)}ms limit 1000", "")
    c = control.connect_bed(bed_up, 5.0)
    try:
        stream = Stream(bed_up, count=n, rate=1000, port=9350, idle_s=held_s + 2.0).start()
        # Every frame in the class before the change, none due yet (the
        # stream takes 0.1 s; the class holds them held_s).
        deadline = time.monotonic() + held_s / 2
        while True:
            d = c.stats()["directions"]["a2b"]
            got = {k["name"]: k for k in d["classes"]}["held"]["rx"]
            if got == n or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        assert got == n, f"only {got} of {n} frames reached the class in {held_s / 2} s: {d}"
        c.set("a2b", "delay 1ms")                  # the class ends, holding them
        now = c.stats()["directions"]["a2b"]
        c.reset_stats()
        time.sleep(held_s + 0.5)
        after = c.stats()["directions"]["a2b"]
        frames = stream.finish()
    finally:
        c.close()
    assert [k["name"] for k in now["classes"]] == ["default"], now
    # Held by the ended class, not by any current one; nothing left yet.
    e = now["ended_classes"]
    assert e["rx"] == n and e["tx"] == 0 and e["in_flight"] == n, now
    _ended_balance(now)
    # Since the reset: the ended class sent what it held then, and took
    # nothing new (frames after the change go to the default class).
    e = after["ended_classes"]
    assert e["rx"] == 0 and e["in_flight_at_reset"] == n and e["tx"] == n and e["in_flight"] == 0, after
    _ended_balance(after)
    assert len(frames) == n, f"{len(frames)} of {n} frames arrived"


def test_a_class_added_again_counts_from_its_adding(run_link, bed_up):
    """A class that one live `set` removes and a later one adds again under
    the same name starts from zero: after a `reset stats` taken before its
    removal, it shows what it counted since it was added again, not that
    less what its namesake had counted at the reset (docs/control.md); the
    namesake's counts since the reset are the ended classes', and the
    direction's books still balance."""
    n_before, n_after = 60, 25
    a = "class a match proto udp dport 9360 : delay 1ms"
    b = "class b match proto udp dport 9361 : delay 1ms"
    run_link(f"delay 1ms ; {a} ; {b}", "")
    c = control.connect_bed(bed_up, 5.0)
    try:
        Stream(bed_up, count=n_before, rate=1000, port=9360, idle_s=1.0).start().finish()
        d = c.stats()["directions"]["a2b"]
        assert {k["name"]: k for k in d["classes"]}["a"]["tx"] == n_before, d
        c.reset_stats()
        c.set("a2b", f"delay 1ms ; {b}")           # a ends
        c.set("a2b", f"delay 1ms ; {a} ; {b}")     # and a new a begins
        stream_b = Stream(bed_up, count=n_after, rate=1000, port=9361, idle_s=1.0).start()
        Stream(bed_up, count=n_after, rate=1000, port=9360, idle_s=1.0).start().finish()
        stream_b.finish()
        after = c.stats()["directions"]["a2b"]
    finally:
        c.close()
    by_name = {k["name"]: k for k in after["classes"]}
    ca, cb = by_name["a"], by_name["b"]
    assert (ca["rx"], ca["tx"], ca["in_flight"], ca["in_flight_at_reset"]) == (n_after, n_after, 0, 0), after
    assert sum(ca["dropped"].values()) == 0, after
    # b lived through both changes: its counts since the reset.
    assert (cb["rx"], cb["tx"], cb["in_flight_at_reset"]) == (n_after, n_after, 0), after
    # The old a counted nothing since the reset (it held nothing then).
    e = after["ended_classes"]
    assert (e["rx"], e["tx"], e["in_flight"], e["in_flight_at_reset"]) == (0, 0, 0, 0), after
    assert after["conserved"], after
    _ended_balance(after)
