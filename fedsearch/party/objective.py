"""The protocol between task handlers and a party: a local objective over the shared space.

A party's local objective is what it measures of a configuration: a data party its own
cross-validation score, a synthetic party a function value. Handlers (evaluation, FLoRA's local
search, any later algorithm's task) call only these members, so a task answered by a data
party is answered the same way by a synthetic one.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .registry import Unit

__all__ = ["LocalObjective", "Summary", "empty_summary"]

#: A party's summary of one configuration: ``{"test": {metric: mean}, "std": {metric: spread
#: over folds} or None, "train": {...} or None, "error": message or None, "fit_time": float,
#: "score_time": float}`` (mean seconds per fold; a data party adds their spread over its folds
#: as ``"std_fit_time"``, ``"std_score_time"``); ``test`` is None when the evaluation failed.
Summary = dict


def empty_summary() -> Summary:
    """The summary of a failed evaluation (the party fills in ``"error"``: see
    :meth:`~fedsearch.party.base.BaseParty.checked`)."""
    return {"test": None, "std": None, "train": None, "error": None, "fit_time": 0.0, "score_time": 0.0}


@runtime_checkable
class LocalObjective(Protocol):
    """What a party offers the task handlers.

    Attributes
    ----------
    party_id : hashable
    n_samples : int
        Its number of samples (1 for a synthetic party).
    space : SearchSpace
        The shared search space (a plain unit cube for a synthetic party).
    n_dims : int
        Dimensions of the unit cube it evaluates.
    metric : str
        Name of the metric that is the search's objective (``"score"`` for a single metric).
    error_score : "raise" or float
        What a failed configuration scores.
    return_train_score : bool
    reports_metrics : bool
        Whether its replies carry per-metric summaries, spreads and timings (a data party) or
        the objective's value alone (a synthetic party).
    released : dict
        The values it released under differential privacy, by quantity (a repeat reuses one).
    """

    party_id: Hashable
    n_samples: int
    space: Any
    n_dims: int
    metric: str
    error_score: Any
    return_train_score: bool
    reports_metrics: bool
    released: dict

    def check_points(self, points: np.ndarray) -> None:
        """Raise ``ValueError`` unless ``points`` are points of the party's unit cube."""

    def evaluation_units(self, points: np.ndarray) -> list[Unit]:
        """The work of evaluating each of ``points`` (run in workers)."""

    def summarise(self, points: np.ndarray, outputs: list) -> list[Summary]:
        """One summary per point from the outputs of :meth:`evaluation_units`. Runs where the
        party assembles its reply: the only place a party's own state (noise streams) moves."""

    def scores(self, points: np.ndarray, outputs: list) -> np.ndarray:
        """The objective of each point as an array, like :meth:`summarise` without the summaries."""

    def evaluator(self, seed) -> Callable[[np.ndarray], Summary]:
        """A picklable function scoring one point at a time inside a single unit of work (an
        adaptive local search), with its own noise stream seeded by ``seed``. It may also offer
        ``scores(points) -> ndarray``, the objective of a batch at once (a vectorised function)."""

    def checked(self, point: np.ndarray, summary: Summary) -> Summary:
        """``summary``, or its failure raised (the party named) when ``error_score="raise"``."""

    def cached(self, point: np.ndarray) -> Summary | None:
        """The summary of ``point``'s configuration when the party already has it."""

    def remember(self, point: np.ndarray, summary: Summary) -> None:
        """Keep ``summary`` for later tasks (a party whose scores are deterministic caches)."""
