"""The server-side seam: a strategy decides what each party evaluates and what to recommend, and
:func:`run_rounds` is the one loop that drives it (for the estimators and for ``simulate``).

A strategy never sees data, estimators or scorers. It speaks points of the unit cube and scalar
scores (higher is better), so it runs unchanged on scikit-learn parties and on synthetic
functions.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from .messages import Reply, Task

__all__ = ["Strategy", "STRATEGIES", "register_strategy", "run_rounds", "RoundLoop", "OneRound"]

#: name -> strategy class, filled by :func:`register_strategy` when an algorithm's strategy
#: module is imported (``simulate("fedpne", ...)`` looks names up here).
STRATEGIES: dict[str, type] = {}


def register_strategy(name: str):
    """Class decorator: make a strategy known to :func:`fedsearch.research.simulate.simulate` by
    ``name``. Its constructor must accept ``n_dims, n_parties, n_iter, random_state`` as
    keywords (and may take more options)."""

    def register(cls):
        STRATEGIES[name] = cls
        return cls

    return register


class Strategy(ABC):
    """Base class of the server-side search strategies: a seeded, deterministic state machine.

    Parties are numbered ``0 .. n_parties - 1``. A reply may carry an ``error`` (the party
    failed): a strategy must tolerate it and never average it away silently.
    :func:`run_rounds` drives it::

        round = 0
        while (tasks := strategy.configure(round)) is not None:
            replies = federation.run_round(round, tasks)      # {party index: Reply}
            strategy.aggregate(round, replies)
            round += 1
        point = strategy.recommend()
    """

    @abstractmethod
    def configure(self, round: int) -> dict[int, Task] | None:
        """The tasks of round ``round``, one per party that takes part, or None when done."""

    @abstractmethod
    def aggregate(self, round: int, replies: dict[int, Reply]) -> None:
        """Take the replies of round ``round``."""

    @abstractmethod
    def recommend(self, party: int | None = None) -> np.ndarray:
        """The recommended point (for the federation, or for one party). Pure: no state change."""


class OneRound(Strategy):
    """A strategy of exactly one round of given tasks (an extra round after a search: a final
    fit, a validation); its replies are kept in ``replies_``."""

    def __init__(self, tasks: Mapping[int, Task]):
        self.tasks = dict(tasks)
        self.replies_: dict[int, Reply] | None = None

    def configure(self, round):
        return self.tasks if self.replies_ is None else None

    def aggregate(self, round, replies):
        self.replies_ = dict(replies)

    def recommend(self, party=None):
        raise NotImplementedError("A single round recommends nothing.")


@dataclass
class RoundLoop:
    """What :func:`run_rounds` did: the next free round number and the server's seconds."""

    next_round: int
    server_time: float


def run_rounds(strategy: Strategy, federation, *, start: int = 0, budget: int | None = None,
               on_round: Callable[[int, dict, dict], None] | None = None,
               replay: Mapping[int, tuple[dict, dict]] | None = None, progress=None) -> RoundLoop:
    """Drive ``strategy`` through ``federation`` until it configures None.

    Parameters
    ----------
    strategy : Strategy
    federation : Federation
        Runs each round (``federation.run_round(round, tasks)``).
    start : int, default=0
        The number of the first round (extra rounds after a search continue the numbering).
    budget : int or None, default=None
        Evaluations each party may be asked for (the sum of the tasks' ``cost``); a strategy
        that asks for more raises ``RuntimeError`` before the round runs.
    on_round : callable or None, default=None
        ``on_round(round, tasks, replies)``, called after each round, before ``aggregate``.
    replay : mapping or None, default=None
        ``{round: (tasks, replies)}`` recorded by an earlier run of the same search (a
        checkpoint): those rounds are not sent; the strategy is fed the recorded replies, after
        checking that it asks for the recorded tasks.
    progress : Progress or None, default=None
        The callbacks' context of the search; each round is a sub-task of it.

    Returns
    -------
    RoundLoop
    """
    spent: dict[int, int] = {}
    server, round_, idle = 0.0, start, 0
    while True:
        t0 = time.perf_counter()
        tasks = strategy.configure(round_)
        server += time.perf_counter() - t0
        if tasks is None:
            break
        idle = idle + 1 if not tasks else 0
        if idle > 1:
            raise RuntimeError(f"{type(strategy).__name__} configured two rounds in a row without any task.")
        if budget is not None:
            for p, task in tasks.items():
                spent[p] = spent.get(p, 0) + task.cost
                if spent[p] > budget:
                    raise RuntimeError(f"{type(strategy).__name__} asked party {p} for {spent[p]} evaluations "
                                       f"by round {round_}; its budget is n_iter={budget}.")
        if replay is not None and round_ in replay:
            replies = _replayed(strategy, round_, tasks, replay[round_])
            federation.replay_round(round_, tasks, replies)
        else:
            step = progress.child("round", max_subtasks=len(tasks), sequential_subtasks=False).begin() \
                if progress is not None else None
            replies = federation.run_round(round_, tasks, progress=step)
            if step is not None:
                step.end()
        if on_round is not None:
            on_round(round_, tasks, replies)
        t0 = time.perf_counter()
        strategy.aggregate(round_, replies)
        server += time.perf_counter() - t0
        round_ += 1
    return RoundLoop(round_, server)


def _replayed(strategy, round_: int, tasks: dict, recorded: tuple[dict, dict]) -> dict:
    """The recorded replies of ``round_``, once the strategy is seen to ask for the recorded tasks."""
    from .messages import encode

    asked, replies = recorded
    if set(asked) != set(tasks) or any(encode(asked[p]) != encode(tasks[p]) for p in tasks):
        raise RuntimeError(f"{type(strategy).__name__} asks for other tasks in round {round_} than the "
                           f"checkpoint recorded: the checkpoint belongs to another search.")
    return replies
