"""The unit-latency instrument without a bed: wire format, the server's
record, the statistics, the schedule, and whole runs over loopback."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

from linkemu.errors import UsageError
from linkemu.instruments import units_stats as st
from linkemu.instruments import units_wire as wire
from linkemu.instruments.units_schedule import LEAD_NS, Schedule, generate, start_ns
from linkemu.instruments.units_sink import Sink
from linkemu.lab.cellular import base_delay_ns
from linkemu.lab.cellular_overhead import allowed_exceedances

from kit import cli_env


def test_unit_is_eight_bytes_and_round_trips():
    now = time.time_ns()
    b = wire.pack_unit(123, now, 8)
    assert len(b) == 8
    seq, us = wire.unpack_unit(b)
    assert seq == 123
    assert wire.full_time_ns(us, now + 25_000_000) == now // 1000 * 1000


def test_generation_time_restored_across_the_32_bit_wrap():
    gen = (1 << 32) * 1000 * 5 - 3_000_000           # 3 ms before a wrap of the low 32 bits
    us = wire.unpack_unit(wire.pack_unit(0, gen, 8))[1]
    assert wire.full_time_ns(us, gen + 40_000_000) == gen   # received after the wrap
    assert wire.full_time_ns(us, gen - 2_000_000) == gen    # a clock 2 ms behind the sender's


def test_an_interval_the_hello_cannot_carry_is_refused():
    # The hello carries the interval in whole microseconds: 1500 ns went out
    # as 1 us, and the server computed every flush wait with 1000 ns.
    with pytest.raises(UsageError, match="--interval 1500ns: .*whole number of microseconds"):
        Schedule(count=10, interval_ns=1500).validate()
    Schedule(count=10, interval_ns=2000).validate()
    h = wire.Hello(8, 10, 2000, 10, 1)
    assert wire.unpack_hello(h.pack()) == h


def test_padding_and_size_limits():
    assert wire.pack_unit(1, 0, 32)[8:] == bytes(24)
    for bad in (7, 0, 70_000):
        with pytest.raises(UsageError, match="unit size"):
            wire.check_size(bad)


def test_stream_units_split_across_reads():
    sink = Sink()
    hello = wire.Hello(8, 10, 1_000_000, 3, 7).pack()
    t = time.time_ns()
    data = hello + b"".join(wire.pack_unit(i, t, 8) for i in range(3))
    sink.stream(data[:5], t)
    sink.stream(data[5:27], t + 1)      # hello done, unit 0 split
    sink.stream(data[27:], t + 2)
    assert sink.hello.run_id == 7 and sink.seq == [0, 1, 2]
    assert sink.rx_ns == [t + 2, t + 2, t + 2]


def test_a_foreign_stream_is_an_error_that_says_so():
    # A TCP or QUIC peer that is not a units client (a port scanner, an HTTP
    # probe, a client of another protocol): ValueError, a server traceback, before.
    from linkemu.errors import LinkemuError
    sink = Sink()
    with pytest.raises(LinkemuError, match="not a linkemu units stream .*GET "):
        sink.stream(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", time.time_ns())
    bad_size = wire.Hello(8, 10, 1_000_000, 3, 7).pack()
    bad_size = bad_size[:4] + (4).to_bytes(2, "big") + bad_size[6:]
    with pytest.raises(LinkemuError, match="unit size 4 B") as e:
        Sink().stream(bad_size, time.time_ns())
    assert not isinstance(e.value, UsageError)     # the peer's fault, not this command's


def test_datagrams_hello_end_and_foreign():
    sink = Sink(size=16)
    hello = wire.Hello(8, 2, 1_000_000, 4, 1).pack()
    t = time.time_ns()
    sink.datagram(hello, t)
    assert sink.size == 8                      # the hello's size wins over the option
    sink.datagram(wire.pack_unit(0, t, 8) + wire.pack_unit(1, t, 8), t)
    sink.datagram(b"xyz", t)                   # not whole units
    assert sink.malformed == 1 and not sink.complete()
    sink.datagram(wire.pack_unit(2, t, 8) + wire.pack_unit(3, t, 8), t)
    sink.datagram(wire.end_marker(4, 8) + hello, t)
    assert sink.end_count == 4 and sink.complete()


def test_the_udp_server_keeps_up_with_a_long_run():
    # serve_udp asks complete() after every datagram; it rebuilt a set of every
    # sequence number so far each time: quadratic, 50,000 units of flush 1 took
    # ~10 s of CPU (20,000 took 1.7 s), and a server that falls behind stamps
    # its reads late, which the latency (read time - generation) then carries.
    n = 50_000
    sink = Sink()
    sink.datagram(wire.Hello(8, 1, 1_000_000, n, 1).pack())
    t = time.time_ns()
    units = [wire.pack_unit(i, t, 8) for i in range(n)]
    t0 = time.process_time()
    for i, u in enumerate(units):
        sink.datagram(u, t, None)
        assert not sink.complete()
    sink.datagram(units[7], t, None)                 # a duplicate: still n distinct
    sink.datagram(wire.end_marker(n, 8) + wire.Hello(8, 1, 1_000_000, n, 1).pack(), t)
    assert sink.complete()
    assert time.process_time() - t0 < 3.0


def test_analysis_losses_reorder_groups_band():
    ms = 1_000_000
    seq = [0, 1, 2, 3, 5, 4, 6, 7]
    gen = [i * ms for i in seq]
    # two flushes of 4 released together (one group), then 2 alone
    rx = [30 * ms] * 6 + [40 * ms, 40 * ms]
    a = st.analyse(seq, gen, rx, flush=4, interval_ns=ms, expected=10, delay_ns=20 * ms)
    assert a["lost"] == 2 and a["reordered"] == 1 and a["duplicates"] == 0
    assert not a["in_order"]
    assert a["groups"]["max"] == 6 and a["groups"]["units_in_groups_over_flush"] == 6
    assert a["band"]["lo_ns"] == 21 * ms and a["band"]["hi_ns"] == 24 * ms
    lat = np.asarray(rx) - np.asarray(gen)
    assert a["band"]["below"] == int(np.sum(lat < 21 * ms))
    assert a["band"]["above"] == int(np.sum(lat > 24 * ms))
    assert sum(a["histogram"]["counts"]) == 8


def test_reported_sd_is_the_sample_sd():
    """The unit latencies and the pings are samples: their sd is the sample
    sd (n - 1), as the lab's analysis documents, not the population sd."""
    from linkemu.lab.cellular import _ping_stats
    assert st.quantiles([1, 2, 3, 4])["sd"] == pytest.approx(np.sqrt(5 / 3))
    assert _ping_stats([1.0, 2.0, 3.0, 4.0], 4)["sd"] == pytest.approx(np.sqrt(5 / 3))
    # One value has no spread to estimate: 0, and no crash.
    assert st.quantiles([7])["sd"] == 0.0
    assert _ping_stats([7.0], 1)["sd"] == 0.0


