"""Where a unit's time goes beyond the link's delay and the flush rule.

For unit u of flush j over a path of one-way delay D, from what the
instrument records (units_stats samples: generation time, the kernel's
receive stamp, the read time; the client's flush send times):

    read - gen = D + w_u + sender_u + path_j + receiver_u

- w_u: the flush rule's wait, (K - u mod K) x T (the schedule's, nominal);
- sender_u = sent_j - gen_u - w_u: the client's own lateness, its flush's
  send call later than due or the unit generated late (negative then);
- path_j = krx_j - sent_j - D: from the send call to the kernel's receive
  stamp, beyond D: the sending stack, the veth, linkemud (its own lateness
  included: its emulation error), the veth, the receiving stack;
- receiver_u = read - krx: the server process's scheduling.

The sender and the receiver are the instrument, which measures both. What
the bed adds is path_j; over an unimpaired link it is the bed's whole
overhead. The quick check compares path_j over `delay 20ms` with that.
"""

from __future__ import annotations

from pathlib import Path


def parts(samples: Path, flush_times: Path, delay_ns: int, flush: int = 10,
          interval_ns: int = 1_000_000) -> dict:
    """Per unit and per flush, the parts above (ns, numpy arrays); for
    streams (TCP, QUIC) path_j is per read, not per flush, and only the
    UDP decomposition is exact."""
    import numpy as np
    from linkemu.instruments import units_stats
    a = units_stats.read_samples(samples)
    sent = np.load(flush_times)
    seq = a["seq"].astype(np.int64)
    j = seq // flush
    wait = units_stats.flush_wait_ns(seq, flush, interval_ns)
    sender = sent[j] - a["gen_ns"] - wait
    path_u = a["krx_ns"] - sent[j] - delay_ns
    receiver = a["rx_ns"] - a["krx_ns"]
    lo = np.iinfo(np.int64).min
    # no unit received: no flush either (max of an empty array raised)
    path = np.full(int(j.max()) + 1 if j.size else 0, lo)
    np.maximum.at(path, j, path_u)
    return {"sender": sender, "path": path[path > lo], "receiver": receiver,
            "latency_kernel": a["krx_ns"] - a["gen_ns"], "latency": a["rx_ns"] - a["gen_ns"],
            "excess_kernel": a["krx_ns"] - a["gen_ns"] - wait - delay_ns,
            "seq": seq}


def summary(p: dict) -> dict:
    """JSON-ready quantiles of each part."""
    from linkemu.instruments.units_stats import quantiles
    return {"sender_ns": quantiles(p["sender"]), "path_per_flush_ns": quantiles(p["path"]),
            "receiver_ns": quantiles(p["receiver"])}


def allowed_exceedances(n_test: int, n_base: int, alpha: float) -> int:
    """How many of n_test samples may exceed the largest of n_base samples
    of the same distribution before that is unlikely (< alpha): with
    exchangeable samples, P(at least j exceed) = prod_{i<j} (n_test - i) /
    (n_test + n_base - i)."""
    p, j = 1.0, 0
    while j < n_test:
        p *= (n_test - j) / (n_test + n_base - j)
        if p < alpha:
            return j
        j += 1
    return n_test
