"""A party's own dataset, and the pooling of several (the one operation that moves raw rows)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["PartyData", "pool", "n_samples", "is_per_sample"]


@dataclass
class PartyData:
    """One party's private dataset (never sent anywhere)."""

    party_id: Any
    X: Any
    y: Any = None
    groups: Any = None
    fit_params: dict = field(default_factory=dict)

    @property
    def n_samples(self) -> int:
        return n_samples(self.X)


def n_samples(X) -> int:
    """Rows of an array, a DataFrame, a sparse matrix or a list."""
    if hasattr(X, "shape") and len(X.shape) > 0:
        return int(X.shape[0])
    return len(X)


def is_per_sample(v, n) -> bool:
    """Whether a fit parameter has one entry per sample (and is cut per party)."""
    return hasattr(v, "__len__") and not isinstance(v, (str, Mapping)) and n_samples(v) == n


def pool(parties: Sequence[PartyData]):
    """The union of the parties' data, for the ``"pooled"`` final fit (emulates federated training)."""
    if len(parties) == 1:
        return parties[0].X, parties[0].y, dict(parties[0].fit_params)
    X = _stack([p.X for p in parties])
    y = None if parties[0].y is None else _stack([p.y for p in parties])
    fit_params = {}
    for name in parties[0].fit_params:
        values = [p.fit_params[name] for p in parties]
        if all(is_per_sample(v, p.n_samples) for v, p in zip(values, parties)):
            fit_params[name] = np.concatenate([np.asarray(v) for v in values])
        else:
            fit_params[name] = values[0]
    return X, y, fit_params


def _stack(parts: list):
    """Concatenate arrays, sparse matrices or pandas objects along the sample axis."""
    if sp.issparse(parts[0]):
        return sp.vstack(parts).tocsr()
    if hasattr(parts[0], "iloc"):
        import pandas as pd  # only reached when the user passed pandas objects

        return pd.concat(parts, axis=0, ignore_index=True)
    return np.concatenate([np.asarray(x) for x in parts], axis=0)
