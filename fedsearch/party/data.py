"""The data party: a data holder that cross-validates the configurations it is sent on its own
data and answers with summaries.

A party's work on a task is split into independent units (one per configuration and CV fold), so
that the federation can fan all parties' units out in one flat ``Parallel`` call; the party then
assembles its reply from the units' outputs. Nothing but the reply leaves the party.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import clone, is_classifier
from sklearn.model_selection import check_cv, cross_validate

from ..messages import FitReply, FitTask, SetupReply, SetupTask
from ..space import SearchSpace
from .base import BaseParty
from .objective import Summary, empty_summary
from .registry import Unit, register_handler

__all__ = ["Party", "CrossValidation", "FoldResult", "fit_and_score_fold", "summarise_folds"]


@dataclass
class FoldResult:
    """What one fit of one fold produced (party-internal: never sent)."""

    test: dict
    train: dict
    fit_time: float
    score_time: float
    error: BaseException | None = None
    kind: str | None = None


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
        return FoldResult({}, {}, 0.0, 0.0, exc, "fit")
    test_scores = {k[5:]: float(v[0]) for k, v in out.items() if k.startswith("test_")}
    train_scores = {k[6:]: float(v[0]) for k, v in out.items() if k.startswith("train_")}
    for name, value in test_scores.items():
        if not np.isfinite(value):
            return FoldResult({}, {}, 0.0, 0.0, ValueError(f"the scorer {name!r} returned {value}"), "score")
    return FoldResult(test_scores, train_scores, float(out["fit_time"][0]), float(out["score_time"][0]))


def summarise_folds(results: list[FoldResult]) -> Summary:
    """Mean, spread and per-fold values of each metric over the folds of one configuration, or
    its first failure (the exception under ``"exception"``, its kind under ``"kind"``; the party
    keeps them: :meth:`~fedsearch.party.base.BaseParty.checked`)."""
    failed = [r for r in results if r.error is not None]
    if failed:
        return {**empty_summary(), "exception": failed[0].error, "kind": failed[0].kind}
    test = {k: float(np.mean([r.test[k] for r in results])) for k in results[0].test}
    std = {k: float(np.std([r.test[k] for r in results])) for k in results[0].test}
    train = {k: float(np.mean([r.train[k] for r in results])) for k in results[0].train}
    return {"test": test, "std": std, "train": train, "error": None,
            "splits": {k: [r.test[k] for r in results] for k in results[0].test},
            "train_splits": {k: [r.train[k] for r in results] for k in results[0].train},
            "fit_time": float(np.mean([r.fit_time for r in results])),
            "score_time": float(np.mean([r.score_time for r in results])),
            "std_fit_time": float(np.std([r.fit_time for r in results])),
            "std_score_time": float(np.std([r.score_time for r in results]))}


@dataclass(frozen=True)
class CrossValidation:
    """A data party's evaluation of one point at a time, for work inside one unit (picklable)."""

    estimator: Any
    X: Any
    y: Any
    folds: list
    space: SearchSpace
    scoring: Any
    fit_params: dict
    return_train_score: bool

    def __call__(self, point) -> Summary:
        params = self.space.to_params(point)
        return summarise_folds([
            fit_and_score_fold(self.estimator, self.X, self.y, train, test, params, self.scoring,
                               self.fit_params, self.return_train_score) for train, test in self.folds])


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
    metric : str
        The metric that is the objective of the search (``"score"`` for a single metric).
    error_score : "raise" or float
        What a failing configuration scores; ``"raise"`` raises with the party named.
    return_train_score : bool
    fit_params : dict or None
        Parameters passed to the estimator's ``fit`` (per-sample ones already cut to this party).
    groups : array-like or None
        Group labels for group-aware splitters.
    share_errors : bool, default=False
        Whether the party sends its full error messages to the server. By default a failure
        crosses as its kind and exception type only (a message may quote the party's data);
        the full message stays in ``errors_`` and the ``"fedsearch.party"`` log. The party's
        own choice: the server's :class:`~fedsearch.messages.SetupTask` cannot set it.

    Attributes
    ----------
    errors_ : list of dict
        Every failure at this party, with its full message and traceback.
    """

    deterministic = True
    reports_metrics = True

    def __init__(self, party_id, X, y, *, estimator, space: SearchSpace, cv=5, scoring=None,
                 metric="score", error_score=np.nan, return_train_score=False,
                 fit_params=None, groups=None, share_errors=False):
        super().__init__()
        self.share_errors = share_errors
        self.party_id = party_id
        self.X, self.y = X, y
        self.estimator = estimator
        self.space = space
        self.scoring = scoring
        self.metric = metric
        self.error_score = error_score
        self.return_train_score = return_train_score
        self.fit_params = fit_params or {}
        cv = check_cv(cv, y, classifier=is_classifier(estimator))
        self.folds = list(cv.split(X, y, groups))
        self.n_samples = len(y) if y is not None else len(X)

    @classmethod
    def from_setup(cls, party_id, X, y, setup: SetupTask, *, fit_params=None, groups=None,
                   share_errors=False) -> "Party":
        """The party of a search, from its own data and the search's :class:`SetupTask`
        (``share_errors`` is the party's, not the task's)."""
        return cls(party_id, X, y, estimator=setup.estimator, space=setup.space, cv=setup.cv,
                   scoring=setup.scoring, metric=setup.objective, error_score=setup.error_score,
                   return_train_score=setup.return_train_score, fit_params=fit_params, groups=groups,
                   share_errors=share_errors)

    def setup_reply(self) -> SetupReply:
        """What the party tells the server once set up: counts only."""
        return SetupReply(n_samples=self.n_samples, n_splits=self.n_splits)

    @property
    def n_splits(self) -> int:
        return len(self.folds)

    @property
    def n_dims(self) -> int:
        return self.space.n_dims

    def _key(self, point) -> tuple:
        return self.space.key(point)

    # ------------------------------------------------------------------ LocalObjective
    def evaluation_units(self, points) -> list[Unit]:
        units = []
        for params in self.space.to_params_many(np.asarray(points, dtype=float).reshape(len(points), self.n_dims)):
            for train, test in self.folds:
                units.append(Unit(fit_and_score_fold, (
                    self.estimator, self.X, self.y, train, test, params, self.scoring,
                    self.fit_params, self.return_train_score,
                )))
        return units

    def summarise(self, points, outputs) -> list[Summary]:
        k = self.n_splits
        return [self.checked(point, summarise_folds(outputs[i * k:(i + 1) * k])) for i, point in enumerate(points)]

    def evaluator(self, seed=None) -> CrossValidation:
        return CrossValidation(self.estimator, self.X, self.y, self.folds, self.space, self.scoring,
                                self.fit_params, self.return_train_score)

    def describe(self, point) -> dict:
        return self.space.to_params(point)

    def __repr__(self) -> str:
        return f"Party({self.party_id!r}, n_samples={self.n_samples})"


def _fit(estimator, X, y, fit_params):
    t0 = time.perf_counter()
    try:
        estimator.fit(X, y, **fit_params)
    except Exception as exc:  # noqa: BLE001 - a failing fit is data, not a crash
        return None, 0.0, exc
    return estimator, time.perf_counter() - t0, None


def _units_fit(party: Party, task: FitTask) -> list[Unit]:
    party.check_points(np.atleast_2d(task.point))
    est = clone(party.estimator).set_params(**party.space.to_params(task.point))
    return [Unit(_fit, (est, party.X, party.y, party.fit_params))]


def _reply_fit(party: Party, task: FitTask, outputs: list) -> FitReply:
    model, seconds, exc = outputs[0]
    if exc is not None:
        public = party.record_error(exc, "final_fit")
        if party.error_score == "raise":
            party._raise_public(exc, public, "in the final fit")
        return FitReply(model=None, n_samples=party.n_samples, error=public, kind="final_fit")
    return FitReply(model=model, n_samples=party.n_samples, fit_time=seconds)


register_handler(FitTask, _units_fit, _reply_fit)
