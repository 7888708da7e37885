"""The suite end to end on tiny planted cases: its files, resuming, the process pool, errors, the CLI."""

import logging

import pandas as pd
import pytest

import searcher
from searcher.bench import Case, bench
from searcher.bench import run as bench_run
from searcher.campaign import load_campaign
from searcher.cli import main
from searcher.errors import ParameterError, PluginError
from searcher.strategies import DEFAULT_STRATEGY

CASES = ["planted-d6-k5", "ball-d6-k3-v1"]
SCORES = ["case", "kind", "strategy", "seed", "budget", "evaluations", "failures", "repeats", "breadth", "of", "effective_breadth",
          "first_failure", "counts"]


def _rows(path):
    return pd.read_csv(path / "runs.csv").sort_values(["case", "strategy", "seed"]).reset_index(drop=True)


def test_bench_writes_runs_suite_table_and_figure(tmp_path):
    result = bench(tmp_path, cases=CASES, strategies=["random", "sobol"], seeds=2, budget=40, progress=False)
    runs = _rows(tmp_path)
    assert len(runs) == 2 * 2 * 2 and set(runs["case"]) == set(CASES) and (runs["evaluations"] == 40).all()
    assert runs.groupby("case")["of"].first().to_dict() == {"planted-d6-k5": 5, "ball-d6-k3-v1": 3}
    assert (runs["failures"] >= runs["breadth"]).all() and (runs["breadth"] >= runs["effective_breadth"] - 1e-9).all()
    assert runs["counts"].map(lambda c: sum(map(int, str(c).split()))).tolist() == runs["failures"].tolist()
    suite = pd.read_csv(tmp_path / "suite.csv")
    assert len(suite) == 2 * 2 and (suite["seeds"] == 2).all()
    assert {"failures_mean", "failures_sd", "breadth_mean", "effective_breadth_mean", "effective_breadth_sd"} <= set(suite.columns)
    text = (tmp_path / "suite.md").read_text()
    table = [line for line in text.splitlines() if line.startswith("| ")]
    assert len(table) == 1 + 2 and "planted-d6-k5 *" in table[1]  # the header, one row per case; the tuned case marked
    assert f"{DEFAULT_STRATEGY} did not run" in text and "Total run time" in text.splitlines()[-1]
    assert (tmp_path / "suite.png").stat().st_size > 10_000
    assert result.summary() == text and len(result.runs) == 8


def test_a_second_call_runs_nothing_again(tmp_path, monkeypatch):
    bench(tmp_path, cases=CASES[:1], strategies=["random"], seeds=2, budget=20, progress=False)
    before = (tmp_path / "runs.csv").read_text()

    def refuse(*args, **kwargs):
        raise AssertionError("a finished run ran again")

    monkeypatch.setattr(bench_run, "run_planted", refuse)
    again = bench(tmp_path, cases=CASES[:1], strategies=["random"], seeds=2, budget=20, progress=False)
    assert (tmp_path / "runs.csv").read_text() == before and len(again.runs) == 2
    monkeypatch.undo()
    bench(tmp_path, cases=CASES[:1], strategies=["random"], seeds=3, budget=20, progress=False)  # one seed more: one run more
    assert len(_rows(tmp_path)) == 3


def test_an_interrupted_suite_keeps_the_runs_it_finished(tmp_path, monkeypatch):
    real, calls = bench_run.run_planted, []

    def interrupted(case, strategy, seed, budget, options):
        calls.append(seed)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(case, strategy, seed, budget, options)

    monkeypatch.setattr(bench_run, "run_planted", interrupted)
    with pytest.raises(KeyboardInterrupt):
        bench(tmp_path, cases=CASES[:1], strategies=["random"], seeds=3, budget=20, progress=False)
    assert len(_rows(tmp_path)) == 1
    monkeypatch.undo()
    bench(tmp_path, cases=CASES[:1], strategies=["random"], seeds=3, budget=20, progress=False)
    assert _rows(tmp_path)["seed"].tolist() == [0, 1, 2]


def test_jobs_give_the_same_runs(tmp_path):
    for jobs in (1, 2):
        bench(tmp_path / f"jobs{jobs}", cases=CASES, strategies=["random", "sobol"], seeds=2, budget=24, jobs=jobs, progress=False)
    pd.testing.assert_frame_equal(_rows(tmp_path / "jobs1")[SCORES], _rows(tmp_path / "jobs2")[SCORES])


