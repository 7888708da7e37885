"""What hard examples buy when a model is retrained, against the controls McDuff et al. lacked
(`searcher retrain`, `searcher.retrain`).

    retrain("gender-cnn", out="runs/retrain")                     # searches gender-cnn, then five arms x 3 seeds
    retrain("gender-cnn", hard="runs/bo", n=200, seeds=(0, 1, 2))   # failures of a campaign already run
    retrain(recipe=my_recipe, hard="runs/bo")                        # your own model: a TrainingRecipe

McDuff et al. (docs/papers.md#mcduff, "Classifier Retraining") retrained a gender classifier
with 800 failures their search found (81% -> 87%) and compared it with a model trained on
balanced data (92%); they did not add 800 random images, so their gain cannot be told from
"more data". Every seed here trains five arms with one recipe, differing in their data only:

- `base`: the training set the shipped model learnt from (its planted bias included);
- `hard`: base + the first N failures the search found, with their right labels;
- `random`: base + N images drawn at random from the same generator and prior, labelled the
  same way (the control);
- `spread`: base + N failures spread over the failure modes (per-mode quotas);
- `balanced`: a training set of the base's size without the planted correlation (the paper's
  upper reference).

Each model is tested on held-out sets (balanced, and observational PPB-like where the recipe has
one): accuracy, balanced accuracy (mean recall over labels) and the error per subgroup with
Wilson intervals; the spread over seeds is reported beside every mean.
"""

from __future__ import annotations

from searcher.packages import answer_calls
from searcher.retrain.harness import ARMS, RetrainResult, retrain

__all__ = ["ARMS", "RetrainResult", "retrain"]


answer_calls(__name__, retrain)
