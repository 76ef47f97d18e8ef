"""The scikit-learn face: the base of every federated search-CV estimator.

:class:`BaseFederatedSearchCV` owns input validation, ``cv_results_``, the choice of the best
configuration and the final fit; the rounds run through :func:`fedsearch.strategy.run_rounds`
on whatever :class:`~fedsearch.federation.Federation` carries them. Each algorithm's estimator
differs only in the search space it reads and the strategy it builds (``_get_space`` and
``_make_strategy``).
"""

from __future__ import annotations

import numbers
import os
import time
import warnings
from collections.abc import Iterable
from copy import deepcopy

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.exceptions import FitFailedWarning
from sklearn.metrics import check_scoring
from sklearn.utils.metadata_routing import MetadataRouter, MethodMapping
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from .. import _validation as v
from .._random import check_random_state
from ..algorithms.candidates.strategy import AGGREGATES
from ..federation import Federation, InProcessFederation
from ..messages import EvaluateTask, FitTask, SetupTask
from ..space import SearchSpace
from ..strategy import OneRound, Strategy, run_rounds
from ._checkpoint import Checkpoint
from ._inputs import check_estimator_params, check_fit_params, check_parties, split_parties
from ._progress import CallbackSupport, RoundReporter, with_callbacks
from ._results import ResultsTable
from .ensemble import PartyEnsemble

__all__ = ["BaseFederatedSearchCV"]


def _estimator_has(attr):
    """Delegate ``attr`` to the fitted final model, or to the unfitted estimator before fit."""

    def check(self):
        if hasattr(self, "best_estimator_"):
            return hasattr(self.best_estimator_, attr)
        return hasattr(self.estimator, attr)

    return check


_CV = v.Constraint(
    lambda c: c is None or (isinstance(c, numbers.Integral) and not isinstance(c, bool) and c >= 2)
    or hasattr(c, "split") or (isinstance(c, Iterable) and not isinstance(c, str)),
    "an int in the range [2, inf), a cross-validation splitter, an iterable of splits or None",
)
_SCORING = v.Constraint(
    lambda s: s is None or isinstance(s, (str, list, tuple, set, dict)) or callable(s),
    "a str, a callable, a list, tuple or set of str, a dict of scorers or None",
)