def test_checks_of_the_strategy_under_test(tmp_path):
    """With a peer in the run, suite.md says whether `under` finds 80% of its failures and 90% of the broadest breadth."""
    result = bench(tmp_path, cases=CASES[:1], strategies=["random", "sobol", "cmaes"], seeds=1, budget=40, progress=False, under="sobol")
    s = result.table.set_index("strategy")
    row = next(line for line in result.markdown.splitlines() if line.startswith("| planted-d6-k5"))
    yield_ok = s.loc["sobol", "failures_mean"] >= 0.8 * s.loc["cmaes", "failures_mean"]
    broad_ok = (s.loc["sobol", "breadth_mean"] >= 0.9 * s["breadth_mean"].max()
                and s.loc["sobol", "effective_breadth_mean"] >= 0.9 * s["effective_breadth_mean"].max())
    marks = row.rstrip(" |").split(" | ")[-3:]
    assert marks[0].startswith("✓" if yield_ok else "✗") and "x cmaes" in row
    assert marks[1].startswith("✓" if broad_ok else "✗")
    assert marks[2] == ("100%" if yield_ok and broad_ok else "0%")  # one seed: every resample is the same draw
    assert searcher.bench.resampled(result.runs, "planted-d6-k5", "sobol")["both"] == (1.0 if yield_ok and broad_ok else 0.0)
    assert "sobol passes both checks on" in result.markdown.splitlines()[-1]


def test_a_campaign_case_runs_through_compare(tmp_path):
    case = Case.campaign("planted-campaign", "planted", "planted", target_options={"score": True})
    result = bench(tmp_path, cases=[case], strategies=["random", "cmaes"], seeds=1, budget=16, progress=False,
                   strategy_options={"sigma": 0.05})
    runs = _rows(tmp_path)
    assert len(runs) == 2 and (runs["kind"] == "campaign").all() and (runs["of"] == 16).all()
    assert (tmp_path / "planted-campaign" / "runs" / "random-s0" / "campaign.sqlite").is_file()
    assert (runs["seconds"] >= 0).all() and runs["median_ask_s"].isna().all()
    assert len(result.table) == 2
    stored = {s: load_campaign(tmp_path / "planted-campaign" / "runs" / f"{s}-s0").config["strategy_options"] for s in ("random", "cmaes")}
    assert stored == {"random": {}, "cmaes": {"sigma": 0.05}}  # each campaign got the options its strategy takes


def test_strategy_options_make_a_variant_of_a_strategy(tmp_path):
    """An option goes to the strategies that take it, in this process and in the pool's, and suite.md says so."""
    plain = bench(tmp_path / "plain", cases=CASES[:1], strategies=["random", "cmaes"], seeds=1, budget=40, progress=False)
    narrow = bench(tmp_path / "narrow", cases=CASES[:1], strategies=["random", "cmaes"], seeds=1, budget=40, progress=False,
                   strategy_options={"sigma": 0.02})
    a, b = (r.runs.set_index("strategy")[SCORES[5:]] for r in (plain, narrow))
    assert a.loc["random"].equals(b.loc["random"])  # random takes no sigma: the same run
    assert not a.loc["cmaes"].equals(b.loc["cmaes"])  # a CMA-ES with a narrower start searches elsewhere
    assert "Strategy options: sigma=0.02" in narrow.markdown and "Strategy options" not in plain.markdown
    pooled = bench(tmp_path / "pooled", cases=CASES[:1], strategies=["random", "cmaes"], seeds=1, budget=40, jobs=2, progress=False,
                   strategy_options={"sigma": 0.02})
    pd.testing.assert_frame_equal(pooled.runs[SCORES], narrow.runs[SCORES])


def test_runs_made_with_other_options_are_not_resumed(tmp_path, monkeypatch):
    bench(tmp_path, cases=CASES[:1], strategies=["cmaes"], seeds=1, budget=16, progress=False, strategy_options={"sigma": 0.02})
    before = (tmp_path / "runs.csv").read_text()
    monkeypatch.setattr(bench_run, "run_planted", lambda *a: pytest.fail("a run started"))
    for options, asked in ((None, "none"), ({"sigma": 0.1}, "sigma=0.1")):
        with pytest.raises(ParameterError, match=f"made with strategy options sigma=0.02; this call asks for {asked}. Give another --out"):
            bench(tmp_path, cases=CASES[:1], strategies=["cmaes"], seeds=1, budget=16, progress=False, strategy_options=options)
    assert (tmp_path / "runs.csv").read_text() == before
    again = bench(tmp_path, cases=CASES[:1], strategies=["cmaes"], seeds=1, budget=16, progress=False, strategy_options={"sigma": 0.02})
    assert len(again.runs) == 1  # the same options: resumed, nothing run


@pytest.mark.parametrize("options, error, match", [
    ({"cases": ["nope"]}, ParameterError, r"Unknown case\(s\) \['nope'\]. Valid cases: planted-d6-k5"),
    ({"strategies": ["random", "nope"]}, PluginError, "Unknown strategy 'nope'. Available strategies: random, sobol, bo"),
    ({"strategies": ["random", "random"]}, ParameterError, "each once"),
    ({"seeds": 0}, ParameterError, "'seeds' option of bench must be an integer >= 1"),
    ({"budget": 0}, ParameterError, "'budget' option of bench must be an integer in \\[1, 1000000000\\]"),
    ({"jobs": 0}, ParameterError, "'jobs' option of bench must be an integer >= 1"),
    ({"strategy_options": {"sigmaa": 0.1}}, ParameterError, "takes the strategy option 'sigmaa'. Their options: random: none"),
])
def test_bad_options_fail_before_anything_runs(tmp_path, options, error, match):
    with pytest.raises(error, match=match):
        bench(tmp_path / "out", **{"cases": CASES[:1], "strategies": ["random"], "seeds": 1, "budget": 8, "progress": False, **options})
    assert not (tmp_path / "out" / "runs.csv").exists()


