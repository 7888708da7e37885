"""One set of argument checks and one message template, used everywhere.

Every check returns the value in its clean type or raises a `ParameterError` worded as

    The 'budget' option of Campaign must be an integer >= 1. Got 0 instead.

(scikit-learn's template: the name, its owner when known, what would be valid, what was given).
`what` is "option", "parameter" or "argument", or a command-line flag such as "--seeds"; `owner`
names the function, class or command, so the same check serves the library and the CLI.

The public Python entry points declare their arguments' constraints in one table each
(`ENTRY_POINTS`, after scikit-learn's `_param_validation`): a list per argument of what it may
be (`Interval`, `Options`, `PATH`, `NAME`, `NAMES`, `ListOf`, `FLAG`, `TABLE`, `STRING`, or None),
checked by `check_params`; `checked("compare")` applies a table to a function's arguments.

Example:
    >>> check_int("budget", 400, low=1, owner="Campaign")
    400
"""

from __future__ import annotations

import difflib
import functools
import inspect
import math
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from searcher.defaults import MAX_WORKERS
from searcher.errors import ParameterError

__all__ = ["CAMPAIGN", "ENTRY_POINTS", "ENV_REFERENCE", "FLAG", "NAME", "NAMES", "PATH", "STRING", "TABLE", "Interval", "ListOf",
           "Options", "check_choice", "check_flag", "check_int", "check_names", "check_number", "check_params",
           "checked", "invalid"]

# A secret written as a reference to the environment variable holding it: "env:NAME", or with a
# scheme before it, "Bearer env:NAME" (groups: the scheme or None, the variable's name). What may be
# stored, printed or passed on a command line in place of the secret itself.
ENV_REFERENCE = re.compile(r"^(?:(\S+) )?env:(\w+)$")

SEED_MAX = 2**32 - 1  # the largest seed every strategy's package takes (CMA-ES, Optuna, pyribs: 32 bits)


def invalid(name: str, expect: str, value: Any, *, what: str = "option", owner: str | None = None,
            hint: str = "") -> ParameterError:
    """The error for `name` = `value` when it must be `expect` (returned, to be raised)."""
    label = name if name.startswith("-") else f"The {name!r} {what}"
    of = f" of {owner}" if owner else ""
    return ParameterError(f"{label}{of} must be {expect}. Got {value!r} instead.{hint}")


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


class _Refused(Exception):
    """A value that a constraint does not take (`check_params` words the error)."""


@dataclass(frozen=True)
class Interval:
    """An int (`kind=int`) or a finite float (`kind=float`) in `[low, high]`; a bound may be None
    (none) and `open_low` / `open_high` exclude it."""

    kind: type
    low: float | None = None
    high: float | None = None
    open_low: bool = False
    open_high: bool = False

    def __str__(self) -> str:
        noun = "an integer" if self.kind is int else "a number"
        low, high = ("" if b is None else f"{b:g}" if self.kind is float else str(b) for b in (self.low, self.high))
        if low and high:
            return f"{noun} in {'(' if self.open_low else '['}{low}, {high}{')' if self.open_high else ']'}"
        if low:
            return f"{noun} {'>' if self.open_low else '>='} {low}"
        if high:
            return f"{noun} {'<' if self.open_high else '<='} {high}"
        return noun if self.kind is int else "a finite number"

    def clean(self, value: Any) -> int | float:
        if not (_is_int(value) if self.kind is int else _is_number(value)):
            raise _Refused
        try:
            v = int(value) if self.kind is int else float(value)
        except OverflowError:  # an int too large for a float
            raise _Refused from None
        if self.kind is float and not math.isfinite(v):
            raise _Refused
        if self.low is not None and (v <= self.low if self.open_low else v < self.low):
            raise _Refused
        if self.high is not None and (v >= self.high if self.open_high else v > self.high):
            raise _Refused
        return v


@dataclass(frozen=True)
class Options:
    """One of `choices`."""

    choices: tuple[Any, ...]

    def __str__(self) -> str:
        return "one of " + ", ".join(repr(c) for c in self.choices)

    def clean(self, value: Any) -> Any:
        try:
            if value in self.choices:
                return value
        except TypeError:  # an unhashable or uncomparable value
            pass
        raise _Refused


@dataclass(frozen=True)
class _Kind:
    """A constraint on the kind of a value only: `PATH`, `NAME`, `NAMES`, `STRING`, `FLAG`, `TABLE`."""

    text: str
    clean: Callable[[Any], Any]

    def __str__(self) -> str:
        return self.text


def _path(value: Any) -> str:
    """A str or an `os.PathLike` (what a Python user passes for a path), as a str."""
    path = os.fspath(value) if isinstance(value, (str, os.PathLike)) else None
    if not isinstance(path, str) or not path.strip():
        raise _Refused
    return path


def _name(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _Refused
    return value


def _names(value: Any) -> tuple[str, ...]:
    """Names as a list, or comma-separated as the command line takes them ("a,b"); a str is never
    iterated letter by letter."""
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) and v.strip() for v in value):
        raise _Refused
    return tuple(value)


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise _Refused
    return value


