"""Generated bad input (Hypothesis): every value a user can give the public API, a TOML config or
the command line either works or ends in the project's own error, one line, naming what was wrong;
never a Python traceback. `EXAMPLES` says how many inputs each property tries (reported in the README)."""

import dataclasses
import math
import os
import string

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import generators
from searcher.campaign import Campaign
from searcher.cli import main
from searcher.errors import SearcherError
from searcher.objective import ObjectiveSpec

EXAMPLES = 150
# CI draws the same examples every run; SEARCHER_EXPLORE=1 draws new ones (how the bugs below were found)
FIXED = not os.environ.get("SEARCHER_EXPLORE")
FAST = settings(max_examples=EXAMPLES, deadline=None, derandomize=FIXED, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
CLI = settings(max_examples=40, deadline=None, derandomize=FIXED, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(10**20), max_value=10**20),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(string.printable, max_size=12))
values = st.one_of(scalars, st.lists(scalars, max_size=3), st.dictionaries(st.text(string.ascii_letters, max_size=6), scalars, max_size=3))
FIELDS = [f.name for f in dataclasses.fields(Campaign)]
# checked by the construction property only: running them would start Ray, or spend a budget of a million
RUN_APART = ("workers", "executor", "ray_address", "out", "budget", "batch")
FACES = generators.load("faces").space


def _named(exc: BaseException, *names: object) -> bool:
    """The message names one of `names` (the bad key or its value)."""
    text = str(exc)
    return any(str(n)[:12] in text for n in names if n not in (None, ""))


@FAST
@given(field=st.sampled_from(FIELDS), value=values)
def test_any_campaign_setting_is_accepted_or_named(field, value):
    try:
        Campaign(**{field: value})
    except SearcherError as exc:
        assert _named(exc, field, field.replace("_", "-"), value) and "\n" not in str(exc), str(exc)


@FAST
@given(params=st.dictionaries(st.one_of(st.sampled_from(FACES.names), st.text(string.ascii_lowercase, min_size=1, max_size=8)),
                              values, max_size=4))
def test_any_parameter_dict_is_validated_or_named(params):
    try:
        out = FACES.validate(params)[0]
    except SearcherError as exc:
        assert _named(exc, *params, *params.values()), str(exc)
    else:
        assert all(not isinstance(v, float) or math.isfinite(v) for v in out.values())


@FAST
@given(loss=values, margin=values, cut=values)
def test_any_judging_option_is_accepted_or_named(loss, margin, cut):
    try:
        ObjectiveSpec("faces", "gender-cnn", loss=loss, margin=margin, cut=cut)
    except SearcherError as exc:
        assert _named(exc, "loss", "margin", "cut"), str(exc)


toml_values = st.one_of(st.integers(min_value=-(10**6), max_value=10**6), st.floats(allow_nan=False, allow_infinity=False, width=32),
                        st.booleans(), st.text(string.ascii_letters + "=,. ", max_size=10),
                        st.lists(st.integers(min_value=-5, max_value=5), max_size=3))


def _toml(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(map(_toml, value)) + "]"
    return repr(value)


@CLI
@given(key=st.one_of(st.sampled_from([f for f in FIELDS if f not in RUN_APART]), st.text(string.ascii_lowercase + "_", min_size=1, max_size=10)),
       value=toml_values)
def test_any_toml_config_runs_or_is_refused_in_one_line(tmp_path_factory, capsys, key, value):
    """`hunt --config` on a one-key TOML file (a 2-evaluation campaign of the planted problem when the key is sound)."""
    root = tmp_path_factory.mktemp("toml")
    config = root / "c.toml"
    base = {"generator": "'planted'", "target": "'planted'", "strategy": "'random'", "budget": "2", "batch": "1"}
    base[key] = _toml(value)
    config.write_text("".join(f"{k} = {v}\n" for k, v in base.items()))
    try:
        code = main(["hunt", "--config", str(config), "--out", str(root / "run"), "--no-progress"])
    except SystemExit as exc:  # argparse's own usage errors exit 2 with a usage line
        code = exc.code
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert code == 0 or (code == 2 and err.count("\n") <= 2), err


@CLI
@given(name=st.one_of(st.sampled_from(FACES.names), st.text(string.ascii_lowercase, min_size=1, max_size=6)),
       value=st.text(string.printable.strip() or "x", min_size=1, max_size=10), seed=st.integers(min_value=-3, max_value=3))
def test_any_render_setting_renders_or_is_refused_in_one_line(tmp_path_factory, capsys, name, value, seed):
    out = tmp_path_factory.mktemp("render") / "sheet.png"
    code = main(["render", "-n", "1", "--resolution", "64", "--seed", str(seed), "--set", f"{name}={value}", "--out", str(out)])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert (code == 0 and out.is_file()) or (code == 2 and err.startswith("searcher: error:") and err.count("\n") == 1), err