class BaseFederatedSearchCV(CallbackSupport, MetaEstimatorMixin, BaseEstimator):
    """Base class of the federated search-CV estimators (not for direct use).

    Subclasses implement ``_get_space(self) -> SearchSpace`` and
    ``_make_strategy(self, space, n_parties, weights, random_state) -> Strategy``.
    """

    _parameter_constraints: dict = {
        "scoring": [_SCORING],
        "n_jobs": [v.NONE, v.interval(numbers.Integral, None, None)],
        "refit": [v.BOOLEAN, v.instance_of(str), v.CALLABLE],
        "cv": [_CV],
        "verbose": [v.BOOLEAN, v.interval(numbers.Integral, 0, None)],
        "pre_dispatch": [v.instance_of(numbers.Integral, str)],
        "error_score": [v.options("raise"), v.REAL],
        "return_train_score": [v.BOOLEAN],
        "random_state": [v.RANDOM_STATE],
        "aggregate": [v.options(*AGGREGATES)],
        "final_fit": [v.options("pooled", "ensemble"), v.NONE],
        "checkpoint": [v.NONE, v.instance_of(str, os.PathLike, description="a str or path-like")],
    }

    #: whether the search is the same without a seed (a grid): then a checkpoint needs none
    _seedless = False

    #: whether to cross-validate the recommendation in every party when it was not evaluated
    #: by all of them during the search (so that ``best_score_`` is measured, not predicted)
    _validate_recommendation = True

    def __init__(self, estimator, *, scoring=None, n_jobs=None, refit=True, cv=None, verbose=0,
                 pre_dispatch="2*n_jobs", error_score=np.nan, return_train_score=False,
                 random_state=None, aggregate="weighted", final_fit="pooled", checkpoint=None):
        self.estimator = estimator
        self.scoring = scoring
        self.n_jobs = n_jobs
        self.refit = refit
        self.cv = cv
        self.verbose = verbose
        self.pre_dispatch = pre_dispatch
        self.error_score = error_score
        self.return_train_score = return_train_score
        self.random_state = random_state
        self.aggregate = aggregate
        self.final_fit = final_fit
        self.checkpoint = checkpoint

    # ------------------------------------------------------------------ subclass hooks
    def _get_space(self) -> SearchSpace:  # pragma: no cover - abstract
        raise NotImplementedError

    def _make_strategy(self, space: SearchSpace, n_parties: int, weights: np.ndarray,
                       random_state: np.random.RandomState) -> Strategy:  # pragma: no cover
        raise NotImplementedError

    def _check_search_params(self, n_parties: int) -> None:
        """Extra checks of a subclass, run with the others before any work starts."""

    def _after_search(self, strategy: Strategy, federation: Federation, space: SearchSpace) -> dict:
        """Extra fitted attributes of a subclass, as {name: value}."""
        return {}

    def _check_replies(self, federation: Federation, tasks: dict, replies: dict) -> None:
        """Extra checks of a subclass on each round's replies (raise to stop the search)."""

    # ------------------------------------------------------------------ scoring
    def _metric_names(self):
        """(metric names, multimetric?) of ``scoring``."""
        s = self.scoring
        if isinstance(s, (list, tuple, set)):
            names = list(s)
            if not names or not all(isinstance(n, str) for n in names) or len(set(names)) != len(names):
                raise ValueError(
                    f"The 'scoring' parameter of {type(self).__name__} as a list must hold unique "
                    f"metric names (str). Got {s!r}."
                )
            return names, True
        if isinstance(s, dict):
            if not s:
                raise ValueError(f"The 'scoring' parameter of {type(self).__name__} is an empty dict.")
            return list(s), True
        return ["score"], False

    def _scorers(self, names, multimetric):
        if not multimetric:
            return check_scoring(self.estimator, scoring=self.scoring)
        if isinstance(self.scoring, dict):
            return {n: check_scoring(self.estimator, scoring=sc) for n, sc in self.scoring.items()}
        return {n: check_scoring(self.estimator, scoring=n) for n in names}

    def _objective(self, names, multimetric) -> str:
        """The metric the search optimises (and refit selects on)."""
        if not multimetric:
            return "score"
        if isinstance(self.refit, str):
            if self.refit not in names:
                raise ValueError(
                    f"The 'refit' parameter of {type(self).__name__} must be one of the scoring "
                    f"metrics {names} for multi-metric scoring. Got {self.refit!r} instead."
                )
            return self.refit
        if self.refit is True:
            raise ValueError(
                f"For multi-metric scoring, the 'refit' parameter of {type(self).__name__} must be "
                f"a metric name ({names}), a callable, or False. Got True instead."
            )
        return names[0]

    def _check_param_names(self, space: SearchSpace) -> None:
        valid = self.estimator.get_params(deep=True)
        for name in space.param_names:
            if name not in valid:
                raise ValueError(
                    f"Invalid parameter {name!r} in the search space of {type(self).__name__} for "
                    f"estimator {self.estimator!r}. Valid parameters are: {sorted(valid)!r}."
                )

    # ------------------------------------------------------------------ fit
    @with_callbacks
    def fit(self, X=None, y=None, *, parties=None, groups=None, federation=None, **fit_params):
        """Search the space across the parties, then fit the final model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or list / dict of them, default=None
            One dataset with ``parties`` (a party label per sample), a list (or dict
            {party id: X}) of per-party datasets, or one dataset for a single party. None when
            ``federation`` reaches parties that hold their own data.
        y : array-like of shape (n_samples,), or list / dict of them, default=None
            Targets, in the same form as ``X``.
        parties : array-like of shape (n_samples,), default=None
            The party of each sample, when ``X`` is one dataset.
        groups : array-like of shape (n_samples,), or list / dict of them, default=None
            Group labels for group-aware CV splitters, cut per party like ``y``.
        federation : Federation, default=None
            The transport to parties that hold their own data (for example
            :class:`~fedsearch.federation.flower.FlowerFederation`); None runs the parties of
            ``X, y`` in this process.
        **fit_params : dict
            Parameters passed to the estimator's ``fit``; per-sample ones are cut per party.

        Returns
        -------
        self : object
            The fitted search.
        """
        names, multimetric, objective, scorer, space = self._check_search()
        federation = self._federation(X, y, parties, groups, federation, fit_params)
        ready = self._setup_parties(federation, space, objective)
        party_ids = list(federation.party_ids)
        weights = np.array([ready[p].n_samples for p in range(len(party_ids))], dtype=float)
        strategy = self._make_strategy(space, len(party_ids), weights, check_random_state(self.random_state))
        table = ResultsTable(space, party_ids, weights, names, self.return_train_score,
                             [ready[p].n_splits for p in range(len(party_ids))])

        checkpoint = self._open_checkpoint(space, federation, ready)
        report = RoundReporter(type(self).__name__, self.verbose, table, ready[0].n_splits, party_ids, objective,
                               self.aggregate)
        progress = self._root_progress()
        t0 = time.perf_counter()
        recommended = self._run_search(strategy, federation, table, checkpoint, report, progress)
        search_time = time.perf_counter() - t0
        results = table.results(self.aggregate)
        self._warn_failures(table, party_ids)

        fitted = {
            "cv_results_": results,
            "multimetric_": multimetric,
            "scorer_": scorer,
            "n_splits_": ready[0].n_splits,
            "n_parties_": len(party_ids),
            "party_ids_": party_ids,
            "party_sizes_": {pid: int(w) for pid, w in zip(party_ids, weights)},
            "search_time_": search_time,
        }
        if self.refit is not False or not multimetric:
            fitted.update(self._select_best(results, table, recommended, objective))
            if self.refit is not False and self.final_fit is not None:
                t1 = time.perf_counter()
                step = progress.child("final fit").begin() if progress is not None else None
                fitted["best_estimator_"] = self._final_fit(space.to_unit(fitted["best_params_"]), space,
                                                             federation, strategy)
                if step is not None:
                    step.end()
                fitted["refit_time_"] = time.perf_counter() - t1
        fitted.update(self._after_search(strategy, federation, space))
        fitted["n_rounds_"] = federation.n_rounds
        fitted["federation_log_"] = federation.log()
        fitted["transcript_"] = federation.transcript
        fitted["resumed_rounds_"] = checkpoint.resumed if checkpoint is not None else []
        if progress is not None:
            progress.end()
        # every attribute is set at once, at the end: a failed fit leaves no half-fitted state
        for key in [k for k in vars(self) if k.endswith("_") and not k.startswith("_")]:
            delattr(self, key)
        self.__dict__.update(fitted)
        return self

    def _check_search(self):
        """Validate the parameters before any work: (metric names, multimetric?, objective
        metric, scorer(s), search space)."""
        if isinstance(self.estimator, type) or not hasattr(self.estimator, "fit") \
                or not hasattr(self.estimator, "get_params"):
            shown = (f"the class {self.estimator.__name__} (pass an instance: {self.estimator.__name__}())"
                     if isinstance(self.estimator, type) else repr(self.estimator))
            raise TypeError(f"The 'estimator' parameter of {type(self).__name__} must be an estimator "
                            f"instance (with fit and get_params). Got {shown} instead.")
        v.validate_params(self)
        space = self._get_space()
        self._check_param_names(space)
        check_estimator_params(self.estimator, space, type(self).__name__)
        names, multimetric = self._metric_names()
        return names, multimetric, self._objective(names, multimetric), self._scorers(names, multimetric), space

    def _federation(self, X, y, parties, groups, federation, fit_params):
        """The transport: the given one, or the parties of ``X, y`` in this process (checked)."""
        if federation is None:
            check_fit_params(self.estimator, fit_params, type(self).__name__)
            data = split_parties(X, y, parties, groups, fit_params)
            check_parties(data, self.estimator, self.cv)
            federation = InProcessFederation(datasets=data, n_jobs=self.n_jobs, verbose=int(self.verbose),
                                             pre_dispatch=self.pre_dispatch)
        elif not isinstance(federation, Federation):
            raise TypeError(f"The 'federation' argument of {type(self).__name__}.fit must be a "
                            f"fedsearch.federation.Federation or None. Got {federation!r}.")
        elif X is not None or y is not None or fit_params:
            raise ValueError(f"{type(self).__name__}.fit got data and a federation: the parties of "
                             f"{type(federation).__name__} hold their own data; pass X=None, y=None.")
        self._check_search_params(federation.n_parties)
        if self.final_fit == "pooled" and self.refit is not False and not federation.can_pool:
            federation.pool()  # raises: the data cannot be pooled, with the alternatives
        return federation

    def _setup_parties(self, federation, space, objective) -> dict:
        """Send every party the search's :class:`SetupTask`; their replies (sizes, splits)."""
        scoring = list(self.scoring) if isinstance(self.scoring, (set, tuple)) else self.scoring
        ready = federation.setup(SetupTask(
            estimator=self.estimator, space=space, cv=self.cv, scoring=scoring, objective=objective,
            error_score=self.error_score, return_train_score=self.return_train_score))
        failed = [f"party {federation.party_ids[p]!r}: {r.kind} ({r.error})" for p, r in ready.items()
                  if r.error is not None]
        if failed:
            raise ValueError(f"The parties could not be set up; {'; '.join(failed)}.")
        return ready

    def _run_search(self, strategy, federation, table, checkpoint, report, progress) -> np.ndarray:
        """The rounds of ``strategy``, then (if asked) the validation round of its
        recommendation; every evaluation goes into ``table``, every round into the checkpoint.
        Returns the recommendation."""
        replay = checkpoint.rounds if checkpoint is not None else None

        def record(round_, tasks, replies):
            self._check_replies(federation, tasks, replies)
            table.add(tasks, replies)
            report(round_, tasks, replies)
            if checkpoint is not None and round_ not in checkpoint.rounds:
                checkpoint.save(round_, tasks, replies)

        kwargs = {"on_round": record, "replay": replay, "progress": progress}
        loop = run_rounds(strategy, federation, **kwargs)
        recommended = strategy.recommend()
        if self._validate_recommendation and not table.complete(recommended):
            tasks = {p: EvaluateTask(recommended[None, :]) for p in range(federation.n_parties)}
            run_rounds(OneRound(tasks), federation, start=loop.next_round, **kwargs)
        elif table.row_of(recommended) is None:
            table.add_unevaluated(recommended)  # predicted, not measured: NaN scores
        return recommended

    def _open_checkpoint(self, space, federation, ready) -> Checkpoint | None:
        """The checkpoint of this search (read back when it exists), or None."""
        if self.checkpoint is None:
            return None
        seeded = isinstance(self.random_state, numbers.Integral) and not isinstance(self.random_state, bool)
        if not seeded and not (self._seedless and self.random_state is None):
            raise ValueError(f"The 'checkpoint' parameter of {type(self).__name__} needs an int random_state, so "
                             f"that a resumed search repeats the interrupted one. Got "
                             f"random_state={self.random_state!r} instead.")
        params = {k: val for k, val in self.get_params(deep=False).items()
                  if k not in ("n_jobs", "verbose", "pre_dispatch", "checkpoint")}
        fingerprint = {"search": type(self).__name__, "params": params, "space": space,
                       "parties": [[pid, ready[p].n_samples, ready[p].n_splits]
                                   for p, pid in enumerate(federation.party_ids)]}
        return Checkpoint(self.checkpoint, fingerprint)

    def _select_best(self, results, table, recommended, objective) -> dict:
        """``best_index_``, ``best_params_`` (and ``best_score_``): the recommendation, or the
        row a ``refit`` callable picks."""
        if callable(self.refit):
            best = self.refit(results)
            if not isinstance(best, numbers.Integral) or not 0 <= best < table.n_rows:
                raise TypeError(f"The refit callable must return an int index into cv_results_ "
                                f"(0 .. {table.n_rows - 1}). Got {best!r}.")
            return {"best_index_": int(best), "best_params_": results["params"][int(best)]}
        best = table.row_of(recommended)
        complete, failed = table.outcome()
        if failed[best]:
            # a configuration that failed in any party is never the answer: the best of those
            # that succeeded in every party is (a surface's arg-min or a level's centre may fail)
            scores = np.where(complete & ~failed, results[f"mean_test_{objective}"], np.nan)
            best = int(np.nanargmax(scores))
        return {"best_index_": best, "best_params_": results["params"][best],
                "best_score_": float(results[f"mean_test_{objective}"][best])}

    def _warn_failures(self, table, party_ids) -> None:
        """Warn of the failed configurations of each party (with what crossed the boundary: the
        kind and data-free message); raise when no configuration succeeded in every party."""
        failures = table.failures()
        if not failures:
            return
        total = table.n_rows
        if table.nothing_succeeded():
            details = "; ".join(f"party {party_ids[p]!r}: {errs[0][1]} ({errs[0][2]})"
                                for p, errs in failures.items())
            raise ValueError(f"No configuration succeeded in every party ({total} tried), so there is "
                             f"nothing to recommend. The first error of each failing party: {details}.")
        for p, errs in failures.items():
            warnings.warn(
                f"{len(errs)} of {total} configurations failed in party {party_ids[p]!r}; they score "
                f"error_score={self.error_score!r} there and are never recommended. First error "
                f"({errs[0][1]}): {errs[0][2]}",
                FitFailedWarning, stacklevel=3,
            )

    def _final_fit(self, point, space, federation, strategy):
        """The final model of ``point``. ``strategy`` (after the search) is for subclasses whose
        final models depend on more than one point (PF-PNE's personal configurations)."""
        if self.final_fit == "ensemble":
            # each party fits the chosen configuration on its own data: only models cross over
            return self._party_models(federation, {p: FitTask(point) for p in range(federation.n_parties)})
        # "pooled": one model on the union of the parties' data. Every row moves to the server
        # (the transcript records it); possible only where the data already is in one process.
        X, y, fit_params = federation.pool()
        est = clone(self.estimator).set_params(**clone(space.to_params(point), safe=False))
        return est.fit(X, y, **fit_params) if y is not None else est.fit(X, **fit_params)

    def _party_models(self, federation, tasks) -> PartyEnsemble:
        """One round of :class:`FitTask`: each party fits on its own data and sends its model."""
        round_ = OneRound(tasks)
        run_rounds(round_, federation, start=federation.next_round)
        replies = round_.replies_
        failed = {federation.party_ids[p]: f"{r.kind}: {r.error}" for p, r in replies.items() if r.error is not None}
        if failed:
            raise ValueError(f"The final fit failed in parties {failed}.")
        return PartyEnsemble([replies[p].model for p in range(federation.n_parties)],
                             [replies[p].n_samples for p in range(federation.n_parties)])

    # ------------------------------------------------------------------ delegation
    def _check_refitted(self, method: str) -> None:
        check_is_fitted(self)
        if not hasattr(self, "best_estimator_"):
            raise AttributeError(
                f"{method} is available only when refit is not False and final_fit is not None; "
                f"this {type(self).__name__} was fitted with refit={self.refit!r}, "
                f"final_fit={self.final_fit!r}."
            )

    @available_if(_estimator_has("predict"))
    def predict(self, X):
        """Predict with the final model."""
        self._check_refitted("predict")
        return self.best_estimator_.predict(X)

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities of the final model."""
        self._check_refitted("predict_proba")
        return self.best_estimator_.predict_proba(X)

    @available_if(_estimator_has("predict_log_proba"))
    def predict_log_proba(self, X):
        """Log class probabilities of the final model."""
        self._check_refitted("predict_log_proba")
        return self.best_estimator_.predict_log_proba(X)

    @available_if(_estimator_has("decision_function"))
    def decision_function(self, X):
        """Decision function of the final model."""
        self._check_refitted("decision_function")
        return self.best_estimator_.decision_function(X)

    @available_if(_estimator_has("score_samples"))
    def score_samples(self, X):
        """``score_samples`` of the final model."""
        self._check_refitted("score_samples")
        return self.best_estimator_.score_samples(X)

    @available_if(_estimator_has("transform"))
    def transform(self, X):
        """Transform with the final model."""
        self._check_refitted("transform")
        return self.best_estimator_.transform(X)

    @available_if(_estimator_has("inverse_transform"))
    def inverse_transform(self, X):
        """Inverse transform with the final model."""
        self._check_refitted("inverse_transform")
        return self.best_estimator_.inverse_transform(X)

    def score(self, X, y=None, **params):
        """Score of the final model with the refit metric (``scorer_``)."""
        self._check_refitted("score")
        scorer = self.scorer_[self.refit] if self.multimetric_ else self.scorer_
        return scorer(self.best_estimator_, X, y, **params)

    @property
    def classes_(self):
        """Classes of the final model."""
        self._check_refitted("classes_")
        return self.best_estimator_.classes_

    @property
    def n_features_in_(self):
        """Number of features seen by the final model."""
        try:
            check_is_fitted(self)
        except Exception as exc:  # NotFittedError -> AttributeError for hasattr()
            raise AttributeError(f"{type(self).__name__} is not fitted yet.") from exc
        if not hasattr(self, "best_estimator_"):
            raise AttributeError("n_features_in_ is available only when a final model was fitted.")
        return self.best_estimator_.n_features_in_

    @property
    def feature_names_in_(self):
        """Feature names seen by the final model (when fitted on a DataFrame)."""
        self._check_refitted("feature_names_in_")
        return self.best_estimator_.feature_names_in_

    def get_metadata_routing(self):
        """How the metadata of ``fit`` and ``score`` is routed (as scikit-learn's searches do).

        Returns
        -------
        routing : MetadataRouter
            The routing to the estimator's ``fit``, the scorer(s) and the CV splitter.
        """
        router = MetadataRouter(owner=self).add(
            estimator=self.estimator, method_mapping=MethodMapping().add(caller="fit", callee="fit"))
        names, multimetric = self._metric_names()
        scorers = self._scorers(names, multimetric)
        scorer_mapping = MethodMapping().add(caller="score", callee="score").add(caller="fit", callee="score")
        for name, scorer in (scorers.items() if multimetric else [("scorer", scorers)]):
            router.add(**{name if not multimetric else f"scorer_{name}": scorer}, method_mapping=scorer_mapping)
        router.add(splitter=self.cv, method_mapping=MethodMapping().add(caller="fit", callee="split"))
        return router

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "cv_results_")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        sub = self.estimator.__sklearn_tags__()
        tags.estimator_type = sub.estimator_type
        tags.classifier_tags = deepcopy(sub.classifier_tags)
        tags.regressor_tags = deepcopy(sub.regressor_tags)
        tags.input_tags.pairwise = sub.input_tags.pairwise
        tags.input_tags.sparse = sub.input_tags.sparse
        tags.input_tags.allow_nan = sub.input_tags.allow_nan
        tags.target_tags.required = sub.target_tags.required
        return tags


