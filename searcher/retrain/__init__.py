"""What hard examples buy when a model is retrained, against the controls McDuff et al. lacked
(`searcher retrain`, `searcher.retrain`).

    retrain("gender-cnn", out="runs/retrain")                     # searches gender-cnn, then the five default arms x 3 seeds
    retrain("gender-cnn", hard="runs/bo", n=200, seeds=(0, 1, 2))   # failures of a campaign already run
    retrain(recipe=my_recipe, hard="runs/bo")                        # your own model: a TrainingRecipe
    retrain("gender-cnn", hard="runs/bo", arms=["base", "random", "twins", "upweight", "random-upweight"])

McDuff et al. (docs/papers.md#mcduff, "Classifier Retraining") retrained a gender classifier
with 800 failures their search found (81% -> 87%) and compared it with a model trained on
balanced data (92%); they did not add 800 random images, so their gain cannot be told from
"more data". Every seed here trains each arm with one recipe, the arms differing in their data
only, every added arm adding the same N images:

- `base`: the training set the shipped model learnt from (its planted bias included);
- `hard`: base + the first N failures the search found, with their right labels;
- `random`: base + N images drawn at random from the same generator and prior, labelled the
  same way (the control);
- `spread`: base + N failures spread over the failure modes (per-mode quotas);
- `balanced-hard`, `twins`, `crossed`, `crossed-draws`, `decorrelated`: base + N images built
  from the campaign's failures, modes and causes (`searcher.export.recipes`: label-balanced
  failures; each failure with its counterfactual twin, the label flipped and everything else
  held; the same with the mode's confirmed cause set back too, so both twins cross the shortcut;
  those pairs drawn afresh over the whole space; draws inside each mode with its causes
  independent of the label, after Jain et al., ICLR 2023);
- `upweight`: base + the hard images (or the set `upweighted=` names), each with one weight w
  (repeated w times), w chosen from `weights` on a validation split of the training
  distribution, never a test set, as Just Train Twice (Liu et al., ICML 2021) chooses its
  upweighting; `random-upweight`: the random images with the same w, its control;
- `balanced`: a training set of the base's size without the planted correlation (the paper's
  upper reference).

`DEFAULT_ARMS` are the first five (base, hard, random, spread, balanced); ask for the others with
`arms=`. Each model is tested on held-out sets (balanced, and observational PPB-like where the
recipe has one): accuracy, balanced accuracy (mean recall over labels) and the error per subgroup
with Wilson intervals, per seed and pooled; the spread over seeds is reported beside every mean.
"""

from __future__ import annotations

from searcher.packages import answer_calls
from searcher.retrain.harness import ARMS, DEFAULT_ARMS, WEIGHTS, RetrainResult, retrain

__all__ = ["ARMS", "DEFAULT_ARMS", "WEIGHTS", "RetrainResult", "retrain"]


answer_calls(__name__, retrain)
