# linkemu: the two commands a user needs are `make demo` and `make test`.
# Both set the machine up first (idempotent, quick when done) and build.

BUILD   ?= build
VENV    ?= .venv
PYTEST  ?= $(VENV)/bin/pytest
LINKEMU ?= $(VENV)/bin/linkemu

.PHONY: all setup build demo test unit integration lab-test control bench clean quick lfp-test cellular-test
.PHONY: sanitize fuzz fuzz-build fuzz-smoke soak soak-short faults reliability

all: build

setup:
	@scripts/setup.sh

$(BUILD)/build.ninja:
	meson setup $(BUILD)

build: setup $(BUILD)/build.ninja
	@ninja -C $(BUILD)

demo: build
	$(LINKEMU) demo

unit: build
	meson test -C $(BUILD) --print-errorlogs

integration: build
	$(PYTEST) -m "bed or model or wait" -v

# The lab: its statistics (pure), its C instruments, and the --quick
# experiments on a bed named "lb" (about 2.5 minutes).
lab-test: build
	$(PYTEST) -m lab -v

# ctl, stats --watch, capture, scenarios: unit tests (no root) and live
# tests on a bed named "lc"
control: build
	$(PYTEST) -m control -v -rs

# The long-fat-pipe study: ttcp, the BPF congestion controls (linkemu cc)
# and `linkemu lab lfp --quick`, on a bed named "ll" (about 3 minutes).
lfp-test: build
	$(PYTEST) -m lfp -v -rs

test: unit integration lab-test control api-test lfp-test cellular-test reliability hops-test punt-test forwarding-test

# linkemu shell, testbed up --between, run --ports and the Python API
# (with the example of docs/python.md), on beds "la", "lh" and "lk".
.PHONY: api-test
api-test: build
	$(PYTEST) -m api -v -rs

# Chained links (LINK >> LINK, docs/grammar.md "Hops"): a chain forwards with
# per-hop counters and conservation, live set/show/stats/reset, on a bed
# named "lp" (about 40 seconds).
.PHONY: hops-test
hops-test: build
	$(PYTEST) -m hops -v -rs

# Punted classes (docs/punt.md): a class handed to punt_echo over a FIFO
# and shared memory round-trips, its books hold, a stalled process fills
# its channel, a killed one is reported, on a bed named "lw" (about 80 s).
.PHONY: punt-test
punt-test: build
	$(PYTEST) -m punt -v -rs

# The 4G/5G study (docs/lab.md "cellular", docs/units.md): the unit-latency
# instrument over loopback and the cell-* profiles against the published
# figures (no root), then `linkemu lab cellular --quick` and `linkemu units
# run` on a bed named "lx" (about 2 minutes).
cellular-test: build
	$(PYTEST) -m cellular -v -rs

# The forwarding study (docs/lab.md "forwarding"): its arithmetic and report
# (no root), then `linkemu lab forwarding --quick` on a bed named "lg": every
# path forwards, conservation, and with punt the SWC ratio checks (about 90 s).
.PHONY: forwarding-test
forwarding-test: build
	$(PYTEST) -m forwarding -v -rs

# The test kit (tests/conftest.py, tests/kit, docs/testing.md): suites are
# chosen by marker (bed, model, lab, control; live = needs a bed and root).
# quick: everything that needs neither root nor a bed, in about a minute.
quick:
	$(PYTEST) -m "not live"

bench: build
	bench/run.sh

clean:
	rm -rf $(BUILD)

# The bed and model suites again, on the kernel-socket data plane
# (linkemuk, docs/kernel-plane.md), each on a bed of its own so it can run
# beside `integration`. Longer than 3 minutes: not part of `test`.
KERNEL_BEDS ?= lt=kt,lm=km
.PHONY: integration-kernel
integration-kernel: build
	LINKEMU_TEST_IO=kernel LINKEMU_TEST_BEDS=$(KERNEL_BEDS) $(PYTEST) -m "bed or model" -v -rs

# --- reliability (issue 8, docs/reliability.md) -------------------------------
# sanitize: src/core, the tools and the C unit tests built with ASan+UBSan in
#   $(SAN_BUILD) (every report is fatal), their tests, then linkemud itself
#   under ASan+UBSan on bed "lz".
# fuzz: each libFuzzer target for FUZZ_SECONDS; fuzz-smoke: FUZZ_SMOKE_SECONDS.
# soak: traffic, live sets and checks for SOAK_SECONDS on bed "ls";
#   soak-short is its 60 s form. faults: each fault on bed "lf".
# `make test` runs the short forms (reliability), about 7 minutes.
SAN_BUILD ?= build-san
SAN_ENV = ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1 \
	  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
SAN_MESON_OPTS = -Db_sanitize=address,undefined -Db_lto=false -Db_lundef=false -Dbuildtype=debugoptimized -Db_ndebug=false \
	  "-Dc_args=-fno-sanitize-recover=all -fno-omit-frame-pointer" "-Dc_link_args=-fno-sanitize-recover=all"

$(SAN_BUILD)/build.ninja:
	meson setup $(SAN_BUILD) $(SAN_MESON_OPTS)

sanitize: build $(SAN_BUILD)/build.ninja
	ninja -C $(SAN_BUILD)
	$(SAN_ENV) meson test -C $(SAN_BUILD) --print-errorlogs
	$(SAN_ENV) LINKEMU_TOOLS_DIR=$(CURDIR)/$(SAN_BUILD)/src/tools \
		$(PYTEST) tests/lab/test_tools.py -k "bad_arguments or help or noisefloor_runs" -q
	LINKEMU_SAN_BUILD=$(CURDIR)/$(SAN_BUILD) flock /tmp/linkemu-bed-lz.lock $(PYTEST) tests/sanitize -v -rs

FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 300
FUZZ_SMOKE_SECONDS ?= 30
FUZZ_MESON_OPTS = -Dfuzz=true -Db_sanitize=address,undefined -Db_lto=false -Db_lundef=false -Dbuildtype=debugoptimized \
	  -Db_ndebug=false "-Dc_link_args=-fno-sanitize-recover=all" \
	  "-Dc_args=-fsanitize=fuzzer-no-link -fno-sanitize-recover=all -fno-omit-frame-pointer -gline-tables-only"

$(FUZZ_BUILD)/build.ninja:
	CC=clang meson setup $(FUZZ_BUILD) $(FUZZ_MESON_OPTS)

fuzz-build: setup $(FUZZ_BUILD)/build.ninja
	ninja -C $(FUZZ_BUILD)

fuzz: fuzz-build
	FUZZ_BUILD=$(FUZZ_BUILD) tests/fuzz/run.sh $(FUZZ_SECONDS)
	FUZZ_PY_EXAMPLES=$$(( $(FUZZ_SECONDS) * 200 )) FUZZ_PY_RANDOM=1 $(PYTEST) tests/fuzz -q

fuzz-smoke: fuzz-build
	FUZZ_BUILD=$(FUZZ_BUILD) tests/fuzz/run.sh $(FUZZ_SMOKE_SECONDS)
	$(PYTEST) tests/fuzz -q

SOAK_SECONDS ?= 600
soak: build
	SOAK_SECONDS=$(SOAK_SECONDS) flock /tmp/linkemu-bed-ls.lock $(PYTEST) tests/soak -v -s -rs

soak-short: build
	SOAK_SECONDS=60 flock /tmp/linkemu-bed-ls.lock $(PYTEST) tests/soak -v -s -rs

faults: build
	flock /tmp/linkemu-bed-lf.lock $(PYTEST) tests/faults -v -rs

reliability: sanitize fuzz-smoke soak-short faults
