"""docs/results.md read and measured again: its tables parse (a bad row names its line), the numbers
of a value are found in a command's output at the value's precision, timings within a tolerance,
and a moved figure, a failed command and a timeout are each reported as such."""

import subprocess
import sys

import pytest

from searcher.bench.results import DEFAULT_FILE, HEADER, Row, check, compare, cost_kind, numbers, read_results
from searcher.cli import main
from searcher.errors import ParameterError

TABLE_HEAD = "| " + " | ".join(HEADER) + " |\n|---|---|---|---|---|---|---|---|\n"


def _row(figure, value, command, cost="cheap", section="Speed"):
    return Row(section, figure, value, command, cost, "2026-12-04", "2 cores", "goal", "", 1)


def _py(code):
    """A shell command running `code` with this interpreter."""
    return f'"{sys.executable}" -c "{code}"'


def test_tables_parse_under_their_sections_with_escaped_pipes(tmp_path):
    path = tmp_path / "results.md"
    path.write_text("# Results\n\nIntro | not a table.\n\n## Speed\n\n" + TABLE_HEAD
                    + "| render | 0.13 s | `python benchmarks/render_speed.py` | cheap | 2026-12-04 | 2 cores | < 1 s | |\n"
                    + "| a \\| b | 312 vs 48 | `searcher list \\| head` | 43 min | 2026-12-04 | 2 cores | more | Fig. 3 |\n\n"
                    + "## Other tables are left alone\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n## Search\n\n" + TABLE_HEAD
                    + "| breadth | +8.8 points | `make demo` | unrecorded | 2026-12-01 | GPU | breadth | |\n")
    rows = read_results(path)
    assert [(r.section, r.figure, r.line) for r in rows] == [("Speed", "render", 9), ("Speed", "a | b", 10), ("Search", "breadth", 22)]
    assert rows[0].command == "python benchmarks/render_speed.py" and rows[1].command == "searcher list | head"
    assert rows[1].value == "312 vs 48" and rows[1].paper == "Fig. 3" and rows[2].cost == "unrecorded"


def test_a_row_with_the_wrong_number_of_cells_names_its_line(tmp_path):
    path = tmp_path / "results.md"
    path.write_text("## Speed\n\n" + TABLE_HEAD + "| ok | 1 | `true` | cheap | d | m | g | p |\n| a | b | c |\n")
    with pytest.raises(ParameterError, match=r"line 6: 3 cells; a results row has 8"):
        read_results(path)
    path.write_text("## Speed\n\n| figure | value | command | cost | date | machine | goal |\n|---|---|---|---|---|---|---|\n")
    with pytest.raises(ParameterError, match=r"line 3: this results table's header lacks paper"):
        read_results(path)
    with pytest.raises(ParameterError, match=r"No results file at .*nowhere\.md"):
        read_results(tmp_path / "nowhere.md")


@pytest.mark.parametrize("text, expected", [
    ("312 vs 48", [312, 48]), ("1,234.5 failures", [1234.5]), ("-0.7 and +8.8 points", [-0.7, 8.8]), ("3.8x", [3.8]),
    ("84%", [84]), ("2 min 35 s", [155]), ("0.13 s carried, 0.48 s warm", [0.13, 0.48]), ("480 ms", [0.48]),
    ("120 images/s, 3.8x faster", [120, 3.8]), ("planted-d6-k5 at 6da19ce", []), ("2-3 min", [120, 180]),
])
def test_numbers(text, expected):
    assert numbers(text) == pytest.approx(expected)


def test_a_value_matches_at_its_own_precision():
    assert not compare("0.13", "mean 0.128").missing and not compare("0.13", "mean 0.13").missing
    assert compare("0.13", "mean 0.136").missing == ("0.13",)
    assert not compare("84%", "share 0.842").missing and not compare("1,234", "1234 runs").missing
    assert compare("312 vs 48", "312 failures, 47 repeats").missing == ("48",)


def test_cost_kinds():
    costs = ("cheap", "43 min", "about 2 h", "under a minute, historical", "a test, seconds", "unrecorded", "soon", "minute")
    assert [cost_kind(c) for c in costs] == ["cheap", "duration", "duration", "duration", "duration", "unrecorded", None, None]


def test_a_cheap_row_matches_and_a_moved_one_says_what_was_printed(tmp_path):
    rows = [_row("found", "312", _py("print('found 312 failures')")), _row("moved", "312", _py("print('found 313 failures')")),
            _row("slow", "312", "exit 3", cost="43 min")]
    found, moved, slow = check(rows, root=tmp_path)
    assert found.status == "matched" and found.exit_code == 0
    assert moved.status == "moved" and moved.missing == ("312",) and moved.output == ("313",)
    assert "not in the output: 312" in moved.describe() and "313" in moved.describe()
    assert slow.status == "skipped" and slow.row.cost == "43 min"
    counter = tmp_path / "runs.txt"
    twice = _row("once", "312", f"echo run >> {counter}; echo 312")
    assert [o.status for o in check([twice, twice], root=tmp_path)] == ["matched", "matched"]
    assert counter.read_text() == "run\n"  # rows that share a command run it once


