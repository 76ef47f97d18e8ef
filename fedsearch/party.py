"""The party side: a data holder that answers tasks with summaries of its own data.

A party's work on a task is split into independent units (one per configuration and CV fold), so
that the federation can fan all parties' units out in one flat ``Parallel`` call; the party then
assembles its reply from the units' outputs. Nothing but the reply leaves the party.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from sklearn.base import clone, is_classifier
from sklearn.model_selection import check_cv, cross_validate

from .messages import EvaluateReply, EvaluateTask, FitReply, FitTask, Task
from .space import SearchSpace

__all__ = ["BaseParty", "Party", "Unit", "register_task"]


@dataclass(frozen=True)
class Unit:
    """One independent piece of party-side work: ``func(*args)``, picklable."""

    func: Callable
    args: tuple


@dataclass
class _FoldResult:
    test: dict
    train: dict
    fit_time: float
    score_time: float
    error: BaseException | None = None
    message: str | None = None


def fit_and_score_fold(estimator, X, y, train, test, params, scoring, fit_params, return_train_score):
    """Fit a clone of ``estimator`` with ``params`` on one fold and score it.

    Uses the public :func:`sklearn.model_selection.cross_validate` on a single split, so it keeps
    working when scikit-learn's private helpers change. Exceptions come back as data.
    """
    est = clone(estimator).set_params(**params)
    try:
        out = cross_validate(
            est, X, y, cv=[(train, test)], scoring=scoring, error_score="raise",
            return_train_score=return_train_score, params=fit_params or None,
        )
    except Exception as exc:  # noqa: BLE001 - a failing fit is data, not a crash
        return _FoldResult({}, {}, 0.0, 0.0, exc, "".join(traceback.format_exception_only(exc)).strip())
    test_scores = {k[5:]: float(v[0]) for k, v in out.items() if k.startswith("test_")}
    train_scores = {k[6:]: float(v[0]) for k, v in out.items() if k.startswith("train_")}
    for name, value in test_scores.items():
        if not np.isfinite(value):
            msg = f"the scorer {name!r} returned {value}"
            return _FoldResult({}, {}, 0.0, 0.0, ValueError(msg), msg)
    return _FoldResult(test_scores, train_scores, float(out["fit_time"][0]), float(out["score_time"][0]))


class BaseParty:
    """The task protocol every party speaks: split a task into units, assemble the reply.

    What a party class can answer is taught with :func:`register_task`; subclasses set
    ``party_id`` and ``n_samples``.
    """

    party_id: Any = None

    def units(self, task: Task) -> list[Unit]:
        """The independent pieces of work of ``task``, after validating it."""
        return _handler(self, task)[0](self, task)

    def reply(self, task: Task, outputs: list[Any]):
        """Assemble the reply to ``task`` from the outputs of its units."""
        return _handler(self, task)[1](self, task, outputs)


class Party(BaseParty):
    """A data holder: runs its own cross-validation of the configurations it is sent.

    Parameters
    ----------
    party_id : hashable
        The party's name (in messages, logs and ``cv_results_`` columns).
    X, y : array-like
        The party's private data. Never sent anywhere.
    estimator : estimator
        The base estimator (cloned for every fit).
    space : SearchSpace
        The shared space; every incoming point is validated against it.
    cv : int, cross-validation generator or iterable
        The party's own cross-validation; its splits are computed once.
    scoring : str, callable, list, dict or None
        As in :func:`sklearn.model_selection.cross_validate`.
    objective : str
        The metric that is the objective of the search (``"score"`` for a single metric).
    error_score : "raise" or float
        What a failing configuration scores; ``"raise"`` raises with the party named.
    return_train_score : bool
    fit_params : dict or None
        Parameters passed to the estimator's ``fit`` (per-sample ones already cut to this party).
    groups : array-like or None
        Group labels for group-aware splitters.
    """

    def __init__(self, party_id, X, y, *, estimator, space: SearchSpace, cv=5, scoring=None,
                 objective="score", error_score=np.nan, return_train_score=False,
                 fit_params=None, groups=None):
        self.party_id = party_id
        self.X, self.y = X, y
        self.estimator = estimator
        self.space = space
        self.scoring = scoring
        self.objective = objective
        self.error_score = error_score
        self.return_train_score = return_train_score
        self.fit_params = fit_params or {}
        cv = check_cv(cv, y, classifier=is_classifier(estimator))
        self.folds = list(cv.split(X, y, groups))
        self.n_samples = len(y) if y is not None else len(X)
        self._cache: dict[tuple, dict] = {}

    @property
    def n_splits(self) -> int:
        return len(self.folds)

    def _check_points(self, points: np.ndarray) -> None:
        if points.ndim != 2 or points.shape[1] != self.space.n_dims:
            raise ValueError(
                f"Party {self.party_id!r} got points of shape {points.shape}; the search space has "
                f"{self.space.n_dims} dimensions."
            )
        if not np.all(np.isfinite(points)) or points.min(initial=0) < 0 or points.max(initial=1) > 1:
            raise ValueError(f"Party {self.party_id!r} got points outside the unit cube.")

    def _key(self, point: np.ndarray) -> tuple:
        return tuple(np.round(self.space.canonical(point), 12))

    def _units_evaluate(self, task: EvaluateTask) -> list[Unit]:
        self._check_points(task.points)
        units, seen = [], set()
        for point in task.points:
            key = self._key(point)
            if key in self._cache or key in seen:
                continue
            seen.add(key)
            params = self.space.to_params(point)
            for train, test in self.folds:
                units.append(Unit(fit_and_score_fold, (
                    self.estimator, self.X, self.y, train, test, params, self.scoring,
                    self.fit_params, self.return_train_score,
                )))
        return units

    def _summarise(self, params: dict, results: list[_FoldResult]) -> dict:
        failed = [r for r in results if r.error is not None]
        if failed:
            if self.error_score == "raise":
                exc = failed[0].error
                exc.add_note(f"Raised by party {self.party_id!r} fitting {params!r}.")
                raise exc
            return {"test": None, "std": None, "train": None, "error": failed[0].message,
                    "fit_time": 0.0, "score_time": 0.0}
        test = {k: float(np.mean([r.test[k] for r in results])) for k in results[0].test}
        std = {k: float(np.std([r.test[k] for r in results])) for k in results[0].test}
        train = {k: float(np.mean([r.train[k] for r in results])) for k in results[0].train}
        return {"test": test, "std": std, "train": train, "error": None,
                "fit_time": float(np.mean([r.fit_time for r in results])),
                "score_time": float(np.mean([r.score_time for r in results]))}

    def record_results(self, point: np.ndarray, results: list[_FoldResult]) -> dict:
        """Summarise the fold results of the configuration at ``point`` and remember them.

        For task kinds that fit configurations in their own loop (FLoRA's local search): the
        summary (mean and std of each metric over the folds, or the first failure) is returned,
        and a later evaluation task asking for the same configuration is answered from it
        without refitting. Raises the fold's error when ``error_score="raise"``.
        """
        summary = self._summarise(self.space.to_params(point), results)
        self._cache.setdefault(self._key(point), summary)
        return summary

    def _reply_evaluate(self, task: EvaluateTask, outputs: list[_FoldResult]) -> EvaluateReply:
        k = self.n_splits
        fresh = {}
        it = iter(range(0, len(outputs), k))
        for point in task.points:
            key = self._key(point)
            if key in self._cache or key in fresh:
                continue
            start = next(it)
            fresh[key] = self._summarise(self.space.to_params(point), outputs[start:start + k])
        self._cache.update(fresh)

        n = len(task.points)
        metrics = None
        rows, cached, seen = [], np.zeros(n, dtype=bool), set()
        for i, point in enumerate(task.points):
            key = self._key(point)
            cached[i] = key not in fresh or key in seen
            seen.add(key)
            rows.append(self._cache[key])
            if rows[-1]["test"] is not None and metrics is None:
                metrics = list(rows[-1]["test"])
        metrics = metrics or [self.objective]
        fill = np.nan if self.error_score == "raise" else float(self.error_score)

        def column(part, name):
            return np.array([r[part][name] if r[part] is not None and name in r[part] else
                             (fill if part == "test" else np.nan) for r in rows])

        test = {m: column("test", m) for m in metrics}
        scores = test[self.objective].copy()
        private = task.noise_std > 0
        if private:
            # DP (DP-Fed-PNE, App. D.2): the party perturbs its own rewards, and releases nothing
            # else about them (no noise-free scores, spreads or train scores).
            rng = np.random.default_rng(task.seed)
            scores = scores + rng.normal(0.0, task.noise_std, size=n)
            test = {self.objective: scores}
        return EvaluateReply(
            scores=scores,
            n_samples=self.n_samples,
            test_scores=test,
            std_scores={} if private else {m: column("std", m) for m in metrics},
            train_scores={m: column("train", m) for m in metrics} if self.return_train_score and not private else {},
            fit_time=np.array([0.0 if c else r["fit_time"] for r, c in zip(rows, cached)]),
            score_time=np.array([0.0 if c else r["score_time"] for r, c in zip(rows, cached)]),
            errors=tuple(r["error"] for r in rows),
            cached=cached,
        )

    def _units_fit(self, task: FitTask) -> list[Unit]:
        self._check_points(np.atleast_2d(task.point))
        est = clone(self.estimator).set_params(**self.space.to_params(task.point))
        return [Unit(_fit, (est, self.X, self.y, self.fit_params))]

    def _reply_fit(self, task: FitTask, outputs: list) -> FitReply:
        model, seconds, exc = outputs[0]
        if exc is not None:
            if self.error_score == "raise":
                exc.add_note(f"Raised by party {self.party_id!r} in the final fit.")
                raise exc
            return FitReply(model=None, n_samples=self.n_samples, error=str(exc))
        return FitReply(model=model, n_samples=self.n_samples, fit_time=seconds)

    def __repr__(self) -> str:
        return f"Party({self.party_id!r}, n_samples={self.n_samples})"


def _fit(estimator, X, y, fit_params):
    t0 = time.perf_counter()
    try:
        estimator.fit(X, y, **fit_params)
    except Exception as exc:  # noqa: BLE001 - a failing fit is data, not a crash
        return None, 0.0, exc
    return estimator, time.perf_counter() - t0, None


_HANDLERS: dict[tuple[type, str], tuple[Callable, Callable]] = {}


def register_task(party_class: type, kind: str, units: Callable, reply: Callable) -> None:
    """Teach ``party_class`` a new kind of task.

    ``units(party, task) -> list[Unit]`` splits the task into independent work (validating it
    first); ``reply(party, task, outputs) -> Reply`` assembles the reply from the units' outputs,
    in order. Algorithms that need more than :class:`~fedsearch.messages.EvaluateTask` (FLoRA's
    local search, for one) register their task here instead of editing :class:`Party`.
    """
    _HANDLERS[(party_class, kind)] = (units, reply)


def _handler(party, task: Task):
    for cls in type(party).__mro__:
        if (cls, task.kind) in _HANDLERS:
            return _HANDLERS[(cls, task.kind)]
    raise TypeError(f"{type(party).__name__} {party.party_id!r} cannot answer a task of kind {task.kind!r}.")


register_task(Party, "evaluate", Party._units_evaluate, Party._reply_evaluate)
register_task(Party, "fit", Party._units_fit, Party._reply_fit)


def run_unit(unit: Unit):
    """Run one unit (in a worker), timing it."""
    t0 = time.perf_counter()
    out = unit.func(*unit.args)
    return out, time.perf_counter() - t0
