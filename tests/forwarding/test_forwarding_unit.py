"""The forwarding study's arithmetic and report without a bed: Table 8's
ratios, what limited a run, the --quick ratio checks (and when they do not
decide), iperf3's UDP counts, the published table, options and the report
drawn from a synthetic results file."""

from __future__ import annotations

import copy
import math

import pytest

from kit import linkemu
from linkemu.errors import UsageError
from linkemu.lab import forwarding as fw
from linkemu.lab import forwarding_analysis as fa
from linkemu.lab import forwarding_measure as fm
from linkemu.lab import published_forwarding as pub
from linkemu.lab import results


def _udp(path, size, mbit, rnd=0, sent=1000, got=1000, fwd=None, **kw):
    r = {"id": f"{path}-udp-{size}-r{rnd}", "path": path, "kind": "udp", "size": size,
         "round": rnd, "mbit_s": mbit, "pps": mbit * 1e6 / (size * 8), "sent_pkts": sent,
         "recv_pkts": got, "lost_pkts": sent - got, "sent_pps": sent / 2.0, "jitter_ms": 0.01,
         "ping": {"transmitted": 10, "received": 10, "min_ms": 0.02, "median_ms": 0.03,
                  "p90_ms": 0.04, "max_ms": 0.05},
         "machine": {"quiet": True}, "problems": [], "cpu_busy": {"0": 1.0, "1": 0.5},
         "receiver": {"socket_drops": 0, "backlog_drops": 0}}
    if fwd is not None:
        r["forwarder"] = fwd
        r["forwarder_cpu_s"] = 1.0
    r.update(kw)
    r["limit"] = fa.limiter(r)
    return r


def _tcp(path, size, mbit, rnd=0):
    return {"id": f"{path}-tcp-{size}-r{rnd}", "path": path, "kind": "tcp", "size": size,
            "round": rnd, "mbit_s": mbit, "retransmits": 0, "machine": {"quiet": True},
            "problems": []}


def _fwd(rx, tx, dropped=None):
    return {"rx": rx, "tx": tx, "rx_bytes": rx * 100, "dropped": dropped or {}, "before_rx": 0,
            "oerrors": 0}


# --- published ---------------------------------------------------------------------------

def test_published_table8_as_printed():
    assert pub.SIZES == (32, 64, 128, 256, 512, 768, 1024, 1280, 1460)
    assert pub.ratio(32, "swb", "udp") == 7.79
    assert pub.ratio(64, "swc-all-fifo", "udp") == 2.10
    assert pub.ratio(128, "swc-1pct-fifo", "udp") == 6.01
    assert pub.ratio(1460, "swb", "tcp") == 1.00
    # No published shm column (future work) and no SWC over TCP.
    assert pub.ratio(64, "swc-all-shm", "udp") is None
    assert pub.ratio(64, "swc-all-fifo", "tcp") is None
    assert [s for s in pub.SIZES if pub.VALID[s]] == [32, 64, 128, 256, 512, 768]


# --- Table 8 --------------------------------------------------------------------------------

def test_table8_ratio_is_median_against_swa():
    runs = [_udp("swa", 64, 10.0, 0), _udp("swa", 64, 30.0, 1), _udp("swa", 64, 20.0, 2),
            _udp("swb", 64, 50.0), _tcp("swa", 64, 100.0), _tcp("swb", 64, 90.0)]
    row = fa.table8(runs, [64])[0]
    by = {(c["path"], c["proto"]): c for c in row["columns"]}
    assert by[("swb", "udp")]["ours"] == 2.5          # 50 / median(10, 30, 20)
    assert by[("swb", "udp")]["published"] == 5.44
    assert by[("swb", "tcp")]["ours"] == 0.9
    assert by[("swc-all-fifo", "udp")]["ours"] is None     # not measured: no number
    assert row["valid_published"] is True


# --- what limited a run ----------------------------------------------------------------------