def test_timings_match_within_the_tolerance_and_are_flagged_outside_it(tmp_path):
    near = _row("render", "0.13 s for 312 faces", _py("print('312 faces in 0.16 s')"))
    far = _row("render", "0.13 s for 312 faces", _py("print('312 faces in 0.41 s')"))
    ok, off = check([near, far], root=tmp_path)
    assert ok.status == "matched" and ok.timings == (("0.13 s", "0.16 s", True),) and "timing ok" in ok.describe()
    assert off.status == "timing" and off.timings == (("0.13 s", "0.41 s", False),) and "timing off" in off.describe()
    assert check([far], root=tmp_path, strict_timings=True)[0].status == "moved"
    assert check([far], root=tmp_path, time_tolerance=3.0)[0].status == "matched"
    assert check([_row("s", "2 min 35 s", _py("print('took 160.2 s')"))], root=tmp_path)[0].status == "matched"
    speeds = _row("predictions per second", "dlib HOG 220, 314 – 465 images/s", _py("print('hog 180.5, faces 390 images/s')"))
    assert check([speeds], root=tmp_path)[0].status == "matched"  # the figure is a speed: bare numbers are timings too


def test_progress_bars_are_no_figures(tmp_path):
    bar = "work:  3%|3         | 3/100 [00:01<00:30, 3.0it/s]\\rwork: 100%|##########| 100/100 [00:09<00:00, 11.0it/s]"
    row = _row("bar", "3 and 11.0", _py(f"import sys; sys.stderr.write('{bar}\\n'); print('done')"))
    assert check([row], root=tmp_path)[0].missing == ("3", "11.0")


def test_a_failing_command_and_a_slow_one(tmp_path):
    failed = check([_row("crash", "312", _py("import sys; print('boom'); sys.exit(3)"))], root=tmp_path)[0]
    assert failed.status == "failed" and failed.exit_code == 3 and "boom" in failed.tail
    late = check([_row("late", "312", "sleep 30")], root=tmp_path, timeout=0.5)[0]
    assert late.status == "timed out" and late.seconds < 10


def test_commands_run_at_the_root_with_the_projects_python(tmp_path):
    (tmp_path / "figure.txt").write_text("312\n")
    assert check([_row("cwd", "312", "cat figure.txt")], root=tmp_path)[0].status == "matched"
    ours = f"python -c \"import sys; print(312 if sys.prefix == '{sys.prefix}' else 0)\""
    assert check([_row("python", "312", ours)], root=tmp_path)[0].status == "matched"


def test_only_selects_by_figure_or_section_and_names_a_miss(tmp_path):
    rows = [_row("found", "312", _py("print(312)")), _row("other", "1", "exit 1", section="Search")]
    assert [o.row.figure for o in check(rows, only="FOUND", root=tmp_path)] == ["found"]
    with pytest.raises(ParameterError, match=r"No row's figure or section contains 'nothing' \(--only\); the sections are: Speed, Search"):
        check(rows, only="nothing", root=tmp_path)
    with pytest.raises(ParameterError, match="timeout"):
        check(rows, timeout=0)


def test_the_command_line_lists_and_checks(tmp_path, capsys):
    path = tmp_path / "results.md"
    path.write_text("## Speed\n\n" + TABLE_HEAD + f"| found | 312 | `{_py('print(312)')}` | cheap | d | m | g | |\n"
                    + f"| moved | 312 | `{_py('print(313)')}` | cheap | d | m | g | |\n| suite | 1 | `make bench` | 43 min | d | m | g | |\n")
    assert main(["results", "--file", str(path), "--list"]) == 0
    assert "Speed  suite  [43 min]" in capsys.readouterr().out
    assert main(["results", "--file", str(path), "--check", "--no-progress"]) == 1
    out = capsys.readouterr().out
    assert "1 matched, 0 timing, 1 moved, 0 failed, 0 timed out, 1 skipped" in out and "not in the output: 312" in out
    assert main(["results", "--file", str(tmp_path / "none.md")]) == 2 and "No results file" in capsys.readouterr().err
    module = subprocess.run([sys.executable, "-m", "searcher.cli", "results", "--file", str(path), "--check", "--only", "found"],
                            capture_output=True, text=True)
    assert module.returncode == 0 and "1 matched" in module.stdout and "Traceback" not in module.stderr, module.stderr


@pytest.mark.skipif(not DEFAULT_FILE.exists(), reason=f"{DEFAULT_FILE} is not written yet")
def test_the_real_results_file_parses_and_every_cost_is_cheap_a_duration_or_unrecorded():
    rows = read_results(DEFAULT_FILE)
    assert rows, "docs/results.md holds no results table"
    odd = [f"line {r.line}: {r.cost!r}" for r in rows if cost_kind(r.cost) is None]
    assert not odd, f"costs that are not cheap, a duration or unrecorded: {odd}"
    assert all(r.command for r in rows if cost_kind(r.cost) == "cheap"), "a cheap row without a command"
