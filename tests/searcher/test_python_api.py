"""Issue 73, defect 12: every Python entry point of the README refuses a wrong type or value with the
project's own `ParameterError`, naming the argument, before it does anything; a `Path` is a path;
a string is never iterated letter by letter where a list is meant."""

from pathlib import Path

import pytest

import searcher
from searcher.errors import ParameterError

# (entry point, call, the argument named) for a wrong type, then a wrong value
CALLS = [
    ("Campaign", lambda tmp: searcher.Campaign(budget="400", out=tmp), "'budget' option of Campaign"),
    ("Campaign", lambda tmp: searcher.Campaign(batch=0, out=tmp), "'batch' option of Campaign"),
    ("load_campaign", lambda tmp: searcher.load_campaign(7), "'directory' argument of load_campaign"),
    ("load_campaign", lambda tmp: searcher.load_campaign(""), "'directory' argument of load_campaign"),
    ("compare", lambda tmp: searcher.compare(tmp, seeds="01"), "'seeds' argument of compare"),
    ("compare", lambda tmp: searcher.compare(tmp, budget=0), "'budget' argument of compare"),
    ("run_transects", lambda tmp: searcher.run_transects(["gender-cnn"], out=tmp), "'target' argument of run_transects"),
    ("run_transects", lambda tmp: searcher.run_transects("gender-cnn", cut=float("nan"), out=tmp), "'cut' argument of run_transects"),
    ("analyze", lambda tmp: searcher.analyze(tmp, biased="yes"), "'biased' argument of analyze"),
    ("analyze", lambda tmp: searcher.analyze(tmp, out=""), "'out' argument of analyze"),
    ("export", lambda tmp: searcher.export(tmp, 3), "'out' argument of export"),
    ("export", lambda tmp: searcher.export(tmp, tmp / "x", limit=0), "'limit' argument of export"),
    ("retrain", lambda tmp: searcher.retrain("gender-cnn", seeds=3, out=tmp), "'seeds' argument of retrain"),
    ("retrain", lambda tmp: searcher.retrain("gender-cnn", test_n=0, out=tmp), "'test_n' argument of retrain"),
    ("fix", lambda tmp: searcher.fix("gender-cnn", seeds="0,1", out=tmp), "'seeds' argument of fix"),
    ("fix", lambda tmp: searcher.fix("gender-cnn", confirm_budget=0, out=tmp), "'confirm_budget' argument of fix"),
    ("explain", lambda tmp: searcher.explain(3), "'run' argument of explain"),
    ("explain", lambda tmp: searcher.explain(tmp, depth=11), "'depth' argument of explain"),
    ("confirm", lambda tmp: searcher.confirm([tmp]), "'run' argument of confirm"),
    ("confirm", lambda tmp: searcher.confirm(tmp, budget=0), "'budget' argument of confirm"),
    ("probe", lambda tmp: searcher.probe(None), "'run' argument of probe"),
    ("probe", lambda tmp: searcher.probe(tmp, steps=0), "'steps' argument of probe"),
]


@pytest.mark.parametrize(("name", "call", "needle"), CALLS, ids=[f"{c[0]}-{i % 2 and 'value' or 'type'}" for i, c in enumerate(CALLS)])
def test_a_wrong_type_or_value_is_the_projects_error_naming_the_argument(tmp_path, name, call, needle):
    before = sorted(tmp_path.rglob("*"))
    with pytest.raises(ParameterError, match="must be") as caught:
        call(tmp_path)
    assert needle in str(caught.value) and "\n" not in str(caught.value)
    assert sorted(tmp_path.rglob("*")) == before  # refused before anything was written


def test_every_readme_entry_point_is_covered():
    import re

    readme = (Path(__file__).parents[2] / "README.md").read_text()
    called = set(re.findall(r"searcher\.(\w+)\(", "\n".join(re.findall(r"```python\n(.*?)```", readme, re.S))))
    assert called and called <= {name for name, _, _ in CALLS}, called - {name for name, _, _ in CALLS}


def test_a_path_is_a_path(tmp_path):
    out = tmp_path / "run"
    campaign = searcher.Campaign(generator="planted", target="planted", strategy="random", budget=4, out=out)
    assert campaign.out == str(out)
    assert len(campaign.run(progress=False).trials) == 4
    assert len(searcher.load_campaign(out).trials) == 4
    assert searcher.Campaign.from_dir(out).out == str(out)


def test_a_string_of_names_is_split_as_the_command_line_splits_it(tmp_path):
    assert searcher.Campaign(vary="yaw, skin_tone", out=tmp_path).vary == ("yaw", "skin_tone")
    with pytest.raises(ParameterError, match=r"Unknown strategy.*'nope'|'nope'"):  # not 'r', 'a', 'n', ...
        searcher.compare(tmp_path, generator="planted", target="planted", strategies="random,nope", seeds=[0])
    with pytest.raises(ParameterError, match="'strategies' argument of compare must be names"):
        searcher.compare(tmp_path, strategies=[1, 2])


def test_an_unknown_argument_is_the_projects_error(tmp_path):
    with pytest.raises(ParameterError, match=r"Unknown analyze argument\(s\) \['bins_'\]. Valid analyze arguments: directory, out"):
        searcher.analyze(tmp_path, bins_=3)


def _entry_points() -> dict[str, object]:
    """Every function `searcher.validation.ENTRY_POINTS` names ("annotate.app": `searcher.annotate.app`),
    the README's `Campaign`, and the plug-in loaders."""
    import functools

    import generators
    import targets
    from searcher.validation import ENTRY_POINTS

    found = {name: functools.reduce(getattr, name.split("."), searcher) for name in ENTRY_POINTS}
    return {**found, "Campaign": searcher.Campaign, "generators.load": generators.load, "targets.load": targets.load}


@pytest.mark.parametrize("name", sorted(_entry_points()))
def test_an_unknown_keyword_or_a_wrong_typed_first_argument_is_the_projects_error(tmp_path, name):
    """Never a TypeError or AttributeError from deep inside: a `SearcherError` naming what was wrong."""
    function = _entry_points()[name]
    with pytest.raises(searcher.SearcherError, match="bogus_keyword"):
        function(tmp_path / "x", bogus_keyword=1) if name not in ("generators.load", "targets.load") else function("planted", bogus_keyword=1)
    for wrong in (3, ["planted"], {"a": 1}):
        with pytest.raises(searcher.SearcherError):
            function(wrong)
    assert list(tmp_path.iterdir()) == []  # refused before anything was written