def test_limiter_names_where_frames_were_lost():
    # Everything sent arrived: the sender was the limit.
    assert fa.limiter(_udp("swb", 64, 1, sent=1000, got=995, fwd=_fwd(1000, 1000)))["where"] \
        == "sender"
    # Lost before the forwarder read them.
    assert fa.limiter(_udp("swa", 64, 1, sent=1000, got=500, fwd=_fwd(500, 500)))["where"] \
        == "forwarder input"
    # Forwarded, then dropped on the way to the receiver.
    lim = fa.limiter(_udp("swb", 64, 1, sent=1000, got=300, fwd=_fwd(1000, 1000),
                          receiver={"socket_drops": 650, "backlog_drops": 50}))
    assert lim["where"] == "receiver" and lim["receiver_socket"] == 650
    # The forwarder's own drops.
    assert fa.limiter(_udp("swb", 64, 1, sent=1000, got=400,
                           fwd=_fwd(1000, 400, {"ring_full": 600})))["where"] == "forwarder"
    # No forwarder: what did not arrive was lost at the receiver.
    assert fa.limiter(_udp("direct", 64, 1, sent=1000, got=100))["where"] == "receiver"
    # The 1 % control flow counts too.
    r = _udp("swc-1pct-fifo", 64, 1, sent=1000, got=1000, fwd=_fwd(1010, 1010),
             control={"sent_pkts": 10, "recv_pkts": 10})
    assert fa.limiter(r)["sent"] == 1010 and fa.limiter(r)["where"] == "sender"


def test_frame_cost_at_64():
    runs = [_udp("swa", 64, 51.2, fwd=_fwd(100_000, 100_000))]   # 100 kpps
    c = fa.frame_cost(runs, ["swa", "swb"])
    assert len(c) == 1 and c[0]["pps"] == 100_000 and c[0]["ns_per_frame"] == 10_000
    assert c[0]["forwarder_cpu_ns_per_frame"] == 10_000         # 1 CPU s / 100k frames


# --- --quick checks ------------------------------------------------------------------------

def _rounds(path, values, size=64):
    return [_udp(path, size, v, i) for i, v in enumerate(values)]


def _ratio(a, b, num="swc-1pct-fifo"):
    return fa.ratio_check("c", _rounds(num, a) + _rounds("swb", b), num, "swb", 64,
                          fa.SWC_MIN_RATIO)


def test_ratio_check_is_a_one_sided_welch_test():
    ok = _ratio([95, 96, 97], [100, 101, 99])
    assert ok["pass"] is True and ok["measured"] == pytest.approx(0.96)
    assert "Welch" in ok["detail"] and ok["bound"] < 0.9
    # 0.8x, rounds varying by 2 %: se of mean(a) - 0.9 mean(b) is 0.78, the
    # margin t(1 - RATIO_ALPHA, ~4) x 0.78 = 3.7; 80 is below 90 - 3.7.
    bad = _ratio([80, 81, 79], [100, 101, 99])
    assert bad["pass"] is False
    # 0.88x with rounds varying by 9 % (like the CI run that failed the old
    # median-against-0.9 check at 0.842x): a shortfall that noise explains.
    near = _ratio([84, 88, 92], [97, 100, 103])
    assert near["pass"] is True and near["measured"] == pytest.approx(0.88)
    # Rounds that varied by 50 %: the margin widens with them (se 11.5);
    # 80 on average is then a shortfall noise explains...
    noisy = _ratio([60, 81, 100], [100, 101, 99])
    assert noisy["pass"] is True and noisy["bound"] < 0.6
    # ...but not a third of the rate with the same noise (half of it is,
    # at RATIO_ALPHA 0.0045 with 3 rounds: t(0.9955, ~2) = 10.5).
    third = _ratio([20, 30, 40], [100, 101, 99])
    assert third["pass"] is False
    one = _ratio([95], [100, 101])
    assert one["pass"] is None and "one round" in one["detail"]
    missing = fa.ratio_check("c", _rounds("swb", [1, 2]), "swc-1pct-shm", "swb", 64, 0.9)
    assert missing["pass"] is None


def test_ratio_check_level_and_power():
    """With a fixed seed: rounds drawn around a true ratio of exactly 0.9x
    fail at most RATIO_ALPHA of the time (plus 3.3 standard errors of the
    estimate over the trials); a true 0.6x is found in at least 95 %."""
    import random
    rng = random.Random(20261127)
    trials, sd = 2000, 3.0

    def fails(true_ratio):
        n = 0
        for _ in range(trials):
            b = [rng.gauss(100, sd) for _ in range(3)]
            a = [rng.gauss(100 * true_ratio, sd * true_ratio) for _ in range(3)]
            c = fa.ratio_check("c", _rounds("swc-1pct-fifo", a) + _rounds("swb", b),
                               "swc-1pct-fifo", "swb", 64, 0.9)
            n += c["pass"] is False
        return n / trials

    alpha = fa.RATIO_ALPHA
    assert fails(0.9) <= alpha + 3.3 * (alpha * (1 - alpha) / trials) ** 0.5
    assert fails(0.6) >= 0.95


