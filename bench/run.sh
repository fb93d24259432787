#!/usr/bin/env bash
# Runs every benchmark; each prints a ratio against a baseline measured in
# the same invocation. Everything printed is also written to
# build/bench-report.txt (the bench report), headed by the machine's load,
# since the figures mean little on a busy machine.
set -euo pipefail
cd "$(dirname "$0")"
build=${BUILD:-../build}
report="$build/bench-report.txt"
{
	echo "linkemu bench $(date -u +%Y-%m-%dT%H:%M:%SZ); $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
	echo
	echo "== forwarding on net_null: one lcore, both directions, against testpmd io and the hold floor (holdfwd) in the same run"
	python3 forwarding.py "$@"
	echo
	echo "== the class rows on UDP/IPv4 frames (net_pcap looping bench/udp4_pcap.py's frames; net_null's are not IP), against testpmd on the same ports"
	python3 forwarding.py --frames udp4 "$@"
	echo
	echo "== forwarding on time: a paced source (pacegen on memif), the highest rate with no drop and error p99 <= 10 us, against testpmd"
	python3 forwarding_paced.py
	echo
	echo "== forwarding on time at line rate: linkemud's own paced source (--paced-source) from 14.88 Mpps, error p99 <= 10 us, nothing missed"
	python3 forwarding_linerate.py --full-ladder
	echo
	echo "== a delay line that holds a second at 10 GbE: frames held, memory, rate sustained (net_null, one lcore)"
	python3 delay_line_1s.py
	echo
	# C micro-benchmarks of the model (virtual time, no DPDK): `make build` first.
	echo "== cost growth: the model's CPU ns per frame (virtual time; compare with the ns/frame above)"
	"$build/bench/model_cost"
	echo
	echo "== the cost of a live change"
	"$build/bench/bench_swap_cost"
	echo
	echo "== a punted class per frame: FIFO and shared memory through punt_echo (docs/punt.md)"
	"$build/bench/punt_cost" "$build/src/tools/punt_echo" 2>/dev/null
	echo
	echo "== forwarding gap during a \`set\` with 10^6 frames queued (the model slot as the lcore drives it)"
	"$build/bench/bench_swap_gap"
	echo
	# Needs root and a bed (namespaces); numpy from the checkout's venv.
	echo "== the tail and the cost of waiting: --wait busy vs adaptive on bed li (af_xdp), against the noise floor"
	py=${PYTHON:-../.venv/bin/python}
	[ -x "$py" ] || py=python3
	"$py" tail_wait.py
	echo
	# Root, namespaces (beds lq, lr) and netsniff-ng's trafgen.
	echo "== the bed's attachments: 64 B UDP at 0 % loss, TCP, CPU, emulation error p99, against testpmd io and a plain veth pair"
	"$py" bed_attach.py
} 2>&1 | tee "$report"
echo "bench report: $report" >&2
