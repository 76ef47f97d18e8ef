"""PF-PNE: personalized federated phased node elimination (Li, Song, Honorio, Lin, *Personalized
Federated X-armed Bandit*, 001_*.txt, Algorithms 1-3).

Every party wants the maximiser of its *own* objective ``f_m``. PF-PNE collaborates while the
parties' objectives agree and then lets each party continue alone:

1. **Collaborative stage** (Algorithms 1-2, depths ``h = 1 .. H0``). Fed-PNE's phases on the
   global means ``mu_{h,i} = (1/M) sum_m mu_{m,h,i}``: every party pulls every node of ``K^h``
   ``ceil(tau_h / M)`` times, the server eliminates ``E^h`` by Fed-PNE's eq. 1 and broadcasts the
   survivors ``K^h`` with their global statistics ``(mu_{h,i}, b_{h,i})``, which replace the
   parties' local ones (Algorithm 2, line 11). ``H0`` is set by ``Delta``, the bound on
   ``|f* - f_m*|`` (Assumption 3): see :func:`transition_depth`.
2. **Personal stage** (Algorithm 3, PE), at the party. After the broadcast the server only
   learns each party's final recommendation. Each party restarts from the root and pulls, alone,
   every node of ``K_m^h \\ K^h`` until it has ``tau_h`` local rewards (its pulls
   of the collaborative stage count), takes the best node of ``K_m^h`` (global statistics on
   ``K^h``) and eliminates from ``K_m^h \\ K^h`` only. A node is thus removed only after *both*
   eliminations (double elimination): a node the federation eliminated stays available to a
   party whose own objective needs it.

The node bookkeeping (``tau_h``, ``b_{h,i}``, eq. 1, per-party sums and counts, budget-truncated
phases) is Fed-PNE's (:mod:`fedsearch.algorithms.fedpne.strategy`), and the collaborative stage *is*
:class:`~fedsearch.algorithms.fedpne.strategy.FedPNEStrategy` stopped at depth ``H0``.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ... import _validation as v
from ...strategy import register_strategy
from ..fedpne.strategy import FedPNEStrategy
from .tasks import PersonalReply, PersonalTask

__all__ = ["PFPNEStrategy", "transition_depth", "COLLABORATIVE", "PERSONAL"]

COLLABORATIVE, PERSONAL = "collaborative", "personal"


def transition_depth(gap: float, *, nu1: float, rho: float) -> int:
    """``H0``, the last depth of the collaborative stage: the smallest ``h`` with ``nu1 rho^h <= Delta``.

    The paper writes ``H0 = argmax_h (nu rho^h <= Delta)`` "or equivalently
    ``-ceil(log_rho(Delta / nu))``" (Sec. 3.1); read literally the first is unbounded and the
    second negative. The analysis fixes the reading: eq. 22 needs ``Delta <= nu1 rho^(h-1)`` at
    every collaborative depth ``h <= H0``, whose largest solution is
    ``H0 = ceil(log_rho(Delta / nu1)) = ceil(log(Delta / nu1) / log(rho))``, the first depth at
    which the nodes' smoothness ``nu1 rho^h`` falls to ``Delta``. ``Delta >= nu1`` gives 0 (no
    collaboration). With the paper's ``nu1 = 1, rho = 0.5, Delta = 0.01``: ``H0 = 7``.

    Examples
    --------
    >>> from fedsearch.algorithms.pfpne.strategy import transition_depth
    >>> transition_depth(0.01, nu1=1.0, rho=0.5), transition_depth(0.25, nu1=1.0, rho=0.5)
    (7, 2)
    """
    ratio = math.log(gap / nu1) / math.log(rho)
    return max(0, math.ceil(round(ratio, 9)))  # round: Delta = nu1 rho^k exactly gives k


@register_strategy("pfpne")
class PFPNEStrategy(FedPNEStrategy):
    """PF-PNE (Algorithms 1-3 of the PF-PNE paper) as a server-side strategy.

    **Collaborative stage** (rounds flagged ``"collaborative"`` in ``round_stages_``). One round
    per depth ``h = 1, ..., H0``: every party pulls the *same* points, ``ceil(tau_h / M)`` per node
    of ``K^h`` (Algorithm 2, line 6; unlike Fed-PNE no shallow depth is skipped, and the root, a
    single node that nothing can eliminate, is not pulled), the server averages the local means
    and eliminates by eq. 1 (Algorithm 1, lines 8-12). These are Fed-PNE's phases, recorded in
    ``phases_``; :meth:`recommend` with ``party=None`` is Fed-PNE's recommendation on them.

    **Personal stage** (the round flagged ``"personal"``). No global aggregation happens any
    more. The server broadcasts, in one
    :class:`~fedsearch.algorithms.pfpne.tasks.PersonalTask` per party, ``K^h`` with the global
    statistics ``(mu_{h,i}, b_{h,i})`` of every completed collaborative depth (Algorithm 2, line
    11), the party's own local statistics of those nodes (what it replied in the collaborative
    stage) and its remaining budget. The party runs its Personalized Elimination alone, inside
    one unit of work (:func:`~fedsearch.algorithms.pfpne.party.personal_elimination`): from the
    root (Algorithm 3), at depth ``h`` it pulls each node of ``K_m^h \\ K^h`` until
    ``T_{m,h,i} >= tau_h`` (a uniform point or the centre per pull, ``pull``), takes the best node
    ``(h, i_m^p)`` of ``K_m^h``, with the broadcast statistics on ``K^h``, removes ``E_m^h`` (eq. 1
    on ``K_m^h \\ K^h`` only) and moves to the children of the rest. Its pulls, local means and
    eliminations stay at the party (App. C.4); it replies its recommended node and how many
    evaluations it spent, and with ``share=True`` its score of every configuration it evaluated.

    **Budget.** ``n_iter`` evaluations per party, never exceeded: a phase (collaborative or
    personal) that needs more than a party's remaining ``R`` is cut to exactly ``R`` (spread by
    :func:`~fedsearch.algorithms.fedpne.strategy.spread` over the nodes that need pulls) and is its last.

    **Recommendations.** ``recommend()`` (the federation's): the centre of the node with the
    highest lower confidence bound ``mu - b`` among the last two collaborative phases (the centre
    of the cube before any). ``recommend(party=m)``: the centre of the node party ``m`` replied,
    chosen by the same rule on its last two personal phases with estimates (global statistics on
    ``K^h``); the federation's recommendation while the party has none.

    **Failures.** In the collaborative stage as in Fed-PNE (``failures_``). A personal reply
    with ``error`` set (or missing) is listed in ``failures_`` and leaves the party with the
    federation's recommendation. At the party a NaN reward is a failed pull, and a node without a
    finite reward is eliminated.

    Parameters
    ----------
    n_dims : int
        Dimension of the unit cube.
    n_parties : int
        ``M``.
    n_iter : int
        ``T``: evaluations per party.
    nu1 : float, default=1.0
        Smoothness constant (App. C.1).
    rho : float, default=0.5
        Smoothness ratio in ``(0, 1)`` (App. C.1).
    c : float, default=0.1
        Confidence constant of ``tau_h`` and ``b_{h,i}`` (App. C.1).
    c1 : float, default=1.0
        Confidence constant inside the logarithm (App. C.1).
    gap : float, default=0.01
        ``Delta`` (Assumption 3), a bound on ``|f* - f_m*|``; sets ``H0`` (0.01 in all the paper's
        experiments, App. C.1). Small: long collaboration (Fed-PNE as ``Delta -> 0``); large:
        parties alone.
    delta : float or None, default=None
        Confidence ``delta``; None is ``1 / M`` (Theorem 3.1).
    split : {"random", "longest"}, default="random"
        Partition rule (see :class:`~fedsearch.algorithms.xarmed.tree.Partition`); binary.
    pull : {"uniform", "center"}, default="uniform"
        Where a pull evaluates the objective inside a node (the paper's experiments use one
        fixed point per node, Remark 3.1: ``"center"``).
    share : bool, default=False
        Whether the parties also send their score of every pulled point (in the personal stage:
        of every configuration they evaluated).
    weights : array-like of shape (n_parties,) or None, default=None
        Weights of the parties in the global means; None is the paper's plain mean.
    random_state : int, numpy.random.Generator or None, default=None
        Seeds the partition and the pull points (in the personal stage, each party draws from its
        own stream, seeded from this one and sent in its task).

    Attributes
    ----------
    h0 : int
        ``H0``, the last collaborative depth (:func:`transition_depth`).
    partition : Partition
    phases_ : list of Phase
        The collaborative phases (global aggregations), in order.
    round_stages_ : dict of int to str
        ``"collaborative"`` or ``"personal"`` for every aggregated round.
    failures_ : list of tuple
        ``(round, party, message)`` of each unusable reply.
    spent_ : int
        Evaluations asked of each party in the collaborative stage.
    party_spent_ : ndarray of int of shape (n_parties,)
        Evaluations each party spent in total (the personal stage's as the party replied).

    Examples
    --------
    Parties 0-6 peak at 0.2, party 7 at 0.8. The federation eliminates the right half at depth
    1 (``H0 = 1``); party 7 re-examines it alone and finds its own peak there:

    >>> import numpy as np
    >>> from fedsearch.algorithms.pfpne.strategy import PFPNEStrategy
    >>> from fedsearch.research.synthetic import FunctionParty, Objective
    >>> parties = [FunctionParty(Objective((lambda c: lambda X: 1 - np.abs(X[:, 0] - c))(c), 1, "peak"))
    ...            for c in [0.2] * 7 + [0.8]]
    >>> strategy = PFPNEStrategy(1, 8, 400, nu1=0.2, gap=0.1, pull="center", random_state=0)
    >>> r = 0
    >>> while (tasks := strategy.configure(r)) is not None:
    ...     replies = {p: parties[p].handle(t) for p, t in tasks.items()}
    ...     strategy.aggregate(r, replies)
    ...     r += 1
    >>> strategy.h0, strategy.phases_[0].eliminated.tolist(), strategy.collaborative_rounds_
    (1, [False, True], [0])
    >>> [round(float(strategy.recommend(party=p)[0]), 1) for p in (0, 7)], strategy.recommend()
    ([0.2, 0.8], array([0.25]))
    """

    def __init__(self, n_dims, n_parties, n_iter, *, nu1=1.0, rho=0.5, c=0.1, c1=1.0, gap=0.01,
                 delta=None, split="random", pull="uniform", share=False, weights=None, random_state=None):
        super().__init__(n_dims, n_parties, n_iter, nu1=nu1, rho=rho, c=c, c1=c1, delta=delta,
                         split=split, pull=pull, share=share, weights=weights, random_state=random_state)
        v.check_value(type(self).__name__, "gap", gap, v.interval(numbers.Real, 0, math.inf, closed="neither"))
        self.gap = float(gap)
        self.h0 = transition_depth(self.gap, nu1=self.nu1, rho=self.rho)
        if self.h0 >= 1:  # Algorithm 1 starts below the root (K^1 of the paper holds the root alone)
            self._active = self.partition.children(self._active)
        else:  # Delta >= nu1: no collaborative stage
            self._done = True
        self.round_stages_: dict[int, str] = {}
        self._personal_round = None
        self._personal_tasks = None
        self._personal_spent = np.zeros(self.n_parties, dtype=np.int64)
        self._personal_points = np.full((self.n_parties, n_dims), np.nan)

    def _expand(self, nodes, remaining):
        # Algorithm 2, line 5: every collaborative depth is pulled, none skipped
        return nodes

    # ------------------------------------------------------------------ Strategy protocol
    def _collaborating(self) -> bool:
        return self._plan is not None or (not self._done and self._active.depth[0] <= self.h0)

    def configure(self, round):
        if self._collaborating():
            tasks = super().configure(round)
            if tasks is not None:
                return tasks
        if self._personal_round is None and self.n_iter - self.spent_ > 0:
            self._personal_round = round
            self._personal_tasks = self._personal(round)
        return self._personal_tasks if self._personal_round == round else None

    def aggregate(self, round, replies):
        if self._plan is not None and self._plan["round"] == round:
            super().aggregate(round, replies)
            self.round_stages_[round] = COLLABORATIVE
            return
        if round != self._personal_round or self._personal_tasks is None:
            raise RuntimeError(f"aggregate({round}) without a matching configure({round}).")
        self._personal_tasks = None
        self.round_stages_[round] = PERSONAL
        # no global aggregation: each party's recommendation is its own, with what it spent
        ok = {p: r for p, r in replies.items() if isinstance(r, PersonalReply) and r.error is None}
        self.failures_.extend((round, p, str(getattr(r, "error", None) or f"no personal reply (got {type(r).__name__})"))
                              for p, r in sorted(replies.items()) if p not in ok)
        spent = [min(int(r.n_evaluations), self.n_iter - self.spent_) for r in ok.values()]
        self._personal_spent[list(ok)] = spent
        nodes = [(p, r.node) for p, r in ok.items() if r.node is not None]
        if nodes:
            parties = np.array([p for p, _ in nodes])
            depth = np.array([n[0] for _, n in nodes], dtype=np.int64)
            index = np.array([n[1] for _, n in nodes], dtype=np.int64)
            for h in np.unique(depth):  # the centres of the recommended nodes, one walk per depth
                at = depth == h
                self._personal_points[parties[at]] = self.partition.nodes(int(h), index[at]).centers

    def recommend(self, party=None):
        if party is None:
            return super().recommend()
        if isinstance(party, bool) or not isinstance(party, (int, np.integer)) or not 0 <= party < self.n_parties:
            raise ValueError(f"party must be an int in the range [0, {self.n_parties - 1}]. Got {party!r} instead.")
        own = self._personal_points[party]
        return own.copy() if np.all(np.isfinite(own)) else super().recommend()

    # ------------------------------------------------------------------ personal stage
    def _personal(self, round) -> dict:
        """The personal round: every party gets the broadcast ``K^h`` with ``(mu_{h,i}, b_{h,i})``
        of each completed collaborative depth (Algorithm 2, line 11), its own local statistics of
        those nodes, and its remaining budget; one task object per party, built from shared arrays."""
        collab = [ph for ph in self.phases_ if not ph.truncated and ph.stats.replied.any()]

        def joined(get, empty):  # the phases' arrays side by side (nodes on the last axis)
            return np.concatenate([get(ph) for ph in collab], axis=-1) if collab else empty

        none, per_party = np.zeros(0), np.zeros((self.n_parties, 0))
        depth, index = joined(lambda ph: ph.nodes.depth, none), joined(lambda ph: ph.nodes.index, none)
        eliminated = joined(lambda ph: ph.eliminated, none)
        means, widths = joined(lambda ph: ph.means, none), joined(lambda ph: ph.widths, none)
        own_means = joined(lambda ph: ph.stats.local_means, per_party)  # (n_parties, n_nodes)
        own_counts = joined(lambda ph: ph.stats.counts, per_party)
        seeds = self._rng.integers(2**63, size=self.n_parties)      # each party's own stream
        n_dims, split, seed = self.partition.n_dims, self.partition.split, self.partition.seed
        shared = dict(tree=(n_dims, split, seed), depth=depth, index=index, eliminated=eliminated, means=means,
                      widths=widths, budget=self.n_iter - self.spent_, horizon=self.n_iter, nu1=self.nu1,
                      rho=self.rho, c=self.c, c1=self.c1, delta=self.delta, pull=self.pull, share=self.share)
        return {p: PersonalTask(own_means=own_means[p], own_counts=own_counts[p], draw_seed=int(seeds[p]), **shared)
                for p in range(self.n_parties)}

    # ------------------------------------------------------------------ inspection
    @property
    def party_spent_(self) -> np.ndarray:
        return self.spent_ + self._personal_spent

    @property
    def collaborative_rounds_(self) -> list[int]:
        """The rounds of the collaborative stage (the only ones that aggregate)."""
        return sorted(r for r, stage in self.round_stages_.items() if stage == COLLABORATIVE)
