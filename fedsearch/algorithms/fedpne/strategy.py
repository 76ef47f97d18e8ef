"""Fed-PNE: federated phased node elimination (Li, Song, Honorio, Lin, *Federated X-Armed Bandit*).

The server (Algorithm 2) keeps a set ``K^p`` of active nodes of a hierarchical partition. Each
phase it deepens ``K^p`` until enough pulls are needed, has every party pull every active node
``t = ceil(tau_h / M)`` times (Algorithm 1), averages the parties' local means into global means,
eliminates the nodes that are worse than the best by more than the confidence widths and the
node's smoothness (eq. 1), and moves on to the children of the survivors. One phase is one
communication round, so the rounds grow like ``log T``.

The node bookkeeping (:class:`NodeStatistics`, :func:`tau`, :func:`confidence_width`,
:func:`eliminate`) is kept apart from the state machine so that other phased-elimination
algorithms (PF-PNE) reuse it.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ... import _validation as v
from ..._random import as_generator
from ...privacy import GAUSSIAN_ACCOUNTANTS, classic_gaussian_epsilon, gaussian_epsilon, gaussian_noise_for_epsilon
from ...strategy import Strategy, register_strategy
from ..xarmed.nodes import PULLS, NodeStatistics, Phase, check_weights, pull_task
from ..xarmed.tree import Nodes, Partition

__all__ = ["FedPNEStrategy", "tau", "confidence_width", "eliminate", "spread"]

# --------------------------------------------------------------------------- formulas of the paper
def _log_term(horizon: int, c1: float, delta: float) -> float:
    """``log(c1 T / delta)``, floored at 0 (the paper assumes ``c1 T / delta > 1``)."""
    return max(math.log(c1 * horizon / delta), 0.0)


def tau(depth, *, horizon: int, nu1: float, rho: float, c: float, c1: float, delta: float):
    """Pulls a node of depth ``h`` needs: ``tau_h = ceil(c^2 log(c1 T / delta) / nu1^2 * rho^(-2h))``.

    Fed-PNE Sec. 3.1 (and eq. 3); ``T`` is ``horizon``, the per-party budget of pulls.
    """
    h = np.asarray(depth, dtype=float)
    value = np.ceil(c**2 * _log_term(horizon, c1, delta) / nu1**2 * rho ** (-2.0 * h))
    return value.astype(np.int64) if value.ndim else int(value)


def confidence_width(n_pulls, *, horizon: int, c: float, c1: float, delta: float) -> np.ndarray:
    """``b_{h,i} = c sqrt(log(c1 T / delta) / T_{h,i})`` (Fed-PNE eq. 1); infinite for no pull."""
    n = np.asarray(n_pulls, dtype=float)
    return c * np.sqrt(np.divide(_log_term(horizon, c1, delta), n, out=np.full(n.shape, np.inf), where=n > 0))


def eliminate(means, widths, depth, *, nu1: float, rho: float) -> np.ndarray:
    """The elimination set of Fed-PNE eq. 1, as a boolean mask over the nodes.

    ``(h, i)`` is eliminated when ``mu_{h,i} + b_{h,i} + nu1 rho^h < mu_{h^p,i^p} - b_{h^p,i^p}``,
    ``(h^p, i^p)`` being the node of highest mean (Algorithm 2, lines 15-16). A node without an
    estimate (NaN mean: every pull of some party failed) is eliminated too; when no node has an
    estimate nothing is.
    """
    means = np.asarray(means, dtype=float)
    widths = np.asarray(widths, dtype=float)
    known = np.where(np.isnan(means), -np.inf, means)
    best = int(np.argmax(known))  # the first highest mean
    if not np.isfinite(known[best]):  # no node has an estimate
        return np.zeros(len(means), dtype=bool)
    upper = means + widths + nu1 * rho ** np.asarray(depth, dtype=float)
    return ~(upper >= means[best] - widths[best])  # NaN compares False: eliminated


def check_dp(owner: str, dp_noise, dp_epsilon, dp_delta) -> None:
    """DP-Fed-PNE is asked for by a per-release noise or a party-level epsilon (not both), with
    the party-level delta."""
    if dp_noise is not None and dp_epsilon is not None:
        raise ValueError(f"The 'dp_noise' parameter of {owner} must be None when dp_epsilon is given (the noise is "
                         f"derived from the target). Got dp_noise={dp_noise!r} instead.")
    if (dp_noise is not None or dp_epsilon is not None) and dp_delta is None:
        raise ValueError(f"The 'dp_delta' parameter of {owner} must be a float in the range (0, 1) for "
                         f"DP-Fed-PNE. Got None instead.")


def spread(budget: int, n_nodes: int, rng: np.random.Generator) -> np.ndarray:
    """Pulls of a budget-truncated phase: ``budget`` spread evenly over ``n_nodes`` nodes, a seeded
    random subset of ``budget mod n_nodes`` nodes getting one more (all of them pulled when
    ``budget >= n_nodes``, only ``budget`` random ones once otherwise)."""
    pulls = np.full(n_nodes, budget // n_nodes, dtype=np.int64)
    pulls[rng.permutation(n_nodes)[: budget % n_nodes]] += 1
    return pulls


# --------------------------------------------------------------------------- the strategy
@register_strategy("fedpne")
class FedPNEStrategy(Strategy):
    """Fed-PNE and DP-Fed-PNE (Algorithms 1-4 of the Fed-PNE paper) as a server-side strategy.

    Each phase is one round. The server expands the active set ``K^p`` while
    ``|K^p| tau_h <= M`` or ``tau_h <= 1`` (Algorithm 2, lines 5-8), asks every party to pull each
    active node ``t = ceil(tau_h / M)`` times (line 9), averages the parties' local means into
    global means (line 13), eliminates by eq. 1 and keeps the children of the survivors (lines
    15-17). ``h`` is the depth of the nodes of ``K^p`` (the text's "tau_h ... for each node on
    depth h"; the extra ``h = h + 1`` of Algorithm 2, line 4 would count one level too deep).

    **Protocol.** A phase sends every party one
    :class:`~fedsearch.algorithms.xarmed.tasks.PullTask`: the active nodes by ``(h, i)`` in the
    shared tree and ``t`` per node; the party draws the points inside each node from the task's
    seed, so every party pulls the *same* points (complete ``cv_results_`` rows and unbiased
    global means), and replies one local mean per node (Algorithm 1, lines 5-9). One task object
    serves all parties (encoded once). With ``share=True`` the party also sends its score of each
    pulled point. ``pull="uniform"`` draws a uniformly random point of the node per pull (Bubeck
    et al. 2011); ``pull="center"`` repeats the node's centre (Azar et al. 2014; the choice of the
    regret analysis).

    **Budget.** ``n_iter`` is ``T``, the number of evaluations of each party, and is never
    exceeded. A phase that would need more than the remaining ``R`` pulls is cut to exactly
    ``R``: every node gets ``floor(R / |K^p|)`` pulls and a seeded random subset of
    ``R mod |K^p|`` nodes one more, so the whole budget is spent and the nodes keep comparable
    estimates (eq. 1 uses each node's own ``T_{h,i}``); when ``R < |K^p|`` only ``R`` random nodes
    are pulled once. That truncated phase is the last one; its eliminations are recorded like any
    other.

    **Recommendation.** The centre of the node with the highest lower confidence bound
    ``mu_{h,i} - b_{h,i}`` among the nodes of the last two phases with estimates (in a complete
    phase all nodes have the same ``T_{h,i}``, so this is the phase's best node ``(h^p, i^p)``;
    the bound keeps a thinly pulled truncated phase from overriding the phase before it). Before
    any reply: the centre of the cube. Fed-PNE optimises the global objective, so every party gets
    the same recommendation.

    **Failures.** A party whose reply has ``error`` set (or is missing) is left out of that phase's
    global means and listed in ``failures_``; a NaN reward is a failed pull. A node on which a
    replying party has no finite reward gets a NaN mean and is eliminated (unless no node of the
    phase has a mean: then none is). When no party replies the phase is repeated (while budget
    remains).

    **DP-Fed-PNE** (App. D.2). With ``dp_noise`` or ``dp_epsilon`` (and ``dp_delta``) each
    party releases every node mean clipped to the reward range plus ``N(0, sigma^2)`` noise it
    draws itself (Algorithm 3, line 8; the server never sees a clean value), once per distinct
    quantity: a node mean that is the mean of configurations the party already released is
    answered with the value already released, never with fresh noise. The guarantee is
    accounted per party over *all* its releases (:mod:`fedsearch.privacy`, composed Gaussian releases): a
    release is a function of the party's whole dataset, so the releases compose. At most
    ``n_iter`` node means are released per party (each costs at least one pull), plus the
    validation of the recommendation by the search CV: ``dp_epsilon`` is met by the noise of
    ``n_iter + 1`` releases, whatever the search does. ``epsilon()`` reports what the releases
    actually made cost each party; ``release_epsilon_`` is the figure the paper states for one
    release (Theorem D.1, ``sigma = sqrt(2 log(1.25 / delta)) / epsilon``, proven only below 1).
    The theory widens ``c`` to ``sqrt(4 + 16 sigma^2)`` (Lemma D.3); ``c`` is left as given.

    Parameters
    ----------
    n_dims : int
        Dimension of the unit cube.
    n_parties : int
        ``M``.
    n_iter : int
        ``T``: evaluations per party (the time horizon of the paper).
    nu1 : float, default=1.0
        Smoothness: the diameter of a node of depth ``h`` is at most ``nu1 rho^h``.
    rho : float, default=0.5
        Smoothness ratio in ``(0, 1)``.
    c : float, default=0.1
        Confidence constant of ``tau_h`` and ``b_{h,i}`` (App. E.1.3).
    c1 : float, default=1.0
        Confidence constant inside the logarithm (App. E.1.3).
    delta : float or None, default=None
        Confidence ``delta``; ``None`` is ``1 / M``, the choice of Theorem 3.1.
    split : {"random", "longest"}, default="random"
        Partition rule (see :class:`~fedsearch.algorithms.xarmed.tree.Partition`); binary.
    pull : {"uniform", "center"}, default="uniform"
        Where a pull evaluates the objective inside a node.
    share : bool, default=False
        Whether the parties also send their score of every pulled point (ignored under DP).
    dp_noise : float or None, default=None
        DP-Fed-PNE with this per-release noise ``sigma`` (on rewards in ``[0, 1]``); needs
        ``dp_delta``.
    dp_epsilon : float or None, default=None
        DP-Fed-PNE with a party-level target: the noise is the smallest that keeps
        ``n_iter + 1`` releases of each party ``(dp_epsilon, dp_delta)``-DP. Not with
        ``dp_noise``.
    dp_delta : float or None, default=None
        The party-level ``delta`` of the guarantee.
    dp_accountant : {"analytic", "pld", "rdp"}, default="analytic"
        How releases compose: the analytic Gaussian mechanism (exact for Gaussian releases) or
        ``dp-accounting``'s PLD or RDP accountant (the optional ``dp`` extra).
    weights : array-like of shape (n_parties,) or None, default=None
        Weights of the parties in the global means (e.g. their sample counts); None is the
        paper's plain mean ``f = (1/M) sum_m f_m``. ``b_{h,i}`` is kept as in the paper.
    random_state : int, numpy.random.Generator or None, default=None
        Seeds the partition, the pull points, the truncation and the parties' DP noise.

    Attributes
    ----------
    partition : Partition
    phases_ : list of Phase
        Every aggregated phase, in order.
    failures_ : list of tuple
        ``(round, party, message)`` of each unusable reply.
    spent_ : int
        Evaluations asked of each party so far.
    noise_std_ : float
        ``sigma`` of the parties' DP noise (0 without DP).
    releases_ : ndarray of int of shape (n_parties,)
        Values each party was asked to release (node means with at least one pull).
    release_epsilon_ : float or None
        The per-release ``epsilon`` the paper states for ``noise_std_`` at ``dp_delta``.

    Examples
    --------
    >>> import numpy as np
    >>> from fedsearch.algorithms.fedpne.strategy import FedPNEStrategy
    >>> from fedsearch.research.synthetic import FunctionParty, Objective
    >>> party = FunctionParty(Objective(lambda X: 1 - (X[:, 0] - 0.3) ** 2, 1, "peak"))
    >>> strategy = FedPNEStrategy(n_dims=1, n_parties=3, n_iter=200, random_state=0)
    >>> round = 0
    >>> while (tasks := strategy.configure(round)) is not None:
    ...     replies = {p: party.handle(task) for p, task in tasks.items()}
    ...     strategy.aggregate(round, replies)
    ...     round += 1
    >>> strategy.spent_
    200
    >>> bool(abs(strategy.recommend()[0] - 0.3) < 0.05)
    True
    """

    def __init__(self, n_dims, n_parties, n_iter, *, nu1=1.0, rho=0.5, c=0.1, c1=1.0, delta=None,
                 split="random", pull="uniform", share=False, dp_noise=None, dp_epsilon=None,
                 dp_delta=None, dp_accountant="analytic", weights=None, random_state=None):
        owner = type(self).__name__
        for name, value in (("n_parties", n_parties), ("n_iter", n_iter)):
            v.check_value(owner, name, value, v.POSITIVE_INT)
        for name, value in (("nu1", nu1), ("c", c), ("c1", c1)):
            v.check_value(owner, name, value, v.POSITIVE)
        v.check_value(owner, "rho", rho, v.OPEN_UNIT)
        v.check_value(owner, "delta", delta, v.OPEN_UNIT, v.NONE)
        v.check_value(owner, "pull", pull, v.options(*PULLS))
        v.check_value(owner, "dp_noise", dp_noise, v.POSITIVE, v.NONE)
        v.check_value(owner, "dp_epsilon", dp_epsilon, v.POSITIVE, v.NONE)
        v.check_value(owner, "dp_delta", dp_delta, v.OPEN_UNIT, v.NONE)
        v.check_value(owner, "dp_accountant", dp_accountant, v.options(*GAUSSIAN_ACCOUNTANTS))
        check_dp(owner, dp_noise, dp_epsilon, dp_delta)
        self.n_parties, self.n_iter = int(n_parties), int(n_iter)
        self.weights = check_weights(owner, weights, self.n_parties)
        self.nu1, self.rho, self.c, self.c1 = float(nu1), float(rho), float(c), float(c1)
        self.delta = 1.0 / self.n_parties if delta is None else float(delta)
        self.pull, self.share = pull, bool(share)
        self.dp_delta, self.dp_accountant = dp_delta, dp_accountant
        if dp_epsilon is not None:  # the whole budget: n_iter node means and one validation
            self.noise_std_ = gaussian_noise_for_epsilon(dp_epsilon, self.n_iter + 1, dp_delta, dp_accountant)
        else:
            self.noise_std_ = 0.0 if dp_noise is None else float(dp_noise)
        self.release_epsilon_ = classic_gaussian_epsilon(self.noise_std_, dp_delta) if self.noise_std_ else None
        self.releases_ = np.zeros(self.n_parties, dtype=np.int64)
        self._rng = as_generator(random_state)
        self.partition = Partition(n_dims, split=split, random_state=self._rng)
        self.phases_: list[Phase] = []
        self.failures_: list[tuple] = []
        self.spent_ = 0
        self._active = self.partition.root()  # K^1 = {(0, 1)}
        self._plan = None
        self._done = False
        self._recommended = (None, None)  # (phases aggregated, recommended node)

    # ------------------------------------------------------------------ formulas bound to the parameters
    def tau(self, depth):
        """``tau_h`` with this strategy's constants (Sec. 3.1)."""
        return tau(depth, horizon=self.n_iter, nu1=self.nu1, rho=self.rho, c=self.c, c1=self.c1,
                   delta=self.delta)

    def confidence_width(self, n_pulls) -> np.ndarray:
        """``b_{h,i}`` with this strategy's constants (eq. 1)."""
        return confidence_width(n_pulls, horizon=self.n_iter, c=self.c, c1=self.c1, delta=self.delta)

    def _expand(self, nodes: Nodes, remaining: int) -> Nodes:
        """Algorithm 2, lines 5-8: deepen until ``|K^p| tau_h > M`` and ``tau_h > 1``.

        Also stops before the children would outnumber the ``remaining`` pulls of a party (they
        could not all be pulled once), which bounds the memory when ``c`` is tiny.
        """
        while (len(nodes) and nodes.depth[0] < self.partition.max_depth
               and len(nodes) * self.partition.k <= remaining):
            t_h = self.tau(nodes.depth[0])
            if not (len(nodes) * t_h <= self.n_parties or t_h <= 1):
                break
            nodes = self.partition.children(nodes)
        return nodes

    # ------------------------------------------------------------------ Strategy protocol
    def configure(self, round):
        if self._plan is not None and self._plan["round"] == round:
            return self._plan["tasks"]
        remaining = self.n_iter - self.spent_
        if self._done or remaining <= 0 or not len(self._active):
            self._done = True
            return None
        nodes = self._active = self._expand(self._active, remaining)
        # t_{m,h,i} = ceil(tau_h / M) (line 9); at least 1 when log(c1 T / delta) <= 0 makes tau_h 0
        t = max(1, -(-self.tau(nodes.depth[0]) // self.n_parties))
        pulls = np.full(len(nodes), t, dtype=np.int64)
        truncated = len(nodes) * t > remaining
        if truncated:  # the budget-truncated last phase (see the class docstring)
            pulls = spread(remaining, len(nodes), self._rng)
        tasks = self._tasks(nodes, pulls)
        self.spent_ += int(pulls.sum())
        self._plan = {"round": round, "tasks": tasks, "nodes": nodes, "pulls": pulls,
                      "truncated": truncated}
        return tasks

    def aggregate(self, round, replies):
        plan, self._plan = self._plan, None
        if plan is None or plan["round"] != round:
            raise RuntimeError(f"aggregate({round}) without a matching configure({round}).")
        nodes, pulls = plan["nodes"], plan["pulls"]
        stats = NodeStatistics.from_replies(replies, self.n_parties, len(nodes))
        self.failures_.extend((round, p, msg) for p, msg in sorted(stats.failures.items()))
        means = stats.global_means(self.weights)
        widths = self.confidence_width(stats.n_pulls)
        if plan["truncated"]:  # a node the budget left unpulled is not judged
            eliminated = np.zeros(len(nodes), dtype=bool)
            pulled = pulls > 0
            eliminated[pulled] = eliminate(means[pulled], widths[pulled], nodes.depth[pulled],
                                           nu1=self.nu1, rho=self.rho)
        else:
            eliminated = eliminate(means, widths, nodes.depth, nu1=self.nu1, rho=self.rho)
        self.phases_.append(Phase(round, nodes, pulls, stats, means, widths, eliminated,
                                  plan["truncated"]))
        if plan["truncated"]:
            self._done = True
        elif stats.replied.any():  # K^{p+1}: children of K^p \ E^p (line 17)
            self._active = self.partition.children(nodes[~eliminated])
        # no party replied: K^p stays active and the phase is repeated

    def _tasks(self, nodes: Nodes, pulls) -> dict:
        """One :class:`PullTask` for every party (the same object), or under DP one per party,
        each with its own noise seed; counts the releases."""
        task = pull_task(self.partition, nodes, pulls, self._rng, self.pull, self.share)
        if not self.noise_std_:
            return dict.fromkeys(range(self.n_parties), task)
        self.releases_ += int(np.count_nonzero(pulls))
        seeds = self._rng.integers(2**63, size=self.n_parties)
        return {p: dataclasses.replace(task, noise_std=self.noise_std_, noise_seed=int(seeds[p]), share=False,
                                       clip=(0.0, 1.0))
                for p in range(self.n_parties)}

    def recommended_node(self) -> Nodes:
        """The node whose centre :meth:`recommend` returns (no node before any reply)."""
        if self._recommended[0] != len(self.phases_):  # once per phase, not once per party
            self._recommended = (len(self.phases_), self._best_node())
        return self._recommended[1]

    def _best_node(self) -> Nodes:
        candidates = [ph for ph in self.phases_ if np.any(np.isfinite(ph.means))][-2:]
        if not candidates:
            return self.partition.root()[:0]
        lcb = np.concatenate([ph.means - ph.widths for ph in candidates])
        best = int(np.nanargmax(lcb))
        for ph in candidates:
            if best < len(ph.nodes):
                return ph.nodes[[best]]
            best -= len(ph.nodes)

    def recommend(self, party=None):
        node = self.recommended_node()
        return node.centers[0].copy() if len(node) else np.full(self.partition.n_dims, 0.5)

    def epsilon(self, extra_releases: int = 0) -> np.ndarray:
        """The party-level ``epsilon`` at ``dp_delta`` of each party's releases so far (plus
        ``extra_releases`` each), by ``dp_accountant``; None without DP."""
        if not self.noise_std_:
            return None
        counts = self.releases_ + int(extra_releases)
        values = {int(k): gaussian_epsilon(self.noise_std_, int(k), self.dp_delta, self.dp_accountant)
                  for k in np.unique(counts)}
        return np.array([values[int(k)] for k in counts])

    @property
    def n_phases(self) -> int:
        """Phases aggregated so far (one communication round each)."""
        return len(self.phases_)
