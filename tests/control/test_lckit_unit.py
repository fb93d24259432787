"""The per-frame delay classifier the live tests rely on, on made-up frames."""

from __future__ import annotations

import math

from lckit import Change, Exposure, Noise, SenderLag, classify, episodes

MS = 1_000_000
US = 1_000
NOISE = Noise(t_min=5 * US, bound=60 * US, late_rate=0.0)


def stream(n, t0, every, owd_of):
    """Frames sent every `every` ns from t0; owd_of(seq, send) -> owd."""
    return [(q, t0 + q * every, t0 + q * every + owd_of(q, t0 + q * every)) for q in range(n)]


def test_steady_delay_is_ok():
    fr = stream(100, 0, 200 * US, lambda q, s: 1 * MS + 10 * US)
    v = classify(fr, [Change(1 * MS, -math.inf, -math.inf)], NOISE)
    assert (v.ok, v.held, v.early, v.late) == (100, 0, [], [])


def test_wrong_delay_is_caught():
    fr = stream(100, 0, 200 * US, lambda q, s: (2 * MS if q == 50 else 1 * MS) + 10 * US)
    v = classify(fr, [Change(1 * MS, -math.inf, -math.inf)], NOISE)
    assert [x[0] for x in v.late] == [50]
    fr = stream(100, 0, 200 * US, lambda q, s: (500 * US if q == 7 else 1 * MS) + 10 * US)
    v = classify(fr, [Change(1 * MS, -math.inf, -math.inf)], NOISE)
    assert [x[0] for x in v.early] == [7]


def test_increase_switches_cleanly():
    # 10 ms -> 50 ms switched at 100 ms (set sent at 99.9, reply at 100.1 ms).
    sw = 100 * MS
    fr = stream(1000, 0, 200 * US, lambda q, s: (10 if s + 10 * US < sw else 50) * MS + 10 * US)
    ch = [Change(10 * MS, -math.inf, -math.inf), Change(50 * MS, sw - 100 * US, sw + 100 * US)]
    v = classify(fr, ch, NOISE)
    assert v.ok == 1000 and v.by_delay == {10 * MS: 500, 50 * MS: 500}
    # A frame sent well after the reply but with the old delay is wrong:
    bad = [(q, s, r - 40 * MS if q == 700 else r) for q, s, r in fr]
    v = classify(bad, ch, NOISE)
    assert [x[0] for x in v.early] == [700]
    # ... and one sent well before the set but with the new delay too.
    bad = [(q, s, r + 40 * MS if q == 100 else r) for q, s, r in fr]
    v = classify(bad, ch, NOISE)
    assert [x[0] for x in v.late] == [100]


def test_decrease_lets_frames_wait_behind_the_fifo():
    # 3 ms -> 1 ms at 50 ms: frames that arrive within 2 ms after the switch
    # leave right behind the last 3 ms frame, in a burst.
    sw = 50 * MS
    last_old = None
    fr = []
    for q in range(500):
        s = q * 200 * US
        a = s + 10 * US
        if a < sw:
            r = a + 3 * MS
            last_old = r
        else:
            r = max(a + 1 * MS, last_old + 2 * US * (q - 250 + 1))
        fr.append((q, s, r))
    ch = [Change(3 * MS, -math.inf, -math.inf), Change(1 * MS, sw - 50 * US, sw + 50 * US)]
    v = classify(fr, ch, NOISE)
    assert not v.early and not v.late, v.summary()
    assert v.held > 0


def test_late_frames_sent_together_are_one_hold_up():
    # 11 frames of one sendmmsg, one 0.9 ms later (same hold-up), one 5 ms on.
    assert episodes([10 * MS] * 11 + [10.9 * MS, 15.9 * MS]) == 2
    assert episodes([]) == 0
    assert episodes([3 * MS, 1 * MS, 2.5 * MS]) == 2        # order does not matter


def test_a_window_may_have_what_its_control_stretch_explains():
    # No hold-up in a 2 s baseline: a 1 ms window may have none (one there
    # has probability 1/2001 < 0.001 under the baseline's rate).
    assert Exposure(0, 2000 * MS).allows(1 * MS) == 0
    # Two in the baseline: one in the window (3/2001 >= 0.001) but not two.
    assert Exposure(2, 2000 * MS).allows(1 * MS) == 1
    # A control storm as long as the real one, with 6 hold-ups: up to 23
    # (X ~ B(29, 1/2): P(X >= 23) = 0.00116; X ~ B(30, 1/2): P(X >= 24) = 0.00072).
    # A hold-up for every other `set` of a thousand is far past that.
    assert Exposure(6, 700 * MS).allows(700 * MS) == 23


def test_noise_from_baseline():
    base = stream(1000, 0, 100 * US, lambda q, s: 10 * US + (q % 10) * US)
    n = Noise.from_baseline(base, margin_ns=50 * US)
    assert n.t_min == 10 * US and n.bound == 19 * US + 50 * US and n.late_rate == 0
    assert n.late == Exposure(0, 999 * 100 * US)


