"""What the displays share: the lazy matplotlib import and the checks of a fitted search."""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._optional import import_optional


def pyplot():
    """matplotlib's pyplot, imported on first use (the ``plot`` extra)."""
    return import_optional("matplotlib.pyplot", "plot", "fedsearch.plotting")


def ticker():
    """matplotlib's ticker module, imported on first use (the ``plot`` extra)."""
    return import_optional("matplotlib.ticker", "plot", "fedsearch.plotting")


def axes(ax):
    """``(ax, figure)``: ``ax`` itself, or a new figure's single Axes when None."""
    if ax is None:
        _, ax = pyplot().subplots()
    return ax, ax.figure


def check_metric(search, metric, where: str) -> str:
    """The metric to plot: ``metric``, else the only one scored, else the refit metric."""
    check_is_fitted(search, "cv_results_")
    metrics = [k[len("mean_test_"):] for k in search.cv_results_ if k.startswith("mean_test_")]
    if metric is None:
        if len(metrics) == 1:
            return metrics[0]
        if isinstance(search.refit, str):
            return search.refit
    if metric not in metrics:
        raise ValueError(f"The 'metric' parameter of {where} must be a str among {metrics}. "
                         f"Got {metric!r} instead.")
    return metric


def party_scores(search, metric: str) -> np.ndarray:
    """Each party's mean CV score of every configuration, shape (n_parties, n_configurations)."""
    return np.array([search.cv_results_[f"party_{pid}_test_{metric}"] for pid in search.party_ids_],
                    dtype=float).reshape(len(search.party_ids_), -1)
