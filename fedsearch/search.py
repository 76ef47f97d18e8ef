"""The scikit-learn face: federated search-CV estimators.

:class:`BaseFederatedSearchCV` owns input validation, the round loop, ``cv_results_``, the choice
of the best configuration and the final fit. Each algorithm's estimator differs only in the
search space it reads and the strategy it builds (``_get_space`` and ``_make_strategy``).
"""

from __future__ import annotations

import numbers
import time
import warnings
from collections.abc import Iterable
from copy import deepcopy

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.exceptions import FitFailedWarning
from sklearn.metrics import check_scoring
from sklearn.utils import check_random_state
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from . import _validation as v
from ._data import PartyData, check_parties, pool, split_parties
from ._results import ResultsTable
from .ensemble import PartyEnsemble
from .federation import InProcessFederation
from .messages import EvaluateTask, FitTask
from .party import Party
from .space import SearchSpace
from .strategies.base import Strategy
from .strategies.candidates import AGGREGATES, CandidateStrategy

__all__ = ["BaseFederatedSearchCV", "FederatedGridSearchCV", "FederatedRandomizedSearchCV"]


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


class BaseFederatedSearchCV(MetaEstimatorMixin, BaseEstimator):
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
    }

    #: whether to cross-validate the recommendation in every party when it was not evaluated
    #: by all of them during the search (so that ``best_score_`` is measured, not predicted)
    _validate_recommendation = True

    def __init__(self, estimator, *, scoring=None, n_jobs=None, refit=True, cv=None, verbose=0,
                 pre_dispatch="2*n_jobs", error_score=np.nan, return_train_score=False,
                 random_state=None, aggregate="weighted", final_fit="pooled"):
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

    # ------------------------------------------------------------------ subclass hooks
    def _get_space(self) -> SearchSpace:  # pragma: no cover - abstract
        raise NotImplementedError

    def _make_strategy(self, space: SearchSpace, n_parties: int, weights: np.ndarray,
                       random_state: np.random.RandomState) -> Strategy:  # pragma: no cover
        raise NotImplementedError

    def _check_search_params(self, parties: list[PartyData]) -> None:
        """Extra checks of a subclass, run with the others before any work starts."""

    def _after_search(self, strategy: Strategy, federation: InProcessFederation,
                      space: SearchSpace) -> dict:
        """Extra fitted attributes of a subclass, as {name: value}."""
        return {}

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
    def fit(self, X, y=None, *, parties=None, groups=None, **fit_params):
        """Search the space across the parties, then fit the final model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or list / dict of them
            One dataset with ``parties`` (a party label per sample), a list (or dict
            {party id: X}) of per-party datasets, or one dataset for a single party.
        y : array-like of shape (n_samples,), or list / dict of them, default=None
            Targets, in the same form as ``X``.
        parties : array-like of shape (n_samples,), default=None
            The party of each sample, when ``X`` is one dataset.
        groups : array-like of shape (n_samples,), or list / dict of them, default=None
            Group labels for group-aware CV splitters, cut per party like ``y``.
        **fit_params : dict
            Parameters passed to the estimator's ``fit``; per-sample ones are cut per party.

        Returns
        -------
        self : object
            The fitted search.
        """
        v.validate_params(self)
        if not hasattr(self.estimator, "fit"):
            raise TypeError(f"The 'estimator' of {type(self).__name__} must have a fit method. "
                            f"Got {self.estimator!r}.")
        space = self._get_space()
        self._check_param_names(space)
        names, multimetric = self._metric_names()
        objective = self._objective(names, multimetric)
        scorer = self._scorers(names, multimetric)
        data = split_parties(X, y, parties, groups, fit_params)
        n_splits = check_parties(data, self.estimator, self.cv)
        self._check_search_params(data)

        party_ids = [d.party_id for d in data]
        weights = np.array([d.n_samples for d in data], dtype=float)
        scoring = list(self.scoring) if isinstance(self.scoring, (set, tuple)) else self.scoring
        party_objs = [
            Party(d.party_id, d.X, d.y, estimator=self.estimator, space=space, cv=self.cv,
                  scoring=scoring, objective=objective, error_score=self.error_score,
                  return_train_score=self.return_train_score, fit_params=d.fit_params, groups=d.groups)
            for d in data
        ]
        federation = InProcessFederation(party_objs, n_jobs=self.n_jobs, verbose=int(self.verbose),
                                         pre_dispatch=self.pre_dispatch)
        strategy = self._make_strategy(space, len(data), weights, check_random_state(self.random_state))
        table = ResultsTable(space, party_ids, weights, names, self.return_train_score)

        t0 = time.perf_counter()
        round_ = 0
        while (tasks := strategy.configure(round_)) is not None:
            replies = federation.run_round(round_, tasks)
            table.add(tasks, replies)
            strategy.aggregate(round_, replies)
            round_ += 1
        recommended = strategy.recommend()
        if self._validate_recommendation and not table.complete(recommended):
            tasks = {p: EvaluateTask(recommended[None, :]) for p in range(len(data))}
            table.add(tasks, federation.run_round(round_, tasks))
            round_ += 1
        elif table.row_of(recommended) is None:
            table.add_unevaluated(recommended)  # predicted, not measured: NaN scores
        search_time = time.perf_counter() - t0

        results = table.results(self.aggregate)
        self._warn_failures(table, party_ids, results, objective)

        fitted = {
            "cv_results_": results,
            "multimetric_": multimetric,
            "scorer_": scorer,
            "n_splits_": n_splits,
            "n_parties_": len(data),
            "party_ids_": party_ids,
            "party_sizes_": {pid: int(w) for pid, w in zip(party_ids, weights)},
            "search_time_": search_time,
        }
        if self.refit is not False or not multimetric:
            if callable(self.refit):
                best = self.refit(results)
                if not isinstance(best, numbers.Integral) or not 0 <= best < table.n_rows:
                    raise TypeError(f"The refit callable must return an int index into cv_results_ "
                                    f"(0 .. {table.n_rows - 1}). Got {best!r}.")
                best_index = int(best)
            else:
                best_index = table.row_of(recommended)
                fitted["best_score_"] = float(results[f"mean_test_{objective}"][best_index])
            fitted["best_index_"] = best_index
            fitted["best_params_"] = results["params"][best_index]
            if self.refit is not False and self.final_fit is not None:
                point = space.to_unit(fitted["best_params_"])
                t1 = time.perf_counter()
                fitted["best_estimator_"] = self._final_fit(point, data, party_objs, federation, round_,
                                                             strategy)
                fitted["refit_time_"] = time.perf_counter() - t1
        fitted.update(self._after_search(strategy, federation, space))
        fitted["n_rounds_"] = federation.n_rounds
        fitted["federation_log_"] = federation.log()
        fitted["transcript_"] = federation.transcript
        # every attribute is set at once, at the end: a failed fit leaves no half-fitted state
        for key in [k for k in vars(self) if k.endswith("_") and not k.startswith("_")]:
            delattr(self, key)
        self.__dict__.update(fitted)
        return self

    def _warn_failures(self, table, party_ids, results, objective) -> None:
        failures = table.failures()
        if not failures:
            return
        total = table.n_rows
        if all(len(failures.get(p, [])) == total for p in range(len(party_ids))):
            details = "\n".join(f"party {party_ids[p]!r}: {errs[0][1]}" for p, errs in failures.items())
            raise ValueError(f"All the {total} configurations failed in every party.\n{details}")
        for p, errs in failures.items():
            warnings.warn(
                f"{len(errs)} of {total} configurations failed in party {party_ids[p]!r}; they score "
                f"error_score={self.error_score!r} there. First error: {errs[0][1]}",
                FitFailedWarning, stacklevel=3,
            )

    def _final_fit(self, point, data, party_objs, federation, round_, strategy):
        """The final model of ``point``. ``strategy`` (after the search) is for subclasses whose
        final models depend on more than one point (PF-PNE's personal configurations)."""
        if self.final_fit == "ensemble":
            # each party fits the chosen configuration on its own data: only models cross over
            tasks = {p: FitTask(point) for p in range(len(data))}
            replies = federation.run_round(round_, tasks)
            failed = {data[p].party_id: r.error for p, r in replies.items() if r.error is not None}
            if failed:
                raise ValueError(f"The final fit failed in parties {failed}.")
            return PartyEnsemble([replies[p].model for p in range(len(data))],
                                 [d.n_samples for d in data])
        # "pooled": one model on the union of the parties' data. Possible only because the data
        # is in this process; it emulates one federated training of the chosen configuration.
        X, y, fit_params = pool(data)
        params = party_objs[0].space.to_params(point)
        est = clone(self.estimator).set_params(**clone(params, safe=False))
        return est.fit(X, y, **fit_params) if y is not None else est.fit(X, **fit_params)

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


