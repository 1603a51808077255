# Two entry points: `make run` (the main job) and `make test` (the whole test suite).
# Both build the virtual environment themselves; `make test` also installs Icarus Verilog if missing.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test test-all bench clean compiled cacti

$(STAMP): pyproject.toml
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11 or newer is required"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

iverilog:
	@command -v iverilog >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iverilog; }

# CACTI 7 (SRAM macro figures, synth/sram.py), built from its source in the pinned PyPI wheel into build/tech/
cacti: $(STAMP)
	$(BIN)/python -m dualflow.synth.cacti_build

# numba compiles the timing engine into its disk cache once, not in every process that uses it
compiled: $(STAMP)
	$(BIN)/python -m dualflow.experiments.compile_engine

run: compiled cacti
	$(BIN)/dualflow reproduce -o results

test: compiled iverilog cacti
	$(BIN)/python -m pytest -n 2

test-all: compiled iverilog cacti
	$(BIN)/python -m pytest -n 2 -m ''

bench: compiled
	$(BIN)/python benchmarks/functional_speed.py
	$(BIN)/python benchmarks/timing_speed.py

clean:
	rm -rf $(VENV) build .pytest_cache
