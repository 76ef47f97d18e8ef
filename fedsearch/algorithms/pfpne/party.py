"""PF-PNE's party side: the Personalized Elimination (Algorithm 3) of one party, run at the party
inside one unit of work, from the broadcast of the collaborative stage
(:class:`~fedsearch.algorithms.pfpne.tasks.PersonalTask`). Any party answers it (data or
synthetic) through the :class:`~fedsearch.party.objective.LocalObjective` protocol."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import islice

import numpy as np

from ...party import Unit, register_handler
from ...party.evaluate import evaluation_reply
from ...messages import EvaluateReply
from ..fedpne.strategy import confidence_width, eliminate, spread, tau
from ..xarmed.nodes import PULLS
from ..xarmed.party import node_sums
from ..xarmed.tree import Nodes
from .tasks import PersonalReply, PersonalTask

__all__ = ["PersonalPhase", "personal_elimination", "personal_recommendation"]


@dataclass(frozen=True)
class PersonalPhase:
    """One depth of one party's Personalized Elimination (Algorithm 3); kept at the party.

    Attributes
    ----------
    nodes : Nodes
        ``K_m^h``.
    pulls : ndarray of int of shape (n_nodes,)
        Pulls of each node at this depth (all 0 when every node of ``K_m^h \\ K^h`` already had
        ``tau_h`` local rewards).
    protected : ndarray of bool of shape (n_nodes,)
        Membership in ``K^h``, the collaborative survivors: global statistics, never eliminated
        here.
    counts : ndarray of int of shape (n_nodes,)
        ``T_{m,h,i}``: the party's finite rewards of each node, collaborative pulls included
        (0 for protected nodes, which use the global statistics and are never pulled).
    means, widths : ndarray of shape (n_nodes,)
        What PE compares: ``mu_{h,i}, b_{h,i}`` (global) on ``K^h``, ``mu_{m,h,i}, b_{m,h,i}``
        (local) elsewhere (Algorithm 2, line 11).
    eliminated : ndarray of bool of shape (n_nodes,)
        ``E_m^h`` (Algorithm 3, line 9); a subset of ``K_m^h \\ K^h``.
    truncated : bool
        Whether the budget cut the phase short (then it is the last, and nothing is eliminated).
    """

    nodes: Nodes
    pulls: np.ndarray
    protected: np.ndarray
    counts: np.ndarray
    means: np.ndarray
    widths: np.ndarray
    eliminated: np.ndarray
    truncated: bool


def _broadcast(task: PersonalTask) -> dict:
    """``{h: (indices sorted, their rows in the task)}`` of the broadcast nodes of each depth."""
    order = np.lexsort((task.index, task.depth))
    depth = task.depth[order]
    cuts = [0, *(np.flatnonzero(np.diff(depth)) + 1).tolist(), len(order)] if len(order) else [0]
    return {int(depth[a]): (task.index[order[a:b]], order[a:b]) for a, b in zip(cuts[:-1], cuts[1:])}


def _level(task: PersonalTask, broadcast: dict, nodes: Nodes) -> tuple:
    """``(protected, global means, global widths, local sums, local counts)`` of ``nodes``, one
    depth of ``K_m^h``: nodes of ``K^h`` take the broadcast statistics (Algorithm 2, line 11); the
    others keep the party's own rewards of the collaborative stage (the nodes of ``E^h`` it
    pulled there). The global statistics are None at a depth the broadcast does not reach."""
    n = len(nodes)
    protected = np.zeros(n, dtype=bool)
    sums, counts = np.zeros(n), np.zeros(n, dtype=np.int64)
    if not n or int(nodes.depth[0]) not in broadcast:  # below the collaborative stage: no global statistics
        return protected, None, None, sums, counts
    index, rows = broadcast[int(nodes.depth[0])]
    j = rows[np.clip(np.searchsorted(index, nodes.index), 0, len(rows) - 1)]
    found = task.index[j] == nodes.index
    protected = found & ~task.eliminated[j]
    means, widths = np.full(n, np.nan), np.full(n, np.inf)
    means[protected], widths[protected] = task.means[j[protected]], task.widths[j[protected]]
    own = found & ~protected & (task.own_counts[j] > 0)
    counts[own] = task.own_counts[j[own]]
    sums[own] = task.own_means[j[own]] * counts[own]
    return protected, means, widths, sums, counts


def personal_elimination(task: PersonalTask, rewards: Callable[[np.ndarray], np.ndarray]) -> tuple[list, int]:
    """Algorithm 3 (PE) for one party: walk down from the root, pulling each node of
    ``K_m^h \\ K^h`` until it has ``tau_h`` local rewards (line 4), take the best node of ``K_m^h``
    (broadcast statistics on ``K^h``), eliminate ``E_m^h`` (eq. 1 on ``K_m^h \\ K^h`` only, line 9)
    and go on with the children of the rest (line 10), until the budget is spent.

    A phase that needs more than the remaining ``R`` pulls gets exactly ``R`` (spread over the
    nodes that need pulls) and is the last; nothing is eliminated in it. A NaN reward is a failed
    pull; a node without a finite reward is eliminated.

    Parameters
    ----------
    task : PersonalTask
    rewards : callable
        ``rewards(points) -> ndarray`` of the party's scores of ``points`` (NaN where failed).

    Returns
    -------
    phases : list of PersonalPhase
    spent : int
        Evaluations spent.
    """
    if task.pull not in PULLS:
        raise ValueError(f"pull must be one of {PULLS}. Got {task.pull!r} instead.")
    partition = task.partition()
    rng = np.random.default_rng(task.draw_seed)
    low, high = task.bounds
    const = dict(horizon=task.horizon, c=task.c, c1=task.c1, delta=task.delta)
    broadcast = _broadcast(task)
    # Algorithm 3, line 2: every party restarts from the root, a lone node that is its own best
    # and is never eliminated: its children are the first depth judged
    nodes = partition.children(partition.root())
    protected, g_means, g_widths, sums, counts = _level(task, broadcast, nodes)
    phases, spent = [], 0
    while len(nodes) and spent < task.budget:
        h = int(nodes.depth[0])
        need = np.maximum(tau(h, nu1=task.nu1, rho=task.rho, **const) - counts, 0)  # line 4
        need[protected] = 0
        pulls, remaining, need_total = need, task.budget - spent, int(need.sum())
        truncated = need_total > remaining
        if truncated:
            pulls = np.zeros(len(nodes), dtype=np.int64)
            needy = np.flatnonzero(need)
            pulls[needy] = spread(remaining, len(needy), rng)
        if truncated or need_total:
            scores = np.asarray(rewards(nodes.sample(pulls, rng, task.pull)), dtype=float)
            pulled, n = node_sums((scores - low) / (high - low), pulls)
            sums += pulled
            counts += n
            spent += int(pulls.sum())
        means = np.divide(sums, counts, out=np.full(len(nodes), np.nan), where=counts > 0)
        widths = confidence_width(counts, **const)
        if any_protected := protected.any():
            means, widths = np.where(protected, g_means, means), np.where(protected, g_widths, widths)
        eliminated = np.zeros(len(nodes), dtype=bool)
        if not truncated:  # eq. 1 against the best of K_m^h, applied to K_m^h \ K^h only
            eliminated = eliminate(means, widths, nodes.depth, nu1=task.nu1, rho=task.rho)
            if any_protected:
                eliminated &= ~protected
        phases.append(PersonalPhase(nodes, pulls, protected, counts, means, widths, eliminated, truncated))
        if truncated or h >= partition.max_depth:
            break
        nodes = partition.children(nodes[~eliminated])  # K_m^{h+1} (line 10)
        protected, g_means, g_widths, sums, counts = _level(task, broadcast, nodes)
    return phases, spent


def personal_recommendation(phases: list) -> tuple | None:
    """``(depth, index)`` of the node of highest lower confidence bound ``mu - b`` among the last
    two phases with estimates (the rule of Fed-PNE's recommendation), or None."""
    phases = list(islice((ph for ph in reversed(phases) if np.isfinite(ph.means).any()), 2))[::-1]
    if not phases:
        return None
    with np.errstate(invalid="ignore"):
        lcb = np.concatenate([ph.means - ph.widths for ph in phases])
    best = int(np.nanargmax(lcb))
    for ph in phases:
        if best < len(ph.nodes):
            return int(ph.nodes.depth[best]), int(ph.nodes.index[best])
        best -= len(ph.nodes)


@dataclass
class _Pulls:
    """The party's evaluations inside the unit: ``rewards(points)``, keeping what the reply needs.

    A synthetic party's vectorised objective (``evaluate.scores``) scores a batch at once when no
    summary is needed; otherwise each point is evaluated alone, a repeated configuration of a
    deterministic party answered from ``known`` (its cache) or from this unit's earlier work.
    """

    evaluate: Callable
    metric: str
    key: Callable | None  # the configuration of a point, for a deterministic party
    known: dict
    keep: bool  # whether the reply needs every point and its result
    rows: list = field(default_factory=list)  # (point, summary, repeated) for each pull
    batches: list = field(default_factory=list)  # (points, scores) when only scores are kept

    def __call__(self, points: np.ndarray) -> np.ndarray:
        if hasattr(self.evaluate, "scores") and self.key is None:
            scores = self.evaluate.scores(points)
            if self.keep:
                self.batches.append((points, scores))
            return scores
        out = np.empty(len(points))
        for i, point in enumerate(points):
            k = None if self.key is None else self.key(point)
            summary = self.known.get(k) if k is not None else None
            repeated = summary is not None
            if summary is None:
                summary = self.evaluate(point)
                if k is not None:
                    self.known[k] = summary
            if self.keep:
                self.rows.append((point, summary, repeated))
            out[i] = np.nan if summary["test"] is None else float(summary["test"][self.metric])
        return out


@dataclass
class _PersonalOutput:
    node: tuple | None
    spent: int
    pulls: _Pulls
    error: BaseException | None = None


def run_personal(task: PersonalTask, pulls: _Pulls) -> _PersonalOutput:
    """The unit of work of a :class:`PersonalTask` (one per party, run in a worker)."""
    try:
        phases, spent = personal_elimination(task, pulls)
    except Exception as exc:  # noqa: BLE001 - a failing party is data, not a crash
        return _PersonalOutput(None, 0, pulls, exc)
    return _PersonalOutput(personal_recommendation(phases), spent, pulls)


def _units_personal(party, task: PersonalTask) -> list[Unit]:
    if task.tree[0] != party.n_dims:
        raise ValueError(f"Party {party.party_id!r} got a tree of {task.tree[0]} dimensions; its search space "
                         f"has {party.n_dims}.")
    deterministic = party.deterministic
    pulls = _Pulls(party.evaluator(task.draw_seed), party.metric, party._key if deterministic else None,
                   dict(party._cache) if deterministic else {}, keep=task.share or deterministic)
    return [Unit(run_personal, (task, pulls), task_name="personal stage")]


def _reply_personal(party, task: PersonalTask, outputs: list) -> PersonalReply:
    out: _PersonalOutput = outputs[0]
    if out.error is not None:
        return PersonalReply(node=None, n_evaluations=out.spent, n_samples=party.n_samples,
                             error=party.record_error(out.error, "task", "personal stage"), kind="task")
    pulls = out.pulls
    rows = [(point, party.checked(point, summary), repeated) for point, summary, repeated in pulls.rows]
    for point, summary, _ in rows:
        party.remember(point, summary)  # the later rounds (personal_results_) reuse it
    points, evaluation = None, None
    if task.share:
        if rows:
            points = np.array([r[0] for r in rows]).reshape(len(rows), party.n_dims)
            evaluation = evaluation_reply(party, [r[1] for r in rows], np.array([r[2] for r in rows], dtype=bool))
        else:
            batches = pulls.batches or [(np.empty((0, party.n_dims)), np.empty(0))]
            points = np.concatenate([b[0] for b in batches])
            evaluation = EvaluateReply(scores=np.concatenate([b[1] for b in batches]), n_samples=party.n_samples)
    return PersonalReply(node=out.node, n_evaluations=out.spent, n_samples=party.n_samples, points=points,
                         evaluation=evaluation)


register_handler(PersonalTask, _units_personal, _reply_personal)