def test_late_frames_in_a_stall_seen_by_the_reference_are_excused():
    from lckit import Reference
    # a2b: 1 ms. The machine stalls from 8.9 ms to 16 ms: frames 40..49,
    # due in that time, all leave at its end, back to back. The reference
    # stream saw a late frame then too: excused. Frame 80, late alone: not.
    stall_end = 16 * MS
    fr = []
    for q, s, r in stream(100, 0, 200 * US, lambda q, s: 1 * MS + 10 * US):
        if 40 <= q < 50:
            r = stall_end + (q - 40) * 5 * US
        elif q == 80:
            r += 5 * MS
        fr.append((q, s, r))
    ref = [(0, stall_end - 5 * MS, stall_end + 100 * US), (1, 0, 20 * US)]
    v = classify(fr, [Change(1 * MS, -math.inf, -math.inf)], NOISE, held_gap_ns=-1,
                 reference=Reference(ref, NOISE.bound))
    assert len(v.stalled) == 10 and [x[0] for x in v.late] == [80] and not v.early


def test_a_catch_up_batch_is_judged_by_its_first_frame():
    # a2b: 1 ms. The sender loses its CPU for 6 ms: frames 30..59, owed
    # then, go in one batch stamped at its end, and each waits behind the
    # ones ahead of it (2 us each: 60 us for the last, over the bound).
    # They are judged by their first frame, which is on time. A second
    # batch (70..79) whose first frame the link held 5 ms too long: that
    # frame is late; the rest trail it and are judged by it.
    stamp, stamp2 = 12 * MS, 20 * MS
    fr = []
    for q, s, r in stream(100, 0, 200 * US, lambda q, s: 1 * MS + 10 * US):
        if 30 <= q < 60:
            s, r = stamp, stamp + 1 * MS + 10 * US + (q - 30) * 2 * US
        elif 70 <= q < 80:
            s, r = stamp2, stamp2 + 6 * MS + (q - 70) * 2 * US
        fr.append((q, s, r))
    v = classify(fr, [Change(1 * MS, -math.inf, -math.inf)], NOISE, held_gap_ns=-1)
    assert [x[0] for x in v.late] == [70] and not v.early
    assert v.batched == 9 + 4     # 71..79, and 56..59 past the bound (the rest are ok)
    # Frames that share no stamp are each judged: a late run without a
    # catch-up batch is all late.
    fr = [(q, s, r + (5 * MS if 40 <= q < 50 else 0)) for q, s, r in
          stream(100, 0, 200 * US, lambda q, s: 1 * MS + 10 * US)]
    v = classify(fr, [Change(1 * MS, -math.inf, -math.inf)], NOISE, held_gap_ns=-1)
    assert len(v.late) == 10 and v.batched == 0


def test_a_sender_behind_its_schedule_excuses_the_frames_it_sent_then():
    # a2b: 1 ms, frames due every 200 us. The sender loses its CPU from
    # 6 ms to 12 ms: frames 30..59 go in one batch stamped at 12 ms, and
    # the slow kernel that held the sender holds them too, 1.5 ms (the
    # batch's first frame too: the batch rule alone calls it late).
    # Frame 80 is late with its sender on time: the link's, still late.
    fr = []
    for q, s, r in stream(100, 0, 200 * US, lambda q, s: 1 * MS + 10 * US):
        if 30 <= q < 60:
            s = 12 * MS
            r = s + 1 * MS + 1500 * US + (q - 30) * 2 * US
        elif q == 80:
            r += 5 * MS
        fr.append((q, s, r))
    lag = SenderLag(fr, rate=5_000, bound=NOISE.bound, window_ns=NOISE.bound)
    # One stretch: from frame 30's due time to the batch's stamp (frame 31
    # on is behind too, within it).
    assert lag.spans == [[6 * MS, 12 * MS]]
    assert lag.near(12 * MS) and lag.near(9 * MS)
    assert lag.near(6 * MS - NOISE.bound) and not lag.near(6 * MS - NOISE.bound - 1)
    assert lag.near(12 * MS + NOISE.bound) and not lag.near(12 * MS + NOISE.bound + 1)
    # Frame 29 (5.8 ms) was sent a path bound or more before the sender
    # stopped: its stamp holds.
    assert not lag.near(29 * 200 * US)
    v = classify(fr, [Change(1 * MS, -math.inf, -math.inf)], NOISE, held_gap_ns=-1, sender=lag)
    assert [x[0] for x in v.late] == [80] and not v.early
    assert len(v.stalled) + v.batched == 30 and v.stalled[0][0] == 30
    # Without it, the batch's first frame is the link's.
    v = classify(fr, [Change(1 * MS, -math.inf, -math.inf)], NOISE, held_gap_ns=-1)
    assert [x[0] for x in v.late] == [30, 80]


def test_a_sender_on_time_has_no_stretch():
    # Stamps a few microseconds after each due time, never past the bound.
    fr = [(q, q * 100 * US + (q % 7) * US, q * 100 * US + 1 * MS) for q in range(1000)]
    lag = SenderLag(fr, rate=10_000, bound=NOISE.bound, window_ns=1 * MS)
    assert lag.spans == [] and not lag.near(50 * MS)
