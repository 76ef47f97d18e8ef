"""The bookkeeping of phased node elimination, shared by Fed-PNE, PF-PNE and the level-order
bandit: per-party reward statistics of a set of nodes, and the record of one phase."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...messages import EvaluateReply
from .tree import Nodes

__all__ = ["PULLS", "NodeStatistics", "Phase", "check_weights"]

#: how a node is pulled: a uniformly random point of its box, or its centre
PULLS = ("uniform", "center")


@dataclass(frozen=True)
class NodeStatistics:
    """Per-party sums and counts of the rewards of a set of nodes pulled in one round.

    Attributes
    ----------
    sums, counts : ndarray of shape (n_parties, n_nodes)
        Sum and number of the finite rewards of each party at each node (a NaN reward, a failed
        evaluation, is not counted).
    replied : ndarray of bool of shape (n_parties,)
        Whether the party sent a usable reply (no ``error``, the right number of scores).
    failures : dict of int to str
        Why each other party's reply was not usable.
    """

    sums: np.ndarray
    counts: np.ndarray
    replied: np.ndarray
    failures: dict = field(default_factory=dict)

    @classmethod
    def from_replies(cls, replies, n_parties: int, pulls_per_node) -> NodeStatistics:
        """Collect the replies to one round in which every party pulled the same points.

        Parameters
        ----------
        replies : dict of int to EvaluateReply
            Reply of each party; a missing party counts as failed.
        n_parties : int
        pulls_per_node : array-like of int of shape (n_nodes,)
            The points of the task were ``pulls_per_node[0]`` points of node 0, then node 1...
        """
        pulls = np.asarray(pulls_per_node, dtype=np.int64)
        n_points = int(pulls.sum())
        scores = np.full((n_parties, n_points), np.nan)
        replied = np.zeros(n_parties, dtype=bool)
        failures = {}
        for p in range(n_parties):
            reply = replies.get(p)
            if not isinstance(reply, EvaluateReply):
                failures[p] = f"no evaluation reply (got {type(reply).__name__})"
            elif reply.error is not None:
                failures[p] = str(reply.error)
            elif np.shape(reply.scores) != (n_points,):
                failures[p] = f"{np.size(reply.scores)} scores for {n_points} points"
            else:
                scores[p] = reply.scores
                replied[p] = True
        finite = np.isfinite(scores)
        sums = np.zeros((n_parties, len(pulls)))
        counts = np.zeros((n_parties, len(pulls)), dtype=np.int64)
        pulled = pulls > 0
        if n_points:
            starts = np.concatenate([[0], np.cumsum(pulls)[:-1]])[pulled]
            sums[:, pulled] = np.add.reduceat(np.where(finite, scores, 0.0), starts, axis=1)
            counts[:, pulled] = np.add.reduceat(finite.astype(np.int64), starts, axis=1)
        return cls(sums, counts, replied, failures)

    @property
    def local_means(self) -> np.ndarray:
        """``mu_{m,h,i}`` (Algorithm 1, line 8), NaN where the party has no finite reward."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.counts > 0, self.sums / np.maximum(self.counts, 1), np.nan)

    def global_means(self, weights=None) -> np.ndarray:
        """``mu_{h,i} = (1/M) sum_m mu_{m,h,i}`` (Algorithm 2, line 13) over the parties that
        replied, or their ``weights``-weighted mean. NaN for a node where a replying party has
        no finite reward (a failure is never averaged away) and for every node when no party
        replied."""
        local = self.local_means[self.replied]
        if not len(local):
            return np.full(self.sums.shape[1], np.nan)
        w = None if weights is None else np.asarray(weights, dtype=float)[self.replied]
        return np.average(local, axis=0, weights=w)

    @property
    def n_pulls(self) -> np.ndarray:
        """``T_{h,i}``: the finite rewards of each node, summed over the replying parties."""
        return self.counts[self.replied].sum(axis=0)


@dataclass(frozen=True)
class Phase:
    """The record of one phase (one round) of a phased elimination.

    Attributes
    ----------
    round : int
    nodes : Nodes
        ``K^p``, the active nodes after the expansion loop.
    pulls : ndarray of int of shape (n_nodes,)
        Pulls of each node asked of every party (``t_{m,h,i}``; fewer in a truncated phase).
    stats : NodeStatistics
    means, widths : ndarray of shape (n_nodes,)
        ``mu_{h,i}`` and ``b_{h,i}``.
    eliminated : ndarray of bool of shape (n_nodes,)
        ``E^p`` (eq. 1).
    truncated : bool
        Whether the budget cut the phase short.
    """

    round: int
    nodes: Nodes
    pulls: np.ndarray
    stats: NodeStatistics
    means: np.ndarray
    widths: np.ndarray
    eliminated: np.ndarray
    truncated: bool


def check_weights(owner: str, weights, n_parties: int):
    """``weights`` as an array of ``n_parties`` positive numbers (None stays None)."""
    if weights is None:
        return None
    w = np.asarray(weights, dtype=float)
    if w.shape != (n_parties,) or not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise ValueError(f"The 'weights' parameter of {owner} must be {n_parties} positive numbers (one per "
                         f"party). Got {weights!r} instead.")
    return w
