"""FLoRA: single-shot federated hyper-parameter search by loss-surface aggregation.

Zhou et al., *Single-shot general hyper-parameter optimization for federated learning*
(004_*.txt, Algorithm 1). Each party runs its own adaptive search of ``n_iter`` configurations
on its own data, with no coordination (line 3), and uploads its (configuration, loss) pairs once
(line 5). The server fits a loss surface on the pairs (line 6, :mod:`fedsearch.algorithms.flora.surfaces`),
recommends its arg-min over the whole space (line 7), optionally has every party cross-validate
that recommendation once, and the final model is trained once (line 8).

This module holds the estimator :class:`FLoRASearchCV`; the messages are in ``tasks.py``, the
party's handler in ``party.py`` and the server in ``strategy.py``.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Mapping

import numpy as np

from ... import _validation as v
from ...searchcv import BaseFederatedSearchCV, docs
from ...space import SearchSpace
from .local_search import DEFAULT_LOCAL_SEARCH, local_search_methods
from .strategy import FLoRAStrategy
from .surfaces import SURFACES, supports_uncertainty

__all__ = ["FLoRASearchCV"]


def _is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _is_api_config(spec) -> bool:
    return isinstance(spec, Mapping) and bool(spec) and all(
        isinstance(s, Mapping) and "type" in s for s in spec.values())


class FLoRASearchCV(BaseFederatedSearchCV):
    __doc__ = """Single-shot federated hyper-parameter search with FLoRA (loss-surface aggregation).

    Every party runs its own adaptive search of ``n_iter`` configurations on its own data and
    uploads its (configuration, loss) pairs once; the server fits a loss surface on them and
    recommends its arg-min over the whole space (004_*.txt, Algorithm 1). One fit yields the
    recommendations of all four surfaces (``surface_params_``); ``surface`` picks
    ``best_params_``. With ``validate=True`` every party cross-validates the recommendation
    once, so ``best_score_`` is measured, not predicted. The transcript holds exactly one
    upload per party, the validation round, and the final fit.

    Parameters
    ----------
""" + docs.join(docs.SEARCH, "estimator") + """    param_distributions : dict, list of dicts, SearchSpace or api_config dict
        Lists of values or frozen ``scipy.stats`` distributions per parameter name, a
        :class:`SearchSpace`, or the paper's ``api_config`` format
        (``{"C": {"type": "real", "space": "log", "range": (0.01, 1000.0)}}``, App. D.2).
    surface : {"aplm", "mplm", "sgm", "sgm+u"}, default="aplm"
        The loss surface whose arg-min becomes ``best_params_``: average (APLM) or maximum
        (MPLM) of per-party regressors, one regressor on the union of the pairs (SGM), or SGM
        plus ``alpha`` times its uncertainty (SGM+U).
    n_iter : int, default=100
        ``T``: configurations each party cross-validates in its local search.
    local_search : str, default="random"
        The parties' local optimiser: ``"random"`` (uniform draws from the space's
        distributions), ``"tpe"`` (hyperopt's TPE, the paper's; optional extra ``tpe``),
        ``"bo"`` (Gaussian-process Bayesian optimisation), or a name registered with
        :func:`fedsearch.algorithms.flora.local_search.register_local_search`. The default is
        the search whose pairs gave SGM, SGM+U and MPLM the lowest regret at the paper's budget
        in the flora benchmark's low-noise protocol, and APLM the same as ``"bo"`` (19 runs,
        ``docs/benchmarks.md``, issue 16); with the ``tpe`` extra, ``"tpe"`` gave APLM a lower
        regret still.
    n_best : int or None, default=None
        ``T'`` (App. D.7): each party uploads only its ``n_best`` lowest-loss pairs.
    regressor : regressor or None, default=None
        Model of the loss surfaces; None is ``RandomForestRegressor(n_estimators=100)`` as in
        the paper. ``surface="sgm+u"`` needs a forest or a ``predict(return_std=True)``.
    alpha : float, default=1.0
        Weight of the uncertainty in ``sgm+u``.
    validate : bool, default=True
        Let every party cross-validate the recommendation once. With ``False`` the search is
        truly single-shot: ``best_params_`` is the surface's arg-min, taken on trust, its
        ``cv_results_`` row has NaN scores and ``best_score_`` is NaN.
    n_validate : int, default=1
        Candidates of the validation round (beyond the paper; with ``validate=True``): the
        arg-min of ``surface``, then the other surfaces' distinct arg-mins, then the
        estimator's own configuration when it lies in the space (numbers outside their bounds
        clipped to them), the first ``n_validate`` of them. Every party cross-validates them all in the one validation round, and
        ``best_params_`` is the best by federated validated score (``aggregate``). Still one
        upload and one validation round.
