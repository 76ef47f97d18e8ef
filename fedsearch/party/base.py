"""What every party shares: answering a task through the handler registry, and a cache."""

from __future__ import annotations

import logging
import traceback
from typing import Any

import numpy as np

from ..messages import ErrorReply, Reply, Task, public_error
from .objective import Summary
from .registry import handler_for

__all__ = ["BaseParty", "log_error"]

#: Where a party logs its full error messages (they never cross the boundary unless it shares)
logger = logging.getLogger("fedsearch.party")


def log_error(party_id, exc: BaseException, kind: str, context: str = "", share: bool = False) -> str:
    """Log the failure ``exc`` of party ``party_id`` in full on the ``"fedsearch.party"`` logger
    (the party's own log); return what may cross the boundary.

    For a failure that happens before there is a party object to keep it (its data did not load,
    the search's set-up could not be applied); a party's own failures go through
    :meth:`BaseParty.record_error`, which also keeps them in ``errors_``.

    Parameters
    ----------
    party_id : hashable
        The party's name.
    exc : BaseException
        The failure.
    kind : str
        What failed, a key of :data:`~fedsearch.messages.ERROR_KINDS`.
    context : str, default=""
        What the party was doing (for its own log).
    share : bool, default=False
        Whether the party opted in to share its full messages.

    Returns
    -------
    str
        The data-free message (:func:`~fedsearch.messages.public_error`).
    """
    message = "".join(traceback.format_exception_only(exc)).strip()
    logger.info("party %r: %s failed%s: %s", party_id, kind, f" ({context})" if context else "", message)
    return public_error(exc, kind, share)


class BaseParty:
    """The task protocol every party speaks: split a task into units, assemble the reply.

    Subclasses implement the :class:`~fedsearch.party.objective.LocalObjective` members.
    ``deterministic`` says whether the same configuration always scores the same (then its
    summary is cached and a repeat is answered without new work).

    An exception message may quote the party's data, so a failure crosses the boundary only as
    its kind and a fixed text (:func:`~fedsearch.messages.public_error`); the full message is
    kept in ``errors_`` and logged on the ``"fedsearch.party"`` logger, unless the party opts in
    to share it (``share_errors = True``, the party's own choice: no task can turn it on).

    Attributes
    ----------
    errors_ : list of dict
        Every failure at this party: ``{"kind", "type", "message", "traceback", "context"}``.
    """

    party_id: Any = None
    deterministic = False
    share_errors = False

    def __init__(self):
        self._cache: dict[tuple, Summary] = {}
        self.errors_: list[dict] = []
        #: values released under differential privacy, by the quantity they measure: a repeat
        #: is answered with the same noisy value, never with fresh noise
        self.released: dict = {}

    def record_error(self, exc: BaseException, kind: str, context: str = "") -> str:
        """Keep ``exc`` at the party (``errors_`` and its log); return what may cross the boundary:
        :func:`log_error` with the party's name and its ``share_errors``."""
        self.errors_.append({"kind": kind, "type": type(exc).__name__,
                             "message": "".join(traceback.format_exception_only(exc)).strip(),
                             "traceback": "".join(traceback.format_exception(exc)), "context": context})
        return log_error(self.party_id, exc, kind, context, self.share_errors)

    def _raise_public(self, exc: BaseException, public: str, where: str):
        """Raise, for ``error_score="raise"``, an exception of ``exc``'s type that names the
        party and ``where`` it failed, with the ``public`` message only: the party's own message
        stays at the party."""
        text = f"Party {self.party_id!r} failed {where}: {public}"
        try:
            crossing = type(exc)(text)
        except Exception:  # noqa: BLE001 - a type that cannot be built from a message
            crossing = RuntimeError(text)
        if str(crossing) != text:
            crossing = RuntimeError(text)
        crossing.fedsearch_public = True
        raise crossing

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
            failure = exc
        return self.task_failed(task, failure)

    def task_failed(self, task: Task, exc: BaseException) -> ErrorReply:
        """The reply to ``task`` that raised ``exc`` (raised, data-free, for ``error_score="raise"``)."""
        if getattr(exc, "fedsearch_public", False):
            raise exc  # already data-free: raised by error_score="raise"
        public = self.record_error(exc, "task", type(task).__name__)
        if getattr(self, "error_score", None) == "raise":
            self._raise_public(exc, public, f"a {type(task).__name__}")
        return ErrorReply(error=public, kind="task")

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
        """``summary`` with its failure (if any) kept at the party and only its data-free
        message left in it; raised, data-free, when ``error_score="raise"``."""
        exc = summary.get("exception")
        if exc is None:
            return summary
        where = f"fitting {self.describe(point)!r}"
        public = self.record_error(exc, summary["kind"], where)
        if getattr(self, "error_score", None) == "raise":
            self._raise_public(exc, public, where)
        return {k: v for k, v in summary.items() if k != "exception"} | {"error": public}

    def _key(self, point) -> tuple:  # pragma: no cover - subclasses that cache define it
        raise NotImplementedError

    def cached(self, point) -> Summary | None:
        return self._cache.get(self._key(point)) if self.deterministic else None

    def remember(self, point, summary: Summary) -> None:
        if self.deterministic:
            self._cache.setdefault(self._key(point), summary)
