# linkemu: the two commands a user needs are `make demo` and `make test`.
# Both set the machine up first (idempotent, quick when done) and build.

BUILD   ?= build
VENV    ?= .venv
PYTEST  ?= $(VENV)/bin/pytest
LINKEMU ?= $(VENV)/bin/linkemu

.PHONY: all setup build demo test unit integration lab-test control bench clean quick lfp-test cellular-test

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
	$(PYTEST) -m "bed or model" -v

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

test: unit integration lab-test control api-test lfp-test cellular-test

# linkemu shell, testbed up --between, run --ports and the Python API
# (with the example of docs/python.md), on beds "la", "lh" and "lk".
.PHONY: api-test
api-test: build
	$(PYTEST) -m api -v -rs

# The 4G/5G study (docs/lab.md "cellular", docs/units.md): the unit-latency
# instrument over loopback and the cell-* profiles against the published
# figures (no root), then `linkemu lab cellular --quick` and `linkemu units
# run` on a bed named "lx" (about 2 minutes).
cellular-test: build
	$(PYTEST) -m cellular -v

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
