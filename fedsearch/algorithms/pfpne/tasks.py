"""PF-PNE's message of the personal stage: the broadcast of the collaborative stage down, the
party's personal recommendation up (Algorithm 2, line 11 and Algorithm 3).

After the collaborative stage the server broadcasts the surviving nodes ``K^h`` of every
collaborative depth with their global statistics ``(mu_{h,i}, b_{h,i})`` (Algorithm 2, line 11).
Each party then runs its Personalized Elimination (Algorithm 3) alone, inside one unit of work:
its pulls, its local means and its eliminations stay at the party. It replies its final personal
recommendation (a node of the shared tree) and how many evaluations it spent; with ``share`` also
its score of every configuration it evaluated (for ``cv_results_``).
"""

from __future__ import annotations

import numpy as np

from ...messages import EvaluateReply, EvaluateTask, Reply, Task, message
from ..xarmed.tree import Partition

__all__ = ["PersonalTask", "PersonalReply"]


@message
class PersonalTask(Task):
    """Run the personal stage of PF-PNE (Algorithm 3) at the party and reply its recommendation.

    Parameters
    ----------
    tree : tuple (n_dims, split, seed)
        The shared partition (:meth:`~fedsearch.algorithms.xarmed.tree.Partition.from_seed`).
    depth, index : ndarray of int of shape (n_nodes,)
        The nodes ``K^h \\cup E^h`` of every completed collaborative depth ``h``, depth after depth.
    eliminated : ndarray of bool of shape (n_nodes,)
        ``E^h``: eliminated by the federation; the others are ``K^h``.
    means, widths : ndarray of shape (n_nodes,)
        The broadcast global statistics ``mu_{h,i}, b_{h,i}`` (used on ``K^h``).
    own_means : ndarray of shape (n_nodes,)
        The party's own local means ``mu_{m,h,i}`` of these nodes in the collaborative stage (what
        it replied then, sent back so that a party needs no state between tasks).
    own_counts : ndarray of int of shape (n_nodes,)
        Its finite rewards ``T_{m,h,i}`` of each.
    budget : int
        Evaluations the party may spend (its remaining ``n_iter``).
    horizon : int
        ``T`` of ``tau_h`` and ``b_{m,h,i}`` (the per-party budget of the whole search).
    nu1, rho, c, c1, delta : float
        The constants of ``tau_h``, ``b_{m,h,i}`` and eq. 1 (App. C.1).
    draw_seed : int
        Seed of the party's pull points and truncations (its own stream).
    pull : {"uniform", "center"}, default="uniform"
    share : bool, default=False
        Whether the party also sends its score of every configuration it evaluated; False is the
        paper's protocol (App. C.4: nothing about the personal pulls leaves the party).
    bounds : tuple (low, high), default=(0.0, 1.0)
        Range of the party's scores; a score is rescaled to ``(score - low) / (high - low)``, the
        scale of the broadcast statistics.
    """

    tree: tuple
    depth: np.ndarray
    index: np.ndarray
    eliminated: np.ndarray
    means: np.ndarray
    widths: np.ndarray
    own_means: np.ndarray
    own_counts: np.ndarray
    budget: int
    horizon: int
    nu1: float
    rho: float
    c: float
    c1: float
    delta: float
    draw_seed: int = 0
    pull: str = "uniform"
    share: bool = False
    bounds: tuple = (0.0, 1.0)

    def __post_init__(self):
        object.__setattr__(self, "tree", tuple(self.tree))
        object.__setattr__(self, "bounds", tuple(float(b) for b in self.bounds))
        for name, dtype in (("depth", np.int64), ("index", np.int64), ("eliminated", bool), ("means", float),
                            ("widths", float), ("own_means", float), ("own_counts", np.int64)):
            object.__setattr__(self, name, np.asarray(getattr(self, name), dtype=dtype).reshape(-1))

    @property
    def cost(self) -> int:
        return int(self.budget)

    def partition(self) -> Partition:
        n_dims, split, seed = self.tree
        return Partition.from_seed(int(n_dims), str(split), int(seed))


@message
class PersonalReply(Reply):
    """A party's result of its personal stage: its recommendation, nothing of its pulls (unless shared).

    Attributes
    ----------
    node : tuple (depth, index) or None
        The recommended node (its centre is the party's configuration): the highest lower
        confidence bound of its last two personal phases with estimates; None when it has none
        (the federation's recommendation stands).
    n_evaluations : int
        Evaluations the party spent.
    n_samples : int
    points : ndarray of shape (n_evaluations, n_dims) or None
        With ``share``: the configurations it evaluated, in order.
    evaluation : EvaluateReply or None
        With ``share``: its result for each of them.
    error : str or None
    kind : str or None
    """

    node: tuple | None
    n_evaluations: int
    n_samples: int
    points: np.ndarray | None = None
    evaluation: EvaluateReply | None = None
    error: str | None = None
    kind: str | None = None

    def as_evaluation(self, task=None):
        """The shared evaluations as an :class:`EvaluateTask` and its reply; ``(None, None)``
        when the party kept them."""
        if self.evaluation is None:
            return None, None
        return EvaluateTask(self.points), self.evaluation
