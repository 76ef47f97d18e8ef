"""Distributed exploration: sub-regions, their assignment to parties and the weights (paper §3.2)."""

from __future__ import annotations

import itertools

import numpy as np

__all__ = ["make_regions", "region_index", "assign_regions", "region_weights"]


def _prime_factors(n: int) -> list[int]:
    out, p = [], 2
    while n > 1:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out


def make_regions(n_dims: int, n_regions: int) -> np.ndarray:
    """``n_regions`` boxes of equal volume covering [0, 1]^d, as an array (P, d, 2) of [low, high].

    The boxes form a grid. The prime factors of P, largest first, each multiply the number of
    cuts of the dimension that has the fewest so far (lowest index on ties): P = 4 halves the
    first two dimensions, as the paper does for d = 2 and d = 3 (App. B.2.1); in one dimension
    P gives P equal intervals (App. B.1.1). The paper does not say how to cut other P.
    Boxes are ordered with the first dimension varying slowest, like the paper's X_1..X_4.
    """
    cuts = [1] * n_dims
    for f in sorted(_prime_factors(n_regions), reverse=True):
        cuts[int(np.argmin(cuts))] *= f
    edges = [np.linspace(0.0, 1.0, c + 1) for c in cuts]
    boxes = [
        [[edges[k][j], edges[k][j + 1]] for k, j in enumerate(cell)]
        for cell in itertools.product(*(range(c) for c in cuts))
    ]
    return np.array(boxes, dtype=float)


def region_index(X, regions: np.ndarray) -> np.ndarray:
    """Index of the box that contains each row of ``X``.

    Boxes are closed and a point on a shared face belongs to the box of lowest index, as in the
    authors' code (the paper's half-open intervals give the other box; notes §1.3).
    """
    X = np.atleast_2d(X)
    inside = np.all((X[:, None, :] >= regions[None, :, :, 0]) & (X[:, None, :] <= regions[None, :, :, 1]), axis=2)
    return np.argmax(inside, axis=1)


def assign_regions(n_parties: int, n_regions: int) -> np.ndarray:
    """Party n explores box ``n mod P`` at initialisation (authors' code; paper: about N/P each)."""
    return np.arange(n_parties) % n_regions


def region_weights(assignment: np.ndarray, n_regions: int, exponent: float) -> np.ndarray:
    """Weights phi_n^(i) (P, N) of every party in every region's aggregate.

    ``phi_n^(i) = softmax_n((a I_n^(i) + 1) / T_t)`` with ``T_t = a / (a_t - 1)`` (paper §3.2,
    App. B): an assigned party weighs ``exp(a_t - 1)`` times an unassigned one. ``exponent`` is
    a_t; a_t = 1 gives uniform weights. Rows sum to 1. The weights depend only on public
    quantities (the number of parties, the assignment, the round), never on party data.
    """
    logits = (exponent - 1.0) * (assignment[None, :] == np.arange(n_regions)[:, None])
    w = np.exp(logits - logits.max(axis=1, keepdims=True))
    return w / w.sum(axis=1, keepdims=True)
