"""`searcher hunt`: search a generator + target for failures and record every evaluation.

Its flags are derived from the fields of `searcher.campaign.Campaign` (name, type, `help` and `flag`
in each field's metadata), so the flags, the TOML keys of `--config` and the stored configuration
are one list.
"""

from __future__ import annotations

import argparse
import dataclasses
import types
import typing
from collections import abc
from pathlib import Path
from typing import Any

from searcher.campaign import Campaign
from searcher.cli.args import assignments, merge_tables
from searcher.errors import ParameterError, SearcherError
from searcher.outputs import check_output_dir

HELP = "search a generator + target for failures and record every evaluation"

DESCRIPTION = ("Search a generator + target for failures (a campaign). Every flag can also come from --config, a TOML "
               "file with the same keys (underscores for dashes); flags win.")


def _flag(f: dataclasses.Field) -> str:
    return f.metadata.get("flag") or "--" + f.name.replace("_", "-")


_HINTS = typing.get_type_hints(Campaign)


def resume_hint(args: argparse.Namespace) -> str:
    """What to type after Ctrl-C (a new campaign stopped before its first trial was stored is removed)."""
    out = args.resume or args.out or Campaign().out
    if not (Path(out) / "campaign.sqlite").exists():
        return "Nothing was stored; the same command starts the campaign again."
    return f"Every finished trial is stored; `searcher hunt --resume {out}` continues."


def _kind(f: dataclasses.Field) -> str:
    """"table" (NAME=VALUE, repeatable), "list" (comma-separated), or a scalar type name."""
    hint = _HINTS[f.name]
    if typing.get_origin(hint) in (typing.Union, types.UnionType):  # X | None
        hint = next(a for a in typing.get_args(hint) if a is not type(None))
    origin = typing.get_origin(hint) or hint
    if origin in (abc.Mapping, dict):
        return "table"
    if origin in (abc.Sequence, list, tuple):
        return "list"
    return hint.__name__


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", metavar="TOML", help="campaign settings as TOML")
    p.add_argument("--resume", metavar="DIR", help="continue the campaign stored in DIR (trials that ended in a target error "
                   "are evaluated again, see --retries); --budget N extends it to N evaluations, --option raises a target's "
                   "spending cap; any other flag is refused")
    for f in dataclasses.fields(Campaign):
        kind, meta = _kind(f), f.metadata
        extra = {k: meta[k] for k in ("choices", "metavar") if k in meta}
        if kind == "table":
            p.add_argument(_flag(f), dest=f.name, action="append", default=[], help=meta["help"], **extra)
        elif kind == "bool":
            p.add_argument(_flag(f), dest=f.name, action="store_const", const=True, default=None, help=meta["help"])
        else:
            p.add_argument(_flag(f), dest=f.name, type={"int": int, "float": float}.get(kind, str), help=meta["help"], **extra)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def config_from(args: argparse.Namespace) -> dict[str, Any]:
    """Campaign keywords from a TOML file (its keys are `Campaign.keys()`), overridden by explicit flags."""
    config: dict[str, Any] = {}
    if args.config:
        import tomllib

        path = Path(args.config)
        if path.exists() and not path.is_file():  # a FIFO would block the read for good, a directory cannot be read
            raise SearcherError(f"--config must be a TOML file. Got {args.config!r} instead, which is not a regular file.")
        try:
            config = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise SearcherError(f"Cannot read the config {args.config!r}: {exc}") from None
        except UnicodeDecodeError as exc:
            raise SearcherError(f"Cannot read the config {args.config!r}: byte {exc.start} is not UTF-8 text, as TOML must be "
                                "(a binary file, or text saved in another encoding?).") from None
        unknown = sorted(set(config) - set(Campaign.keys()))
        if unknown:
            raise SearcherError(f"Unknown key(s) {unknown} in {args.config}. Valid keys: {', '.join(Campaign.keys())}.")
    for f in dataclasses.fields(Campaign):
        value = getattr(args, f.name)
        if _kind(f) == "table":
            if value:
                given = config.get(f.name, {})
                if not isinstance(given, dict):
                    raise SearcherError(f"The {f.name!r} key of {args.config} must be a table of NAME = VALUE, e.g. "
                                        f"{f.name} = {{ yaw = 10 }}. Got {given!r} instead.")
                config[f.name] = merge_tables(given, assignments(value, _flag(f), tables=f.name == "strategy_options"))
        elif value is not None:
            config[f.name] = value
    return config


#: settings a resume may give anew; device and gpus_per_worker say where a campaign runs, not what
#: it computes (one started on a GPU machine goes on on a laptop with --device cpu)
_RESUME_REPLACES = ("budget", "retries", "device", "gpus_per_worker")
#: what a resume may change (target_options: a raised spending cap); the other settings are the stored ones
_RESUME_MAY_SET = (*_RESUME_REPLACES, "target_options")


def _check_resume(args: argparse.Namespace) -> None:
    """Refuse a resume that names no directory (an unset shell variable) or that gives a flag it would ignore."""
    if not args.resume.strip():
        raise ParameterError("--resume was given an empty directory name (an unset shell variable?); nothing was started. "
                             "Give the directory of a stored campaign, e.g. --resume runs/hunt.")
    ignored = ["--config"] if args.config else []
    ignored += [_flag(f) for f in dataclasses.fields(Campaign) if f.name not in _RESUME_MAY_SET and getattr(args, f.name) not in (None, [])]
    if ignored:
        raise ParameterError(f"--resume continues {args.resume} with its stored settings, so {', '.join(ignored)} would be ignored; "
                             "nothing was run. Resume with --budget, --retries, --option (a target's spending cap), --device "
                             "or --gpus-per-worker only, or start a new campaign with another --out.")


def run(args: argparse.Namespace) -> int:
    if args.resume is not None:
        _check_resume(args)
        campaign = Campaign.from_dir(args.resume)
        given = {name: getattr(args, name) for name in _RESUME_REPLACES if getattr(args, name) is not None}
        if given:
            campaign = dataclasses.replace(campaign, **given)
        if args.target_options:  # a raised spending cap; any other change is refused by the resume's check
            campaign = dataclasses.replace(campaign, target_options={**campaign.target_options,
                                                                     **assignments(args.target_options, "--option")})
        print(f"resuming {args.resume}")
    else:
        campaign = Campaign(**config_from(args))
        check_output_dir(campaign.out, command="searcher hunt")
    result = campaign.run(progress=not args.no_progress, resume=bool(args.resume))
    print(result.summary())
    return 0
