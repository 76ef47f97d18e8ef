"""The server's aggregate of the parties' vectors, private or not (paper Algo. 1, §3.3, App. A.1)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Release", "private_aggregate", "plain_aggregate"]


@dataclass(frozen=True)
class Release:
    """One round's aggregate and the server-only facts about how it was made.

    Only ``omega`` may leave the server: ``selected`` (which parties were subsampled) and
    ``clipped`` must never be broadcast, or the amplification by subsampling is lost.
    """

    omega: np.ndarray      # (P, M): the broadcast omega_t^joint
    selected: np.ndarray   # (N,) bool: the Poisson subsample S_t (all present parties without DP)
    clipped: np.ndarray    # (N,) bool: selected parties whose vector was clipped
    noise_std: np.ndarray  # (P,): the Gaussian noise's standard deviation per region (0 without DP)


def private_aggregate(omegas: np.ndarray, present: np.ndarray, weights: np.ndarray, rng: np.random.Generator,
                      *, sampling_rate: float, clip: float, noise_multiplier: float) -> Release:
    """The subsampled Gaussian mechanism of Algo. 1, lines 5-11.

    ``omegas`` (N, M) holds one vector per party (rows of parties that did not reply are
    ignored: ``present`` is False there); ``weights`` (P, N) are the public region weights.

    - l.6: each party is selected independently with probability q (a uniform draw for every
      one of the N parties, so that the stream of random numbers does not depend on who replied);
    - l.9: a selected vector is clipped to norm S / sqrt(P), so the joint P x M vector of one party
      is bounded by N phi_max S (§3.3);
    - l.10: ``omega^(i) = sum_{n in S_t} (phi_n^(i) / q) * clipped omega_n``: divided by q, not by
      |S_t|, which makes it unbiased (footnote 11);
    - l.11: Gaussian noise of std ``z * max_n phi_n^(i) * S / q`` on region i. The paper's phi_max
      is the maximum over all regions; the authors' code takes each region's own maximum, which
      keeps the mechanism's noise multiplier at least z (notes §1.4) and is what is done here.

    An empty subsample gives pure noise, as the paper's mechanism does (the authors' code
    broadcasts U(0, 1) instead; notes §1.4).
    """
    n_regions, n_parties = weights.shape
    selected = (rng.random(n_parties) < sampling_rate) & present
    bound = clip / np.sqrt(n_regions)
    norms = np.linalg.norm(omegas[selected], axis=1)
    clipped_rows = omegas[selected] / np.maximum(1.0, norms / bound)[:, None]
    clipped = np.zeros(n_parties, dtype=bool)
    clipped[selected] = norms > bound
    omega = (weights[:, selected] / sampling_rate) @ clipped_rows
    noise_std = noise_multiplier * weights.max(axis=1) * clip / sampling_rate
    omega = omega + noise_std[:, None] * rng.standard_normal(omega.shape)
    return Release(omega, selected, clipped, noise_std)


def plain_aggregate(omegas: np.ndarray, present: np.ndarray, weights: np.ndarray) -> Release:
    """Without DP (FTS, FTS-DE): ``omega^(i) = sum_n phi_n^(i) omega_n`` over all parties (notes §1.4).

    When some parties did not reply, the weights of those present are renormalised per region,
    so that the aggregate stays a weighted average (zero when nobody replied).
    """
    w = weights * present[None, :]
    total = w.sum(axis=1, keepdims=True)
    w = np.divide(w, total, out=np.zeros_like(w), where=total > 0)
    omega = w[:, present] @ omegas[present]
    n_regions, n_parties = weights.shape
    return Release(omega, present.copy(), np.zeros(n_parties, dtype=bool), np.zeros(n_regions))