def _quick_runs(rng, ratio, shm_share, cv_num, cv_den, rounds=3):
    """One --quick invocation's UDP rounds at 64 B: SWB around 30 Mbit/s,
    the 1 % paths around ratio x that, all via the FIFO around 25 and all
    via shm around shm_share x that; each round normal, the tested paths'
    (numerators') spread cv_num x their mean, SWB's and the FIFO's
    (denominators') cv_den x theirs."""
    def r(mean, cv):
        return [rng.gauss(mean, cv * mean) for _ in range(rounds)]
    return (_rounds("swb", r(30.0, cv_den)) + _rounds("swc-1pct-fifo", r(ratio * 30.0, cv_num))
            + _rounds("swc-1pct-shm", r(ratio * 30.0, cv_num)) + _rounds("swc-all-fifo", r(25.0, cv_den))
            + _rounds("swc-all-shm", r(shm_share * 25.0, cv_num)))


def test_quick_false_alarms_are_at_most_the_family_alpha():
    """One --quick invocation fails if any of its three statistical checks
    does. With every claim exactly at its bound (both 1 % paths at 0.9x
    SWB, shm and the FIFO equal), the share of invocations that fail must
    be at most FAMILY_ALPHA = 1 %: Bonferroni guarantees it (the checks'
    levels sum to it, whatever their dependence); this shows it over
    20,000 simulated invocations, fixed seed. The case shown is the worst
    one for the levels: the tested paths' rounds vary by 5 % and the
    baselines' hardly (0.05 %), so each Welch test is a one-sample t test
    on 2 degrees of freedom and fails exactly at its level, and the three
    fail nearly independently (with equal noise on both sides Welch's df
    comes out low and the tests fail less often: 0.5 % in all).

    The bound: if the true rate is FAMILY_ALPHA, the count of failing
    invocations is Binomial(20,000, 0.01) (mean 200, sd 14.1), above its
    1 - 1e-4 quantile (253) for one seed in 10^4. Each ratio check at
    0.01, as they were, the rate was 2.1 % (about 420)."""
    import random
    from scipy import stats
    assert fa.RATIO_ALPHA * 2 + fa.NOT_SLOWER_ALPHA <= fa.FAMILY_ALPHA + 1e-12
    rng = random.Random(20261201)
    n = 20_000
    fails = 0
    for _ in range(n):
        checks = fa.swc_checks(_quick_runs(rng, fa.SWC_MIN_RATIO, 1.0, 0.05, 0.0005))
        assert all(c["pass"] is not None for c in checks)
        fails += any(c["pass"] is False for c in checks)
    bound = stats.binom.ppf(1 - 1e-4, n, fa.FAMILY_ALPHA)
    assert fails <= bound, (fails, bound)


def test_not_slower_is_a_one_sided_welch_test():
    shm, fifo = "swc-all-shm", "swc-all-fifo"
    same = fa.not_slower_check("s", _rounds(shm, [98, 100, 102]) + _rounds(fifo, [99, 101, 103]),
                               shm, fifo, 64)
    assert same["pass"] is True        # 1 below, standard error 1.6: noise
    # The CI run that failed the old bound (median less the rounds' range):
    # 1.3 % below with rounds varying by 1.3 %, which noise explains.
    ci = fa.not_slower_check("s", _rounds(shm, [28.22, 28.05, 28.40])
                             + _rounds(fifo, [28.60, 28.35, 28.72]), shm, fifo, 64)
    assert ci["pass"] is True and "Welch" in ci["detail"]
    slower = fa.not_slower_check("s", _rounds(shm, [80, 81, 82]) + _rounds(fifo, [99, 101, 103]),
                                 shm, fifo, 64)
    assert slower["pass"] is False     # 20 below, standard error 1.3: t = 15.5 > t(0.999, 2.9)
    one = fa.not_slower_check("s", _rounds(shm, [90]) + _rounds(fifo, [99, 101]), shm, fifo, 64)
    assert one["pass"] is None and "one round" in one["detail"]
    # Rounds varying by 12 % (as in most --quick runs here): a verdict,
    # with the margin the noise sets.
    noisy = fa.not_slower_check("s", _rounds(shm, [26.0, 28.5, 29.1])
                                + _rounds(fifo, [24.5, 25.9, 27.4]), shm, fifo, 64)
    assert noisy["pass"] is True and noisy["bound"] < 0.9


