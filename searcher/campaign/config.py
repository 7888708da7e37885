"""What a campaign is: a frozen, validated configuration, and the sub-space it searches.

The fields of `CampaignConfig` are the one list of a campaign's settings: `searcher hunt` derives its
flags from them (`help` and `flag` in each field's metadata) and a TOML `--config` file takes the
same keys, so a setting added here is a flag, a TOML key and a stored value at once. The loop
(`loop.py`) adds `run()` to it as `Campaign`; the configuration itself never changes.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from searcher.campaign.executors import EXECUTORS
from searcher.defaults import DEFAULT_BATCH, DEFAULT_BUDGET, MAX_BUDGET, MAX_WORKERS
from searcher.devices import check_device
from searcher.errors import ParameterError
from searcher.objective import LOSSES, ObjectiveSpec
from searcher.space import Space
from searcher.strategies import DEFAULT_STRATEGY, STRATEGIES, upgrade_options
from searcher.validation import ENV_REFERENCE, FLAG, NAME, NAMES, PATH, SEED_MAX, STRING, TABLE, Interval, Options, check_choice, check_names, check_params

__all__ = ["CUBES", "CampaignConfig", "search_space"]

CUBES = ("prior", "box")  # what a point of the unit cube means: prior quantiles, or the raw parameter box


def search_space(space: Space, vary: Sequence[str] | None, fix: Mapping[str, Any] | None,
                 cube: str = "prior") -> tuple[Space, dict[str, Any]]:
    """The sub-space a campaign searches, and the values it holds constant.

    `vary` names the parameters to search (default: all); `fix` pins values (validated); every
    other parameter stays at its default. A latent block is searched whole when `vary` is None
    or names any of its coordinates. `cube` (one of `CUBES`) says what a point of its unit cube
    means: quantiles of the prior, or the raw parameter box.
    """
    check_choice("cube", cube, CUBES)
    fix = dict(fix or {})
    names = {p.name for p in space.params} | set(space.latent.names if space.latent else [])
    for name in [*(vary or []), *fix]:
        if name not in names:
            raise ParameterError(f"Unknown parameter {name!r} in vary/fix. Valid parameters: {', '.join(space.names)}.")
    fixed = space.validate(fix)[0]  # checks the values; fills the rest with defaults
    overlap = sorted(set(vary or []) & set(fix))
    if overlap:
        raise ParameterError(f"A parameter cannot be both varied and fixed: {overlap}.")
    chosen = [p for p in space.params if (vary is None or p.name in vary) and p.name not in fix]
    latent = space.latent
    if latent is not None and (any(n in fix for n in latent.names) or (vary is not None and not set(vary) & set(latent.names))):
        latent = None
    if not chosen and latent is None:
        raise ParameterError("Nothing left to search: vary names no free parameter.")
    sub = Space(chosen, latent, prior_cube=cube == "prior")
    held = {k: v for k, v in fixed.items() if k not in sub.names}
    return sub, held


def _setting(default: Any, help: str, flag: str | None = None, *, valid: list[Any], **extra: Any) -> Any:  # noqa: A002 - argparse's word
    """A campaign field with its command-line help (and flag, when not `--name-with-dashes`) and
    what its value may be (`valid`: constraints of `searcher.validation`, checked by `check_params`)."""
    factory = {"default_factory": default} if callable(default) else {"default": default}
    return field(**factory, metadata={"help": help, "flag": flag, "valid": valid, **extra})


_COUNT = [Interval(int, 1)]


@dataclass(frozen=True)
class CampaignConfig:
    """One failure-hunting campaign's configuration; keywords as the `searcher hunt` flags.

    Args:
        generator, target, strategy: plug-in and strategy names (`searcher list`).
        budget: evaluations in all.
        batch: points proposed and evaluated together.
        overlap: once ten batches are told (`searcher.defaults.OVERLAP_AFTER`), evaluate each batch on a thread
            of its own while the next is proposed: the search then runs one batch behind the
            answers, and a target that waits (a GPU, a remote service) no longer waits for it too
            (strategies whose `overlaps` is True: `random`, `bo-modes`). Torch computes on one
            thread while it runs, so the same seed gives the same campaign. Default off.
        workers: evaluation workers (more than one runs on Ray, so the local executor takes one).
        seed: seeds the strategy and the rendering; in [0, 2**32 - 1], the seeds every strategy's package takes.
        out: the campaign directory (SQLite record and images): a str or a `pathlib.Path`, kept as a str.
        alpha: weight of the diversity term of eq. (4) (BO only; default the strategy's, 0.6).
        vary, fix: search only these parameters / hold these at a value.
        executor: "local" or "ray" (default: ray when workers > 1).
        ray_address: join an existing Ray cluster.
        gpus_per_worker: each Ray worker's share of a GPU, in [0, 1] (Ray's `num_gpus`): 1 holds a
            GPU a worker, 0.25 packs four workers on one. Ray executor only; the cluster must have
            the GPUs, or the campaign is refused before it starts.
        device: where the torch generators and targets run (`searcher.devices`): "auto" (default:
            the GPU where torch sees one, else the CPU), "cpu", "cuda" or "cuda:N". dlib, OpenCV,
            ONNX and HTTP targets run on the CPU and say so when given "cuda". On the CPU the
            results are bit-identical to a run without it. It says where a campaign runs, not what
            it computes: a resume may change it, as it may `gpus_per_worker`.
        generator_options, target_options, strategy_options: passed to the plug-ins.
        truth_column, cut, margin, loss: how a classify target is judged (see searcher.objective).
        audit: fraction of every batch drawn uniformly at random (in the same cube, from its own
            seeded stream) instead of by the strategy, and stored with `source = "audit"`: an
            unbiased sample for population error rates beside an adaptive search, which
            over-samples failures on purpose. The strategy is not told these points. Default 0.
        images: the share of passing trials whose image is kept (failures always keep theirs),
            chosen by a hash of seed, batch and index (`searcher.campaign.loop.keeps_image`), so
            a resume keeps the same ones. Default 1, every image; at 100,000 trials a PNG a trial
            costs about what a 1 ms target does, and 0.01 keeps a uniform sample for galleries.
        cube: "prior" (default): the strategies' unit cube holds quantiles of each parameter's
            everyday prior, so uniform search samples ordinary faces and conditions and failures
            are the rare thing to find; "box": the raw parameter ranges, where most of the volume
            is extreme (uniform blur, noise and yaw) and most faces fail.
        retries: a resumed campaign evaluates again each trial that ended in a target error, at
            most this many times (errors are the service's, not the classifier's: a server that is
            back answers them).
    """

    generator: str = _setting("faces", "generator name (default: faces)", valid=[NAME])
    target: str = _setting("dlib-cnn", "target name (default: dlib-cnn)", valid=[NAME])
    strategy: str = _setting(DEFAULT_STRATEGY, f"{', '.join(STRATEGIES.describe())} (default: {DEFAULT_STRATEGY})", valid=[NAME])
    budget: int = _setting(DEFAULT_BUDGET, f"evaluations in all (default: {DEFAULT_BUDGET})", valid=[Interval(int, 1, MAX_BUDGET)])
    batch: int = _setting(DEFAULT_BATCH, f"points proposed and evaluated together (default: {DEFAULT_BATCH})", valid=_COUNT)
    overlap: bool = _setting(False, "after ten batches, propose the next batch while this one is evaluated, one batch behind the "
                                    "answers: for targets that wait on a GPU or a service (random and bo-modes; default: off)",
                             valid=[FLAG])
    workers: int = _setting(1, "evaluation workers; more than one runs on Ray (default: 1)", valid=[Interval(int, 1, MAX_WORKERS)])
    seed: int = _setting(0, "seed of the strategy and the rendering (default: 0)",
                         valid=[Interval(int, 0, SEED_MAX)])
    out: str | os.PathLike[str] = _setting("runs/campaign", "campaign directory (default: runs/campaign)", valid=[PATH])
    alpha: float | None = _setting(None, "weight of the diversity term, eq. (4) (bo only; default: 0.6)",
                                   valid=[None, Interval(float, 0.0, 1.0)])
    vary: Sequence[str] | None = _setting(None, "comma-separated parameters to search (default: all)", valid=[None, NAMES])
    fix: Mapping[str, Any] = _setting(dict, "hold a parameter at a value (repeatable)", metavar="NAME=VALUE", valid=[TABLE])
    executor: str | None = _setting(None, "local or ray (default: ray when --workers > 1)", choices=EXECUTORS,
                                   valid=[None, Options(EXECUTORS)])
    ray_address: str | None = _setting(None, "join a running Ray cluster (e.g. auto, or ray://host:10001)", valid=[None, NAME])
    gpus_per_worker: float = _setting(0.0, "each Ray worker's share of a GPU, 0 to 1: 1 a GPU each, 0.25 four workers a GPU "
                                           "(default: 0)", metavar="SHARE", valid=[Interval(float, 0.0, 1.0)])
    device: str = _setting("auto", "where the torch generators and targets run: auto (the GPU where there is one, else the "
                                   "CPU), cpu, cuda or cuda:N (default: auto)", metavar="DEVICE", valid=[STRING])
    generator_options: Mapping[str, Any] = _setting(dict, "a generator option (repeatable)", "--generator-option", metavar="KEY=VALUE",
                                                     valid=[TABLE])
    target_options: Mapping[str, Any] = _setting(dict, "a target option (repeatable)", "--option", metavar="KEY=VALUE", valid=[TABLE])
    strategy_options: Mapping[str, Any] = _setting(dict, "a strategy option (repeatable); TABLE.KEY=VALUE sets a key of a table option, "
                                                    "e.g. ablation.probe=true", "--strategy-option", metavar="KEY=VALUE", valid=[TABLE])
    truth_column: str | None = _setting(None, "classify targets: the truth column their label is judged against",
                                          valid=[None, STRING])
    cut: float | None = _setting(None, "classify targets: truth >= cut is the second label", valid=[None, Interval(float)])
    margin: float = _setting(0.1, "classify targets: truth this close to the cut is ambiguous (default: 0.1)",
                             valid=[Interval(float, 0.0, 0.5, open_high=True)])
    loss: str = _setting("zero-one", "classify targets: 0/1 or 1 - p(true label)", choices=LOSSES, valid=[Options(LOSSES)])
    cube: str = _setting("prior", "search prior quantiles (default) or the raw parameter box", choices=CUBES, valid=[Options(CUBES)])
    audit: float = _setting(0.0, "fraction of the budget drawn uniformly at random beside the search, for unbiased "
                                 "error rates (default: 0)", metavar="F",
                           valid=[Interval(float, 0.0, 1.0, open_high=True)])
    images: float = _setting(1.0, "share of passing trials whose image is kept; failures' images always are (default: 1, "
                                  "every image)", metavar="SHARE", valid=[Interval(float, 0.0, 1.0)])
    retries: int = _setting(1, "on --resume, evaluate again each trial that ended in a target error (timeout, HTTP 5xx, bad "
                               "JSON), at most this many times (default: 1; 0: never)", metavar="N", valid=[Interval(int, 0)])

    def __new__(cls, *args: Any, **kwargs: Any) -> CampaignConfig:  # noqa: ARG004 - __init__ takes them
        """Names an unknown keyword and the valid ones, where the dataclass's `__init__` would raise a bare TypeError."""
        check_names(kwargs, [f.name for f in dataclasses.fields(cls)], what=f"{cls.__name__} option")
        return super().__new__(cls)

    def __post_init__(self) -> None:
        owner = type(self).__name__
        given = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        for name, value in check_params(given, {f.name: f.metadata["valid"] for f in dataclasses.fields(self)}, owner=owner).items():
            object.__setattr__(self, name, value)  # cleaned: a path as a str, names as a tuple, tables as dicts
        if self.alpha is not None and "alpha" not in STRATEGIES.options(self.strategy):
            raise ParameterError(f"alpha (the diversity weight of eq. (4) of McDuff et al.) is an option of the 'bo' strategy, and this "
                                 f"campaign's strategy is {self.strategy!r} (the default is {DEFAULT_STRATEGY!r}): add --strategy bo, or leave alpha out.")
        if self.executor == "local" and self.workers != 1:
            raise ParameterError(f"The local executor runs one worker. Got workers={self.workers} instead: use executor "
                                 "'ray' (--executor ray) for more, or workers=1.")
        if self.executor == "local" and self.ray_address is not None:
            raise ParameterError(f"ray_address is where the ray executor runs, and executor is 'local'. Got ray_address="
                                 f"{self.ray_address!r} instead: use executor 'ray', or leave ray_address out.")
        check_device(self.device, owner=owner)  # the form only: whether this machine has it is asked where the plug-ins are built
        self._check_gpus()
        object.__setattr__(self, "strategy_options", upgrade_options(self.strategy, self.strategy_options))  # options that moved since
        headers = self.target_options.get("headers")
        if isinstance(headers, Mapping):
            for name, value in headers.items():
                if not (isinstance(value, str) and ENV_REFERENCE.match(value)):
                    raise ParameterError(f"The header {name!r} in target_options holds a literal value, which the campaign would "
                                         "store in plain text in campaign.sqlite. Put it in an environment variable and write "
                                         "'env:NAME' (or 'Bearer env:NAME').")
        self.spec()  # checks loss and margin

    def _check_gpus(self) -> None:
        """Refuses a `gpus_per_worker` that no Ray worker would hold or use: on the local executor, with
        device 'cpu', or a share below Ray's unit."""
        share = self.gpus_per_worker
        if not share:
            return
        on_ray = self.executor == "ray" or (self.executor is None and (self.workers > 1 or self.ray_address is not None))
        if not on_ray:
            raise ParameterError(f"gpus_per_worker is the GPU share of each Ray worker, and this campaign runs on the local "
                                 f"executor. Got gpus_per_worker={share:g} instead: use executor 'ray' (--executor ray, or "
                                 "--workers 2 and more), or leave it out and place the local run with device (--device cuda).")
        if self.device == "cpu":
            raise ParameterError(f"gpus_per_worker={share:g} reserves GPUs that device 'cpu' leaves unused: use device 'auto' "
                                 "or 'cuda', or leave gpus_per_worker out.")
        if share < 1e-4:
            raise ParameterError(f"The 'gpus_per_worker' option must be 0 or a share of at least 0.0001 (Ray's unit). "
                                 f"Got {share!r} instead.")

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        """The settings a campaign has: its fields, the keys of a TOML `--config`."""
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_dir(cls, directory: str | Path) -> CampaignConfig:
        """The campaign stored in `directory`, to resume it there (wherever it was first run)."""
        from searcher.campaign.store import Store

        path = Path(directory)
        if not (path / "campaign.sqlite").is_file():
            raise ParameterError(f"No campaign to resume at {path} (campaign.sqlite is missing).")
        store = Store(path)
        try:
            config = store.config
        finally:
            store.close()
        if config is None:
            raise ParameterError(f"The campaign at {path} has no configuration stored.")
        return cls.from_stored(config, path)

    @classmethod
    def from_stored(cls, stored: Mapping[str, Any], directory: str | Path) -> CampaignConfig:
        """The configuration `stored` in the campaign at `directory`, checked as a new one is (what
        a resume and `searcher doctor` parse)."""
        settings = {**cls.with_defaults(stored), "out": str(directory)}
        unknown = sorted(set(settings) - set(cls.keys()))
        if unknown:
            raise ParameterError(f"The campaign at {directory} stores settings this version does not know ({', '.join(unknown)}); "
                                 f"`searcher doctor {directory}` says what can be saved.")
        return cls(**settings)

    def strategy_arguments(self) -> dict[str, Any]:
        """The options the strategy is built with: `strategy_options`, and `alpha` where it is set."""
        return {**self.strategy_options, **({"alpha": self.alpha} if self.alpha is not None else {})}

    @classmethod
    def with_defaults(cls, stored: Mapping[str, Any]) -> dict[str, Any]:
        """A stored configuration completed with the defaults of settings added since it was written,
        and with its strategy's options where they are taken now (`upgrade_options`)."""
        defaults = cls().config()
        config = json.loads(json.dumps({**{k: v for k, v in defaults.items() if k not in stored}, **stored}))
        if isinstance(config.get("strategy_options"), Mapping):
            config["strategy_options"] = upgrade_options(config.get("strategy"), config["strategy_options"])
        return config

    def spec(self) -> ObjectiveSpec:
        """The objective's pieces, for any worker to build."""
        return ObjectiveSpec(self.generator, self.target, dict(self.generator_options), dict(self.target_options),
                             self.loss, self.truth_column, self.cut, self.margin, self.device)

    def config(self) -> dict[str, Any]:
        """The JSON-serialisable configuration stored with the campaign."""
        out = dataclasses.asdict(self)
        out["vary"] = list(self.vary) if self.vary is not None else None
        return out