_COMMON_PARAMS = """
    scoring : str, callable, list, tuple, set or dict, default=None
        How each party scores a configuration in its own cross-validation, as in
        :class:`~sklearn.model_selection.GridSearchCV` (None: the estimator's ``score``).
    n_jobs : int, default=None
        Workers for the flat fan-out of each round over (party, configuration, fold); ``-1``
        uses all cores. ``joblib.parallel_config(backend=...)`` moves the work to dask or ray.
    refit : bool, str or callable, default=True
        Fit a final model with the best configuration. For multi-metric scoring, the metric that
        selects it; a callable takes ``cv_results_`` and returns ``best_index_``.
    cv : int, cross-validation generator or iterable, default=None
        Each party's own cross-validation (None: 5-fold, stratified for classifiers).
    verbose : int, default=0
        Print a line per round (and joblib's progress above 1).
    pre_dispatch : int or str, default="2*n_jobs"
        As in joblib's ``Parallel``.
    error_score : "raise" or float, default=np.nan
        The score of a configuration whose fit fails in a party (a warning names the party);
        ``"raise"`` raises the error with the party named.
    return_train_score : bool, default=False
        Also report training scores.
    random_state : int, RandomState instance or None, default=None
        Seed of the search; the same seed gives the same ``cv_results_`` for any ``n_jobs``.
    aggregate : {"weighted", "mean", "min"}, default="weighted"
        The federation's score of a configuration from the parties' mean CV scores: weighted by
        party size, plain mean, or the worst party.
    final_fit : {"pooled", "ensemble"} or None, default="pooled"
        How the final model is trained. ``"pooled"``: one model on the union of the parties'
        data; this is possible only because the data is in one process, and emulates one
        federated training of the chosen configuration (as the FLoRA paper does): outside a
        simulation, the data would have to leave the parties. ``"ensemble"``: each party fits
        the chosen configuration on its own data and the server averages the models'
        predictions weighted by party size; only fitted models cross the boundary (a model can
        still reveal facts about its training data). None: no final model.
"""