def _flag(value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise _Refused
    return bool(value)


def _table(value: Any) -> dict[Any, Any]:
    if not isinstance(value, Mapping):
        raise _Refused
    return dict(value)


def _campaign(value: Any) -> Any:
    """A loaded campaign (`searcher.campaign.CampaignResult`, told by its name: this module imports no layer above it)."""
    if not any(c.__name__ == "CampaignResult" for c in type(value).__mro__):
        raise _Refused
    return value


PATH = _Kind("a path (a str or os.PathLike)", _path)
CAMPAIGN = _Kind("a loaded campaign (CampaignResult)", _campaign)
NAME = _Kind("a name (a non-empty string)", _name)
NAMES = _Kind("names (a list of strings, or one string of them separated by commas)", _names)
STRING = _Kind("a string", _string)
FLAG = _Kind("True or False", _flag)
TABLE = _Kind("a table of NAME = VALUE", _table)


@dataclass(frozen=True)
class ListOf:
    """A list or tuple of values that each meet `item` (None items allowed with `none`), at least
    `min_len` of them; a str is refused, never iterated letter by letter."""

    item: Interval | Options | _Kind
    none: bool = False
    min_len: int = 0

    def __str__(self) -> str:
        least = f"at least {self.min_len} " if self.min_len else ""
        return f"a list of {least}values each {self.item}{' or None' if self.none else ''}"

    def clean(self, value: Any) -> tuple[Any, ...]:
        if not isinstance(value, (list, tuple, range, np.ndarray)) or len(value) < self.min_len:
            raise _Refused
        return tuple(None if v is None and self.none else self.item.clean(v) for v in value)


Constraint = Interval | Options | _Kind | ListOf | None


def check_params(values: Mapping[str, Any], constraints: Mapping[str, Sequence[Constraint]], *, what: str = "option",
                 owner: str | None = None) -> dict[str, Any]:
    """`values` checked against `constraints` (name -> what the value may be; None in the list
    allows None), cleaned (a path as a str, names as a tuple, a Mapping as a dict); names without
    constraints pass unchanged. The error names the first bad value and everything it may be."""
    out = dict(values)
    for name, allowed in constraints.items():
        if name in out:
            out[name] = _check(name, out[name], allowed, what=what, owner=owner)
    return out


def _check(name: str, value: Any, allowed: Sequence[Constraint], *, what: str, owner: str | None) -> Any:
    for constraint in allowed:
        if constraint is None:
            if value is None:
                return None
            continue
        try:
            return constraint.clean(value)
        except _Refused:
            pass
    expect = " or ".join("None" if c is None else str(c) for c in allowed)
    raise invalid(name, expect, value, what=what, owner=owner)


def check_int(name: str, value: Any, low: int | None = None, high: int | None = None, *, what: str = "option",
              owner: str | None = None) -> int:
    """`value` as an int in `[low, high]` (either bound optional)."""
    return _check(name, value, [Interval(int, low, high)], what=what, owner=owner)


def check_number(name: str, value: Any, low: float = -math.inf, high: float = math.inf, *, open_low: bool = False,
                 open_high: bool = False, what: str = "option", owner: str | None = None) -> float:
    """`value` as a finite float in `[low, high]`; `open_low` / `open_high` exclude a bound."""
    interval = Interval(float, None if math.isinf(low) else low, None if math.isinf(high) else high, open_low, open_high)
    return _check(name, value, [interval], what=what, owner=owner)


def check_flag(name: str, value: Any, owner: str | None = None) -> bool:
    """A yes/no option: a bool, or the words true/false as `--strategy-option KEY=VALUE` passes them."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise invalid(name, "True or False", value, owner=owner)


def check_choice(name: str, value: Any, choices: Sequence[Any], *, what: str = "option", owner: str | None = None) -> Any:
    """`value` if it is one of `choices`, else an error listing them."""
    return _check(name, value, [Options(tuple(choices))], what=what, owner=owner)


def check_names(names: Iterable[str] | str, valid: Sequence[str], *, what: str = "attribute", flag: str | None = None) -> list[str]:
    """Names (a list, or a comma-separated string) that must each be one of `valid`; the error
    names the first unknown one, suggests the closest valid name, and lists them all."""
    given = [n.strip() for n in names.split(",")] if isinstance(names, str) else [str(n).strip() for n in names]
    given = [n for n in given if n]
    unknown = [n for n in given if n not in valid]
    if unknown:
        close = difflib.get_close_matches(unknown[0], list(valid), n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        where = f" in {flag}" if flag else ""
        raise ParameterError(f"Unknown {what}(s) {unknown}{where}. Valid {what}s: {', '.join(valid)}.{hint}")
    return given


_COUNT, _SEEDS = [Interval(int, 1)], [ListOf(Interval(int, 0, SEED_MAX), min_len=1)]

#: what each public entry point's arguments may be: their kinds and ranges, where the entry point
#: does not check them itself (its own checks name the command-line flag, e.g. "-n", and which
#: names are valid); `checked(name)` applies one
ENTRY_POINTS: dict[str, dict[str, list[Constraint]]] = {
    "load_campaign": {"directory": [PATH]},
    "compare": {"out": [PATH], "generator": [NAME], "target": [NAME], "strategies": [NAMES], "seeds": _SEEDS,
                "alphas": [ListOf(Interval(float, 0.0, 1.0), none=True, min_len=1)], "budget": _COUNT, "batch": _COUNT,
                "parallel": [Interval(int, 1, MAX_WORKERS)], "progress": [FLAG], "modes": _COUNT},
    "run_transects": {"target": [NAME], "generator": [NAME], "attributes": [NAMES], "size": [None, STRING, ListOf(Interval(int, 1))],
                      "out": [PATH], "orthogonalise": [FLAG], "fit_on": [NAME], "hold": [NAMES], "steps": [None, TABLE],
                      "binary": [None, TABLE], "ambiguous": [None, TABLE], "max_drift": [None, TABLE], "target_options": [None, TABLE],
                      "truth_column": [None, NAME], "cut": [None, Interval(float)], "progress": [FLAG]},
    "analyze": {"directory": [PATH], "out": [None, PATH], "attributes": [None, NAMES], "biased": [FLAG], "keep_pruned": [FLAG]},
    "export": {"source": [PATH], "out": [PATH], "limit": [None, Interval(int, 1)], "spread": [FLAG], "band": [Interval(float, 0.0)],
               "overwrite": [FLAG], "balance_labels": [FLAG]},
    "retrain": {"target": [None, NAME], "hard": [None, PATH], "seeds": [ListOf(Interval(int), min_len=1)], "out": [PATH],
                "arms": [NAMES], "upweighted": [NAME], "budget": _COUNT, "strategy": [NAME], "train_n": [None, Interval(int, 1)],
                "epochs": [None, Interval(int, 1)], "test_n": _COUNT, "progress": [FLAG]},
    "fix": {"target": [NAME], "generator": [NAME], "out": [PATH], "budget": _COUNT, "strategy": [NAME],
            "seed": [Interval(int, 0, SEED_MAX)], "confirm_budget": [None, Interval(int, 1)], "n": _COUNT, "seeds": _SEEDS,
            "arms": [NAMES], "weights": [ListOf(Interval(int, 1), min_len=1)], "upweighted": [NAME], "min_failures": _COUNT,
            "depth": [Interval(int, 1, 10)],
            "train_n": [None, Interval(int, 1)], "epochs": [None, Interval(int, 1)], "test_n": _COUNT, "progress": [FLAG]},
    "explain": {"run": [PATH, CAMPAIGN], "min_failures": _COUNT, "depth": [Interval(int, 1, 10)]},
    "confirm": {"run": [PATH], "budget": _COUNT, "min_failures": _COUNT, "depth": [Interval(int, 1, 10)], "progress": [FLAG]},
    "probe": {"run": [PATH], "budget": _COUNT, "starts": _COUNT, "steps": [Interval(int, 1, 20)], "min_failures": _COUNT,
              "depth": [Interval(int, 1, 10)], "progress": [FLAG]},
    "report": {"directory": [PATH], "out": [None, PATH], "limit": _COUNT, "n_boot": [Interval(int, 0)], "seed": [Interval(int, 0)],
               "retrain": [None, PATH]},
    "verify": {"out": [PATH], "generator": [NAME], "vary": [NAMES], "target": [NAME], "target_options": [None, TABLE],
               "progress": [FLAG]},
    "bench": {"out": [PATH], "strategies": [NAMES], "under": [NAME], "strategy_options": [None, TABLE], "progress": [FLAG]},
    "annotate.app": {"directory": [PATH], "attributes": [NAMES], "annotator": [NAME], "hosts": [ListOf(NAME, min_len=1)]},
    "annotate.serve": {"directory": [PATH], "attributes": [NAMES], "annotator": [NAME], "host": [NAME],
                       "port": [Interval(int, 0, 65535)]},
}

F = TypeVar("F", bound=Callable[..., Any])


def checked(entry_point: str) -> Callable[[F], F]:
    """Decorates the public function `entry_point` so that its arguments are checked against
    `ENTRY_POINTS[entry_point]` (and passed on cleaned) before its body runs."""
    constraints = ENTRY_POINTS[entry_point]

    def decorate(function: F) -> F:
        signature = inspect.signature(function)
        params = signature.parameters
        takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
        keywords = [n for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if not takes_any:  # an unknown keyword is named with the valid ones, before a missing argument
                check_names(kwargs, keywords, what=f"{entry_point} argument")
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError as exc:
                raise ParameterError(f"{entry_point}: {exc}.") from None
            bound.arguments.update(check_params(bound.arguments, constraints, what="argument", owner=entry_point))
            return function(*bound.args, **bound.kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate
