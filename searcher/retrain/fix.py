"""The whole loop in one call (`searcher fix`, `searcher.fix`): hunt a trainable target's failures,
explain each failure mode in words, confirm each rule's causes by intervention, retrain with what
the engine built against the random control at equal N, and write the report (issue 70, part 6).

    fix("gender-cnn", out="runs/fix")                       # every step, into runs/fix
    fix("gender-cnn", out="runs/fix")                       # again, after a kill: each step goes on where it stopped

Everything lands in `out`, one directory: the campaign (`campaign.sqlite`, `images/`), its modes in
words (`explain.json`, fix rates added by the confirmation), the confirmation's evaluations
(`confirm/`), the retraining (`retrain/`) and `report.html`. A step whose output is complete is
skipped: the campaign at its budget; explain.json and the confirmation written for this campaign
and these options; retrain/scores.csv for these arguments; the report after all of them. What
each finished step was run with is kept in `out/fix.json`; a step that runs makes every later
step run again, so nothing downstream is older than what it was built from. A step killed midway
resumes on its own terms: the campaign and the confirmation from their stores, the retraining
from the models it had scored (`searcher.retrain.journal`).

It lives beside `retrain` (its last expensive step) rather than in `studies`, because it also
writes the report, a layer above the studies (`tests/test_layout.py`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from searcher.analysis.explain import FILE as EXPLAINED
from searcher.analysis.explain import explain, write_explained
from searcher.campaign import Campaign
from searcher.campaign.loop import run_or_resume, same_campaign
from searcher.campaign.store import Store
from searcher.errors import ParameterError
from searcher.outputs import check_output_dir, write_text
from searcher.retrain.harness import ARMS, UPWEIGHTED, WEIGHTS, retrain, summary_lines, trainable, upweighted_key
from searcher.strategies import DEFAULT_STRATEGY
from searcher.studies.confirm import DEFAULT_BUDGET, confirm, fix_words
from searcher.validation import check_choice, check_names, checked, invalid

__all__ = ["FIX_ARMS", "MANIFEST", "STEPS", "FixResult", "fix"]

FIX_ARMS = tuple(a for a in ARMS if a != "spread")
"""The arms `fix` trains by default: every arm the engine builds from the campaign (hard,
balanced-hard, twins, crossed, crossed-draws, decorrelated, upweight) beside the random controls at equal N (random,
random-upweight), the base and the balanced reference."""
STEPS = ("hunt", "explain", "confirm", "retrain", "report")
MANIFEST = "fix.json"
"""Where, inside `out`, what each finished step was run with is kept."""
RETRAIN = "retrain"
"""The retraining's directory inside `out` (the report reads it there)."""


@dataclass
class FixResult:
    """What `fix` wrote into `out`.

    Attributes:
        out: the directory.
        steps: each step of `STEPS` -> "ran", "skipped" (its output was complete) or "not run: why".
        modes: the records of explain.json (with fix rates once confirmed).
        scores: retrain/scores.csv (arm x seed x test set), None when nothing was retrained.
        report: the report's path.
    """

    out: Path
    steps: dict[str, str] = field(default_factory=dict)
    modes: list[dict[str, Any]] = field(default_factory=list)
    scores: pd.DataFrame | None = None
    report: Path | None = None

    def summary(self, top: int = 3) -> str:
        """A few lines: the largest modes' captions, the best fix rates, the retraining's gains and where the report is."""
        lines = [f"{len(self.modes)} failure modes, {sum(m['failures'] for m in self.modes)} failures"]
        ruled = sorted((m for m in self.modes if m.get("rule")), key=lambda m: -m["failures"])
        lines += [f"  mode {m['mode']} ({m['failures']} failures): {m['caption']}" for m in ruled[:top]]
        fixes = sorted(_best_fixes(self.modes), key=lambda f: -f[0])[:top]
        if fixes:
            lines.append("best fix rates (the share of a mode's failures that pass once one attribute is set back):")
            lines += [line for _, line in fixes]
        if self.scores is not None and not self.scores.empty:
            lines.append("retraining, balanced accuracy gained over the base (mean over seeds):")
            test = ""
            for line in summary_lines(self.scores):
                if not line.startswith(" "):
                    test = line.split(",")[0]
                elif line.strip().startswith("gain over base"):
                    lines.append(f"  {test}: {line.strip()}")
        elif self.steps.get("retrain", "").startswith("not run"):
            lines.append(f"retraining {self.steps['retrain']}")
        if self.report is not None:
            lines.append(f"report: {self.report}")
        return "\n".join(lines)


