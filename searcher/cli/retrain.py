"""`searcher retrain`: what hard examples buy when a model is retrained, against random images and balanced data."""

from __future__ import annotations

import argparse

from searcher.cli.args import number_list, seed_list
from searcher.outputs import check_output_dir
from searcher.strategies import DEFAULT_STRATEGY

HELP = "retrain a model with the failures a search found, against random images and balanced data"
DESCRIPTION = ("For each seed, trains arms with the target's own recipe, by default five: the base model; + N failures found by a "
               "search; + N random images from the same prior (the control McDuff et al. lacked); + N failures spread over the "
               "failure modes; and a model trained on balanced data. More arms, each adding N images built from the campaign's "
               "failures and causes: balanced-hard, twins (each failure with its label flipped, all else held), crossed (the "
               "twins with the mode's confirmed cause set back too), crossed-draws (the same pairs, everything else drawn afresh), decorrelated "
               "(draws inside each mode, its causes independent of the label), upweight (the hard images, or --upweighted's set, with one weight chosen "
               "on a validation split, as Just Train Twice) and random-upweight (its control). Tests each on held-out balanced (and PPB-like) sets: balanced "
               "accuracy with the spread over seeds, and the error per subgroup with Wilson intervals (summary.md, scores.csv, "
               "groups.csv, retraining.png). Trainable targets: gender-cnn, smile-cnn, glasses-cnn; your own model through the Python API.")


def resume_hint(args: argparse.Namespace) -> str:
    """What to type after Ctrl-C."""
    return ("The search is stored in OUT/search and resumes, and the models already scored are kept: the same command "
            "again trains only the others.")


def add_arguments(p: argparse.ArgumentParser) -> None:
    from searcher.retrain.harness import ARMS, DEFAULT_ARMS, UPWEIGHTED, WEIGHTS

    p.add_argument("--target", default="gender-cnn", help="a trainable target: gender-cnn (default) or smile-cnn")
    p.add_argument("--hard", metavar="DIR", help="a campaign or comparison whose failures are added (default: search the target, in OUT/search)")
    p.add_argument("-n", type=int, default=500, help="images each added arm adds, fewer if the search found fewer (default: 500)")
    p.add_argument("--seeds", default="3", help="a count (3 -> seeds 0..2) or a comma-separated list (3, -> seed 3 alone) (default: 3)")
    p.add_argument("--arms", default=",".join(DEFAULT_ARMS), help=f"comma-separated, of {', '.join(ARMS)} "
                   f"(default: {','.join(DEFAULT_ARMS)})")
    p.add_argument("--weights", default=",".join(map(str, WEIGHTS)), help="the weights upweight chooses from on a validation split "
                   f"(default: {','.join(map(str, WEIGHTS))})")
    p.add_argument("--upweighted", default="hard", help=f"the added set upweight weighs, one of {', '.join(UPWEIGHTED)}; "
                   "random-upweight weighs the random images the same (default: hard)")
    p.add_argument("--budget", type=int, default=1000, help="evaluations of the search, without --hard (default: 1000)")
    p.add_argument("--strategy", default=DEFAULT_STRATEGY, help=f"strategy of the search, without --hard (default: {DEFAULT_STRATEGY})")
    p.add_argument("--train-n", type=int, default=None, help="training images per set (default: the target's recipe)")
    p.add_argument("--epochs", type=int, default=None, help="training passes (default: the target's recipe)")
    p.add_argument("--test-n", type=int, default=2000, help="images per held-out test set (default: 2000)")
    p.add_argument("--out", default="runs/retrain", help="output directory (default: runs/retrain)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")


def run(args: argparse.Namespace) -> int:
    from searcher.retrain import retrain

    check_output_dir(args.out, command="searcher retrain")
    result = retrain(args.target, hard=args.hard, n=args.n, seeds=seed_list(args.seeds), out=args.out,
                     arms=[a.strip() for a in args.arms.split(",") if a.strip()],
                     weights=number_list(args.weights, int, "--weights"), upweighted=args.upweighted, budget=args.budget, strategy=args.strategy,
                     train_n=args.train_n, epochs=args.epochs, test_n=args.test_n, progress=not args.no_progress)
    print(result.summary())
    print(f"written: {args.out}/summary.md, scores.csv, groups.csv, groups_per_seed.csv, retraining.png")
    return 0