_COMMON_ATTRIBUTES = """
    cv_results_ : dict of ndarray
        One row per configuration, loadable by ``pandas.DataFrame``: ``params``, masked
        ``param_<name>``, ``mean_test_<metric>`` (the federation's score, see ``aggregate``),
        ``std_test_<metric>`` (spread of the parties' scores), ``rank_test_<metric>``,
        ``party_<id>_test_<metric>`` (each party's mean CV score), ``mean_fit_time``,
        ``std_fit_time``, ``mean_score_time``, ``std_score_time`` (per fold, over parties),
        ``n_failed_parties``, and the ``train`` columns with ``return_train_score``.
    best_estimator_ : estimator
        The final model (see ``final_fit``); absent when ``refit=False`` or ``final_fit=None``.
    best_score_ : float
        ``mean_test_<metric>`` of the best configuration.
    best_params_ : dict
        The best configuration.
    best_index_ : int
        Its row in ``cv_results_``.
    scorer_ : callable or dict
        The scorer(s) used by the parties.
    multimetric_ : bool
        Whether several metrics were scored.
    n_splits_ : int
        Number of CV splits in each party.
    refit_time_ : float
        Seconds spent fitting the final model.
    n_parties_ : int
        Number of parties.
    party_ids_ : list
        The parties' ids, in order (the ``<id>`` of the ``party_<id>_`` columns).
    party_sizes_ : dict
        Samples per party.
    n_rounds_ : int
        Communication rounds (including the final fit for ``final_fit="ensemble"``).
    federation_log_ : dict of list
        Every message: ``round``, ``party``, ``direction``, ``message``, ``bytes``; loadable by
        ``pandas.DataFrame``.
    transcript_ : list of tuple
        The messages themselves, ``(round, party, direction, message)``: proof of what crossed
        the party boundary.
    search_time_ : float
        Seconds spent searching.
    classes_ : ndarray
        Classes of the final model (classifiers).
    n_features_in_ : int
        Number of features seen by the final model.
"""


