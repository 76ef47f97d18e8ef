"""Multi-shot federated search over a fixed list of candidates (grid and randomized search)."""

from __future__ import annotations

import numpy as np

from ..messages import EvaluateReply, EvaluateTask
from .base import Strategy

__all__ = ["CandidateStrategy", "aggregate_scores"]

AGGREGATES = ("weighted", "mean", "min")


def aggregate_scores(scores: np.ndarray, weights: np.ndarray, how: str) -> np.ndarray:
    """The federation's score of each candidate from the parties' scores.

    Parameters
    ----------
    scores : ndarray of shape (n_parties, n_candidates)
        Each party's mean CV score of each candidate (NaN where a party failed).
    weights : ndarray of shape (n_parties,)
        The parties' sample counts.
    how : {"weighted", "mean", "min"}
        Sample-size-weighted mean, plain mean, or the worst party.

    Returns
    -------
    ndarray of shape (n_candidates,)
        NaN for a candidate on which any party failed: a failure is never averaged away.
    """
    scores = np.asarray(scores, dtype=float)
    if how == "min":
        return scores.min(axis=0)
    w = np.asarray(weights, dtype=float) if how == "weighted" else np.ones(len(scores))
    return (w[:, None] * scores).sum(axis=0) / w.sum()


class CandidateStrategy(Strategy):
    """Every party cross-validates every candidate, all in one round.

    This is the honest multi-shot baseline of federated HPO: ``FederatedGridSearchCV`` passes the
    grid, ``FederatedRandomizedSearchCV`` ``n_iter`` points drawn from the space.

    Parameters
    ----------
    candidates : ndarray of shape (n_candidates, n_dims)
        Points of the unit cube.
    n_parties : int
    weights : array-like of shape (n_parties,)
        Sample counts of the parties (for ``aggregate="weighted"``).
    aggregate : {"weighted", "mean", "min"}, default="weighted"
    """

    def __init__(self, candidates, n_parties: int, weights, aggregate: str = "weighted"):
        self.candidates = np.atleast_2d(np.asarray(candidates, dtype=float))
        self.n_parties = n_parties
        self.weights = np.asarray(weights, dtype=float)
        self.aggregate_ = aggregate
        self.scores_ = np.full((n_parties, len(self.candidates)), np.nan)
        self._done = False

    def configure(self, round):
        if self._done:
            return None
        return {p: EvaluateTask(self.candidates) for p in range(self.n_parties)}

    def aggregate(self, round, replies):
        for p, reply in replies.items():
            if isinstance(reply, EvaluateReply) and reply.error is None:
                self.scores_[p] = reply.scores
        self._done = True

    def federated_scores(self) -> np.ndarray:
        return aggregate_scores(self.scores_, self.weights, self.aggregate_)

    def recommend(self, party=None):
        scores = self.scores_[party] if party is not None else self.federated_scores()
        if np.all(np.isnan(scores)):
            return self.candidates[0].copy()
        return self.candidates[int(np.nanargmax(scores))].copy()
