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
2. **Personal stage** (Algorithm 3, PE). Communication stops. Each party restarts from the root
   and pulls, alone, every node of ``K_m^h \\ K^h`` until it has ``tau_h`` local rewards (its pulls
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
from dataclasses import dataclass, field

import numpy as np

from ... import _validation as v
from ...strategy import register_strategy
from ..fedpne.strategy import FedPNEStrategy, eliminate, spread
from ..xarmed.nodes import NodeStatistics, Phase, pull_task
from ..xarmed.tree import Nodes

__all__ = ["PFPNEStrategy", "PersonalPhase", "transition_depth", "COLLABORATIVE", "PERSONAL"]

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


@dataclass(frozen=True)
class PersonalPhase:
    """One depth of one party's Personalized Elimination (Algorithm 3).

    Attributes
    ----------
    round : int or None
        The round of the party's pulls; None when the depth needed none (every node of
        ``K_m^h \\ K^h`` already had ``tau_h`` local rewards, or ``K_m^h`` is a single node).
    nodes : Nodes
        ``K_m^h``.
    pulls : ndarray of int of shape (n_nodes,)
        Pulls of each node asked of the party at this depth.
    protected : ndarray of bool of shape (n_nodes,)
        Membership in ``K^h``, the collaborative survivors: global statistics, never eliminated
        here.
    counts : ndarray of int of shape (n_nodes,)
        ``T_{m,h,i}``: the party's finite rewards of each node, collaborative pulls included
        (0 for protected nodes, which use the global statistics).
    means, widths : ndarray of shape (n_nodes,)
        The statistics PE compares: ``mu_{h,i}, b_{h,i}`` (global) on ``K^h``,
        ``mu_{m,h,i}, b_{m,h,i}`` (local) elsewhere (Algorithm 2, line 11).
    eliminated : ndarray of bool of shape (n_nodes,)
        ``E_m^h`` (Algorithm 3, line 9); a subset of ``K_m^h \\ K^h``.
    truncated : bool
        Whether the party's budget cut the phase short (then it is the party's last, and nothing
        is eliminated).
    """

    round: int | None
    nodes: Nodes
    pulls: np.ndarray
    protected: np.ndarray
    counts: np.ndarray
    means: np.ndarray
    widths: np.ndarray
    eliminated: np.ndarray
    truncated: bool


@dataclass(eq=False)
class _Party:
    """One party's PE state at its current depth."""

    index: int
    rng: np.random.Generator
    nodes: Nodes
    protected: np.ndarray
    global_means: np.ndarray
    global_widths: np.ndarray
    sums: np.ndarray
    counts: np.ndarray
    spent: int = 0
    done: bool = False
    phases: list = field(default_factory=list)


@register_strategy("pfpne")
class PFPNEStrategy(FedPNEStrategy):
    """PF-PNE (Algorithms 1-3 of the PF-PNE paper) as a server-side strategy.

    **Collaborative stage** (rounds flagged ``"collaborative"`` in ``round_stages_``). One round
    per depth ``h = 1, ..., H0``: every party pulls the *same* points, ``ceil(tau_h / M)`` per node
    of ``K^h`` (Algorithm 2, line 6; unlike Fed-PNE no shallow depth is skipped, and the root, a
    single node that nothing can eliminate, is not pulled), the server averages the local means
    and eliminates by eq. 1 (Algorithm 1, lines 8-12). These are Fed-PNE's phases, recorded in
    ``phases_``; :meth:`recommend` with ``party=None`` is Fed-PNE's recommendation on them.

    **Personal stage** (rounds flagged ``"personal"``). No global aggregation happens any more:
    each party's round depends on its own replies only. The tasks still flow through the
    federation, one per party, because this in-process simulation runs the party's local work
    there; in a deployment they would never leave the party (App. C.4: communication stops after
    ``H0``). Party ``m`` walks down from the root (Algorithm 3): at depth ``h`` it pulls each node
    of ``K_m^h \\ K^h`` until ``T_{m,h,i} >= tau_h`` (a uniform point or the centre per pull,
    ``pull``), takes the best node ``(h, i_m^p)`` of ``K_m^h``, with the broadcast global
    statistics on ``K^h``, removes ``E_m^h`` (eq. 1 on ``K_m^h \\ K^h`` only) and moves to the
    children of the rest. Depths that need no pull are judged at once. The parties advance
    together, one depth each per round, each on its own budget.

    **Budget.** ``n_iter`` evaluations per party, never exceeded: a phase (collaborative or
    personal) that needs more than a party's remaining ``R`` is cut to exactly ``R`` (spread by
    :func:`~fedsearch.algorithms.fedpne.strategy.spread` over the nodes that need pulls) and is its last.

    **Recommendations.** ``recommend()`` (the federation's): the centre of the node with the
    highest lower confidence bound ``mu - b`` among the last two collaborative phases (the centre
    of the cube before any). ``recommend(party=m)``: the same rule on party ``m``'s last two
    personal phases with estimates (global statistics on ``K^h``); the federation's
    recommendation while the party has none.

    **Failures.** In the collaborative stage as in Fed-PNE (``failures_``). In the personal
    stage a reply with ``error`` set (or missing) leaves the party at its depth, to be pulled
    again next round while its budget lasts; a NaN reward is a failed pull, and a node without a
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
        Whether the parties also send their score of every pulled point.
    weights : array-like of shape (n_parties,) or None, default=None
        Weights of the parties in the global means; None is the paper's plain mean.
    random_state : int, numpy.random.Generator or None, default=None
        Seeds the partition and the pull points (in the personal stage, each party draws from its
        own stream, seeded from this one).

    Attributes
    ----------
    h0 : int
        ``H0``, the last collaborative depth (:func:`transition_depth`).
    partition : Partition
    phases_ : list of Phase
        The collaborative phases (global aggregations), in order.
    personal_phases_ : list of list of PersonalPhase
        Each party's personal phases, in order (empty before the personal stage).
    round_stages_ : dict of int to str
        ``"collaborative"`` or ``"personal"`` for every aggregated round.
    failures_ : list of tuple
        ``(round, party, message)`` of each unusable reply.
    spent_ : int
        Evaluations asked of each party in the collaborative stage.
    party_spent_ : ndarray of int of shape (n_parties,)
        Evaluations asked of each party in total.

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
        self._collab: dict[int, Phase] = {}
        self._parties: list[_Party] | None = None
        self._personal_plan = None

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
        return self._configure_personal(round)

    def aggregate(self, round, replies):
        if self._plan is not None and self._plan["round"] == round:
            super().aggregate(round, replies)
            self.round_stages_[round] = COLLABORATIVE
            return
        plan, self._personal_plan = self._personal_plan, None
        if plan is None or plan["round"] != round:
            raise RuntimeError(f"aggregate({round}) without a matching configure({round}).")
        self.round_stages_[round] = PERSONAL
        # no global aggregation: each party's phase is judged on its own reply alone
        for m, pulls in plan["pulls"].items():
            state = self._parties[m]
            stats = NodeStatistics.from_replies({0: replies.get(m)}, 1, len(pulls))
            if not stats.replied[0]:  # the party stays at its depth (while its budget lasts)
                self.failures_.append((round, m, stats.failures[0]))
                continue
            state.sums += stats.sums[0]
            state.counts += stats.counts[0]
            self._judge(state, round, pulls, plan["truncated"][m])

    def recommend(self, party=None):
        if party is None:
            return super().recommend()
        if isinstance(party, bool) or not isinstance(party, (int, np.integer)) or not 0 <= party < self.n_parties:
            raise ValueError(f"party must be an int in the range [0, {self.n_parties - 1}]. Got {party!r} instead.")
        phases = [ph for ph in self.personal_phases_[party] if np.any(np.isfinite(ph.means))][-2:]
        if not phases:
            return super().recommend()
        with np.errstate(invalid="ignore"):
            lcb = np.concatenate([ph.means - ph.widths for ph in phases])
        centers = np.concatenate([ph.nodes.centers for ph in phases])
        return centers[int(np.nanargmax(lcb))].copy()

    # ------------------------------------------------------------------ personal stage
    def _configure_personal(self, round):
        plan = self._personal_plan
        if plan is not None and plan["round"] == round:
            return plan["tasks"]
        if self._parties is None:
            self._start_personal()
        tasks, pulls_of, truncated_of = {}, {}, {}
        for m, state in enumerate(self._parties):
            need = self._advance(state)
            if need is None:
                continue
            remaining = self.n_iter - self.spent_ - state.spent
            truncated = int(need.sum()) > remaining
            pulls = need
            if truncated:  # the party's budget-truncated last phase
                pulls = np.zeros(len(need), dtype=np.int64)
                needy = np.flatnonzero(need)
                pulls[needy] = spread(remaining, len(needy), state.rng)
            tasks[m] = pull_task(self.partition, state.nodes, pulls, state.rng, self.pull, self.share)
            state.spent += int(pulls.sum())
            pulls_of[m], truncated_of[m] = pulls, truncated
        if not tasks:
            return None
        self._personal_plan = {"round": round, "tasks": tasks, "pulls": pulls_of, "truncated": truncated_of}
        return tasks

    def _start_personal(self) -> None:
        """Every party at the root of its own tree (Algorithm 3, line 2), statistics from stage 1."""
        # the broadcast K^h with (mu_{h,i}, b_{h,i}) of every completed collaborative depth
        self._collab = {
            int(ph.nodes.depth[0]): ph for ph in self.phases_ if not ph.truncated and ph.stats.replied.any()}
        # each party draws its own pull points from its own stream: its work does not depend on others'
        seeds = self._rng.integers(2**63, size=self.n_parties)
        self._parties = [_Party(m, np.random.default_rng(int(seeds[m])), *self._level(m, self.partition.root()))
                         for m in range(self.n_parties)]

    def _level(self, m: int, nodes: Nodes) -> tuple:
        """``(nodes, protected, global means, global widths, local sums, local counts)`` of party
        ``m`` at a new depth: nodes in ``K^h`` take the global statistics (Algorithm 2, line 11);
        the others keep the party's own rewards of the collaborative stage (the nodes of ``E^h``
        it pulled there)."""
        n = len(nodes)
        protected = np.zeros(n, dtype=bool)
        means, widths = np.full(n, np.nan), np.full(n, np.inf)
        sums, counts = np.zeros(n), np.zeros(n, dtype=np.int64)
        phase = self._collab.get(int(nodes.depth[0])) if n else None
        if phase is not None:
            pos = np.clip(np.searchsorted(phase.nodes.index, nodes.index), 0, len(phase.nodes) - 1)
            found = phase.nodes.index[pos] == nodes.index
            protected = found & ~phase.eliminated[pos]
            means[protected], widths[protected] = phase.means[pos[protected]], phase.widths[pos[protected]]
            own = found & ~protected
            sums[own], counts[own] = phase.stats.sums[m, pos[own]], phase.stats.counts[m, pos[own]]
        return nodes, protected, means, widths, sums, counts

    def _need(self, state: _Party) -> np.ndarray:
        """Pulls still needed at the current depth: ``tau_h - T_{m,h,i}`` on ``K_m^h \\ K^h``
        (Algorithm 3, line 4). A lone node is its own best and is never eliminated: not pulled."""
        if len(state.nodes) <= 1:
            return np.zeros(len(state.nodes), dtype=np.int64)
        t_h = self.tau(int(state.nodes.depth[0]))
        return np.where(state.protected, 0, np.maximum(t_h - state.counts, 0)).astype(np.int64)

    def _advance(self, state: _Party) -> np.ndarray | None:
        """Judge the depths that need no pull; the pulls of the next depth that does, or None."""
        while not state.done:
            if self.n_iter - self.spent_ - state.spent <= 0 or not len(state.nodes):
                state.done = True
                break
            need = self._need(state)
            if need.any():
                return need
            self._judge(state, None, need, truncated=False)
        return None

    def _judge(self, state: _Party, round, pulls, truncated: bool) -> None:
        """Algorithm 3, lines 7-11: local means, best node of ``K_m^h``, ``E_m^h``, next depth."""
        nodes, protected = state.nodes, state.protected
        with np.errstate(invalid="ignore", divide="ignore"):
            local = np.where(state.counts > 0, state.sums / np.maximum(state.counts, 1), np.nan)
        means = np.where(protected, state.global_means, local)
        widths = np.where(protected, state.global_widths, self.confidence_width(state.counts))
        eliminated = np.zeros(len(nodes), dtype=bool)
        if not truncated:  # eq. 1 against the best of K_m^h, applied to K_m^h \ K^h only
            eliminated = eliminate(means, widths, nodes.depth, nu1=self.nu1, rho=self.rho) & ~protected
        state.phases.append(PersonalPhase(round, nodes, np.asarray(pulls, dtype=np.int64), protected,
                                          np.where(protected, 0, state.counts), means, widths,
                                          eliminated, truncated))
        if truncated or int(nodes.depth[0]) >= self.partition.max_depth:
            state.done = True
            return
        # K_m^{h+1}: children of K_m^h \ E_m^h (line 10)
        level = self._level(state.index, self.partition.children(nodes[~eliminated]))
        state.nodes, state.protected, state.global_means, state.global_widths, state.sums, state.counts = level

    # ------------------------------------------------------------------ inspection
    @property
    def personal_phases_(self) -> list[list[PersonalPhase]]:
        if self._parties is None:
            return [[] for _ in range(self.n_parties)]
        return [state.phases for state in self._parties]

    @property
    def party_spent_(self) -> np.ndarray:
        personal = [0] * self.n_parties if self._parties is None else [s.spent for s in self._parties]
        return self.spent_ + np.asarray(personal, dtype=np.int64)

    @property
    def collaborative_rounds_(self) -> list[int]:
        """The rounds of the collaborative stage (the only ones that communicate)."""
        return sorted(r for r, stage in self.round_stages_.items() if stage == COLLABORATIVE)