def test_ratio_check_against_a_path_that_carried_nothing():
    """SWB's rounds received nothing (mean 0): the ratio is undefined, so
    the check is not made (the forwards check fails SWB). It had written
    measured = inf, which the results file refuses (JSON has no inf: the
    whole --quick run was lost at results.write), and passed 0 >= 0.9 x 0."""
    import json
    for a in ([0.0, 0.0, 0.0], [10.0, 11.0, 12.0]):
        c = _ratio(a, [0.0, 0.0, 0.0])
        assert c["pass"] is None and "not checked" in c["detail"], c
        json.dumps(c, allow_nan=False)
    s = fa.not_slower_check("s", _rounds("swc-all-shm", [0.0, 0.0])
                            + _rounds("swc-all-fifo", [0.0, 0.0]), "swc-all-shm",
                            "swc-all-fifo", 64)
    assert s["pass"] is None
    json.dumps(s, allow_nan=False)


def test_forwards_and_conservation_checks():
    runs = [_udp("swa", 64, 1.0), _tcp("swa", 64, 5.0), _udp("swb", 64, 1.0, got=0),
            _tcp("swb", 64, 5.0)]
    c = {x["name"]: x["pass"] for x in fa.forwards_checks(runs, ["swa", "swb"])}
    assert c == {"swa: forwards": True, "swb: forwards": False}
    d = [{"path": "swb", "round": 0, "conserved": False,
          "a2b": {"rx": 5, "tx": 4, "dropped_total": 0, "in_flight": 0}}]
    assert fa.conservation_checks(d)[0]["pass"] is False


# --- instruments' parsing ------------------------------------------------------------------------

def test_udp_summary_counts_received_as_packets_minus_lost():
    out = {"end": {"sum_sent": {"seconds": 3.0, "packets": 198692, "lost_packets": 0},
                   "sum_received": {"seconds": 3.0, "packets": 197397, "lost_packets": 126155,
                                    "jitter_ms": 0.0019}}}
    s = fm.udp_summary(out, 64)
    assert s["recv_pkts"] == 71242 and s["sent_pkts"] == 198692
    assert s["mbit_s"] == pytest.approx(71242 * 64 * 8 / 3.0 / 1e6, abs=1e-4)
    assert s["jitter_ms"] == 0.0019


def test_counter_delta():
    d0 = {"rx": 10, "tx": 9, "rx_bytes": 1000, "dropped": {"loss": 1, "queue_full": 0},
          "before_rx": {"total": 2}, "after_tx": {"oerrors": 0}}
    d1 = {"rx": 110, "tx": 100, "rx_bytes": 9000, "dropped": {"loss": 1, "queue_full": 7},
          "before_rx": {"total": 5}, "after_tx": {"oerrors": 1}}
    assert fm.counter_delta(d0, d1) == {"rx": 100, "tx": 91, "rx_bytes": 8000,
                                        "dropped": {"queue_full": 7}, "before_rx": 3,
                                        "oerrors": 1}


# --- options and the command line ----------------------------------------------------------------

@pytest.mark.parametrize("kw,word", [({"paths": ("swb", "bogus")}, "bogus"),
                                     ({"paths": ("direct", "swb")}, "swa"),
                                     ({"paths": ("swa", "swc-1pct-fifo")}, "swb"),
                                     ({"sizes": (8,)}, "--sizes"),
                                     ({"repeats": 0}, "--repeats")])
def test_options_refused_with_a_reason(kw, word):
    with pytest.raises(UsageError, match=word):
        fw.ForwardingOptions(**kw).validate()


def test_cli_bad_path_is_a_usage_error():
    cp = linkemu("lab", "forwarding", "--paths", "swa,nope", "--bed", "lg")
    assert cp.returncode == 2 and "nope" in cp.stderr and "Traceback" not in cp.stderr


# --- results file and report ---------------------------------------------------------------------

