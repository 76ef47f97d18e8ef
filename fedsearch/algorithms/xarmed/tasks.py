"""The X-armed bandits' messages: pull these nodes so often, reply one mean per node.

This is the protocol of the papers (Fed-PNE Algorithm 1, lines 5-9 and Algorithm 2, line 9;
PF-PNE Algorithm 2; the level-order bandit's Algorithm 1): the server sends node identities and
pull counts down, each party pulls the nodes itself and sends one local mean per node up. A
node is named by ``(depth, index)`` in the tree both sides derive from ``(n_dims, split, seed)``
(:meth:`~fedsearch.algorithms.xarmed.tree.Partition.from_seed`); the points inside a node are
drawn from ``draw_seed``, so every party of a round pulls the same configurations (complete
``cv_results_`` rows, unbiased global means) and the server can tell which they were without
receiving them.
"""

from __future__ import annotations

import functools
from dataclasses import field

import numpy as np

from ...messages import EvaluateReply, EvaluateTask, Reply, Task, message
from .tree import Partition

__all__ = ["PullTask", "PullReply"]


@message
class PullTask(Task):
    """Pull each node ``(depth, index[j])`` ``counts[j]`` times and reply its mean reward.

    Parameters
    ----------
    tree : tuple (n_dims, split, seed)
        The shared partition (:meth:`Partition.from_seed`).
    depth : int
        ``h`` of every node of the task (one depth per phase in all three algorithms).
    index : ndarray of int of shape (n_nodes,)
        ``i`` of each node.
    counts : ndarray of int of shape (n_nodes,)
        Pulls of each node (``t_{m,h,i}``).
    draw_seed : int
        Seed of the points drawn inside the nodes (unused for ``pull="center"``).
    pull : {"uniform", "center"}, default="uniform"
        A uniformly random point of the node per pull, or its centre.
    share : bool, default=False
        Whether the party also sends its result for each pulled point (so that ``cv_results_``
        lists every configuration it evaluated); the papers' protocol sends the means only.
        Ignored under DP (``noise_std > 0``): only the noisy means leave the party.
    noise_std : float, default=0.0
        DP-Fed-PNE (App. D.2): the party releases ``clip(mean) + N(0, noise_std^2)``, once per
        distinct released quantity (a repeat gets the value already released).
    noise_seed : int or None, default=None
        Seed of that noise in a simulation, so that runs are reproducible; None draws from the
        party's own entropy (what a deployed party does: whoever knows the seed knows the noise).
    clip : tuple (low, high) or None, default=None
        Range each released mean is clipped to before the noise (the sensitivity the noise is
        calibrated to is ``high - low``).
    """

    tree: tuple
    depth: int
    index: np.ndarray
    counts: np.ndarray
    draw_seed: int = 0
    pull: str = "uniform"
    share: bool = False
    noise_std: float = 0.0
    noise_seed: int | None = None
    clip: tuple | None = None

    def __post_init__(self):
        object.__setattr__(self, "tree", tuple(self.tree))
        object.__setattr__(self, "index", np.asarray(self.index, dtype=np.int64).reshape(-1))
        object.__setattr__(self, "counts", np.asarray(self.counts, dtype=np.int64).reshape(-1))

    @property
    def cost(self) -> int:
        return int(self.counts.sum())

    def partition(self) -> Partition:
        n_dims, split, seed = self.tree
        return Partition.from_seed(int(n_dims), str(split), int(seed))

    @property
    def points(self) -> np.ndarray:
        """The pulled points, ``counts[0]`` of node 0 first (what every party evaluates);
        read-only, drawn once for the tasks of a round."""
        return _draw(self.tree, int(self.depth), self.index.tobytes(), self.counts.tobytes(), int(self.draw_seed),
                     self.pull)


@functools.lru_cache(maxsize=4)
def _draw(tree, depth, index, counts, draw_seed, pull) -> np.ndarray:
    """The points of a task, cached by content: the parties of one round (in one process) and
    the handler's two steps share one drawing."""
    n_dims, split, seed = tree
    nodes = Partition.from_seed(int(n_dims), str(split), int(seed)).nodes(depth, np.frombuffer(index, np.int64))
    points = nodes.sample(np.frombuffer(counts, np.int64), np.random.default_rng(draw_seed), pull)
    points.setflags(write=False)
    return points


@message
class PullReply(Reply):
    """One party's local means of the nodes of a :class:`PullTask` (``mu_{m,h,i}``).

    Attributes
    ----------
    means : ndarray of shape (n_nodes,)
        Mean reward of each node over its finite rewards (NaN when every pull failed); under
        DP clipped and noisy.
    counts : ndarray of int of shape (n_nodes,)
        Finite rewards of each node (``T_{m,h,i}``).
    n_samples : int
        The party's number of samples.
    metric : str
        The name of the objective metric (what a released mean is a score of).
    evaluation : EvaluateReply or None
        With ``share``: the party's result for every pulled point, in order.
    error : str or None
    """

    means: np.ndarray
    counts: np.ndarray
    n_samples: int
    metric: str = "score"
    evaluation: EvaluateReply | None = None
    error: str | None = None

    def as_evaluation(self, task: PullTask):
        """The shared results as an evaluation of the task's points (for ``cv_results_``);
        under DP with ``pull="center"`` each node's released mean is the noisy score of its
        centre, and only that is listed."""
        if self.evaluation is not None:
            return EvaluateTask(task.points), self.evaluation
        if task.noise_std > 0 and task.pull == "center" and self.error is None:
            centers = task.partition().nodes(int(task.depth), task.index).centers
            means = np.asarray(self.means, dtype=float)
            return EvaluateTask(centers), EvaluateReply(scores=means, n_samples=self.n_samples,
                                                        test_scores={self.metric: means})
        return None, None
