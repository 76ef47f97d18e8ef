"""Hierarchical partition of the unit cube, shared by the server and every party.

The X-armed bandits of fedsearch (Fed-PNE, PF-PNE, the level-order bandit) search a tree of
boxes. Node ``(h, i)`` is the ``i``-th box (1-based) at depth ``h``; the root ``(0, 1)`` is the
whole cube ``[0, 1]^d`` and node ``(h, i)`` has the ``k`` children ``(h + 1, k i - j)``,
``j = k - 1, ..., 0`` (Fed-PNE paper, Sec. 2.2: ``P_{h,i} = U_j P_{h+1, ki-j}``). Each child is one
of ``k`` equal slices of its parent along one dimension:

- ``split="random"``: a uniformly random dimension per parent (the partition of the papers'
  experiments, Fed-PNE App. E.1.2-E.1.3). The dimension is a hash of ``(seed, h, i)``, so a node's
  split does not depend on which other nodes were expanded before it, and whoever holds the seed
  (server or party) derives the same tree.
- ``split="longest"``: the longest side of the box (lowest dimension on ties), so that diameters
  shrink geometrically.

The representative point of a node is the centre of its box. Everything is vectorised over sets
of nodes (:class:`Nodes`): a phase of Fed-PNE expands thousands of nodes at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Nodes", "Partition", "SPLIT_RULES"]

#: how a box is cut: along a seeded random dimension, or its longest side
SPLIT_RULES = ("random", "longest")

_MASK64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def _mix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser on a uint64 array (wraps modulo 2**64, no overflow warnings)."""
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return (x ^ (x >> np.uint64(31))) & _MASK64


@dataclass(frozen=True, eq=False)
class Nodes:
    """A set of nodes of a partition, stored column-wise.

    Attributes
    ----------
    depth : ndarray of int of shape (n_nodes,)
        ``h`` of each node.
    index : ndarray of int of shape (n_nodes,)
        ``i`` of each node, 1-based within its depth.
    lower, upper : ndarray of shape (n_nodes, n_dims)
        The node's box ``[lower, upper]`` in the unit cube.
    """

    depth: np.ndarray
    index: np.ndarray
    lower: np.ndarray
    upper: np.ndarray

    def __len__(self) -> int:
        return len(self.depth)

    def __getitem__(self, key) -> Nodes:
        """The subset selected by a boolean mask or integer indices."""
        return Nodes(self.depth[key], self.index[key], self.lower[key], self.upper[key])

    @property
    def centers(self) -> np.ndarray:
        """The representative point of each node (the centre of its box), shape (n_nodes, n_dims)."""
        return 0.5 * (self.lower + self.upper)

    @property
    def diameters(self) -> np.ndarray:
        """The Euclidean diameter of each box, shape (n_nodes,)."""
        return np.linalg.norm(self.upper - self.lower, axis=1)

    def keys(self) -> list[tuple[int, int]]:
        """The ``(h, i)`` pair of each node."""
        return list(zip(self.depth.tolist(), self.index.tolist()))

    def sample(self, n_per_node, rng: np.random.Generator, pull: str = "uniform") -> np.ndarray:
        """Pull points: ``n_per_node[j]`` points of node ``j``, node after node.

        Parameters
        ----------
        n_per_node : int or array-like of int of shape (n_nodes,)
        rng : numpy.random.Generator
            Source of the uniform points (unused for ``pull="center"``).
        pull : {"uniform", "center"}, default="uniform"
            A uniformly random point of the box (Bubeck et al. 2011) or its centre (Azar et al.
            2014); the two choices of Fed-PNE Sec. 3.1.

        Returns
        -------
        ndarray of shape (sum(n_per_node), n_dims)
        """
        counts = np.broadcast_to(np.asarray(n_per_node, dtype=np.int64), (len(self),))
        if pull == "center":
            return np.repeat(self.centers, counts, axis=0)
        if pull == "uniform":
            lower = np.repeat(self.lower, counts, axis=0)
            return lower + rng.random(lower.shape) * np.repeat(self.upper - self.lower, counts, axis=0)
        raise ValueError(f"pull must be 'uniform' or 'center'. Got {pull!r} instead.")