def _best_fixes(modes: Sequence[dict[str, Any]]) -> list[tuple[float, str]]:
    """Per confirmed mode, its best attribute's fix rate and a line saying it beside the control's."""
    out = []
    for m in modes:
        words = list(zip(fix_words(m), (m.get("fix_rates") or {}).values()))
        causes = [(rate[0], w) for w, rate in words if not w.control]
        if not causes:
            continue
        rate, best = max(causes, key=lambda c: c[0])
        control = next((w for w, _ in words if w.control), None)
        against = f"; control {control.attribute} {control.setting}: {control.rate}" if control else ""
        out.append((rate, f"  mode {m['mode']}: {best.attribute} {best.setting}: {best.rate} pass{against}"))
    return out


class _Manifest:
    """`out/fix.json`: step -> the key it finished with. Starting a step forgets it and every later step."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.records: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            self.records = {}

    def done(self, step: str, key: dict[str, Any]) -> bool:
        return self.records.get(step) == json.loads(json.dumps(key))

    def start(self, step: str) -> dict[str, Any]:
        """Forgets `step` and every later step (before it writes anything); returns the records as they were."""
        before, later = dict(self.records), STEPS[STEPS.index(step):]
        if any(s in self.records for s in later):
            self.records = {s: k for s, k in self.records.items() if s not in later}
            self._save()
        return before

    def restore(self, records: dict[str, Any]) -> None:
        if records != self.records:
            self.records = records
            self._save()

    def finish(self, step: str, key: dict[str, Any]) -> None:
        self.records[step] = json.loads(json.dumps(key))
        self._save()

    def _save(self) -> None:
        write_text(self.path, json.dumps(self.records, indent=1) + "\n")


def _stored(out: Path) -> tuple[dict[str, Any] | None, int]:
    """The configuration of the campaign stored in `out` (None when none is) and its committed evaluations."""
    if not (out / "campaign.sqlite").is_file():
        return None, 0
    store = Store(out, readonly=True)
    try:
        return store.config, sum(size for _, size, _ in store.steps())
    finally:
        store.close()


@checked("fix")
def fix(
    target: str = "gender-cnn",
    *,
    generator: str = "faces",
    out: str | Path = "runs/fix",
    budget: int = 1000,
    strategy: str = DEFAULT_STRATEGY,
    seed: int = 0,
    confirm_budget: int | None = None,
    n: int = 500,
    seeds: Sequence[int] = (0, 1, 2),
    arms: Sequence[str] = FIX_ARMS,
    weights: Sequence[int] = WEIGHTS,
    upweighted: str = "hard",
    min_failures: int = 10,
    depth: int = 3,
    train_n: int | None = None,
    epochs: int | None = None,
    test_n: int = 2000,
    progress: bool = False,
    log: Callable[[str], Any] | None = None,
) -> FixResult:
    """Hunts `target`'s failures, explains and confirms them, retrains and reports, into `out`,
    each step skipped when its output is complete (see the module docstring).

    Args:
        target: a trainable target (gender-cnn, smile-cnn), checked before anything is searched.
        generator, budget, strategy, seed: the campaign (`searcher.Campaign`).
        confirm_budget: evaluations the confirmation may spend (default `confirm.DEFAULT_BUDGET`).
        min_failures, depth: the modes given a rule and the trees' depth (`searcher.explain`).
        n, seeds, arms, weights, upweighted, train_n, epochs, test_n: the retraining (`searcher.retrain`).
        progress: progress bars for the hunt, the confirmation and the retraining.
        log: called with one line as each step starts or is skipped (default: stderr under
            `progress`, else nowhere).

    Raises:
        ParameterError: a bad argument (naming it and what is valid), before anything is written;
            or a step refused (a campaign or confirmation stored in `out` with other settings).
    """
    import generators
    from searcher.strategies import STRATEGIES

    check_choice("generator", generator, generators.available(), what="argument", owner="fix")
    check_choice("strategy", strategy, STRATEGIES.available(), what="argument", owner="fix")
    arms = check_names(arms, ARMS, what="arm", flag="--arms")
    check_choice("--upweighted", upweighted, UPWEIGHTED)
    if not arms:
        raise ParameterError(f"fix needs at least one arm to retrain. Valid arms: {', '.join(ARMS)}.")
    if log is not None and not callable(log):
        raise invalid("log", "a function taking one line of text, or None", log, what="argument", owner="fix")
    confirm_budget = DEFAULT_BUDGET if confirm_budget is None else confirm_budget
    campaign = Campaign(generator=generator, target=target, strategy=strategy, budget=budget, seed=seed, out=str(out))
    check_output_dir(out, command="searcher fix")
    trainable(target)
    out = Path(out)

    def say(line: str) -> None:
        if log is not None:
            log(line)
        elif progress:
            from tqdm import tqdm

            tqdm.write(line, file=sys.stderr)

    result = FixResult(out)
    manifest = _Manifest(out / MANIFEST)

    def step(name: str, key: dict[str, Any] | None, complete: bool, doing: str, output: Path, work: Callable[[], Any]) -> None:
        """Skips step `name` when `complete` and finished with `key`, else runs `work` (forgetting every later step first)."""
        if complete and (key is None or manifest.done(name, key)):
            say(f"{name}: skipped, {output} is complete")
            result.steps[name] = "skipped"
            return
        say(f"{name}: {doing} -> {output}")
        before = manifest.start(name)
        try:
            work()
        except ParameterError:  # a refusal, before the step's output was written: what had finished stays finished
            manifest.restore(before)
            raise
        if key is not None:
            manifest.finish(name, key)
        result.steps[name] = "ran"

    stored, done = _stored(out)
    hunted = stored is not None and done >= budget and stored.get("budget") == budget and same_campaign(stored, campaign)
    step("hunt", None, hunted, f"{'resuming at' if done else 'searching'} {done}/{budget} evaluations, {strategy} vs {target}",
         out / "campaign.sqlite", lambda: run_or_resume(campaign, progress=progress, desc=f"{strategy} vs {target}"))
    stored, done = _stored(out)
    campaign_state = {"evaluations": done, "config": {k: v for k, v in (stored or {}).items() if k != "out"}}

    explained = out / EXPLAINED
    step("explain", {"campaign": campaign_state, "min_failures": min_failures, "depth": depth}, explained.is_file(),
         "each failure mode in words", explained,
         lambda: write_explained(out, explain(out, min_failures=min_failures, depth=depth)))
    step("confirm", {"budget": confirm_budget, "min_failures": min_failures, "depth": depth}, explained.is_file(),
         f"each rule's causes set back on its failures, at most {confirm_budget} evaluations (stored in {out / 'confirm'})", explained,
         lambda: write_explained(out, confirm(out, budget=confirm_budget, min_failures=min_failures, depth=depth, progress=progress)))
    result.modes = json.loads(explained.read_text(encoding="utf-8"))

    scores = out / RETRAIN / "scores.csv"
    if sum(m["failures"] for m in result.modes):
        key = {"target": target, "n": n, "seeds": seeds, "arms": arms, "weights": weights, "train_n": train_n, "epochs": epochs,
               "test_n": test_n, **upweighted_key(upweighted)}
        step("retrain", key, scores.is_file(), f"{len(arms)} arms x {len(seeds)} seeds, {n} images added per arm", scores,
             lambda: retrain(target, hard=out, n=n, seeds=seeds, arms=arms, weights=weights, upweighted=upweighted, out=out / RETRAIN,
                             train_n=train_n, epochs=epochs, test_n=test_n, progress=progress))
        result.scores = pd.read_csv(scores)
    else:
        say("retrain: not run, the campaign found no failures to add")
        manifest.start("retrain")
        result.steps["retrain"] = "not run: the campaign found no failures to add"

    from searcher.report import report

    result.report = out / "report.html"
    step("report", {}, result.report.is_file(), "one HTML page of it all", result.report, lambda: report(out))
    return result
