# linkemu: the two commands a user needs are `make demo` and `make test`.
# Both set the machine up first (idempotent, quick when done) and build.

BUILD   ?= build
VENV    ?= .venv
PYTEST  ?= $(VENV)/bin/pytest
LINKEMU ?= $(VENV)/bin/linkemu

.PHONY: all setup build demo test unit integration lab-test control bench clean quick lfp-test

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

test: unit integration lab-test control api-test lfp-test

# linkemu shell, testbed up --between, run --ports and the Python API
# (with the example of docs/python.md), on beds "la", "lh" and "lk".
.PHONY: api-test
api-test: build
	$(PYTEST) -m api -v -rs

# The test kit (tests/conftest.py, tests/kit, docs/testing.md): suites are
# chosen by marker (bed, model, lab, control; live = needs a bed and root).
# quick: everything that needs neither root nor a bed, in about a minute.
quick:
	$(PYTEST) -m "not live"

bench: build
	bench/run.sh

clean:
	rm -rf $(BUILD)
