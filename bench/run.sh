#!/usr/bin/env bash
# Runs every benchmark; each prints a ratio against a baseline measured in
# the same invocation.
set -euo pipefail
cd "$(dirname "$0")"
python3 forwarding.py "$@"
# C micro-benchmarks of the model (virtual time, no DPDK): `make build` first.
../build/bench/bench_swap_cost
