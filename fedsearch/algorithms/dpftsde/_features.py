"""Random Fourier features and the Bayesian linear regression over them (paper §2, eq. 2)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_factor, cho_solve, solve_triangular

__all__ = ["FourierFeatures", "posterior_sample"]


@dataclass(frozen=True)
class FourierFeatures:
    """Random Fourier features of a squared-exponential kernel, normalised to unit norm.

    ``phi(x) = sqrt(variance) * c(x) / ||c(x)||`` with ``c(x) = cos(frequencies @ x + offsets)``
    (Rahimi and Recht 2007; paper §2). The unit-norm step is the authors' code, not the paper's
    text (notes §1.1): it makes ``phi(x) @ phi(x) = variance`` exactly. The usual ``sqrt(2/M)``
    factor cancels in the normalisation and is left out.

    The arrays are public parameters drawn once by the server and shipped to every party.
    """

    frequencies: np.ndarray  # (M, d), rows ~ N(0, length_scale^-2 I)
    offsets: np.ndarray      # (M,), ~ U(0, 2 pi)
    variance: float = 1.0

    @classmethod
    def draw(cls, n_features: int, n_dims: int, length_scale: float, rng: np.random.Generator,
             variance: float = 1.0) -> "FourierFeatures":
        frequencies = rng.normal(0.0, 1.0 / length_scale, size=(n_features, n_dims))
        offsets = rng.uniform(0.0, 2 * np.pi, size=n_features)
        return cls(frequencies, offsets, float(variance))

    @property
    def n_features(self) -> int:
        return self.frequencies.shape[0]

    def __call__(self, X) -> np.ndarray:
        """Features of the rows of ``X`` (n, d): an (n, M) array with rows of norm sqrt(variance)."""
        c = np.cos(np.atleast_2d(X) @ self.frequencies.T + self.offsets)
        return np.sqrt(self.variance) * c / np.linalg.norm(c, axis=1, keepdims=True)

    def value_and_grad(self, x, omega) -> tuple[float, np.ndarray]:
        """``phi(x)' omega`` at one point ``x`` (d,) and its gradient in ``x``.

        With ``c = cos(s x + b)``, ``n = ||c||`` and ``dc/dx = -sin(s x + b) s``:
        ``d(c'omega / n)/dx = dc' omega / n - (c' omega) dc' c / n^3``.
        """
        z = self.frequencies @ x + self.offsets
        c = np.cos(z)
        dc = -np.sin(z)[:, None] * self.frequencies
        n = np.linalg.norm(c)
        a = c @ omega
        scale = np.sqrt(self.variance)
        return scale * a / n, scale * (dc.T @ omega / n - a * (dc.T @ c) / n**3)


def posterior_sample(Phi, y, obs_noise: float, rng: np.random.Generator) -> np.ndarray:
    """One sample ``omega ~ N(nu, lambda Sigma^-1)`` of eq. 2.

    ``Sigma = Phi' Phi + lambda I`` and ``nu = Sigma^-1 Phi' y``, over all ``n`` observations
    (``Phi`` is n x M; ``n`` may be 0, which gives ``omega ~ N(0, I)``). With ``Sigma = L L'`` the
    sample is ``nu + sqrt(lambda) L'^-1 e``, ``e ~ N(0, I)``: its covariance is
    ``lambda L'^-1 L^-1 = lambda Sigma^-1``.
    """
    Phi = np.asarray(Phi, dtype=float)
    y = np.asarray(y, dtype=float)
    M = Phi.shape[1]
    sigma = Phi.T @ Phi + obs_noise * np.eye(M)
    factor = cho_factor(sigma, lower=True)
    nu = cho_solve(factor, Phi.T @ y)
    e = rng.standard_normal(M)
    return nu + np.sqrt(obs_noise) * solve_triangular(factor[0], e, lower=True, trans="T")
