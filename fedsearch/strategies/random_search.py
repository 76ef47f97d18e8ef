"""Federated random search, the baseline of the bandit benchmarks."""

from __future__ import annotations

import numpy as np

from ..messages import EvaluateReply, EvaluateTask
from .base import Strategy
from .candidates import aggregate_scores

__all__ = ["RandomSearchStrategy"]


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
    >>> from fedsearch.simulate import simulate
    >>> from fedsearch.synthetic import garland, make_parties
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
        self._rng = np.random.default_rng(random_state)
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
