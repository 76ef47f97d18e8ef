"""A party's side of one round: choose the next point (Algo. 2 l.4-8) and its vector (l.10)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import numpy as np
from scipy.linalg.lapack import dpotrf, dpotrs
from scipy.optimize import minimize
from threadpoolctl import ThreadpoolController

from ._acquisition import LinearFunction, PiecewiseFunction, maximise
from ._features import FourierFeatures, posterior_sample

__all__ = ["KernelFit", "fit_kernel", "needs_refit", "usable_scores", "choose_point"]

REFIT_EVERY = 5  # the authors' code re-optimises the GP's hyper-parameters every 5 observations


@dataclass(frozen=True)
class KernelFit:
    """Hyper-parameters of a party's own GP, and how many observations they were fitted on."""

    length_scale: float
    variance: float
    noise: float
    n_observations: int


_LOG_BOUNDS = np.log([(1e-3, 1e3), (1e-3, 1e3), (1e-9, 1.0)])  # length scale, variance, noise
_LOG_START = np.log([1.0, 0.1, 1e-6])


def _neg_log_marginal_likelihood(theta, sq_dists, y):
    """``-log p(y | theta)`` of a zero-mean GP with ``k = v exp(-r^2 / (2 l^2)) + s2 I`` and its
    gradient in ``theta = log(l, v, s2)`` (Rasmussen and Williams 2006, eq. 2.30 and 5.9)."""
    length_scale, variance, noise = np.exp(theta)
    R = np.exp(-0.5 * sq_dists / length_scale**2)
    K = variance * R + noise * np.eye(len(y))
    # LAPACK directly: the very calls of scipy.linalg.cholesky / cho_solve, without their
    # per-call wrappers, which cost more than the factorisation at these sizes (called ~10^5 times)
    L, info = dpotrf(K, lower=1, clean=1)
    if info > 0:  # not positive definite
        return np.inf, np.zeros(3)
    alpha = dpotrs(L, y, lower=1)[0]
    value = 0.5 * y @ alpha + np.log(np.diag(L)).sum() + 0.5 * len(y) * np.log(2 * np.pi)
    inner = np.outer(alpha, alpha) - dpotrs(L, np.eye(len(y)), lower=1)[0]
    dK = (variance * R * sq_dists / length_scale**2, variance * R, noise * np.eye(len(y)))
    return value, np.array([-0.5 * np.sum(inner * d) for d in dK])


def fit_kernel(X, y, rng: np.random.Generator, n_restarts: int = 10) -> KernelFit:
    """Maximum-likelihood hyper-parameters of a party's own isotropic RBF GP.

    The authors' code fits a GPy ``GPRegression`` (lengthscale 1, variance 0.1, noise 1e-6 to
    start, 10 random restarts, y not normalised; notes §1.3). Here: L-BFGS-B on the log
    marginal likelihood from that start and ``n_restarts`` log-uniform starts within the bounds.
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    sq_dists = np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=2)
    starts = np.vstack([_LOG_START, rng.uniform(_LOG_BOUNDS[:, 0], _LOG_BOUNDS[:, 1], size=(n_restarts, 3))])
    best = None
    for theta0 in starts:
        res = minimize(_neg_log_marginal_likelihood, theta0, args=(sq_dists, y), jac=True,
                       method="L-BFGS-B", bounds=_LOG_BOUNDS)
        if best is None or res.fun < best.fun:
            best = res
    length_scale, variance, noise = np.exp(best.x)
    return KernelFit(float(length_scale), float(variance), float(noise), len(y))


def needs_refit(kernel: KernelFit | None, n_observations: int) -> bool:
    """True when no fit exists or a multiple of ``REFIT_EVERY`` observations was passed since."""
    return kernel is None or n_observations // REFIT_EVERY > kernel.n_observations // REFIT_EVERY


def usable_scores(y) -> np.ndarray:
    """Scores for the surrogate: a failed evaluation (NaN) counts as the worst score seen (0 if none)."""
    y = np.asarray(y, dtype=float)
    failed = np.isnan(y)
    return np.where(failed, np.min(y[~failed]) if not failed.all() else 0.0, y)


def choose_point(X, y, rng: np.random.Generator, *, p: float, features: FourierFeatures,
                 omega_joint: np.ndarray, regions: np.ndarray, kernel: KernelFit | None,
                 n_features_local: int = 100, n_candidates: int = 1000, n_restarts: int = 20,
                 server_branch: str = "argmax", canonical: Callable[[np.ndarray], np.ndarray] | None = None,
                 ) -> tuple[np.ndarray, bool, KernelFit | None]:
    """The next query of a party, given its history (X, y) and the last broadcast.

    Returns ``(x, local, kernel)``: the point, whether the party followed its own GP, and the GP
    hyper-parameters to keep for the next round.

    - l.4-5: ``r ~ U(0, 1)``; if ``r < p`` (strict, as in the code) the party samples from its own
      GP: hyper-parameters fitted when ``needs_refit``, fresh features of the fitted length scale
      and variance, a weight sample with noise ``max(1e-5, fitted noise)``, and the arg-max of
      that function over the whole cube (the code's recipe; the paper's beta_t is not applied);
    - l.8: otherwise it maximises ``phi(x)' omega^(i(x))`` over the whole cube (or, with
      ``server_branch="random"``, the ablation, takes a uniform random point instead);
    - ``canonical`` (the search space's snapping of a point) is applied, and a point that equals
      an earlier query is replaced by a uniform random point (authors' code).
    """
    with _blas().limit(limits=1):  # tiny matrices: BLAS threads only contend with the other parties
        return _choose_point(np.atleast_2d(np.asarray(X, dtype=float)), np.asarray(y, dtype=float), rng, p,
                             features, omega_joint, regions, kernel, n_features_local, n_candidates,
                             n_restarts, server_branch, canonical)


@lru_cache(maxsize=1)
def _blas() -> ThreadpoolController:
    """The thread pools of this process, inspected once (``threadpool_limits`` re-inspects them per call)."""
    return ThreadpoolController()


def _choose_point(X, y, rng, p, features, omega_joint, regions, kernel, n_features_local, n_candidates,
                  n_restarts, server_branch, canonical):
    n_dims = X.shape[1]
    local = rng.random() < p
    if local:
        if needs_refit(kernel, len(y)):
            kernel = fit_kernel(X, y, rng)
        own = FourierFeatures.draw(n_features_local, n_dims, kernel.length_scale, rng, variance=kernel.variance)
        w = posterior_sample(own(X), y, max(1e-5, kernel.noise), rng)
        x = maximise(LinearFunction(own, w), n_dims, rng, n_candidates=n_candidates, n_restarts=n_restarts)
    elif server_branch == "random":
        x = rng.random(n_dims)
    else:
        x = maximise(PiecewiseFunction(features, omega_joint, regions), n_dims, rng,
                     n_candidates=n_candidates, n_restarts=n_restarts)
    if canonical is not None:
        x = canonical(x)
    if np.any(np.all(X == x, axis=1)):
        x = rng.random(n_dims)
        if canonical is not None:
            x = canonical(x)
    return x, bool(local), kernel
