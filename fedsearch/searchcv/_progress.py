"""Progress of a search: scikit-learn's callbacks (``set_callbacks``) and ``verbose`` lines.

The task tree a callback sees is ``fit -> round -> party -> unit of work`` (one configuration
and fold; a FLoRA adaptive local search, ``bo`` or ``tpe``, is one unit and reports its trials
one level further down), the events of the units coming from the workers as they run, as in
scikit-learn's own searches.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

try:  # scikit-learn >= 1.9
    from sklearn.callback import CallbackSupportMixin, with_callbacks
except ImportError:  # pragma: no cover - older scikit-learn: no callbacks, the rest works
    CallbackSupportMixin = None
    with_callbacks = None

__all__ = ["Progress", "CallbackSupport", "with_callbacks", "RoundReporter"]


@dataclass(frozen=True)
class Progress:
    """Where a piece of work sits in the callbacks' task tree: its context and the estimator
    whose hooks are called (picklable: it travels to the workers with the work)."""

    context: Any
    estimator: Any

    def child(self, task_name: str, **kwargs) -> "Progress":
        return Progress(self.context.subcontext(task_name=task_name, **kwargs), self.estimator)

    def begin(self) -> "Progress":
        self.context.call_on_fit_task_begin(estimator=self.estimator)
        return self

    def end(self) -> None:
        self.context.call_on_fit_task_end(estimator=self.estimator)


if CallbackSupportMixin is None:  # pragma: no cover
    class CallbackSupport:
        """Stand-in when scikit-learn has no ``sklearn.callback`` (before 1.9)."""

        def set_callbacks(self, *callbacks):
            raise ImportError("Callbacks need scikit-learn >= 1.9 (sklearn.callback).")

        def _root_progress(self):
            return None

    def with_callbacks(method):  # noqa: F811
        return method
else:
    class CallbackSupport(CallbackSupportMixin):
        """scikit-learn's callback support, with the root of the search's task tree."""

        def _root_progress(self) -> Progress | None:
            if not getattr(self, "_skl_callbacks", None):
                return None
            context = self._init_callback_context(task_name="fit", max_subtasks=None)
            return Progress(context, self).begin()


class RoundReporter:
    """``verbose`` lines: 1, a line per round with the best federated score so far; 2, a line
    per party; 3, a line per configuration a party evaluated (fits counted as configurations x
    folds, a FLoRA local search's trials included)."""

    def __init__(self, name: str, verbose: int, table, n_splits: int, party_ids: list, metric: str,
                 aggregate: str):
        self.name, self.verbose, self.table = name, int(verbose), table
        self.n_splits, self.party_ids, self.metric, self.aggregate = n_splits, party_ids, metric, aggregate
        self._t0 = time.perf_counter()

    def __call__(self, round_, tasks, replies) -> None:
        if self.verbose < 1:
            return
        fresh = {p: _fresh_evaluations(tasks[p], r) for p, r in replies.items()}
        fits = sum(len(pts) for pts in fresh.values()) * self.n_splits
        best = self.table.best_score(self.metric, self.aggregate)
        shown = "none yet" if best is None else f"{best:.4f}"
        print(f"[{self.name}] round {round_}: {len(replies)} parties, {fits} fits, best federated "
              f"{self.metric} so far {shown} ({time.perf_counter() - self._t0:.1f} s)")
        if self.verbose < 2:
            return
        for p, reply in replies.items():
            state = f"failed ({reply.error})" if reply.error is not None else "ok"
            print(f"[{self.name}]   party {self.party_ids[p]!r}: {type(reply).__name__}, "
                  f"{len(fresh[p])} new configurations ({len(fresh[p]) * self.n_splits} fits), {state}")
            if self.verbose >= 3:
                for point, score in fresh[p]:
                    print(f"[{self.name}]     {self.table.space.to_params(point)} -> {self.metric} {score:.4f}")


def _fresh_evaluations(task, reply) -> list[tuple[np.ndarray, float]]:
    """The (point, score) pairs a party evaluated anew for this task (not from its cache)."""
    if hasattr(reply, "as_evaluation"):
        task, reply = reply.as_evaluation(task)
    if getattr(reply, "scores", None) is None or not hasattr(task, "points"):
        return []
    cached = reply.cached if reply.cached is not None else np.zeros(len(reply.scores), dtype=bool)
    return [(pt, float(s)) for pt, s, c in zip(task.points, reply.scores, cached) if not c]
