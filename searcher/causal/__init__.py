"""Causal estimators: what causes a classifier's failures, with intervals.

Every estimator is a function of a pandas DataFrame (or of arrays), validates its input (a
`ParameterError`, also a `ValueError`, that names the bad column, shape or value and what would be
valid, so bad input to `searcher analyze` is a one-line error, never a traceback), and reports an
interval with each number.

Subgroups and effects (Balakrishnan et al., docs/papers.md#balakrishnan)
    `subgroup_error_rates`  E_j^s of eq. (1) per group or intersection (Fig. 13), Wilson intervals
    `ate`                   E_j^1 - E_j^0, Newcombe's hybrid score interval
    `logistic_effects`      L2 logistic regression of the error on covariates, bootstrap std (eq. 2, Fig. 15)
    `one_hot_bins`          continuous attribute -> 0/1 indicator columns
    `wilson_interval`, `newcombe_interval`  the intervals themselves

Counterfactual sensitivity (Denton et al., docs/papers.md#denton)
    `score_sensitivity`           eq. (3) over a lambda sweep, optionally near the boundary
    `classification_sensitivity`  eq. (6) and the flip rates S^{0->1}, S^{1->0}
    `interpolation_codes`, `interpolation_check`  the interpolation sanity check of Sec. 5

Bias amplification (Wang and Russakovsky, docs/papers.md#wang)
    `bias_amp`               BiasAmp-> of eq. (6), direction "AT" or "TA", per pair, bootstrap intervals
    `bias_amp_mals`          BiasAmp_MALS of eq. (1)
    `calibrated_predictions` the calibrated threshold of Sec. 3.3

Face verification (docs/papers.md#liang)
    `verification_rates`, `threshold_at_fmr`, `fnmr_at_threshold`, `identity_distance_effects`

Search-aware rates
    Trials chosen by an adaptive search (Bayesian optimisation) over-sample failures on purpose.
    `subgroup_error_rates` and `ate` refuse rows whose `strategy` column is outside
    `UNIFORM_STRATEGIES` ("random", "sobol", "audit") unless `allow_biased=True`;
    `uniform_audit_rates` additionally requires the column.
"""

from searcher.causal._biasamp import (
    BiasAmpResult,
    bias_amp,
    bias_amp_mals,
    calibrated_predictions,
)
from searcher.causal._checks import UNIFORM_STRATEGIES
from searcher.causal._intervals import newcombe_interval, wilson_interval
from searcher.causal._regression import logistic_effects
from searcher.causal._sensitivity import (
    NEAR_BOUNDARY,
    classification_sensitivity,
    interpolation_check,
    interpolation_codes,
    score_sensitivity,
)
from searcher.causal._subgroups import (
    TreatmentEffect,
    ate,
    one_hot_bins,
    subgroup_error_rates,
    uniform_audit_rates,
)
from searcher.causal._verification import (
    FMRThreshold,
    fnmr_at_threshold,
    identity_distance_effects,
    threshold_at_fmr,
    verification_rates,
)

__all__ = [
    "NEAR_BOUNDARY",
    "UNIFORM_STRATEGIES",
    "BiasAmpResult",
    "FMRThreshold",
    "TreatmentEffect",
    "ate",
    "bias_amp",
    "bias_amp_mals",
    "calibrated_predictions",
    "classification_sensitivity",
    "fnmr_at_threshold",
    "identity_distance_effects",
    "interpolation_check",
    "interpolation_codes",
    "logistic_effects",
    "newcombe_interval",
    "one_hot_bins",
    "score_sensitivity",
    "subgroup_error_rates",
    "threshold_at_fmr",
    "uniform_audit_rates",
    "verification_rates",
    "wilson_interval",
]
