# Two entry points: `make demo` runs the main job on the embedded defaults, `make test` runs the tests.
# Both create .venv on first use and install the project into it (torch pinned to the CPU build).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# The main job on the embedded defaults: the default search (`bo-modes`: a GP that looks for new
# failure modes, a trust region per mode found) against random search, 400 evaluations each, hunting the failures of dlib's CNN
# face detector on procedural faces, the two campaigns side by side on Ray; the comparison plots
# and galleries of failures, and one HTML report of it all, whose path is printed last (about 8
# minutes on 2 cores from a fresh clone; an interrupted demo resumes where it stopped).
demo: $(STAMP)
	$(BIN)/searcher render --generator faces -n 64 --seed 0 --out demo/sheet.png
	$(BIN)/searcher compare --generator faces --target dlib-cnn --strategies random,bo-modes --seeds 1 --budget 400 --parallel 2 --out demo
	$(BIN)/searcher gallery demo/runs/bo-modes-s0 --out demo/bo_modes_failures.png
	$(BIN)/searcher gallery demo/runs/random-s0 --out demo/random_failures.png
	@echo "demo written to $(CURDIR)/demo: compare.csv, failures_vs_evaluations.png, diversity.png, bo_modes_failures.png, random_failures.png, sheet.png, and the report to open:"
	@$(BIN)/searcher report demo

test: $(STAMP)
	$(BIN)/ruff check .
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest -q -n auto  # one thread per worker: the workers already fill the cores

bench: $(STAMP)
	$(BIN)/python benchmarks/render_speed.py
	$(BIN)/python benchmarks/detectability.py

clean:
	rm -rf $(VENV) demo .pytest_cache
