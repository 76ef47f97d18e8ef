"""Maximising a sampled function over the unit cube (paper App. B.2.6)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from ._features import FourierFeatures
from ._regions import region_index

__all__ = ["maximise", "LinearFunction", "PiecewiseFunction"]


@dataclass(frozen=True)
class LinearFunction:
    """``f(x) = phi(x)' omega``: a function sampled from a GP posterior through its features (eq. 2)."""

    features: FourierFeatures
    omega: np.ndarray

    def __call__(self, X) -> np.ndarray:
        return self.features(X) @ self.omega

    def value_and_grad(self, x) -> tuple[float, np.ndarray]:
        return self.features.value_and_grad(x, self.omega)


@dataclass(frozen=True)
class PiecewiseFunction:
    """``f(x) = phi(x)' omega^(i(x))`` with i(x) the region of x (Algo. 2 l.8, Fig. 1c)."""

    features: FourierFeatures
    omega_joint: np.ndarray  # (P, M)
    regions: np.ndarray      # (P, d, 2)

    def __call__(self, X) -> np.ndarray:
        X = np.atleast_2d(X)
        return np.einsum("nm,nm->n", self.features(X), self.omega_joint[region_index(X, self.regions)])

    def value_and_grad(self, x) -> tuple[float, np.ndarray]:
        # The gradient inside the region of x; the function jumps on the faces between regions.
        return self.features.value_and_grad(x, self.omega_joint[region_index(x, self.regions)[0]])


def maximise(func, n_dims: int, rng: np.random.Generator, *, n_candidates: int = 1000,
             n_restarts: int = 20) -> np.ndarray:
    """Arg-max of ``func`` over [0, 1]^d.

    App. B.2.6: ``n_candidates`` uniform random points of the whole cube, then L-BFGS-B from
    ``n_restarts`` uniform random starts; the best point of all is returned. ``func`` is
    vectorised over the rows of an (n, d) array and has ``value_and_grad(x)`` (the authors'
    code uses a numerical gradient; the analytic one finds the same optima with fewer calls).
    """
    candidates = rng.random((n_candidates, n_dims))
    values = func(candidates)
    best = int(np.argmax(values))
    best_x, best_value = candidates[best], values[best]

    def negative(x):
        value, grad = func.value_and_grad(x)
        return -value, -grad

    bounds = [(0.0, 1.0)] * n_dims
    for x0 in rng.random((n_restarts, n_dims)):
        res = minimize(negative, x0, jac=True, method="L-BFGS-B", bounds=bounds)
        if -res.fun > best_value:
            best_x, best_value = np.clip(res.x, 0.0, 1.0), -res.fun
    return best_x
