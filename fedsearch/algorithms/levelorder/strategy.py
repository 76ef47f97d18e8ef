"""The level-order distributed X-armed bandit (Chen, Liu, Zhang, Li, *A Parallel algorithm for
X-Armed bandits*, Algorithm 1).

The tree is traversed level by level: every party evaluates the representative point of every
node of the confidence set ``S_h`` ``T_h`` times, the parties' means are averaged, and the nodes
within ``3 nu1 rho^h`` of the best are expanded into ``S_{h+1}``. One level is one communication
round (``O(log(mn))`` rounds, Theorem 2). The answer is the best node of the deepest level.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ... import _validation as v
from ..._random import as_generator
from ...strategy import Strategy, register_strategy
from ..xarmed.nodes import PULLS, NodeStatistics, Phase, check_weights, pull_task
from ..xarmed.tree import Partition

__all__ = ["LevelOrderStrategy", "level_pulls"]


def level_pulls(depth: int, n_nodes: int, *, n_parties: int, nu1: float, rho: float, delta: float) -> int:
    """``T_h = ceil(log(pi^2 (h + 1)^2 |S_h| / (3 delta)) / (2 (nu1 rho^h)^2 m))``, at least 1.

    Algorithm 1 of the parallel X-armed bandit paper (Sec. 4); at ``h = 0`` this is the
    algorithm's ``T_0`` up to the ceiling and ``nu1`` against ``nu1^2`` (equal for ``nu1 = 1``).
    """
    value = math.log(math.pi**2 * (depth + 1) ** 2 * n_nodes / (3 * delta)) / (
        2 * (nu1 * rho**depth) ** 2 * n_parties)
    return max(1, math.ceil(value))


@register_strategy("levelorder")
class LevelOrderStrategy(Strategy):
    """The level-order parallel X-armed bandit (Algorithm 1 of Chen et al.) as a strategy.

    Level ``h`` is one round: every party gets one
    :class:`~fedsearch.algorithms.xarmed.tasks.PullTask` naming the nodes of ``S_h`` and ``T_h``,
    evaluates each node ``T_h`` times (the node's centre, the paper's representative point
    ``x_{h,i}``) and communicates its mean rewards ``mu^j_{h,i}`` (Algorithm 1, "communicate mean
    rewards"); the server averages them, ``mu_{h,i} = (1/m) sum_j mu^j_{h,i}``, and expands into
    ``S_{h+1}`` the children of the nodes with ``mu_{h,i} >= mu*_h - 3 nu1 rho^h``. Every party
    pulls the same points.

    The algorithm is anytime: with ``n_iter=None`` it never stops by itself (the caller ends the
    round loop) and :meth:`recommend` is valid after any round. **Budget.** With ``n_iter`` the
    paper's loop runs until the budget: a level whose ``|S_h| T_h`` pulls exceed a party's
    remaining ``R`` is the last, pulled ``floor(R / |S_h|)`` times per node (the remainder rule:
    the deepest level gets what is left; ``R mod |S_h|`` pulls stay unspent), and the search ends
    when ``R < |S_h|``. A ``UserWarning`` says when the budget ended the search above depth 2
    (the recommendation is then a box of half the cube or more).

    The recommendation is the centre of the node of highest mean at the deepest level evaluated
    (``x(n)`` of the paper), the same for every party; before any reply, the centre of the cube.
    A party whose reply has ``error`` set is left out of that level's means (and listed in
    ``failures_``); a node on which a replying party has no finite reward gets a NaN mean and is
    not expanded; a level on which no party replied is repeated.

    Parameters
    ----------
    n_dims : int
        Dimension of the unit cube.
    n_parties : int
        ``m``, the number of players.
    n_iter : int or None, default=None
        Evaluations per party (``n``); ``None`` for no limit.
    nu1 : float, default=1.0
        Smoothness: cells of depth ``h`` have diameter at most ``nu1 rho^h``.
    rho : float, default=0.5
        Smoothness ratio in ``(0, 1)``.
    delta : float or None, default=None
        Confidence; ``None`` is ``1 / n_iter`` (the choice after Theorem 1), or 0.05 without a
        budget.
    split : {"random", "longest"}, default="random"
        Partition rule (see :class:`~fedsearch.algorithms.xarmed.tree.Partition`); binary like the paper's
        covering tree.
    pull : {"center", "uniform"}, default="center"
        Evaluate the node's centre (the paper) or a uniformly random point of it per pull.
    share : bool, default=False
        Whether the parties also send their score of every pulled point.
    weights : array-like of shape (n_parties,) or None, default=None
        Weights of the players in the means (None: the paper's plain mean).
    random_state : int, numpy.random.Generator or None, default=None

    Attributes
    ----------
    partition : Partition
    levels_ : list of Phase
        Every aggregated level, in order: ``eliminated`` marks the nodes not expanded,
        ``widths`` is the accuracy ``eps`` of Lemma 1 at the pulls received.
    failures_ : list of tuple
        ``(round, party, message)`` of each unusable reply.
    spent_ : int
        Evaluations asked of each party so far.

    Examples
    --------
    >>> from fedsearch.algorithms.levelorder.strategy import LevelOrderStrategy
    >>> from fedsearch.research.synthetic import FunctionParty, Objective
    >>> party = FunctionParty(Objective(lambda X: 1 - (X[:, 0] - 0.3) ** 2, 1, "peak"))
    >>> strategy = LevelOrderStrategy(n_dims=1, n_parties=4, n_iter=1000, random_state=0)
    >>> round = 0
    >>> while (tasks := strategy.configure(round)) is not None:
    ...     replies = {p: party.handle(task) for p, task in tasks.items()}
    ...     strategy.aggregate(round, replies)
    ...     round += 1
    >>> strategy.spent_ <= 1000
    True
    >>> bool(abs(strategy.recommend()[0] - 0.3) < 0.05)
    True
    """

    def __init__(self, n_dims, n_parties, n_iter=None, *, nu1=1.0, rho=0.5, delta=None,
                 split="random", pull="center", share=False, weights=None, random_state=None):
        owner = type(self).__name__
        v.check_value(owner, "n_parties", n_parties, v.POSITIVE_INT)
        v.check_value(owner, "n_iter", n_iter, v.POSITIVE_INT, v.NONE)
        v.check_value(owner, "nu1", nu1, v.POSITIVE)
        v.check_value(owner, "rho", rho, v.OPEN_UNIT)
        v.check_value(owner, "delta", delta, v.OPEN_UNIT, v.NONE)
        v.check_value(owner, "pull", pull, v.options(*PULLS))
        self.n_parties = int(n_parties)
        self.n_iter = None if n_iter is None else int(n_iter)
        self.weights = check_weights(owner, weights, self.n_parties)
        self.nu1, self.rho = float(nu1), float(rho)
        if delta is None:
            delta = 0.05 if self.n_iter is None or self.n_iter < 2 else 1.0 / self.n_iter
        self.delta = float(delta)
        self.pull, self.share = pull, bool(share)
        self._rng = as_generator(random_state)
        self.partition = Partition(n_dims, split=split, random_state=self._rng)
        self.levels_: list[Phase] = []
        self.failures_: list[tuple] = []
        self.spent_ = 0
        self._level = self.partition.root()  # S_0 = {(0, 1)}
        self._plan = None
        self._done = False

    def level_pulls(self, depth: int, n_nodes: int) -> int:
        """``T_h`` with this strategy's constants."""
        return level_pulls(depth, n_nodes, n_parties=self.n_parties, nu1=self.nu1, rho=self.rho,
                           delta=self.delta)

    def configure(self, round):
        if self._plan is not None and self._plan["round"] == round:
            return self._plan["tasks"]
        nodes = self._level
        t = self.level_pulls(int(nodes.depth[0]), len(nodes)) if len(nodes) else 0
        if self.n_iter is not None and len(nodes):
            remaining = self.n_iter - self.spent_
            if len(nodes) * t > remaining:  # the remainder rule: the last level gets what is left
                t, self._done = remaining // len(nodes), True
        if self._done and not t or not len(nodes):
            self._done = True
            if self.n_iter is not None and self.depth_ < 2:
                warnings.warn(f"The budget n_iter={self.n_iter} ended the level-order search at depth "
                              f"{self.depth_} (depth 2 needs more pulls per party): the recommendation is "
                              f"a box of half the space or more.", UserWarning, stacklevel=2)
            return None
        pulls = np.full(len(nodes), t, dtype=np.int64)
        task = pull_task(self.partition, nodes, pulls, self._rng, self.pull, self.share)
        tasks = dict.fromkeys(range(self.n_parties), task)
        self.spent_ += int(pulls.sum())
        self._plan = {"round": round, "tasks": tasks, "nodes": nodes, "pulls": pulls}
        return tasks

    def aggregate(self, round, replies):
        plan, self._plan = self._plan, None
        if plan is None or plan["round"] != round:
            raise RuntimeError(f"aggregate({round}) without a matching configure({round}).")
        nodes, pulls = plan["nodes"], plan["pulls"]
        stats = NodeStatistics.from_replies(replies, self.n_parties, len(nodes))
        self.failures_.extend((round, p, msg) for p, msg in sorted(stats.failures.items()))
        if not stats.replied.any():  # nothing learnt: the level is repeated
            return
        means = stats.global_means(self.weights)
        h = int(nodes.depth[0])
        if np.any(np.isfinite(means)):
            with np.errstate(invalid="ignore"):  # expand mu_{h,i} >= mu*_h - 3 nu1 rho^h
                expand = means >= np.nanmax(means) - 3 * self.nu1 * self.rho**h
        else:
            expand = np.zeros(len(nodes), dtype=bool)
        # Lemma 1's accuracy eps = sqrt(log(pi^2 (h+1)^2 |S_h| / 3 delta) / (2 m T_h))
        with np.errstate(divide="ignore"):
            widths = np.sqrt(math.log(math.pi**2 * (h + 1) ** 2 * len(nodes) / (3 * self.delta))
                             / (2 * stats.n_pulls))
        self.levels_.append(Phase(round, nodes, pulls, stats, means, widths, ~expand, self._done))
        if h >= self.partition.max_depth:
            self._done = True
        self._level = self.partition.children(nodes[expand]) if not self._done else nodes[:0]

    def recommend(self, party=None):
        evaluated = [lv for lv in self.levels_ if np.any(np.isfinite(lv.means))]
        if not evaluated:
            return np.full(self.partition.n_dims, 0.5)
        last = evaluated[-1]
        return last.nodes.centers[int(np.nanargmax(last.means))].copy()

    @property
    def depth_(self) -> int:
        """Deepest level evaluated (``h_max``), -1 before any."""
        return int(self.levels_[-1].nodes.depth[0]) if self.levels_ else -1