class FederatedGridSearchCV(BaseFederatedSearchCV):
    __doc__ = """Exhaustive search over a parameter grid, cross-validated inside every party.

    Every party cross-validates every configuration of the grid on its own data and sends back
    only its mean scores (and counts, timings); the federation's score of a configuration is
    the aggregate of the party scores. The drop-in replacement for
    :class:`~sklearn.model_selection.GridSearchCV` across data silos, and the honest multi-shot
    baseline of federated HPO.

    Parameters
    ----------
    estimator : estimator object
        The base estimator (a Pipeline works; its parameters are named ``step__param``).
    param_grid : dict or list of dicts
        Lists of values per parameter name, as in ``GridSearchCV``.
""" + _COMMON_PARAMS + """
    Attributes
    ----------
""" + _COMMON_ATTRIBUTES + """
    See Also
    --------
    FederatedRandomizedSearchCV : sample configurations from distributions instead.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from fedsearch import FederatedGridSearchCV
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> site = np.arange(len(y)) % 3                        # three hospitals
    >>> model = make_pipeline(StandardScaler(), LogisticRegression())
    >>> search = FederatedGridSearchCV(model, {"logisticregression__C": [0.01, 0.1, 1.0]}, cv=3)
    >>> search.fit(X, y, parties=site).best_params_
    {'logisticregression__C': 0.1}
    >>> sorted(k for k in search.cv_results_ if k.startswith("party_"))
    ['party_0_test_score', 'party_1_test_score', 'party_2_test_score']
    """

    _parameter_constraints = {**BaseFederatedSearchCV._parameter_constraints}

    def __init__(self, estimator, param_grid, *, scoring=None, n_jobs=None, refit=True, cv=None,
                 verbose=0, pre_dispatch="2*n_jobs", error_score=np.nan, return_train_score=False,
                 random_state=None, aggregate="weighted", final_fit="pooled"):
        super().__init__(estimator, scoring=scoring, n_jobs=n_jobs, refit=refit, cv=cv,
                         verbose=verbose, pre_dispatch=pre_dispatch, error_score=error_score,
                         return_train_score=return_train_score, random_state=random_state,
                         aggregate=aggregate, final_fit=final_fit)
        self.param_grid = param_grid

    def _get_space(self):
        space = SearchSpace(self.param_grid)
        if not space.is_finite:
            bad = [d.name for d in space.dimensions if not hasattr(d, "values")]
            raise TypeError(
                f"The 'param_grid' of FederatedGridSearchCV must map names to lists of values; "
                f"{bad} are distributions (use FederatedRandomizedSearchCV for those)."
            )
        return space

    def _make_strategy(self, space, n_parties, weights, random_state):
        return CandidateStrategy(space.grid(), n_parties, weights, self.aggregate)


class FederatedRandomizedSearchCV(BaseFederatedSearchCV):
    __doc__ = """Randomized search over parameter distributions, cross-validated inside every party.

    ``n_iter`` configurations are drawn from ``param_distributions`` (lists are sampled
    uniformly, scipy.stats distributions through their quantile function); every party
    cross-validates each of them on its own data and sends back only its mean scores.

    Parameters
    ----------
    estimator : estimator object
        The base estimator (a Pipeline works; its parameters are named ``step__param``).
    param_distributions : dict, list of dicts or SearchSpace
        Lists of values or frozen ``scipy.stats`` distributions (``loguniform``, ``randint``,
        ``uniform``...) per parameter name, as in ``RandomizedSearchCV``.
    n_iter : int, default=10
        Number of configurations. When every parameter is a list and the grid is smaller, the
        whole grid is searched (with a warning).
""" + _COMMON_PARAMS + """
    Attributes
    ----------
""" + _COMMON_ATTRIBUTES + """
    See Also
    --------
    FederatedGridSearchCV : search every configuration of a grid.

    Examples
    --------
    >>> from scipy.stats import loguniform
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.svm import SVC
    >>> from fedsearch import FederatedRandomizedSearchCV
    >>> X, y = load_iris(return_X_y=True)
    >>> Xs, ys = [X[0::2], X[1::2]], [y[0::2], y[1::2]]     # one dataset per party
    >>> search = FederatedRandomizedSearchCV(SVC(), {"C": loguniform(1e-2, 1e2)}, n_iter=5,
    ...                                      cv=3, random_state=0)
    >>> search.fit(Xs, ys).n_parties_, len(search.cv_results_["params"])
    (2, 5)
    """

    _parameter_constraints = {
        **BaseFederatedSearchCV._parameter_constraints,
        "n_iter": [v.interval(numbers.Integral, 1, None, closed="left")],
    }

    def __init__(self, estimator, param_distributions, *, n_iter=10, scoring=None, n_jobs=None,
                 refit=True, cv=None, verbose=0, pre_dispatch="2*n_jobs", error_score=np.nan,
                 return_train_score=False, random_state=None, aggregate="weighted",
                 final_fit="pooled"):
        super().__init__(estimator, scoring=scoring, n_jobs=n_jobs, refit=refit, cv=cv,
                         verbose=verbose, pre_dispatch=pre_dispatch, error_score=error_score,
                         return_train_score=return_train_score, random_state=random_state,
                         aggregate=aggregate, final_fit=final_fit)
        self.param_distributions = param_distributions
        self.n_iter = n_iter

    def _get_space(self):
        return SearchSpace(self.param_distributions)

    def _make_strategy(self, space, n_parties, weights, random_state):
        if space.is_finite:
            grid = space.grid()
            if len(grid) < self.n_iter:
                warnings.warn(
                    f"The total space of parameters {len(grid)} is smaller than n_iter="
                    f"{self.n_iter}; running {len(grid)} iterations.", UserWarning, stacklevel=3)
            # like ParameterSampler: a grid of lists is sampled without replacement
            candidates = grid[random_state.permutation(len(grid))[: self.n_iter]]
        else:
            candidates = random_state.uniform(size=(self.n_iter, space.n_dims))
        return CandidateStrategy(candidates, n_parties, weights, self.aggregate)