""" + docs.common_params() + """
    Attributes
    ----------
""" + docs.common_attributes() + """    surface_params_ : dict of str to dict
        The recommendation of each surface (``"sgm"``, ``"sgm+u"``, ``"aplm"``, ``"mplm"``).
    surfaces_ : LossSurfaces
        The fitted surfaces (``surfaces_.predict(points)`` on unit-cube points).
    heterogeneity_ : float
        ``gamma_p`` of §3: best party's best local score over the worst party's.
    local_results_ : dict
        Each party's uploaded trial history: ``{party id: {"params", "points", "scores",
        "losses", "trials", "n_evaluations", "n_failed", "error"}}``.

    See Also
    --------
    FederatedRandomizedSearchCV : the multi-shot baseline (every party evaluates every candidate).

    Notes
    -----
    A row of ``cv_results_`` is a configuration some party cross-validated: the pairs uploaded
    by each party's local search (NaN in the other parties' columns, hence no federation score)
    and the recommendation every party validated (the only row with a ``mean_test_<metric>``,
    hence rank 1). ``fit_time`` of the local-search rows is per fold, as for the others.

    The loss is ``1 - score`` (the paper's ``1 - balanced accuracy``), so ``heterogeneity_``
    is meaningful for scores in ``[0, 1]``. Failed configurations are modelled as the worst
    loss their party saw (see :class:`~fedsearch.algorithms.flora.surfaces.LossSurfaces`).

    Examples
    --------
    >>> from scipy.stats import loguniform
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from fedsearch import FLoRASearchCV
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> site = np.arange(len(y)) % 3                        # three hospitals
    >>> model = make_pipeline(StandardScaler(), LogisticRegression())
    >>> search = FLoRASearchCV(model, {"logisticregression__C": loguniform(1e-3, 1e1)},
    ...                        n_iter=5, local_search="random", cv=3, random_state=0)
    >>> search.fit(X, y, parties=site).best_score_ > 0.9
    True
    >>> sorted(search.surface_params_)
    ['aplm', 'mplm', 'sgm', 'sgm+u']
    >>> [(r, type(m).__name__) for r, pid, _, m in search.transcript_ if pid == 0 and r >= 0]
    [(0, 'LocalSearchTask'), (0, 'LocalSearchReply'), (1, 'EvaluateTask'), (1, 'EvaluateReply'), (2, 'PooledData')]
    """

    _parameter_constraints = {
        **BaseFederatedSearchCV._parameter_constraints,
        "surface": [v.options(*SURFACES)],
        "n_iter": [v.interval(numbers.Integral, 1, None, closed="left")],
        "local_search": [v.instance_of(str)],
        "n_best": [v.NONE, v.interval(numbers.Integral, 1, None, closed="left")],
        "regressor": [v.NONE, v.Constraint(lambda r: hasattr(r, "fit") and hasattr(r, "predict"),
                                           "a regressor with fit and predict")],
        "alpha": [v.interval(numbers.Real, 0, None, closed="left")],
        "validate": [v.BOOLEAN],
        "n_validate": [v.interval(numbers.Integral, 1, None, closed="left")],
    }

    def __init__(self, estimator, param_distributions, *, surface="aplm", n_iter=100,
                 local_search=DEFAULT_LOCAL_SEARCH, n_best=None, regressor=None, alpha=1.0, validate=True, n_validate=1,
                 scoring=None, n_jobs=None, refit=True, cv=None, verbose=0, pre_dispatch="2*n_jobs",
                 error_score=np.nan, return_train_score=False, random_state=None,
                 aggregate="weighted", final_fit="pooled", checkpoint=None):
        super().__init__(estimator, scoring=scoring, n_jobs=n_jobs, refit=refit, cv=cv,
                         verbose=verbose, pre_dispatch=pre_dispatch, error_score=error_score,
                         return_train_score=return_train_score, random_state=random_state,
                         aggregate=aggregate, final_fit=final_fit, checkpoint=checkpoint)
        self.param_distributions = param_distributions
        self.surface = surface
        self.n_iter = n_iter
        self.local_search = local_search
        self.n_best = n_best
        self.regressor = regressor
        self.alpha = alpha
        self.validate = validate
        self.n_validate = n_validate

    @property
    def _validate_recommendation(self):
        return self.validate

    def _get_space(self):
        if _is_api_config(self.param_distributions):
            return SearchSpace.from_api_config(self.param_distributions)
        return SearchSpace(self.param_distributions)

    def _check_search_params(self, n_parties):
        if self.local_search not in local_search_methods():
            raise ValueError(
                f"The 'local_search' parameter of FLoRASearchCV must be one of "
                f"{local_search_methods()} (register more with "
                f"fedsearch.algorithms.flora.local_search.register_local_search). Got {self.local_search!r} instead."
            )
        if self.surface == "sgm+u" and self.regressor is not None and not supports_uncertainty(self.regressor):
            raise ValueError(
                f"surface='sgm+u' needs a regressor with an uncertainty: a RandomForestRegressor or "
                f"ExtraTreesRegressor, or one whose predict takes return_std. Got {self.regressor!r}."
            )

    def _make_strategy(self, space, n_parties, weights, random_state):
        return FLoRAStrategy(
            n_parties, space, n_iter=self.n_iter, local_search=self.local_search,
            n_best=self.n_best, surface=self.surface, regressor=self.regressor, alpha=self.alpha,
            validate=self.validate, random_state=random_state,
            n_validate=self.n_validate, aggregate=self.aggregate, default_point=self._default_point(space),
        )

    def _default_point(self, space):
        """The estimator's own configuration on the unit cube: itself when it lies in the space,
        else its nearest configuration when only numbers lie outside their bounds (clipped: HGB's
        ``l2_regularization=0`` below the paper's log range from 1e-4), else None."""
        params = self.estimator.get_params()
        own = {name: params.get(name) for name in space.param_names}
        if not space.contains(own) and space.n_subspaces == 1:
            low, high = space.to_params(np.zeros(space.n_dims)), space.to_params(np.ones(space.n_dims))
            own = {k: min(max(v, low[k]), high[k]) if _is_number(v) and _is_number(low[k]) else v
                   for k, v in own.items()}
        return space.to_unit(own) if space.contains(own) else None

    def _after_search(self, strategy, federation, space):
        party_ids = list(federation.party_ids)
        for p, err in strategy.failed_parties_.items():
            warnings.warn(f"The local search of party {party_ids[p]!r} failed: {err}", UserWarning,
                          stacklevel=3)
        out = {
            "surface_params_": {s: space.to_params(u) for s, u in strategy.surface_points_.items()},
            "surfaces_": strategy.surfaces_,
            "heterogeneity_": strategy.heterogeneity_,
            "local_results_": {
                party_ids[p]: {
                    "params": space.to_params_many(r.points), "points": r.points,
                    "scores": r.scores, "losses": r.losses, "trials": r.trials,
                    "n_evaluations": r.n_evaluations, "n_failed": r.n_failed, "error": r.error,
                }
                for p, r in strategy.local_replies_.items()
            },
        }
        return out