class Partition:
    """A ``k``-ary hierarchical partition of ``[0, 1]^n_dims`` into boxes.

    Parameters
    ----------
    n_dims : int
        Dimension of the unit cube.
    split : {"random", "longest"}, default="random"
        Which dimension a parent cuts: a seeded uniformly random one (the papers' experiments)
        or its longest side.
    k : int, default=2
        Number of children of every node (equal slices of the parent).
    random_state : int, numpy.random.Generator or None, default=None
        Seed of the random splits. Two partitions with the same integer seed are the same tree.

    Attributes
    ----------
    seed : int
        The 64-bit seed the random splits are hashed from.

    Examples
    --------
    >>> from fedsearch.algorithms.xarmed.tree import Partition
    >>> part = Partition(2, split="longest")
    >>> children = part.children(part.root())
    >>> children.keys()
    [(1, 1), (1, 2)]
    >>> children.centers
    array([[0.25, 0.5 ],
           [0.75, 0.5 ]])
    """

    def __init__(self, n_dims: int, *, split: str = "random", k: int = 2, random_state=None):
        self._set(n_dims, split, k, np.random.default_rng(random_state).integers(2**63))

    def _set(self, n_dims, split, k, seed) -> None:
        if int(n_dims) < 1:
            raise ValueError(f"n_dims must be an int in the range [1, inf). Got {n_dims!r} instead.")
        if split not in SPLIT_RULES:
            raise ValueError(f"split must be one of {SPLIT_RULES}. Got {split!r} instead.")
        if int(k) < 2:
            raise ValueError(f"k must be an int in the range [2, inf). Got {k!r} instead.")
        self.n_dims, self.split, self.k, self.seed = int(n_dims), split, int(k), int(seed)
        # the deepest depth whose 1-based indices k**h still fit in int64
        self.max_depth = int(np.floor(62 / np.log2(self.k)))

    @classmethod
    def from_seed(cls, n_dims: int, split: str, seed: int, k: int = 2) -> Partition:
        """The partition whose random splits hash ``seed`` (a party rebuilds the server's tree
        from ``(n_dims, split, seed)``: the shared tree of a :class:`~fedsearch.algorithms.xarmed.tasks.PullTask`)."""
        tree = cls.__new__(cls)  # no generator to draw a seed from: the seed is given
        tree._set(n_dims, split, k, seed)
        return tree

    def root(self) -> Nodes:
        """The node ``(0, 1)``: the whole cube."""
        d = self.n_dims
        return Nodes(np.zeros(1, np.int64), np.ones(1, np.int64), np.zeros((1, d)), np.ones((1, d)))

    def split_dims(self, nodes: Nodes) -> np.ndarray:
        """The dimension each node of ``nodes`` cuts to make its children, shape (n_nodes,)."""
        if self.n_dims == 1:  # one dimension to cut, whatever the rule
            return np.zeros(len(nodes), dtype=np.int64)
        if self.split == "longest":
            return np.argmax(np.round(nodes.upper - nodes.lower, 12), axis=1)
        h = nodes.depth.astype(np.uint64)
        i = nodes.index.astype(np.uint64)
        key = _mix64(_mix64(np.full(len(nodes), self.seed, np.uint64) ^ h) ^ i)
        return (key % np.uint64(self.n_dims)).astype(np.int64)

    def children(self, nodes: Nodes) -> Nodes:
        """The ``k`` children of every node, parent after parent, in increasing index.

        Child ``c = 0, ..., k - 1`` of ``(h, i)`` is ``(h + 1, k (i - 1) + 1 + c)``, the ``c``-th
        slice of the parent along its split dimension; the last slice ends exactly at the
        parent's upper bound, so the children tile their parent.
        """
        if len(nodes) and int(nodes.depth.max()) >= self.max_depth:
            raise ValueError(f"The partition cannot go deeper than depth {self.max_depth}.")
        k, n = self.k, len(nodes)
        dims = self.split_dims(nodes)
        rows = np.arange(n)
        lo = nodes.lower[rows, dims]
        width = nodes.upper[rows, dims] - lo
        c = np.arange(k)
        cuts_lo = lo[:, None] + width[:, None] * c[None, :] / k          # (n, k)
        cuts_hi = np.concatenate([cuts_lo[:, 1:], nodes.upper[rows, dims][:, None]], axis=1)
        lower = np.repeat(nodes.lower, k, axis=0)
        upper = np.repeat(nodes.upper, k, axis=0)
        child_rows = np.arange(n * k)
        child_dims = np.repeat(dims, k)
        lower[child_rows, child_dims] = cuts_lo.ravel()
        upper[child_rows, child_dims] = cuts_hi.ravel()
        depth = np.repeat(nodes.depth + 1, k)
        index = (k * (nodes.index[:, None] - 1) + 1 + c[None, :]).ravel()
        return Nodes(depth, index, lower, upper)

    def nodes(self, h: int, index) -> Nodes:
        """The nodes ``(h, i)`` for every ``i`` of ``index``, found by walking down from the root
        together (vectorised: ``h`` steps over all of them)."""
        index = np.asarray(index, dtype=np.int64).reshape(-1)
        if not 0 <= h <= self.max_depth or (len(index) and (index.min() < 1 or index.max() > self.k**h)):
            raise ValueError(f"There are no nodes {index.tolist()} at depth {h} of a {self.k}-ary partition.")
        n, d, k = len(index), self.n_dims, self.k
        current = Nodes(np.zeros(n, np.int64), np.ones(n, np.int64), np.zeros((n, d)), np.ones((n, d)))
        rows = np.arange(n)
        for g in range(h):
            child = ((index - 1) // k ** (h - g - 1)) % k  # which of its k children leads to (h, i)
            dims = self.split_dims(current)
            lo, hi = current.lower[rows, dims], current.upper[rows, dims]
            width = hi - lo
            lower, upper = current.lower.copy(), current.upper.copy()
            lower[rows, dims] = lo + width * child / k
            upper[rows, dims] = np.where(child == k - 1, hi, lo + width * (child + 1) / k)
            current = Nodes(current.depth + 1, k * (current.index - 1) + 1 + child, lower, upper)
        return current

    def node(self, h: int, i: int) -> Nodes:
        """The single node ``(h, i)``, found by walking down from the root."""
        if not (0 <= h <= self.max_depth and 1 <= i <= self.k**h):
            raise ValueError(f"There is no node ({h}, {i}) in a {self.k}-ary partition.")
        current = self.root()
        for g in range(h):
            child = ((i - 1) // self.k ** (h - g - 1)) % self.k
            current = self.children(current)[[child]]
        return current

    def __repr__(self) -> str:
        return f"Partition(n_dims={self.n_dims}, split={self.split!r}, k={self.k}, seed={self.seed})"