def test_flush_wait_is_the_study_rule():
    w = st.flush_wait_ns(np.arange(10), 10, 1_000_000)
    assert w.tolist() == [(10 - k) * 1_000_000 for k in range(10)]
    assert w.mean() == 5_500_000


def test_schedule_sends_flushes_on_absolute_deadlines():
    sent = []
    s = Schedule(count=25, interval_ns=2_000_000, flush=10, spin_ns=200_000)
    t = generate(s, lambda b: sent.append((time.monotonic_ns(), b)))
    assert [len(b) // 8 for _t, b in sent] == [10, 10, 5]
    seqs = [wire.unpack_unit(b, k * 8)[0] for _t, b in sent for k in range(len(b) // 8)]
    assert seqs == list(range(25))
    # Absolute deadlines: the first to the last send take 2 x 20 ms plus the
    # last send's lateness minus the first's. A schedule relative to each
    # wake-up would add every lateness instead (it drifts). 1 ms covers the
    # time between reading the clock for the lateness and the callback's.
    span = sent[-1][0] - sent[0][0]
    late = t.flush_late_ns
    assert abs(span - 40_000_000 - (late[-1] - late[0])) <= 1_000_000
    assert len(t.unit_late_ns) == 25 and min(t.unit_late_ns) >= 0


def test_allowed_exceedances_is_the_exchangeable_tail():
    # equal sizes: P(at least j exceed) ~ 2^-j; below 1e-4 from j = 14 on
    assert allowed_exceedances(300, 300, 1e-4) == 13
    # a much larger baseline allows fewer
    assert allowed_exceedances(100, 10_000, 1e-4) <= 2


def test_base_delay_of_a_grammar():
    assert base_delay_ns("trace x delay 19.11ms 4.17ms distribution normal") == 19_110_000
    assert base_delay_ns("rate 1mbit") == 0


def _free_port(kind) -> int:
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("proto", ["udp", "tcp", "quic"])
def test_loopback_run_delivers_every_unit(proto, tmp_path):
    port = _free_port(socket.SOCK_DGRAM if proto != "tcp" else socket.SOCK_STREAM)
    samples, flushes = tmp_path / "s.npy", tmp_path / "f.npy"
    srv = subprocess.Popen([sys.executable, "-m", "linkemu", "units", "server", "--proto", proto,
                            "--bind", "127.0.0.1", "--port", str(port), "--json", "--announce",
                            "--samples", str(samples), "--start-timeout", "30"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=cli_env())
    try:
        assert srv.stdout.readline().strip() == "ready", srv.stderr.read()
        cp = subprocess.run([sys.executable, "-m", "linkemu", "units", "client", "--proto", proto,
                             "--connect", "127.0.0.1", "--port", str(port), "--count", "300",
                             "--json", "--flush-times", str(flushes)], capture_output=True, text=True, env=cli_env(), timeout=120)
        assert cp.returncode == 0, cp.stderr
        out, err = srv.communicate(timeout=60)
        assert srv.returncode == 0, err
    finally:
        if srv.poll() is None:
            srv.kill()
            srv.wait()
    client, server = json.loads(cp.stdout), json.loads(out)
    assert client["flushes"] == 30 and client["timing"]["unit_late_ns"]["count"] == 300
    assert server["received"] == server["expected"] == 300 and server["lost"] == 0
    if proto != "udp":
        assert server["in_order"]
    a = st.read_samples(samples)
    assert sorted(a["seq"].tolist()) == list(range(300))
    # a unit is never received before it was generated (one clock)
    assert np.all(a["rx_ns"] - a["gen_ns"] >= -1000)
    # the kernel stamps a packet before the server reads it, after the client
    # sent it (TCP and UDP; QUIC reads carry none: the stamp is the read)
    sent = np.load(flushes)
    assert sent.size == 30
    krx_after_send = a["krx_ns"] - sent[a["seq"].astype(np.int64) // 10]
    assert np.all(a["krx_ns"] <= a["rx_ns"])
    if proto == "quic":
        assert server["kernel_stamps"] == 0 and np.all(a["krx_ns"] == a["rx_ns"])
    else:
        assert server["kernel_stamps"] == server["reads"] > 0
        # a flush is stamped after its send call began (TCP: a unit may ride
        # in a later segment, never an earlier one)
        assert np.all(krx_after_send >= 0)
        assert server["receiver_wait_ns"]["min"] >= 0


def test_aligned_schedules_start_on_the_same_grid():
    """Two clients with the same alignment flush at the same instants
    whenever each started: t0 on a multiple of align, at least LEAD_NS on."""
    for now in (0, 1, 3_333_333, 9_999_999, 10_000_000, 123_456_789_012):
        t0 = start_ns(now, 10_000_000)
        assert t0 % 10_000_000 == 0 and now + LEAD_NS <= t0 < now + LEAD_NS + 10_000_000
    assert start_ns(5, 0) == 5 + LEAD_NS
    sent = []
    s = Schedule(count=10, interval_ns=1_000_000, flush=10, spin_ns=200_000, align_ns=10_000_000)
    t = generate(s, lambda b: sent.append(time.monotonic_ns()))
    # the flush is due at t0 + 10 ms, t0 on the 10 ms grid: its send call
    # left within its measured lateness (+ 1 ms for the callback) of a grid point
    assert (sent[0] - t.flush_late_ns[0]) % 10_000_000 < 1_000_000


def test_client_refuses_bad_options():
    cp = subprocess.run([sys.executable, "-m", "linkemu", "units", "client", "--proto", "udp",
                         "--connect", "127.0.0.1", "--size", "4"], capture_output=True,
                        text=True, env=cli_env(), timeout=60)
    assert cp.returncode == 2 and "unit size 4 B" in cp.stderr
    cp = subprocess.run([sys.executable, "-m", "linkemu", "units", "client", "--proto", "tcp",
                         "--connect", "127.0.0.1", "--cc", "nosuchcc", "--count", "10"],
                        capture_output=True, text=True, env=cli_env(), timeout=60)
    assert cp.returncode == 2 and "nosuchcc" in cp.stderr
    cp = subprocess.run([sys.executable, "-m", "linkemu", "units", "client", "--proto", "udp",
                         "--connect", "127.0.0.1", "--align", "11s"], capture_output=True,
                        text=True, env=cli_env(), timeout=60)
    assert cp.returncode == 2 and "--align" in cp.stderr


@pytest.mark.parametrize("run_id", ["-1", str(1 << 32)])
def test_a_run_id_the_hello_cannot_carry_is_a_usage_error(run_id):
    # The hello carries the run id in 32 bits: struct.error, a traceback, before.
    cp = subprocess.run([sys.executable, "-m", "linkemu", "units", "client", "--proto", "udp",
                         "--connect", "127.0.0.1", "--port", "9", "--count", "1",
                         "--run-id", run_id], capture_output=True, text=True, env=cli_env(),
                        timeout=60)
    assert cp.returncode == 2, cp.stderr
    assert f"--run-id {run_id}" in cp.stderr and "0 .. 4294967295" in cp.stderr
    assert "Traceback" not in cp.stderr


@pytest.mark.parametrize("args, says", [
    (["server", "--proto", "udp", "--start-timeout", "-1"],
     "argument --start-timeout: '-1' is not a number of seconds above 0"),
    (["server", "--proto", "udp", "--idle", "nan"], "argument --idle: 'nan' is not a number"),
    (["server", "--proto", "tcp", "--port", "99999"],
     "argument --port: '99999' is not a port (1 .. 65535)"),
    (["server", "--proto", "tcp", "--port", "-1"], "argument --port: '-1' is not a port"),
    (["client", "--proto", "tcp", "--connect", "127.0.0.1", "--port", "70000"],
     "argument --port: '70000' is not a port"),
])
def test_bad_ports_and_seconds_are_usage_errors(args, says):
    # These were tracebacks (socket.settimeout's ValueError, bind's
    # OverflowError) or, for a client, a misleading "Connection refused".
    cp = subprocess.run([sys.executable, "-m", "linkemu", "units", *args], capture_output=True,
                        text=True, env=cli_env(), timeout=60)
    assert cp.returncode == 2 and says in cp.stderr and "Traceback" not in cp.stderr, cp.stderr


def test_samples_written_before_kernel_stamps_still_read(tmp_path):
    old = np.zeros(3, dtype=st.SAMPLE_DTYPE[:3])
    old["seq"], old["gen_ns"], old["rx_ns"] = [0, 1, 2], [10, 20, 30], [40, 50, 60]
    np.save(tmp_path / "old.npy", old)
    a = st.read_samples(tmp_path / "old.npy")
    assert a["krx_ns"].tolist() == [40, 50, 60]
    np.save(tmp_path / "bad.npy", np.zeros(2, dtype=[("x", "<i8")]))
    with pytest.raises(Exception, match="not a units samples file"):
        st.read_samples(tmp_path / "bad.npy")


def _quick_inputs(shift_ns: int, rng, machine_ns: int = 0, late_ns: int | None = 0):
    """Synthetic parts for cellular_quick.checks: 300 flushes each run, the
    path beyond the delay drawn from one distribution (+ shift_ns over the
    delay, + machine_ns over both streams), senders on time; linkemud
    reports a largest lateness of late_ns (None: not reported)."""
    from linkemu.lab import cellular_quick as cq
    n = 3000
    seq = np.arange(n)
    wait = st.flush_wait_ns(seq, 10, 1_000_000)

    def parts(delay, shift):
        path = rng.gamma(4.0, 10_000.0, n // 10).astype(np.int64) + shift
        lat = delay + wait + path[seq // 10]
        return {"path": path, "sender": np.zeros(n, np.int64), "receiver": np.full(n, 50_000),
                "latency_kernel": lat}

    base, fixed = parts(0, machine_ns), parts(cq.QUICK_DELAY_NS, shift_ns + machine_ns)
    server = {"lost": 0, "latency_ns": {"mean": float(fixed["latency_kernel"].mean() + 50_000)}}
    stream = {"unique": n, "expected": n, "in_order": True, "duplicates": 0, "reordered": 0}
    emu = None if late_ns is None else {"a2b": {"p99": late_ns // 2, "max": late_ns}}
    runs = [{"id": "overhead-udp", "server": server},
            {"id": "fixed-udp", "server": server, "daemon_emulation_error_ns": emu},
            {"id": "fixed-tcp", "server": stream, "count": n},
            {"id": "fixed-quic", "server": stream, "count": n}]
    return {c["name"]: c for c in cq.checks(runs, base, fixed)}


def test_quick_band_holds_for_one_distribution_and_fails_when_the_path_adds():
    from linkemu.lab import cellular_quick as cq
    rng = np.random.default_rng(7)
    same = _quick_inputs(0, rng)
    assert all(c["pass"] for c in same.values()), same
    # 100 us more on every flush over the delay: most flushes beyond the bed's max
    worse = _quick_inputs(100_000, rng)
    assert not worse[cq.CHECK_BAND]["pass"] and worse[cq.CHECK_MEAN]["pass"]
    # 1 ms more: the mean moves past 0.5 ms too
    more = _quick_inputs(1_000_000, rng)
    assert not more[cq.CHECK_MEAN]["pass"] and more[cq.CHECK_BASE_MEAN]["pass"]


def test_quick_band_grants_linkemuds_own_measured_lateness_and_no_more():
    """The delayed path is the bed's plus linkemud's lateness, which it
    measures per frame: 60 us more on every flush passes when linkemud
    reports a largest lateness of 60 us, fails when it reports 20 us, and
    the band is not judged when the daemon reported none."""
    from linkemu.lab import cellular_quick as cq
    granted = _quick_inputs(60_000, np.random.default_rng(7), late_ns=60_000)
    assert granted[cq.CHECK_BAND]["pass"] is True, granted[cq.CHECK_BAND]["detail"]
    short = _quick_inputs(60_000, np.random.default_rng(7), late_ns=20_000)
    assert short[cq.CHECK_BAND]["pass"] is False
    unknown = _quick_inputs(0, np.random.default_rng(7), late_ns=None)
    assert unknown[cq.CHECK_BAND]["pass"] is None and "not reported" in \
        unknown[cq.CHECK_BAND]["detail"]


def test_quick_baseline_mean_tells_the_machine_from_the_link():
    """1 ms added by the machine to both streams (the same seconds): the
    delayed stream's mean fails, and so does the baseline's, which is what
    makes the test skip rather than blame the link; the band, comparing
    the two streams, still holds."""
    from linkemu.lab import cellular_quick as cq
    c = _quick_inputs(0, np.random.default_rng(7), machine_ns=1_000_000)
    assert not c[cq.CHECK_MEAN]["pass"] and not c[cq.CHECK_BASE_MEAN]["pass"]
    assert c[cq.CHECK_BAND]["pass"]


def _units_run(link: str, proto: str, k: int, lat_ns: list[int]) -> dict:
    n = len(lat_ns)
    seq = np.arange(n)
    gen = seq * 1_000_000
    srv = st.analyse(seq, gen, gen + np.asarray(lat_ns, dtype=np.int64), flush=10,
                     interval_ns=1_000_000, expected=100, delay_ns=20_000_000)
    return {"id": f"{link}-{proto}-{k}", "kind": "units", "proto": proto, "link": link,
            "run": k, "server": srv, "problems": []}


def test_full_summary_survives_a_run_that_received_nothing():
    """One unit run of the full study received no unit (its latency has no
    quantiles, {"count": 0}): the summary must still be made (it comes
    before the results file is written), count the run's losses, and take
    its latency figures from the runs that received units; with no such
    run they are None and the table says so."""
    from linkemu.lab.cellular import CellularOptions, summarise
    from linkemu.report.cellular_tables import units_table
    o = CellularOptions(links=(), unit_links=("cell-4g-dec4",), protos=("udp", "tcp"))
    runs = [_units_run("cell-4g-dec4", "udp", 1, [25_000_000] * 100),
            _units_run("cell-4g-dec4", "udp", 2, []),
            _units_run("cell-4g-dec4", "tcp", 1, [])]
    res = {"runs": runs}
    s = summarise(res, o)
    udp, tcp = s["units"]
    assert udp["runs"] == 2 and udp["runs_with_units"] == 1 and udp["lost"] == 100
    assert udp["p50_ms"] == 25.0 and udp["min_ms"] == 25.0
    assert udp["share_outside_band"] == 0.0
    assert tcp["p50_ms"] is None and tcp["share_outside_band"] is None
    table = units_table({"summary": s})
    assert any("no unit received" in c for row in table.rows for c in row)


def test_histogram_of_runs_ignores_a_run_that_received_nothing():
    from linkemu.report.cellular_plots import _hist_of
    runs = [_units_run("cell-4g-dec4", "udp", 1, [25_000_000] * 100),
            _units_run("cell-4g-dec4", "udp", 2, [])]
    x, y, _w = _hist_of(runs)
    assert x[0] == 25.0 and y.sum() == 1.0


def test_quick_checks_table_tells_not_checked_from_fail():
    """The band check is not made when linkemud reported no lateness
    (pass None, cellular_quick): the table must say so, not FAIL."""
    from linkemu.report.cellular_tables import checks_table
    res = {"summary": {"checks": [
        {"name": "a", "pass": True, "detail": "x"},
        {"name": "b", "pass": False, "detail": "y"},
        {"name": "c", "pass": None, "detail": "linkemud's largest lateness (not reported: "
                                              "not checked)"}]}}
    assert [r[1] for r in checks_table(res).rows] == ["pass", "FAIL", "not checked"]


def test_a_quick_check_not_made_does_not_fail_the_run():
    # It exited 1 while its table showed no FAIL, only "not checked".
    from linkemu.lab import cellular
    o = cellular.CellularOptions.quick_defaults()
    made = [{"name": "a", "pass": True}, {"name": "c", "pass": None}]
    assert cellular.summarise({"quick_checks": made}, o)["all_pass"] is True
    failed = made + [{"name": "b", "pass": False}]
    assert cellular.summarise({"quick_checks": failed}, o)["all_pass"] is False


def _empty_udp_parts(tmp_path, rid: str, delay_ns: int, flushes: int = 300):
    """overhead.parts of a UDP run whose server received no unit (the
    server still writes its samples file, empty; the client its flush
    send times)."""
    from linkemu.lab import cellular_overhead as overhead
    samples = tmp_path / f"{rid}.npy"
    st.write_samples(samples, [], [], [], [])
    np.save(tmp_path / f"{rid}-flushes.npy", np.arange(flushes, dtype=np.int64) * 10_000_000)
    return overhead.parts(samples, tmp_path / f"{rid}-flushes.npy", delay_ns)


@pytest.mark.parametrize("empty", ["fixed-udp", "overhead-udp"])
def test_quick_checks_of_a_udp_run_that_received_nothing(tmp_path, empty):
    """One of the two --quick UDP streams received no unit: the checks must
    still be made (they come before the results file is written), fail the
    run (its mean cannot be within 0.5 ms of anything), leave the band not
    checked (no flush to compare), and hold no NaN (the results file is
    strict JSON). It raised ValueError (max of an empty array) in
    overhead.parts and again in checks, and the run was lost."""
    from linkemu.lab import cellular_quick as cq
    n = 3000
    seq = np.arange(n)
    wait = st.flush_wait_ns(seq, 10, 1_000_000)
    rng = np.random.default_rng(7)

    def full(delay):
        path = rng.gamma(4.0, 10_000.0, n // 10).astype(np.int64)
        return {"path": path, "sender": np.zeros(n, np.int64), "receiver": np.full(n, 50_000),
                "latency_kernel": delay + wait + path[seq // 10]}

    parts = {"overhead-udp": full(0), "fixed-udp": full(cq.QUICK_DELAY_NS)}
    parts[empty] = _empty_udp_parts(tmp_path, empty, 0 if empty == "overhead-udp"
                                    else cq.QUICK_DELAY_NS)
    assert parts[empty]["path"].size == 0
    got = {"lost": 0, "latency_ns": {"mean": float(parts["fixed-udp"]["latency_kernel"].mean())
                                     if empty != "fixed-udp" else 0.0, "count": 1}}
    none = {"lost": n, "latency_ns": {"count": 0}}
    stream = {"unique": n, "expected": n, "in_order": True, "duplicates": 0, "reordered": 0}
    runs = [{"id": "overhead-udp", "server": none if empty == "overhead-udp" else got},
            {"id": "fixed-udp", "server": none if empty == "fixed-udp" else got,
             "daemon_emulation_error_ns": {"a2b": {"p99": 1_000, "max": 2_000}}},
            {"id": "fixed-tcp", "server": stream, "count": n},
            {"id": "fixed-quic", "server": stream, "count": n}]
    c = {x["name"]: x for x in cq.checks(runs, parts["overhead-udp"], parts["fixed-udp"])}
    json.dumps(list(c.values()), allow_nan=False)
    assert c[cq.CHECK_BAND]["pass"] is None
    assert c[cq.CHECK_EARLY]["pass"] is (None if empty == "fixed-udp" else True)
    mean = cq.CHECK_MEAN if empty == "fixed-udp" else cq.CHECK_BASE_MEAN
    assert c[mean]["pass"] is False and c[mean]["measured"] is None
    assert any(x["pass"] is False for x in c.values())
