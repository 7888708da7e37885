"""One set of argument checks and one message template, used everywhere.

Every check returns the value in its clean type or raises a `ParameterError` worded as

    The 'budget' option of Campaign must be an integer >= 1. Got 0 instead.

(scikit-learn's template: the name, its owner when known, what would be valid, what was given).
`what` is "option", "parameter" or "argument", or a command-line flag such as "--seeds"; `owner`
names the function, class or command, so the same check serves the library and the CLI.

Example:
    >>> check_int("budget", 400, low=1, owner="Campaign")
    400
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from searcher.errors import ParameterError

__all__ = ["ENV_REFERENCE", "check_choice", "check_flag", "check_int", "check_names", "check_number", "invalid"]

# A secret written as a reference to the environment variable holding it: "env:NAME", or with a
# scheme before it, "Bearer env:NAME" (groups: the scheme or None, the variable's name). What may be
# stored, printed or passed on a command line in place of the secret itself.
ENV_REFERENCE = re.compile(r"^(?:(\S+) )?env:(\w+)$")


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


def check_int(name: str, value: Any, low: int | None = None, high: int | None = None, *, what: str = "option",
              owner: str | None = None) -> int:
    """`value` as an int in `[low, high]` (either bound optional)."""
    if low is not None and high is not None:
        expect = f"an integer in [{low}, {high}]"
    elif low is not None:
        expect = f"an integer >= {low}"
    elif high is not None:
        expect = f"an integer <= {high}"
    else:
        expect = "an integer"
    if not _is_int(value) or (low is not None and value < low) or (high is not None and value > high):
        raise invalid(name, expect, value, what=what, owner=owner)
    return int(value)


def check_number(name: str, value: Any, low: float = -math.inf, high: float = math.inf, *, open_low: bool = False,
                 open_high: bool = False, what: str = "option", owner: str | None = None) -> float:
    """`value` as a finite float in `[low, high]`; `open_low` / `open_high` exclude a bound."""
    if math.isinf(low) and math.isinf(high):
        expect = "a finite number"
    elif math.isinf(high):
        expect = f"a number {'>' if open_low else '>='} {low:g}"
    elif math.isinf(low):
        expect = f"a number {'<' if open_high else '<='} {high:g}"
    else:
        expect = f"a number in {'(' if open_low else '['}{low:g}, {high:g}{')' if open_high else ']'}"
    ok = _is_number(value)
    if ok:
        v = float(value)
        ok = math.isfinite(v) and (low < v if open_low else low <= v) and (v < high if open_high else v <= high)
    if not ok:
        raise invalid(name, expect, value, what=what, owner=owner)
    return v


def check_flag(name: str, value: Any, owner: str | None = None) -> bool:
    """A yes/no option: a bool, or the words true/false as `--strategy-option KEY=VALUE` passes them."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise invalid(name, "True or False", value, owner=owner)


def check_choice(name: str, value: Any, choices: Sequence[Any], *, what: str = "option", owner: str | None = None) -> Any:
    """`value` if it is one of `choices`, else an error listing them."""
    if value not in choices:
        raise invalid(name, "one of " + ", ".join(repr(c) for c in choices), value, what=what, owner=owner)
    return value


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
