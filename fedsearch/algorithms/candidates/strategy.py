"""Multi-shot federated search: a fixed list of candidates (grid and randomized search), and
random search in batches (the baseline of the bandit benchmarks)."""

from __future__ import annotations

import numpy as np

from ..._random import as_generator
from ...messages import EvaluateReply, EvaluateTask
from ...strategy import Strategy, register_strategy

__all__ = ["AGGREGATES", "CandidateStrategy", "RandomSearchStrategy", "aggregate_scores"]

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


@register_strategy("random")
class RandomSearchStrategy(Strategy):
    """Every round, every party evaluates the same batch of uniform points of the unit cube.

    The recommendation is the point with the best mean score over the parties (a point on which
    any party failed has no mean and is never recommended); ``recommend(party=m)`` is the point
    with party ``m``'s best own score. Each party spends exactly ``n_iter`` evaluations.

    Parameters
    ----------
    n_dims : int
    n_parties : int
    n_iter : int
        Evaluations per party.
    batch_size : int, default=100
        Points per round (the last round takes what is left of the budget).
    random_state : int or None, default=None

    Examples
    --------
    >>> from fedsearch.research.simulate import simulate
    >>> from fedsearch.research.synthetic import garland, make_parties
    >>> parties = make_parties(garland(), 3, random_state=0)
    >>> trace = simulate("random", parties, n_iter=250, random_state=0)
    >>> trace.n_rounds, trace.n_evaluations.tolist()
    (3, [250, 250, 250])
    """

    def __init__(self, n_dims: int, n_parties: int, n_iter: int, *, batch_size: int = 100, random_state=None):
        self.n_dims = n_dims
        self.n_parties = n_parties
        self.n_iter = n_iter
        self.batch_size = batch_size
        self._rng = as_generator(random_state)
        self._sent = 0
        self._batch = np.empty((0, n_dims))
        self._best_point = np.full(n_dims, 0.5)
        self._best_score = -np.inf
        self._party_point = np.full((n_parties, n_dims), 0.5)
        self._party_score = np.full(n_parties, -np.inf)

    def configure(self, round):
        if self._sent >= self.n_iter:
            return None
        self._batch = self._rng.random((min(self.batch_size, self.n_iter - self._sent), self.n_dims))
        self._sent += len(self._batch)
        return {p: EvaluateTask(self._batch) for p in range(self.n_parties)}

    def aggregate(self, round, replies):
        scores = np.full((self.n_parties, len(self._batch)), np.nan)
        for p, reply in replies.items():
            if isinstance(reply, EvaluateReply) and reply.error is None:
                scores[p] = reply.scores
        fed = aggregate_scores(scores, np.ones(self.n_parties), "mean")
        if np.any(np.isfinite(fed)) and np.nanmax(fed) > self._best_score:
            i = int(np.nanargmax(fed))
            self._best_point, self._best_score = self._batch[i].copy(), float(fed[i])
        own = np.where(np.isfinite(scores), scores, -np.inf)
        i = own.argmax(axis=1)
        better = own[np.arange(self.n_parties), i] > self._party_score
        self._party_score[better] = own[better, i[better]]
        self._party_point[better] = self._batch[i[better]]

    def recommend(self, party=None):
        return (self._best_point if party is None else self._party_point[party]).copy()