def test_missing_optional_strategies_are_skipped_with_a_line(tmp_path, monkeypatch, caplog):
    real = bench_run.make_strategy

    def no_optuna(name, *args, **kwargs):
        if name == "tpe":
            raise PluginError("The 'tpe' strategy needs the 'optuna' package: pip install 'searcher[baselines]' (or pip install optuna).")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(bench_run, "make_strategy", no_optuna)
    with caplog.at_level(logging.WARNING, logger="searcher.bench"):
        result = bench(tmp_path, cases=CASES[:1], strategies=["random", "tpe"], seeds=1, budget=8, progress=False)
    assert set(result.runs["strategy"]) == {"random"} and list(result.skipped) == ["tpe"]
    lines = [r.getMessage() for r in caplog.records if r.name == "searcher.bench"]
    assert len(lines) == 1 and "skipping strategy tpe" in lines[0] and "pip install" in lines[0]


def test_default_strategies_not_registered_here_are_skipped(monkeypatch):
    monkeypatch.setattr(bench_run, "DEFAULT_STRATEGIES", ("random", "not-yet-registered"))
    names, skipped = bench_run._strategies(("random", "not-yet-registered"), 8)
    assert names == ["random"] and "registers no strategy 'not-yet-registered'" in skipped["not-yet-registered"]


def test_bench_is_a_call_on_the_package(tmp_path):
    assert searcher.bench is not None and callable(searcher.bench)
    result = searcher.bench(tmp_path, cases=CASES[:1], strategies=["random"], seeds=1, budget=8, progress=False)
    assert len(result.runs) == 1


def test_cli_bench_end_to_end(tmp_path, capsys):
    argv = ["bench", "--cases", ",".join(CASES), "--strategies", "random,sobol", "--seeds", "2", "--budget", "16",
            "--out", str(tmp_path), "--no-progress"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "| planted-d6-k5 *" in out and f"written: {tmp_path}/runs.csv" in out
    assert len(_rows(tmp_path)) == 8 and (tmp_path / "suite.png").is_file()
    assert main([*argv[:2], "nope", *argv[3:]]) == 2
    assert "Unknown case(s) ['nope']" in capsys.readouterr().err
    variant = [*argv[:4], "random,cmaes", *argv[5:-2], str(tmp_path / "variant"), "--no-progress", "--strategy-option", "sigma=0.02"]
    assert main(variant) == 0 and "Strategy options: sigma=0.02" in capsys.readouterr().out
    assert main([*variant[:-1], "sigma"]) == 2 and "--strategy-option expects NAME=VALUE, got 'sigma'" in capsys.readouterr().err


def test_cli_lists_the_cases(capsys):
    assert main(["bench", "--list"]) == 0
    out = capsys.readouterr().out
    assert "planted-d6-k5" in out and "tuned" in out and "faces vs dlib-cnn" in out and "shell, 6-D" in out
    held = next(line for line in out.splitlines() if "ball-d6-k3-v1-l1" in line)
    assert "held-out" in held and "layout 1" in held and "faces-cvae vs dlib-hog" in out
    assert main(["bench", "--list", "--cases", "held-out"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines() if line.startswith("  ")]
    assert "faces-latent-haar-face" in listed and "planted-d6-k5" not in listed and "faces-haar-face" not in listed


def test_a_folder_made_with_the_ablation_switches_as_options_of_their_own_resumes(tmp_path, monkeypatch):
    """bo-modes's ablation switches moved into its `ablation` table: a folder whose options.json holds
    one as an option of its own (`inside=never`) is resumed by the same options given either way,
    and suite.md names the switch as the command line gives it."""
    import json

    first = bench(tmp_path, cases=CASES[:1], strategies=["bo-modes-nomodel"], seeds=1, budget=16, progress=False,
                  strategy_options={"inside": "never"})
    assert json.loads((tmp_path / "options.json").read_text()) == {"ablation": {"inside": "never"}}
    assert "Strategy options: ablation.inside=never" in first.markdown
    (tmp_path / "options.json").write_text(json.dumps({"inside": "never"}))  # as the folder was written before the table
    monkeypatch.setattr(bench_run, "run_planted", lambda *a: pytest.fail("a run started"))
    for options in ({"ablation": {"inside": "never"}}, {"inside": "never"}):
        again = bench(tmp_path, cases=CASES[:1], strategies=["bo-modes-nomodel"], seeds=1, budget=16, progress=False, strategy_options=options)
        assert len(again.runs) == 1
    with pytest.raises(ParameterError, match="ablation.inside=never; this call asks for ablation.inside=always"):
        bench(tmp_path, cases=CASES[:1], strategies=["bo-modes-nomodel"], seeds=1, budget=16, progress=False,
              strategy_options={"ablation": {"inside": "always"}})
