"""The bookkeeping of phased node elimination, shared by Fed-PNE, PF-PNE and the level-order
bandit: per-party reward statistics of a set of nodes, and the record of one phase."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .tasks import PullReply, PullTask
from .tree import Nodes

__all__ = ["PULLS", "NodeStatistics", "Phase", "check_weights", "pull_task"]

#: how a node is pulled: a uniformly random point of its box, or its centre
PULLS = ("uniform", "center")


@dataclass(frozen=True)
class NodeStatistics:
    """Per-party sums and counts of the rewards of a set of nodes pulled in one round.

    Attributes
    ----------
    sums, counts : ndarray of shape (n_parties, n_nodes)
        ``T_{m,h,i} mu_{m,h,i}`` and ``T_{m,h,i}``: each party's reported local mean times its
        number of finite rewards, and that number (a failed evaluation is not counted).
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
    def from_replies(cls, replies, n_parties: int, n_nodes: int) -> NodeStatistics:
        """Collect the :class:`~fedsearch.algorithms.xarmed.tasks.PullReply` of each party to one
        round: its local means ``mu_{m,h,i}`` and finite counts ``T_{m,h,i}`` of the round's nodes.

        Parameters
        ----------
        replies : dict of int to PullReply
            Reply of each party; a missing party counts as failed.
        n_parties, n_nodes : int
        """
        sums = np.zeros((n_parties, n_nodes))
        counts = np.zeros((n_parties, n_nodes), dtype=np.int64)
        replied = np.zeros(n_parties, dtype=bool)
        failures = {}
        for p in range(n_parties):
            reply = replies.get(p)
            if not isinstance(reply, PullReply):
                failures[p] = f"no pull reply (got {type(reply).__name__})"
            elif reply.error is not None:
                failures[p] = str(reply.error)
            elif np.shape(reply.means) != (n_nodes,) or np.shape(reply.counts) != (n_nodes,):
                failures[p] = f"{np.size(reply.means)} means for {n_nodes} nodes"
            else:
                n = np.asarray(reply.counts, dtype=np.int64)
                mean = np.asarray(reply.means, dtype=float)
                ok = (n > 0) & np.isfinite(mean)
                counts[p] = np.where(ok, n, 0)
                sums[p] = np.where(ok, mean * n, 0.0)
                replied[p] = True
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


def pull_task(partition, nodes: Nodes, counts, rng: np.random.Generator, pull: str, share: bool) -> PullTask:
    """The task of one round: pull ``counts[j]`` times each node of ``nodes`` (one depth), at
    points drawn from a fresh seed of ``rng`` (the same points at every party that gets it)."""
    return PullTask(tree=(partition.n_dims, partition.split, partition.seed), depth=int(nodes.depth[0]),
                    index=nodes.index, counts=counts, draw_seed=int(rng.integers(2**63)), pull=pull, share=share)
