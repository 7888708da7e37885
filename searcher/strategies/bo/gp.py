"""The Gaussian process of the BO strategy: RBF kernel with ARD, hyperpriors, capped noise.

McDuff et al. (docs/papers.md#mcduff, section 3) use a GP with an RBF kernel, following Snoek
et al. (2012); here it models the classifier loss `L_c` (bo.py says why not the composite). A 0/1
loss is a few rare spikes on a flat floor, which a bare maximum-likelihood fit reads badly: it
explains the first failures as noise, or drives lengthscales to zero and interpolates needles.
Hence:

- a log-normal prior on each lengthscale (median 0.4 of the unit cube, wide) and a floor of 0.1:
  with dense sampling at the edge of a failure mode the fit otherwise shrinks lengthscales to
  nothing, and the model then knows nothing one step away from its data;
- a gamma prior on the output scale (outputs are standardised);
- a noise level capped at 0.05 of the standardised variance, so a failure is signal.

`fit_ranked_gp` is the model of the `bo-modes` strategy: BoTorch's own defaults (an RBF kernel
whose lengthscale prior grows with the dimension, Hvarfner et al. 2024) on the losses' normal
scores (ranks through the normal quantile function, a Gaussian copula): a continuous loss and a
0/1 loss are modelled alike, and a few extreme values do not set the scale.

`fit_dirichlet_gp` is `bo-modes`'s other model (`likelihood="dirichlet"`), a classification
likelihood for targets that answer 0/1: Milios et al. (2018)'s Dirichlet-based GP classification,
GPyTorch's `DirichletClassificationLikelihood` written out (`dirichlet_targets`): one GP per class
(failed, passed) on the log of a Dirichlet's concentrations, each point's class-of-its-own target
near 0 with little noise and the other class's far below with much, which is exact regression;
`p_fail` is the probability that the failure class's function lies above the other's.

Fitting is exact (Cholesky) maximum a posteriori with L-BFGS-B, warm-started from the
hyperparameters of the previous step (`raw` parameter values, JSON-serialisable and restored
bit for bit), so each step needs a few iterations instead of a cold fit. `bo-modes`'s fit, whose
warm refits run all their iterations, takes the gradient of GPyTorch's marginal likelihood with
respect to the covariance in closed form, `(K^-1 - a a^T) / 2` with `a = K^-1 (y - m)` (Rasmussen
& Williams 2006, eq. 5.9), from one Cholesky inverse, instead of differentiating through the
Cholesky factorisation: the same objective and gradient to rounding, each evaluation 1.7x faster
at 440 points. `bo`'s refits converge in a few evaluations, so its fit keeps GPyTorch's path (and
its runs stay bit for bit what its figures were measured on: rounding moves an unconverged fit).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import gpytorch
import numpy as np
import torch
from botorch.models import SingleTaskGP
from botorch.models.transforms.outcome import Standardize
from botorch.optim.fit import fit_gpytorch_mll_scipy
from gpytorch.constraints import GreaterThan, Interval
from gpytorch.kernels import RBFKernel, ScaleKernel
from gpytorch.likelihoods import GaussianLikelihood
from gpytorch.mlls import ExactMarginalLogLikelihood
from gpytorch.priors import GammaPrior, LogNormalPrior
from linear_operator.utils.cholesky import psd_safe_cholesky
from scipy.stats import norm, rankdata

__all__ = ["ALPHA_EPSILON", "CHOLESKY_LIMIT", "dirichlet_targets", "fit_dirichlet_gp", "fit_gp", "fit_ranked_gp", "normal_scores"]

CHOLESKY_LIMIT = 10_000  # gpytorch switches to (random-probe) conjugate gradients above 800 points by default
_COLD_ITERATIONS = 200
ALPHA_EPSILON = 0.01  # the Dirichlet's concentration on the classes a point is not of (GPyTorch's default)


def _build(X: torch.Tensor, y: torch.Tensor) -> SingleTaskGP:
    kernel = ScaleKernel(
        RBFKernel(
            ard_num_dims=X.shape[-1],
            lengthscale_prior=LogNormalPrior(math.log(0.4), 1.0),
            lengthscale_constraint=GreaterThan(0.1),
        ),
        outputscale_prior=GammaPrior(2.0, 1.0),
    )
    likelihood = GaussianLikelihood(noise_prior=LogNormalPrior(math.log(1e-3), 1.0), noise_constraint=Interval(1e-6, 0.05))
    return SingleTaskGP(X, y, likelihood=likelihood, covar_module=kernel, outcome_transform=Standardize(m=1))


def fit_gp(X: torch.Tensor, y: torch.Tensor, warm: dict[str, Any] | None, iterations: int) -> tuple[SingleTaskGP, dict[str, list[float]]]:
    """MAP fit of the GP to `n x d` inputs and `n` outputs.

    Starts from the `warm` raw parameters if given and runs `iterations` L-BFGS-B steps (0: keep
    them as they are); cold starts run up to 200. Returns the model in eval mode and its raw
    parameters (the next step's `warm`).
    """
    return _fit(_build(X, y.unsqueeze(-1)), warm, iterations, ExactMarginalLogLikelihood)


def normal_scores(y: np.ndarray) -> np.ndarray:
    """The Gaussian copula of `y`: mid-ranks (ties share one) through the normal quantile function."""
    return norm.ppf((rankdata(y) - 0.5) / len(y))


def fit_ranked_gp(X: torch.Tensor, z: torch.Tensor, warm: dict[str, Any] | None, iterations: int) -> tuple[SingleTaskGP, dict[str, list[float]]]:
    """`fit_gp` with BoTorch's default model (dimension-scaled lengthscale prior) on normal scores `z`,
    the likelihood's gradient in closed form (`_ExactMLL`)."""
    return _fit(SingleTaskGP(X, z.unsqueeze(-1)), warm, iterations, _ExactMLL)


def dirichlet_targets(failed: np.ndarray, alpha_epsilon: float = ALPHA_EPSILON) -> tuple[np.ndarray, np.ndarray]:
    """Per point and class (columns: passed, failed), the regression target and its noise variance of
    Dirichlet-based classification (Milios et al. 2018, as GPyTorch's `DirichletClassificationLikelihood`):
    concentration `alpha` = 1 + `alpha_epsilon` on the point's class and `alpha_epsilon` on the
    other, noise `log(1 / alpha + 1)`, target `log(alpha) - noise / 2` (the log-normal that matches
    the Gamma's moments). Written out because GPyTorch's counts the classes from the labels, and a
    fit before the first failure (a graded loss, or a truth cut's evidence) has labels of one class."""
    one_hot = np.stack([~failed, failed], axis=1).astype(float)
    alpha = alpha_epsilon + one_hot
    noise = np.log1p(1.0 / alpha)
    return np.log(alpha) - 0.5 * noise, noise


def fit_dirichlet_gp(X: torch.Tensor, failed: torch.Tensor, warm: dict[str, Any] | None, iterations: int) -> tuple[SingleTaskGP, dict[str, list[float]]]:
    """`fit_ranked_gp`'s model, one independent GP per class (outputs: passed, failed), on the
    `dirichlet_targets` of the boolean `failed` with their noise fixed."""
    y, noise = dirichlet_targets(failed.numpy().astype(bool))
    return _fit(SingleTaskGP(X, torch.tensor(y, dtype=X.dtype), train_Yvar=torch.tensor(noise, dtype=X.dtype)), warm, iterations, _ExactMLL)


def _fit(model: SingleTaskGP, warm: dict[str, Any] | None, iterations: int,
         objective: type[ExactMarginalLogLikelihood]) -> tuple[SingleTaskGP, dict[str, list[float]]]:
    if warm:
        with torch.no_grad():
            for name, param in model.named_parameters():
                if name in warm:
                    param.copy_(torch.tensor(warm[name], dtype=param.dtype).reshape(param.shape))
    mll = objective(model.likelihood, model)
    mll.train()
    iterations = iterations if warm else _COLD_ITERATIONS
    if iterations:
        with gpytorch.settings.max_cholesky_size(CHOLESKY_LIMIT), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # L-BFGS-B stopping at maxiter on a warm start is expected
            fit_gpytorch_mll_scipy(mll, options={"maxiter": iterations})
    model.eval()
    raw = {name: param.detach().reshape(-1).tolist() for name, param in model.named_parameters()}
    return model, raw


class _InvQuadLogdet(torch.autograd.Function):
    """`(r^T K^-1 r, log |K|)` by Cholesky, with the closed-form gradient (the module docstring)."""

    @staticmethod
    def forward(ctx: Any, K: torch.Tensor, r: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        L = psd_safe_cholesky(K)  # GPyTorch's factorisation, jitter included
        a = torch.cholesky_solve(r.unsqueeze(-1), L).squeeze(-1)
        ctx.save_for_backward(L, a)
        return (r * a).sum(-1), 2.0 * L.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    @staticmethod
    def backward(ctx: Any, g_quad: torch.Tensor, g_logdet: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        L, a = ctx.saved_tensors
        outer = a.unsqueeze(-1) * a.unsqueeze(-2)
        g_K = g_logdet[..., None, None] * torch.cholesky_inverse(L) - g_quad[..., None, None] * outer
        return g_K, 2.0 * g_quad[..., None] * a


class _ExactMLL(ExactMarginalLogLikelihood):
    """GPyTorch's exact marginal log likelihood (priors included, divided by the number of points),
    its inverse quadratic form and log determinant taken by `_InvQuadLogdet`. No NaN masking: the
    strategies fit answered points only (a target's errors never reach the model)."""

    def forward(self, function_dist: Any, target: torch.Tensor, *params: Any, **kwargs: Any) -> torch.Tensor:
        output = self.likelihood(function_dist, *params, **kwargs)
        diff = target - output.mean
        quad, logdet = _InvQuadLogdet.apply(output.covariance_matrix, diff)
        res = -0.5 * (quad + logdet + diff.size(-1) * math.log(2 * math.pi))
        return self._add_other_terms(res, params).div_(function_dist.event_shape.numel())
