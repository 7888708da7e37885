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

demo: $(STAMP)
	$(BIN)/searcher render --generator faces -n 64 --seed 0 --out demo/sheet.png
	@echo "contact sheet written to demo/sheet.png"

test: $(STAMP)
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python benchmarks/render_speed.py
	$(BIN)/python benchmarks/detectability.py

clean:
	rm -rf $(VENV) demo .pytest_cache
