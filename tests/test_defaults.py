"""Each default has one home, and every other place reads it from there: the budget and the batch
(`searcher.defaults`), the number of failure modes (`searcher.analysis.modes.N_MODES`) and the
failure threshold (`searcher.objective.FAILURE`)."""

import ast
import dataclasses
import inspect
from pathlib import Path

import pytest

from searcher.analysis.modes import N_MODES
from searcher.defaults import DEFAULT_BATCH, DEFAULT_BUDGET
from searcher.objective import FAILURE

ROOT = Path(__file__).resolve().parents[1]


def _parse(command: str):
    from searcher.cli import build_parser

    return build_parser().parse_args([command])


def test_the_homes_hold_the_values_the_docs_give():
    assert (DEFAULT_BUDGET, DEFAULT_BATCH, N_MODES, FAILURE) == (400, 4, 16, 0.5)


def test_a_campaign_and_searcher_hunt_default_to_them():
    from searcher.campaign import Campaign

    fields = {f.name: f for f in dataclasses.fields(Campaign)}
    assert (fields["budget"].default, fields["batch"].default) == (DEFAULT_BUDGET, DEFAULT_BATCH)
    args = _parse("hunt")  # hunt's flags default to None: the campaign's own defaults apply
    assert (args.budget, args.batch) == (None, None)
    assert f"default: {DEFAULT_BUDGET}" in fields["budget"].metadata["help"] and f"default: {DEFAULT_BATCH}" in fields["batch"].metadata["help"]


def test_compare_and_its_command_default_to_them():
    from searcher.studies.compare import compare

    params = inspect.signature(compare).parameters
    assert (params["budget"].default, params["batch"].default, params["modes"].default) == (DEFAULT_BUDGET, DEFAULT_BATCH, N_MODES)
    args = _parse("compare")
    assert (args.budget, args.batch) == (DEFAULT_BUDGET, DEFAULT_BATCH)


def test_bench_and_its_command_default_to_them():
    from searcher.bench import bench
    from searcher.bench.planted import ask_tell

    assert inspect.signature(bench).parameters["budget"].default == DEFAULT_BUDGET
    assert inspect.signature(ask_tell).parameters["batch"].default == DEFAULT_BATCH
    assert _parse("bench").budget == DEFAULT_BUDGET


def test_the_scores_default_to_the_number_of_modes():
    from searcher.analysis.modes import failure_modes, mode_labels

    assert inspect.signature(failure_modes).parameters["modes"].default == N_MODES
    assert inspect.signature(mode_labels).parameters["modes"].default == N_MODES


def test_bo_modes_schedules_over_the_default_budget():
    pytest.importorskip("botorch")
    from searcher.strategies.bo import modes

    assert modes._HORIZON == DEFAULT_BUDGET


def _literal_defaults(path: Path) -> list[str]:
    """Where `path` writes out one of the defaults' numbers for a `budget`, `batch` or `modes`: a
    parameter default, an `add_argument("--budget", default=...)`, or a constant such as `BATCH = 4`.
    (Other numbers are other defaults: retrain's search budget of 1,000 is its own.)"""
    values = {"budget": DEFAULT_BUDGET, "batch": DEFAULT_BATCH, "modes": N_MODES, "--budget": DEFAULT_BUDGET, "--batch": DEFAULT_BATCH}
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            pairs = list(zip(args.args[len(args.args) - len(args.defaults):], args.defaults)) + list(zip(args.kwonlyargs, args.kw_defaults))
            found += [f"{path.relative_to(ROOT)}:{d.lineno} {a.arg}" for a, d in pairs
                      if isinstance(d, ast.Constant) and a.arg in values and d.value == values[a.arg]]
        elif isinstance(node, ast.Call):
            flag = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else None
            for kw in node.keywords:
                if flag in values and kw.arg == "default" and isinstance(kw.value, ast.Constant) and kw.value.value == values[flag]:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {flag}")
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and node.value.value in (DEFAULT_BUDGET, N_MODES, DEFAULT_BATCH):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            found += [f"{path.relative_to(ROOT)}:{node.lineno} {n}" for n in names if n in ("BATCH", "MODES", "N_MODES", "_HORIZON")]
    return found


def test_no_other_module_assigns_them():
    homes = {ROOT / "searcher" / "defaults.py", ROOT / "searcher" / "analysis" / "modes.py"}
    found = [hit for path in sorted((ROOT / "searcher").rglob("*.py")) if path not in homes for hit in _literal_defaults(path)]
    assert not found, f"a budget, batch or number of modes set outside searcher/defaults.py and analysis/modes.py: {found}"
