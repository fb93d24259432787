"""Measurement tools run across a bed, each a thin wrapper that starts the
tool pinned in the bed's namespaces and parses what it prints: ping,
iperf3, owdprobe (one-way delay, owd.py), noisefloor, where the C tools
are found (tools.py); and linkemu's own unit-latency instrument (units*.py),
which also runs between any two hosts."""
