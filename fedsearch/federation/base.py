"""The transport seam: a federation runs one round (tasks out, replies back) and keeps the
transcript of everything that crossed the party boundary.

A transport is a subclass of :class:`Federation` that implements one method,
:meth:`Federation._exchange`. Everything else (the transcript, the byte counts, the round
numbering, the set-up of the parties) lives here, so that no estimator or strategy knows which
transport runs.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence

from ..messages import Reply, SetupReply, SetupTask, Task, message_size

__all__ = ["Federation", "SETUP_ROUND"]

#: the round number under which the set-up of the parties is logged (before round 0)
SETUP_ROUND = -1


class Federation(ABC):
    """Base class of the transports.

    Parameters
    ----------
    party_ids : sequence of hashable
        The parties' names; party ``i`` of a strategy is ``party_ids[i]``.

    Attributes
    ----------
    transcript : list of tuple
        Every message as ``(round, party_id, direction, message)``, ``direction`` being
        ``"to_party"`` or ``"to_server"``: the complete record of what crossed the boundary.
    can_pool : bool
        Whether the parties' data can be brought together (only where it already is: in this
        process). A real network transport cannot pool.
    """

    can_pool = False

    def __init__(self, party_ids: Sequence):
        self.party_ids = list(party_ids)
        self.transcript: list[tuple] = []
        self._log: list[dict] = []
        self.party_progress: dict = {}

    @property
    def n_parties(self) -> int:
        return len(self.party_ids)

    @abstractmethod
    def _exchange(self, round: int, tasks: Mapping[int, Task]) -> dict[int, Reply]:
        """Deliver ``tasks`` ({party index: task}) and return {party index: reply} for every one
        of them; a party that failed answers with a reply whose ``error`` is set."""

    def setup(self, task: SetupTask) -> dict[int, SetupReply]:
        """Tell every party how to evaluate configurations (logged as round ``SETUP_ROUND``)."""
        return self.run_round(SETUP_ROUND, {p: task for p in range(self.n_parties)})

    def run_round(self, round: int, tasks: Mapping[int, Task], progress=None) -> dict[int, Reply]:
        """Send ``tasks``, run them, return the replies; every message goes into the transcript.

        ``progress`` (the callbacks' context of the round) gets one sub-task per party, begun
        before the exchange and ended with the party's reply; a transport that sees the work
        inside a party reports it under :attr:`party_progress`.
        """
        sizes: dict[int, int] = {}  # one encoding of a task object sent to several parties
        for p, task in tasks.items():
            self.record(round, p, "to_party", task, sizes)
        self.party_progress = {} if progress is None else {
            p: progress.child(f"party {self.party_ids[p]}", task_id=p, max_subtasks=None).begin() for p in tasks}
        replies = self._exchange(round, tasks)
        for p in tasks:
            self.record(round, p, "to_server", replies[p])
            if p in self.party_progress:
                self.party_progress[p].end()
        return {p: replies[p] for p in tasks}

    def replay_round(self, round: int, tasks: Mapping[int, Task], replies: Mapping[int, Reply]) -> None:
        """Record a round that an earlier run of the search sent (resumed from a checkpoint)."""
        sizes: dict[int, int] = {}
        for p, task in tasks.items():
            self.record(round, p, "to_party", task, sizes)
        for p in tasks:
            self.record(round, p, "to_server", replies[p])

    def record(self, round: int, p: int, direction: str, message, sizes=None, n_bytes: int | None = None) -> None:
        """Add one message to the transcript and the log (its size as encoded, or ``n_bytes``)."""
        party_id = self.party_ids[p]
        self.transcript.append((round, party_id, direction, message))
        if n_bytes is None:
            sizes = {} if sizes is None else sizes
            if id(message) not in sizes:
                sizes[id(message)] = message_size(message)
            n_bytes = sizes[id(message)]
        self._log.append({"round": round, "party": party_id, "direction": direction,
                          "message": type(message).__name__, "bytes": n_bytes})

    def log(self) -> dict[str, list]:
        """The transcript's metadata as columns (round, party, direction, message, bytes)."""
        keys = ("round", "party", "direction", "message", "bytes")
        return {k: [row[k] for row in self._log] for k in keys}

    @property
    def next_round(self) -> int:
        """The number of the next round (after every logged one)."""
        return max((row["round"] for row in self._log), default=SETUP_ROUND) + 1

    @property
    def n_rounds(self) -> int:
        """Communication rounds: the set-up and a pooled fit's data transfer excluded."""
        return len({row["round"] for row in self._log
                    if row["round"] != SETUP_ROUND and row["message"] != "PooledData"})

    def pool(self):
        """The parties' data brought together (``X, y, fit_params``), recorded in the transcript
        as the transfer of data it is. Only for transports with ``can_pool``."""
        raise ValueError(
            f"final_fit='pooled' needs the parties' data in one place, and {type(self).__name__} cannot pool the parties' data: the data stays where it is. "
            f"Use final_fit='ensemble' (each party fits its own model), final_fit=None, or refit=False."
        )
