# linkemu: the two commands a user needs are `make demo` and `make test`.
# Both set the machine up first (idempotent, quick when done) and build.

BUILD   ?= build
VENV    ?= .venv
PYTEST  ?= $(VENV)/bin/pytest
LINKEMU ?= $(VENV)/bin/linkemu

.PHONY: all setup build demo test unit integration bench clean

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
	$(PYTEST) tests/integration -v

test: unit integration

bench: build
	bench/run.sh

clean:
	rm -rf $(BUILD)
