"""Parsing of the command-line values every `searcher` command shares: `NAME=VALUE` flags, comma
lists of numbers and of names. Each raises a ParameterError that names the flag and the bad value."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from searcher.errors import ParameterError

__all__ = ["assignments", "merge_tables", "name_list", "number_assignments", "number_list", "seed_list"]


def assignments(items: Sequence[str], flag: str = "--set", tables: bool = False) -> dict[str, Any]:
    """`NAME=VALUE` items -> dict; values that read as integers become ints (`memory=100`), other
    numbers floats, the rest stay strings. With `tables`, `TABLE.NAME=VALUE` sets NAME in the
    table TABLE (`--strategy-option ablation.probe=true` -> `{"ablation": {"probe": "true"}}`)."""
    out: dict[str, Any] = {}
    for item in items:
        name, sep, value = item.partition("=")
        table, dot, key = name.strip().partition(".") if tables and "." in name else ("", "", name.strip())
        if not sep or not key.strip() or not value.strip() or (dot and not table.strip()):
            raise ParameterError(f"{flag} expects NAME=VALUE, got {item!r}.")
        into = out.setdefault(table.strip(), {}) if dot else out
        if not isinstance(into, dict):
            raise ParameterError(f"{flag} {item!r}: {table.strip()} is set to a value already, not a table.")
        for kind in (int, float, str.strip):
            try:
                into[key.strip()] = kind(value)
                break
            except ValueError:
                continue
    return out


def merge_tables(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """`over` laid on `base`, a table in both merged key by key (a TOML file's tables under the flags')."""
    out = dict(base)
    for key, value in over.items():
        out[key] = merge_tables(out[key], value) if isinstance(value, Mapping) and isinstance(out.get(key), Mapping) else value
    return out


def number_assignments(items: Sequence[str], flag: str) -> dict[str, float]:
    """`NAME=NUMBER` items -> dict of floats."""
    out = assignments(items, flag)
    for name, value in out.items():
        if isinstance(value, str):
            raise ParameterError(f"{flag} {name}= expects a number, got {value!r}.")
        out[name] = float(value)
    return out


def number_list(text: str, kind: type, flag: str) -> list:
    """`"1,2,3"` -> `[kind(1), kind(2), kind(3)]`."""
    try:
        return [kind(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ParameterError(f"{flag} expects comma-separated numbers, got {text!r}.") from None


MAX_SEEDS = 10_000
"""The most seeds a count may ask for (`--seeds 3` runs seeds 0..2): each seed is a whole run."""


def seed_list(text: str, flag: str = "--seeds") -> list[int]:
    """A count (`"3"` -> seeds 0, 1, 2) or a comma-separated list of seeds (`"0,4"`; `"3,"` is seed 3 alone)."""
    from searcher.validation import check_int

    if text.strip().isdigit():
        try:
            return list(range(check_int(flag, int(text), 1, MAX_SEEDS)))
        except ParameterError as exc:  # 0, or a count past MAX_SEEDS
            raise ParameterError(f"{exc} A number alone is a count of seeds (3: seeds 0, 1, 2); for one seed alone write it with a "
                                 f"trailing comma ({flag} 0, is seed 0).") from None
    return number_list(text, int, flag)


def name_list(text: str, valid: Sequence[str], flag: str) -> list[str]:
    """`"a,b"` -> `["a", "b"]`, every name one of `valid` (else the error lists them)."""
    names = [a.strip() for a in text.split(",") if a.strip()]
    unknown = [a for a in names if a not in valid]
    if unknown:
        raise ParameterError(f"Unknown attribute(s) {unknown} in {flag}. Valid attributes: {', '.join(valid)}.")
    return names
