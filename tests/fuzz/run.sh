#!/usr/bin/env bash
# Runs each libFuzzer target for SECONDS (docs/reliability.md):
#   tests/fuzz/run.sh SECONDS [TARGET...]      (default: every target)
# FUZZ_RUNS=N also stops each target after N executions (a campaign to a
# count: SECONDS is then an upper bound).
# First it replays the seed corpus (tests/fuzz/corpus/TARGET, which holds
# every crash ever found, as regressions), then fuzzes. New inputs go to
# $FUZZ_BUILD/work/TARGET (kept between runs), crashes to
# $FUZZ_BUILD/artifacts/. Runs from the repository root, where the grammar's
# file names (traces/..., profiles/dist/...) resolve. Prints one line per
# target with its executions; exits 1 when any target found a problem.
set -uo pipefail
cd "$(dirname "$0")/../.."

SECONDS_EACH=${1:?usage: tests/fuzz/run.sh SECONDS [TARGET...]}
shift
FUZZ_BUILD=${FUZZ_BUILD:-build-fuzz}
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(grammar trace dist frame classify control)

# Every report is fatal; leaks are checked after each input.
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

declare -A MAX_LEN=([grammar]=16384 [trace]=65536 [dist]=65536 [frame]=9001 [classify]=257 [control]=8192)
declare -A DICT=([grammar]=tests/fuzz/grammar.dict [control]=tests/fuzz/grammar.dict)

failed=0
mkdir -p "$FUZZ_BUILD/artifacts"
for t in "${TARGETS[@]}"; do
	bin="$FUZZ_BUILD/tests/fuzz/fuzz_$t"
	if [ ! -x "$bin" ]; then
		echo "fuzz: $bin not built (make fuzz builds it)" >&2
		failed=1
		continue
	fi
	work="$FUZZ_BUILD/work/$t"
	mkdir -p "$work"
	log="$FUZZ_BUILD/fuzz_$t.log"
	args=(-max_total_time="$SECONDS_EACH" -max_len="${MAX_LEN[$t]:-4096}" -timeout=10
	      -print_final_stats=1 -artifact_prefix="$FUZZ_BUILD/artifacts/$t-")
	[ -n "${DICT[$t]:-}" ] && args+=(-dict="${DICT[$t]}")
	[ -n "${FUZZ_RUNS:-}" ] && args+=(-runs="$FUZZ_RUNS")
	start=$(date +%s)
	# Fuzzing yields to everything else: with the kernel's autogroup
	# scheduling (on by default), nice only orders tasks within one
	# session, and a daemon that called setsid (linkemud) would get no more
	# CPU than the fuzzer. So the fuzzer gets a session of its own, whose
	# group is then niced (measured: linkemud's lcore waited 20 % of the
	# time for its CPU beside a nice-19 fuzzer in the caller's session,
	# about 1 % once the fuzzer's session was niced).
	setsid nice -n 19 "$bin" "${args[@]}" "$work" "tests/fuzz/corpus/$t" >"$log" 2>&1 &
	pid=$!
	echo 19 >"/proc/$pid/autogroup" 2>/dev/null || true
	# Its own session does not get the terminal's Ctrl-C: pass it on.
	trap 'kill "$pid" 2>/dev/null; wait "$pid"; exit 130' INT TERM
	wait "$pid"
	rc=$?
	trap - INT TERM
	took=$(( $(date +%s) - start ))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
	# Coverage as of the last status line: cov (edges), ft (features).
	cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1)
	if [ $rc -ne 0 ]; then
		failed=1
		echo "fuzz_$t: FAILED after ${execs:-?} executions (exit $rc); log $log:"
		grep -E "ERROR|runtime error|round trip|SUMMARY|Test unit written|abort" "$log" | head -20
	else
		echo "fuzz_$t: ${execs} executions in ${took} s (${rate:-?}/s, ${cov:-cov: ?}), no crash, leak or UB"
	fi
done
exit $failed
