"""FLoRA's messages: the local-search task and its one upload (Algorithm 1, lines 3-5)."""

from __future__ import annotations

import numpy as np

from ...messages import EvaluateReply, EvaluateTask, Reply, Task, message
from .local_search import DEFAULT_LOCAL_SEARCH

__all__ = ["LocalSearchTask", "LocalSearchReply"]


@message
class LocalSearchTask(Task):
    """Run a local hyper-parameter search of ``n_iter`` configurations (Algorithm 1, line 3).

    Parameters
    ----------
    n_iter : int
        ``T``: how many configurations the party cross-validates.
    method : str, default="random"
        The party's local optimiser, by name (:func:`fedsearch.algorithms.flora.local_search.make_local_search`).
    seed : int or None, default=None
        Seed of the local optimiser.
    n_best : int or None, default=None
        ``T'`` of App. D.7: upload only the ``n_best`` pairs with the lowest loss (None: all).
    """

    n_iter: int
    method: str = DEFAULT_LOCAL_SEARCH
    seed: int | None = None
    n_best: int | None = None

    @property
    def cost(self) -> int:
        return int(self.n_iter)


@message
class LocalSearchReply(Reply):
    """The pairs ``E_i = {(theta_t, L_t)}`` of one party's local search (eq. 2.6), uploaded once.

    Attributes
    ----------
    points : ndarray of shape (n_pairs, n_dims)
        The configurations tried (canonical points of the unit cube), in the order tried.
    losses : ndarray of shape (n_pairs,)
        ``1 - score``, the loss of the paper (App. D.9); NaN where the configuration failed,
        whatever ``error_score``.
    trials : ndarray of int of shape (n_pairs,)
        The position of each pair in the local search (0 .. n_iter - 1).
    n_evaluations : int
        Configurations tried (``n_iter`` unless the search stopped on an error).
    n_failed : int
        How many of them failed, uploaded or not.
    n_samples : int
        The party's number of samples.
    evaluation : EvaluateReply
        The party's result for each pair, in order, as it answers an
        :class:`~fedsearch.messages.EvaluateTask` (a configuration proposed again is marked
        ``cached``: it was not refitted).
    error : str or None
        Set when the search itself failed (the pairs tried until then are still uploaded).
    kind : str or None
        ``"local_search"`` when ``error`` is set.
    """

    points: np.ndarray
    losses: np.ndarray
    trials: np.ndarray
    n_evaluations: int
    n_failed: int
    n_samples: int
    evaluation: EvaluateReply
    error: str | None = None
    kind: str | None = None

    @property
    def scores(self) -> np.ndarray:
        """The objective of each pair (higher is better; NaN where it failed)."""
        return self.evaluation.scores

    def as_evaluation(self, task=None) -> tuple[EvaluateTask, EvaluateReply]:
        """The pairs as if the party had been sent them in an :class:`EvaluateTask` (``task``,
        the local search asked for, adds nothing)."""
        return EvaluateTask(self.points), self.evaluation
