"""The server-side seam: a strategy decides what each party evaluates and what to recommend.

A strategy never sees data, estimators or scorers. It speaks points of the unit cube and scalar
scores (higher is better), so it runs unchanged on scikit-learn parties and on the synthetic
functions of :mod:`fedsearch.synthetic`.
"""

from __future__ import annotations

import numpy as np

from ..messages import Reply, Task

__all__ = ["Strategy"]


class Strategy:
    """Base class of the server-side search strategies: a seeded, deterministic state machine.

    The round loop that drives a strategy is::

        round = 0
        while (tasks := strategy.configure(round)) is not None:
            replies = federation.run_round(round, tasks)      # {party index: Reply}
            strategy.aggregate(round, replies)
            round += 1
        point = strategy.recommend()

    Parties are numbered ``0 .. n_parties - 1``. A reply may carry an ``error`` (the party
    failed): a strategy must tolerate it and never average it away silently.
    """

    def configure(self, round: int) -> dict[int, Task] | None:
        """The tasks of round ``round``, one per party that takes part, or None when done."""
        raise NotImplementedError

    def aggregate(self, round: int, replies: dict[int, Reply]) -> None:
        """Take the replies of round ``round``."""
        raise NotImplementedError

    def recommend(self, party: int | None = None) -> np.ndarray:
        """The recommended point (for the federation, or for one party). Pure: no state change."""
        raise NotImplementedError
