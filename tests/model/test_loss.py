"""The loss models: random (plain and correlated), gemodel, state.

On the bed only the probe crosses a2b (static ARP, IPv6 off), so the probe's
lost datagrams and the daemon's `loss` drops must be the same number, exactly;
the rate is then checked against the model's long-run loss with a bound
derived from the model's own variance.
"""

from __future__ import annotations

import math

import pytest

from .lmkit import correlated_chance, markov_loss, probe

N, RATE = 5000, 2500.0


def _run(bed, run_link, grammar: str, port: int):
    link = run_link(grammar, "", "--seed", "2024")
    r = probe(bed, count=N, rate=RATE, port=port)
    final = link.stop()
    a2b = final["directions"]["a2b"]
    assert a2b["rx"] == N, f"a2b carried {a2b['rx']} frames, the probe sent {N}"
    assert r.duplicates == 0 and r.foreign == 0
    # Every probe datagram lost is a frame the loss model dropped, and the
    # link dropped nothing else.
    assert a2b["dropped"]["loss"] == r.lost == a2b["dropped_total"], (a2b["dropped"], r.lost)
    assert a2b["tx"] == r.received
    return r, a2b


def test_loss_random(bed, run_link):
    p = 0.05
    r, _ = _run(bed, run_link, "loss random 5%", 9120)
    # Bernoulli: lost ~ Binomial(N, p), sd sqrt(N p (1-p)) = 15.4;
    # 4 sigma (two-sided, 6e-5).
    tol = 4 * math.sqrt(N * p * (1 - p))
    print(f"loss random 5%: {r.lost} of {N} (expected {N * p:.0f} +- {tol:.0f})")
    assert abs(r.lost - N * p) <= tol


def test_loss_random_correlated(bed, run_link):
    # netem's formula: a correlated `loss 30% 50%` does not lose 30 %
    # (docs/grammar.md: the mix of uniforms clusters around the middle);
    # its long-run rate and the count's variance come from simulating the
    # same recurrence. The daemon's chain starts from one uniform draw, not
    # from the stationary mix, which moves the count by at most a few
    # frames (the recurrence forgets its start at rate rho^k): 3 frames.
    mu, var, after = correlated_chance(0.30, 0.50, N)
    r, _ = _run(bed, run_link, "loss 30% 50%", 9121)
    tol = 4 * math.sqrt(var) + 3
    lost = set(r.lost_seqs)
    pairs = sum(1 for s in lost if s + 1 in lost)
    cond = pairs / max(1, len(lost))
    print(f"loss 30% 50%: {r.lost} lost (long-run {mu:.4f}: {N * mu:.0f} +- {tol:.0f}); "
          f"P(lost | previous lost) {cond:.3f} (simulated {after:.3f})")
    assert abs(r.lost - N * mu) <= tol, f"{r.lost} lost, expected {N * mu:.0f} +- {tol:.0f}"
    # Losses come in bursts: the simulation gives P(lost | previous lost)
    # ~ 0.36 against a rate of ~0.13. Over ~650 losses the observed
    # conditional has sd <= sqrt(0.36 x 0.64 / 650) = 0.019, so twice the
    # rate (0.26) is more than 5 sd below what a correct link shows, and
    # far above what independent losses would give (0.13).
    assert cond >= 2 * mu, f"P(lost | previous lost) {cond:.3f}: losses are not correlated"


def _ge_chain(P, R, one_minus_h, one_minus_k):
    # States 0 = Good, 1 = Bad; the frame meeting a state is lost with that
    # state's probability, then the chain moves (sch_netem.c loss_gilb_ell).
    return [[1 - P, P], [R, 1 - R]], [one_minus_k, one_minus_h], [1.0, 0.0]


@pytest.mark.parametrize("grammar,params", [
    ("loss gemodel 1% 10%", (0.01, 0.10, 1.0, 0.0)),          # simple Gilbert
    ("loss gemodel 2% 20% 80% 1%", (0.02, 0.20, 0.80, 0.01)),  # Gilbert-Elliott
])
def test_loss_gemodel(bed, run_link, grammar, params):
    trans, emit, start = _ge_chain(*params)
    mu, expected, var = markov_loss(trans, emit, N, start)
    r, _ = _run(bed, run_link, grammar, 9122)
    # Exact mean from the chain's start (Good); exact Markov variance; 4 sd.
    tol = 4 * math.sqrt(var)
    print(f"{grammar}: {r.lost} lost (long-run {mu:.4f}; expected {expected:.0f} +- {tol:.0f}, "
          f"binomial sd would be {math.sqrt(N * mu * (1 - mu)):.0f}, chain sd {math.sqrt(var):.0f})")
    assert abs(r.lost - expected) <= tol, f"{r.lost} lost, expected {expected:.0f} +- {tol:.0f}"
    if params[2] == 1.0 and params[3] == 0.0:
        # Simple Gilbert: every frame in Bad is lost, none in Good, so a
        # loss burst is one stay in Bad, geometric with mean 1/R = 10 and
        # sd sqrt(1-R)/R = 9.5. ~45 bursts: their mean has sd 9.5/sqrt(45)
        # = 1.4 (the count of bursts is itself random; at 4 sd it never
        # falls below ~25, sd 1.9): 4 x 1.9 ~ 8 frames.
        lost = set(r.lost_seqs)
        bursts = [s for s in lost if s - 1 not in lost]
        mean_burst = len(lost) / max(1, len(bursts))
        print(f"  {len(bursts)} bursts, mean length {mean_burst:.1f} (want 10)")
        assert abs(mean_burst - 1 / params[1]) <= 8, mean_burst


def test_loss_state(bed, run_link):
    # netem's 4-state chain: 1 gap-receive, 2 burst-receive, 3 burst-loss,
    # 4 isolated loss; a frame's fate is the state the chain enters
    # (lost in 3 and 4). As a chain over "state after frame i", frame i is
    # lost iff that state is 3 or 4, and the next frame moves from it:
    #   1 -> 4 (p14), 3 (p13), else 1;  2 -> 3 (p23), else 2;
    #   3 -> 2 (p32), 1 (p31), else 3;  4 -> 1.
    p13, p31, p32, p23, p14 = 0.01, 0.30, 0.05, 0.40, 0.005
    trans = [[1 - p13 - p14, 0, p13, p14],
             [0, 1 - p23, p23, 0],
             [p31, p32, 1 - p31 - p32, 0],
             [1, 0, 0, 0]]
    emit = [0.0, 0.0, 1.0, 1.0]
    start = trans[0]            # the chain is in state 1 before frame 0
    mu, expected, var = markov_loss(trans, emit, N, start)
    r, _ = _run(bed, run_link, "loss state 1% 30% 5% 40% 0.5%", 9123)
    tol = 4 * math.sqrt(var)
    print(f"loss state: {r.lost} lost (long-run {mu:.4f}; expected {expected:.0f} +- {tol:.0f})")
    assert abs(r.lost - expected) <= tol, f"{r.lost} lost, expected {expected:.0f} +- {tol:.0f}"
