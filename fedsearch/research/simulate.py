"""Run a strategy on simulated parties and measure its regret, as the papers' experiments do.

Examples
--------
>>> from fedsearch.research.simulate import simulate
>>> from fedsearch.research.synthetic import garland, make_parties
>>> parties = make_parties(garland(), n_parties=4, kind="perturb", random_state=0)
>>> trace = simulate("random", parties, n_iter=200, random_state=0)
>>> bool(trace.cumulative_regret() > trace.simple_regret() >= 0)
True
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .. import algorithms  # noqa: F401 - fills the strategy registry
from ..federation import InProcessFederation
from ..algorithms.xarmed.tasks import PullReply, PullTask
from ..messages import EvaluateReply, EvaluateTask
from ..strategy import STRATEGIES, run_rounds
from .synthetic import Objective, mean_objective

__all__ = ["Trace", "simulate"]


@dataclass
class Trace:
    """What a simulated run did, pull by pull.

    The pulls are kept as chunks, one per round and party, a chunk that several parties pulled
    alike (one shared task) being stored once: memory grows with the distinct pulls, not with
    parties times pulls.

    Attributes
    ----------
    chunks : list of list of tuple
        Per party, ``(points, rewards, rounds)`` of each round it pulled in, in order.
    n_dims : int
    points : list of ndarray of shape (n_evaluations_m, n_dims)
        The points party ``m`` evaluated, in order; NaN where the party chose them and kept them
        (PF-PNE's personal stage without ``share``: its regret is then unknown, NaN).
    rewards : list of ndarray of shape (n_evaluations_m,)
        The rewards it observed (noisy); NaN where the party did not send them (a node pull
        without ``share`` sends the node means only).
    rounds : list of ndarray of int of shape (n_evaluations_m,)
        The round of each evaluation.
    recommendation : ndarray of shape (n_dims,)
        ``strategy.recommend()`` at the end.
    recommendations : ndarray of shape (n_parties, n_dims)
        ``strategy.recommend(party=m)`` at the end.
    n_rounds : int
        Communication rounds.
    bytes_per_round : ndarray of int of shape (n_rounds,)
        Serialised size of all messages of each round, both directions.
    server_time : float
        Seconds spent in the strategy (configure, aggregate, recommend): the server side.
    n_iter : int
        The evaluation budget of each party.
    objectives : list of Objective or None
        The parties' noise-free local objectives (None for parties without one).
    """

    chunks: list = field(repr=False)
    n_dims: int
    recommendation: np.ndarray
    recommendations: np.ndarray
    n_rounds: int
    bytes_per_round: np.ndarray
    server_time: float
    n_iter: int
    objectives: list | None
    _global: Objective | None = field(default=None, repr=False)

    def _column(self, k: int, empty) -> list:
        return [np.concatenate([c[k] for c in chunks]) if chunks else empty for chunks in self.chunks]

    @property
    def points(self) -> list:
        return self._column(0, np.empty((0, self.n_dims)))

    @property
    def rewards(self) -> list:
        return self._column(1, np.empty(0))

    @property
    def rounds(self) -> list:
        return self._column(2, np.empty(0, dtype=int))

    @property
    def n_evaluations(self) -> np.ndarray:
        """Evaluations spent by each party, shape (n_parties,)."""
        return np.array([sum(len(c[0]) for c in chunks) for chunks in self.chunks])

    @property
    def global_objective(self) -> Objective:
        """The mean of the parties' local objectives."""
        if self.objectives is None:
            raise ValueError("Regret needs parties with a known objective (fedsearch.research.synthetic.FunctionParty).")
        if self._global is None:
            self._global = mean_objective(self.objectives)
        return self._global

    def _regrets(self, kind: str) -> list[np.ndarray]:
        """Instantaneous regret of every pull of every party (PF-PNE Sec. 2.2 for ``"local"``)."""
        if kind == "global":  # each distinct chunk of points is evaluated once
            f, regret = self.global_objective, {}
            for chunks in self.chunks:
                for c in chunks:
                    if id(c[0]) not in regret:
                        regret[id(c[0])] = f.maximum - f(c[0]) if len(c[0]) else np.empty(0)
            return [np.concatenate([regret[id(c[0])] for c in chunks]) if chunks else np.empty(0)
                    for chunks in self.chunks]
        if kind == "local":
            self.global_objective  # noqa: B018 - raises the same error without objectives
            return [o.maximum - o(x) if len(x) else np.empty(0) for o, x in zip(self.objectives, self.points)]
        raise ValueError(f"The 'kind' parameter must be a str among ['global', 'local']. Got {kind!r} instead.")

    def cumulative_regret(self, kind: str = "global", curve: bool = False):
        """Average per-party cumulative regret.

        ``"global"`` (Fed-PNE Sec. 2.1): ``(1/M) sum_m sum_t f* - f(x_{m,t})`` on the global
        objective ``f``; ``"local"`` (PF-PNE Sec. 2.2): ``(1/M) sum_m sum_t f_m* - f_m(x_{m,t})``.

        Parameters
        ----------
        kind : {"global", "local"}, default="global"
        curve : bool, default=False
            Return the value after each pull index ``t = 1 .. n_iter`` instead of the final one.

        Returns
        -------
        float or ndarray of shape (n_iter,)
        """
        regrets = self._regrets(kind)
        if not curve:
            return float(np.mean([r.sum() for r in regrets]))
        padded = np.zeros((len(regrets), self.n_iter))
        for m, r in enumerate(regrets):
            padded[m, :len(r)] = r
        return np.cumsum(padded, axis=1).mean(axis=0)

    def simple_regret(self, kind: str = "global") -> float:
        """Regret of the recommendation: ``f* - f(recommendation)`` on the global objective, or
        for ``"local"`` the mean over parties of ``f_m* - f_m(recommendations[m])``."""
        if kind == "global":
            f = self.global_objective
            return float(f.maximum - f(self.recommendation)[0])
        if kind == "local":
            self.global_objective  # noqa: B018
            return float(np.mean([o.maximum - o(x)[0] for o, x in zip(self.objectives, self.recommendations)]))
        raise ValueError(f"The 'kind' parameter must be a str among ['global', 'local']. Got {kind!r} instead.")


def simulate(strategy, parties: Sequence, n_iter: int, random_state=None, *, n_jobs=None, federation=None,
             **options) -> Trace:
    """Run ``strategy`` on ``parties`` through an :class:`~fedsearch.federation.InProcessFederation`.

    Parameters
    ----------
    strategy : str or Strategy
        A name of :data:`STRATEGIES` (built with ``n_dims``, ``n_parties``, ``n_iter``,
        ``random_state`` and ``options``) or a strategy object.
    parties : sequence of party
        Usually :func:`fedsearch.research.synthetic.make_parties`; any party that answers
        :class:`~fedsearch.messages.EvaluateTask` works (regret needs ``party.objective``).
    n_iter : int
        Evaluation budget of each party; a strategy that exceeds it raises ``RuntimeError``.
    random_state : int or None, default=None
        Seeds the strategy built by name and restarts each party's observation noise (parties
        with a ``reset`` method), so that the same call gives the same trace.
    n_jobs : int or None, default=None
        Workers of the in-process federation.
    federation : callable or None, default=None
        ``federation(parties) -> Federation``, the transport (a class such as
        :class:`fedsearch.testing.JSONFederation`); None runs the parties in this process.
    **options
        Passed to the strategy's factory.

    Returns
    -------
    Trace
    """
    parties = list(parties)
    n_dims = _n_dims(parties)
    if isinstance(strategy, str):
        if strategy not in STRATEGIES:
            raise ValueError(f"The 'strategy' parameter of simulate must be a Strategy or one of "
                             f"{sorted(STRATEGIES)}. Got {strategy!r} instead.")
        strategy = STRATEGIES[strategy](n_dims=n_dims, n_parties=len(parties), n_iter=n_iter,
                                        random_state=random_state, **options)
    elif options:
        raise TypeError(f"Options {sorted(options)} only apply to a strategy given by name.")
    if random_state is not None:
        for party, seed in zip(parties, np.random.SeedSequence(random_state).spawn(len(parties))):
            if hasattr(party, "reset"):
                party.reset(seed)

    federation = InProcessFederation(parties, n_jobs=n_jobs) if federation is None else federation(parties)
    chunks = [[] for _ in parties]

    def record(round_, tasks, replies):
        drawn = {}  # the points of each distinct task object (alive during the round), drawn once
        for p, task in tasks.items():
            reply = replies[p]
            if hasattr(reply, "as_evaluation") and not isinstance(reply, PullReply):
                task, reply = reply.as_evaluation(task)  # the party chose its own points: a new task
                if task is None:  # it kept them (PF-PNE's personal stage): only how many
                    n = int(getattr(replies[p], "n_evaluations", 0))
                    chunks[p].append((np.broadcast_to(np.nan, (n, n_dims)), np.broadcast_to(np.nan, n),
                                      np.broadcast_to(round_, n)))
                    continue
                x = task.points
                chunks[p].append((x, reply.scores if reply.error is None else np.full(len(x), np.nan),
                                  np.full(len(x), round_)))
                continue
            if not isinstance(task, (EvaluateTask, PullTask)):
                continue
            if id(task) not in drawn:
                x = task.points
                drawn[id(task)] = (x, np.full(len(x), np.nan), np.full(len(x), round_))
            x, missing, when = drawn[id(task)]
            scores = reply.evaluation.scores if isinstance(reply, PullReply) and reply.evaluation is not None else (
                reply.scores if isinstance(reply, EvaluateReply) else None)
            chunks[p].append((x, missing if scores is None or reply.error is not None else np.asarray(scores), when))

    loop = run_rounds(strategy, federation, budget=n_iter, on_round=record)
    round_, server = loop.next_round, loop.server_time
    t0 = time.perf_counter()
    recommendation = np.asarray(strategy.recommend(), dtype=float)
    recommendations = np.array([strategy.recommend(party=p) for p in range(len(parties))], dtype=float)
    server += time.perf_counter() - t0

    log = federation.log()
    bytes_per_round = np.bincount(np.asarray(log["round"], dtype=int), weights=log["bytes"],
                                  minlength=round_).astype(int) if round_ else np.zeros(0, dtype=int)
    has_objective = all(hasattr(p, "objective") for p in parties)
    return Trace(
        chunks=chunks,
        n_dims=n_dims,
        recommendation=recommendation,
        recommendations=recommendations,
        n_rounds=round_,
        bytes_per_round=bytes_per_round,
        server_time=server,
        n_iter=n_iter,
        objectives=[p.objective for p in parties] if has_objective else None,
    )


def _n_dims(parties) -> int:
    for attr in ("objective", "space"):
        if hasattr(parties[0], attr):
            return getattr(parties[0], attr).n_dims
    raise TypeError(f"Cannot tell the number of dimensions of {parties[0]!r}.")
