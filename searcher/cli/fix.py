"""`searcher fix`: hunt, explain, confirm, retrain and report in one command that resumes."""

from __future__ import annotations

import argparse

from searcher.cli.args import number_list, seed_list
from searcher.strategies import DEFAULT_STRATEGY

HELP = "the whole loop in one command: hunt a trainable target's failures, explain, confirm, retrain against the random control, report"
DESCRIPTION = ("Runs every step into OUT, one directory: a campaign of the target (searcher hunt), each failure mode in "
               "words (OUT/explain.json, searcher explain), each rule's causes confirmed by intervention (OUT/confirm/, the "
               "fix rates added to explain.json), the target retrained with the sets the engine builds from the failures "
               "beside the random control at equal N (OUT/retrain/, searcher retrain), and OUT/report.html. A step whose "
               "output is complete is skipped, and a step that was stopped goes on where it stopped: run the same command "
               "again after Ctrl-C or a crash. Prints which step runs and which is skipped, and at the end the largest "
               "modes' captions, the best fix rates, the retraining's gains and where the report is. Trainable targets: "
               "gender-cnn, smile-cnn.")


def resume_hint(args: argparse.Namespace) -> str:
    """What to type after Ctrl-C."""
    return (f"Every finished step is kept in {args.out} and the stopped one resumes: run the same command again "
            "(with the same options; fix.json records what each step ran with).")


def add_arguments(p: argparse.ArgumentParser) -> None:
    from searcher.retrain.fix import FIX_ARMS
    from searcher.retrain.harness import ARMS, UPWEIGHTED, WEIGHTS
    from searcher.studies.confirm import DEFAULT_BUDGET

    p.add_argument("--target", default="gender-cnn", help="a trainable target: gender-cnn (default) or smile-cnn")
    p.add_argument("--generator", default="faces", help="the generator the campaign searches (default: faces)")
    p.add_argument("--budget", type=int, default=1000, help="evaluations of the campaign (default: 1000)")
    p.add_argument("--strategy", default=DEFAULT_STRATEGY, help=f"strategy of the campaign (default: {DEFAULT_STRATEGY})")
    p.add_argument("--seed", type=int, default=0, help="seed of the campaign (default: 0)")
    p.add_argument("--confirm-budget", type=int, default=None, metavar="N",
                   help=f"evaluations the confirmation may spend, resumes included (default: {DEFAULT_BUDGET})")
    p.add_argument("--min-failures", type=int, default=10, help="modes with fewer failures get no rule (default: 10)")
    p.add_argument("--depth", type=int, default=3, help="depth of each mode's decision tree, 1 to 10 (default: 3)")
    p.add_argument("-n", type=int, default=500, help="images each added arm adds, fewer if the search found fewer (default: 500)")
    p.add_argument("--seeds", default="3", help="training seeds: a count (3 -> seeds 0..2) or a comma-separated list (3, -> seed 3 "
                   "alone) (default: 3)")
    p.add_argument("--arms", default=",".join(FIX_ARMS), help=f"comma-separated, of {', '.join(ARMS)} (default: {','.join(FIX_ARMS)})")
    p.add_argument("--weights", default=",".join(map(str, WEIGHTS)), help="the weights upweight chooses from on a validation split "
                   f"(default: {','.join(map(str, WEIGHTS))})")
    p.add_argument("--upweighted", default="hard", help=f"the added set upweight weighs, one of {', '.join(UPWEIGHTED)} "
                   "(default: hard)")
    p.add_argument("--train-n", type=int, default=None, help="training images per set (default: the target's recipe)")
    p.add_argument("--epochs", type=int, default=None, help="training passes (default: the target's recipe)")
    p.add_argument("--test-n", type=int, default=2000, help="images per held-out test set (default: 2000)")
    p.add_argument("--out", default="runs/fix", help="output directory, and where a stopped run resumes (default: runs/fix)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")


def run(args: argparse.Namespace) -> int:
    from searcher.retrain.fix import fix

    result = fix(args.target, generator=args.generator, out=args.out, budget=args.budget, strategy=args.strategy, seed=args.seed,
                 confirm_budget=args.confirm_budget, min_failures=args.min_failures, depth=args.depth, n=args.n,
                 seeds=seed_list(args.seeds), arms=args.arms, weights=number_list(args.weights, int, "--weights"),
                 upweighted=args.upweighted,
                 train_n=args.train_n, epochs=args.epochs, test_n=args.test_n, progress=not args.no_progress,
                 log=lambda line: print(line, flush=True))
    print(result.summary())
    return 0
