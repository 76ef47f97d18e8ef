"""What every party shares: answering a task through the handler registry, and a cache."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..messages import ErrorReply, Reply, Task
from .objective import Summary
from .registry import handler_for

__all__ = ["BaseParty"]


class BaseParty:
    """The task protocol every party speaks: split a task into units, assemble the reply.

    Subclasses implement the :class:`~fedsearch.party.objective.LocalObjective` members.
    ``deterministic`` says whether the same configuration always scores the same (then its
    summary is cached and a repeat is answered without new work).
    """

    party_id: Any = None
    deterministic = False

    def __init__(self):
        self._cache: dict[tuple, Summary] = {}
        #: values released under differential privacy, by the quantity they measure: a repeat
        #: is answered with the same noisy value, never with fresh noise
        self.released: dict = {}

    def units(self, task: Task) -> list:
        """The independent pieces of work of ``task``, after validating it."""
        return handler_for(task)[0](self, task)

    def reply(self, task: Task, outputs: list) -> Reply:
        """Assemble the reply to ``task`` from the outputs of its units."""
        return handler_for(task)[1](self, task, outputs)

    def handle(self, task: Task) -> Reply:
        """Answer ``task`` entirely in this process (what a remote party does with a message).

        A task the party cannot answer comes back as an :class:`~fedsearch.messages.ErrorReply`
        unless ``error_score="raise"``.
        """
        try:
            return self.reply(task, [u.func(*u.args) for u in self.units(task)])
        except Exception as exc:  # noqa: BLE001 - a failing party is data, not a crash
            if getattr(self, "error_score", None) == "raise":
                raise
            return ErrorReply(error=str(exc), kind=type(exc).__name__)

    # ------------------------------------------------------------------ LocalObjective helpers
    def scores(self, points: np.ndarray, outputs: list) -> np.ndarray:
        """The objective of each point (``error_score``, NaN by default, where it failed) from
        the outputs of :meth:`evaluation_units`, without the per-point summaries."""
        fill = np.nan if self.error_score == "raise" else float(self.error_score)
        return np.array([s["test"][self.metric] if s["test"] is not None else fill
                         for s in self.summarise(points, outputs)], dtype=float).reshape(len(points))

    def check_points(self, points: np.ndarray) -> None:
        if points.ndim != 2 or points.shape[1] != self.n_dims:
            raise ValueError(f"Party {self.party_id!r} got points of shape {points.shape}; its search space "
                             f"has {self.n_dims} dimensions.")
        if not np.all(np.isfinite(points)) or points.min(initial=0) < 0 or points.max(initial=1) > 1:
            raise ValueError(f"Party {self.party_id!r} got points outside the unit cube.")

    def describe(self, point):
        """How an error message names the configuration at ``point``."""
        return np.asarray(point).tolist()

    def checked(self, point, summary: Summary) -> Summary:
        """``summary``, or its error raised with the party named when ``error_score="raise"``."""
        if summary.get("exception") is not None and getattr(self, "error_score", None) == "raise":
            exc = summary["exception"]
            exc.add_note(f"Raised by party {self.party_id!r} fitting {self.describe(point)!r}.")
            raise exc
        return summary

    def _key(self, point) -> tuple:  # pragma: no cover - subclasses that cache define it
        raise NotImplementedError

    def cached(self, point) -> Summary | None:
        return self._cache.get(self._key(point)) if self.deterministic else None

    def remember(self, point, summary: Summary) -> None:
        if self.deterministic:
            self._cache.setdefault(self._key(point), summary)