def _doc(with_swc: bool = False) -> dict:
    res = results.new("forwarding", quick=False, seed=1, config={
        "sizes": [64, 1460], "offered": "2G", "long_size": 32, "long_seconds": 5.0,
        "ping_interval_s": 0.01})
    runs = []
    for size, k in ((64, 1.0), (1460, 10.0)):
        runs += [_udp("direct", size, 30 * k), _udp("swa", size, 20 * k, fwd=_fwd(10, 10)),
                 _udp("swb", size, 25 * k, fwd=_fwd(10, 10)),
                 _tcp("direct", size, 100.0), _tcp("swa", size, 90.0), _tcp("swb", size, 95.0)]
    paths = ["direct", "swa", "swb"] + (["swc-all-fifo"] if with_swc else [])
    if with_swc:
        runs += [_udp("swc-all-fifo", 64, 12.0, fwd=_fwd(10, 10)),
                 _udp("swc-all-fifo", 1460, 150.0, fwd=_fwd(10, 10))]
    res["runs"] = runs
    res["paths"] = [{"path": p, "label": p, "available": p in paths,
                     "reason": None if p in paths else "not available: test"}
                    for p in ["direct", "swa", "swb", "swc-all-fifo"]]
    res["daemons"] = [{"path": "swb", "round": 0, "conserved": True,
                       "a2b": {"rx": 1, "tx": 1, "dropped_total": 0, "in_flight": 0}}]
    res["latency"] = [{"path": p, "size": 32, "interval_s": 0.01, "transmitted": 4,
                       "received": 4, "min_ms": 0.01, "median_ms": 0.02, "p90_ms": 0.03,
                       "max_ms": 0.04, "rtts_ms": [0.01, 0.02, 0.02, 0.04]}
                      for p in ("direct", "swb")]
    o = fw.ForwardingOptions(sizes=(64, 1460))
    res["summary"] = fw.summarise(res, o, paths)
    return res


@pytest.mark.parametrize("with_swc", [False, True])
def test_results_validate_and_render(tmp_path, with_swc):
    res = _doc(with_swc)
    path = tmp_path / "fwd.json.gz"
    results.write(res, path)
    back = results.load(path)
    assert back["summary"]["table8"][0]["columns"][1]["ours"] == 1.25   # 25 / 20
    html = tmp_path / "fwd.html"
    cp = linkemu("report", str(path), "-o", str(html))
    assert cp.returncode == 0, cp.stderr
    text = html.read_text()
    assert "Table 8 layout" in text and "Published Table 8" in text
    assert text.count("<img") >= 5
    assert ("not available: test" in text) is (not with_swc)


def test_latency_table_sd_is_the_sample_sd():
    """The pings are a sample: the report's sd is the sample sd (n - 1),
    as the lab's analysis documents; one reply has none ("-")."""
    from linkemu.report.forwarding import latency_table
    res = _doc()
    res["latency"][0]["rtts_ms"] = [1.0, 2.0, 3.0, 4.0]
    res["latency"][1]["rtts_ms"] = [7.0]
    rows = latency_table(res).rows
    assert rows[0][-1] == f"{math.sqrt(5 / 3):.3f}" == "1.291"
    assert rows[1][-1] == "-"


def test_results_missing_a_field_is_refused(tmp_path):
    res = _doc()
    bad = copy.deepcopy(res)
    del bad["runs"][0]["limit"]
    with pytest.raises(results.ResultsError, match="limit"):
        results.validate(bad, "x")
    bad = copy.deepcopy(res)
    del bad["latency"]
    with pytest.raises(results.ResultsError, match="latency"):
        results.validate(bad, "x")


# --- the SWC paths' grammar ---------------------------------------------------------------------

def test_swc_grammar_punts_all_ipv4_or_the_control_port():
    from linkemu.bed.testbed import bed_for
    from linkemu.daemon import daemon
    from linkemu.lab import forwarding_paths as fp
    bed = bed_for("lg")
    for path in fp.SWC_PATHS:
        name = fp.channel(bed, path)
        g = fp.punt_grammar(path, name)
        t = fp.transport(path)
        assert f": punt {t} {name}" in g
        assert ("dport 5301" in g) is fp.one_pct(path)
        assert ("ether ipv4" in g) is (not fp.one_pct(path))
        # linkemud itself accepts it (the tree is built before the suites run).
        assert daemon.check_link(daemon.require_binary("dpdk"), g) is None, g
    assert fp.channel(bed, "swc-all-fifo").startswith(str(bed.run_dir))
    assert "/" not in fp.channel(bed, "swc-all-shm")
    assert fp.punt_unavailable() is None


def test_report_on_a_partial_file_names_the_missing_field(tmp_path):
    """A latency record without its reply counts (the schema requires only
    path, size, rtts_ms): `linkemu report` exits 1 naming the file and the
    field, no traceback."""
    res = _doc()
    del res["latency"][0]["received"]
    path = tmp_path / "partial.json"
    results.write(res, path)
    cp = linkemu("report", str(path), "-o", str(tmp_path / "p.html"))
    assert cp.returncode == 1 and "Traceback" not in cp.stderr, cp.stderr
    assert str(path) in cp.stderr and "'received'" in cp.stderr, cp.stderr
    assert not (tmp_path / "p.html").exists()
