"""Turning ``fit``'s inputs into per-party datasets, and checking them before any work starts."""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import is_classifier
from sklearn.model_selection import check_cv
from sklearn.utils import _safe_indexing, indexable
from sklearn.utils.multiclass import type_of_target

from ..party.dataset import PartyData, is_per_sample, n_samples

__all__ = ["split_parties", "check_parties"]


def _n_features(X) -> int | None:
    shape = getattr(X, "shape", None)
    if shape is None:
        X = np.asarray(X, dtype=object)
        shape = X.shape
    return int(shape[1]) if len(shape) == 2 else None


def _is_dataset(X) -> bool:
    """A 2-D table (array, DataFrame, sparse matrix)."""
    return sp.issparse(X) or (hasattr(X, "shape") and len(getattr(X, "shape")) == 2)


def _per_party_sequence(X) -> bool:
    if isinstance(X, Mapping):
        return len(X) > 0 and all(_is_dataset(x) for x in X.values())
    return (isinstance(X, (list, tuple)) and len(X) > 0 and all(_is_dataset(x) for x in X))


def split_parties(X, y=None, parties=None, groups=None, fit_params=None) -> list[PartyData]:
    """Split ``fit``'s inputs into one :class:`PartyData` per party.

    Three forms are accepted: (a) one dataset with ``parties``, a party label per sample;
    (b) a list (or dict {party id: X}) of per-party datasets, with ``y`` a matching list / dict;
    (c) one dataset with ``parties=None``: a single party, id 0.
    """
    fit_params = fit_params or {}
    if _per_party_sequence(X):
        if parties is not None:
            raise ValueError(
                "Give either a list of per-party datasets X or a per-sample 'parties' array, not "
                "both. Got a list of X and parties of type " f"{type(parties).__name__}."
            )
        if isinstance(X, Mapping):
            ids, Xs = list(X.keys()), list(X.values())
        else:
            ids, Xs = list(range(len(X))), list(X)
        ys = _per_party(y, ids, "y", Xs)
        gs = _per_party(groups, ids, "groups", Xs)
        fps = [{} for _ in ids]
        for name, value in fit_params.items():
            for fp, v in zip(fps, _per_party(value, ids, name, Xs, broadcast=True)):
                fp[name] = v
        return [PartyData(i, x, yy, g, fp) for i, x, yy, g, fp in zip(ids, Xs, ys, gs, fps)]

    X, y, groups = indexable(X, y, groups)
    n = n_samples(X)
    if parties is None:
        return [PartyData(0, X, y, groups, dict(fit_params))]
    labels = np.asarray(parties)
    if labels.ndim != 1 or len(labels) != n:
        raise ValueError(
            f"'parties' must hold one party label per sample of X: expected shape ({n},), "
            f"got shape {labels.shape}."
        )
    if labels.dtype.kind == "f" and np.isnan(labels).any():
        raise ValueError("'parties' contains NaN; every sample needs a party label.")
    ids = np.unique(labels)
    out = []
    for pid in ids:
        idx = np.flatnonzero(labels == pid)
        fp = {k: _safe_indexing(v, idx) if is_per_sample(v, n) else v for k, v in fit_params.items()}
        out.append(PartyData(
            pid.item() if isinstance(pid, np.generic) else pid,
            _safe_indexing(X, idx),
            None if y is None else _safe_indexing(y, idx),
            None if groups is None else _safe_indexing(groups, idx),
            fp,
        ))
    return out


def _per_party(value, ids, name, Xs, broadcast=False) -> list:
    if value is None:
        return [None] * len(ids)
    if isinstance(value, Mapping) and set(value) == set(ids):
        return [value[i] for i in ids]
    if isinstance(value, (list, tuple)) and len(value) == len(ids) and all(
        hasattr(v, "__len__") and n_samples(v) == n_samples(x) for v, x in zip(value, Xs)
    ):
        return list(value)
    if broadcast:
        return [value] * len(ids)
    raise ValueError(
        f"With a list of {len(ids)} per-party datasets, {name!r} must be a list of {len(ids)} arrays "
        f"of matching lengths ({[n_samples(x) for x in Xs]}). Got {type(value).__name__}"
        f"{' of length ' + str(len(value)) if hasattr(value, '__len__') else ''}."
    )


def check_parties(parties: Sequence[PartyData], estimator, cv) -> int:
    """Check the per-party datasets before any work starts; return the number of CV splits.

    Raises a ``ValueError`` naming the party, the value and what was expected, for: an empty party,
    different feature counts or column names, NaN labels, a single class in a classifier's party,
    and more CV folds than a party has samples (or members of a class).
    """
    first = parties[0]
    names0 = _columns(first.X)
    n_features0 = _n_features(first.X)
    n_splits = None
    for party in parties:
        pid = party.party_id
        n = party.n_samples
        if n == 0:
            raise ValueError(f"Party {pid!r} has no samples (0 rows); every party needs data.")
        n_features = _n_features(party.X)
        if n_features != n_features0:
            raise ValueError(
                f"Party {pid!r} has {n_features} features but party {first.party_id!r} has "
                f"{n_features0}; all parties must have the same features."
            )
        names = _columns(party.X)
        if names is not None and names0 is not None and list(names) != list(names0):
            raise ValueError(
                f"Party {pid!r} has columns {list(names)} but party {first.party_id!r} has "
                f"{list(names0)}; all parties must have the same feature names in the same order."
            )
        y = party.y
        if y is not None:
            y_arr = np.asarray(y)
            if y_arr.dtype.kind in "fc" and np.isnan(y_arr.astype(complex)).any():
                raise ValueError(f"The labels y of party {pid!r} contain NaN; labels must be finite.")
            if is_classifier(estimator):
                classes, counts = np.unique(y_arr, return_counts=True) if y_arr.ndim == 1 else (None, None)
                if classes is not None and len(classes) < 2:
                    raise ValueError(
                        f"Party {pid!r} has only one class in y ({classes.tolist()}); a classifier "
                        f"needs samples of at least two classes in every party."
                    )
        splitter = check_cv(cv, y, classifier=is_classifier(estimator))
        k = splitter.get_n_splits(party.X, y, party.groups)
        if isinstance(cv, numbers.Integral) or cv is None:
            if k > n:
                raise ValueError(
                    f"cv={k} folds but party {pid!r} has only {n} sample{'s' if n != 1 else ''}; "
                    f"each party needs at least {k} samples."
                )
            if y is not None and is_classifier(estimator) and type_of_target(y) in ("binary", "multiclass"):
                classes, counts = np.unique(np.asarray(y), return_counts=True)
                if counts.min() < k:
                    c = classes[counts.argmin()]
                    raise ValueError(
                        f"cv={k} stratified folds but party {pid!r} has only {counts.min()} "
                        f"member{'s' if counts.min() != 1 else ''} of class {c!r}; each class of each "
                        f"party needs at least {k} members (lower cv or merge parties)."
                    )
        if n_splits is None:
            n_splits = k
    return n_splits


def _columns(X):
    cols = getattr(X, "columns", None)
    return None if cols is None else [str(c) for c in cols]
