"""Grid and randomized federated search: every party cross-validates every candidate."""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from ... import _validation as v
from ...searchcv import BaseFederatedSearchCV, docs
from ...space import SearchSpace
from .strategy import CandidateStrategy

__all__ = ["FederatedGridSearchCV", "FederatedRandomizedSearchCV"]


class FederatedGridSearchCV(BaseFederatedSearchCV):
    __doc__ = """Exhaustive search over a parameter grid, cross-validated inside every party.

    Every party cross-validates every configuration of the grid on its own data and sends back
    only its mean scores (and counts, timings); the federation's score of a configuration is
    the aggregate of the party scores. The drop-in replacement for
    :class:`~sklearn.model_selection.GridSearchCV` across data silos, and the honest multi-shot
    baseline of federated HPO.

    Parameters
    ----------
""" + docs.join(docs.SEARCH, "estimator") + """    param_grid : dict or list of dicts
        Lists of values per parameter name, as in ``GridSearchCV``.
""" + docs.common_params() + """
    Attributes
    ----------
""" + docs.common_attributes() + """
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
    >>> sorted(k for k in search.cv_results_ if k.startswith("party_"))  # mean and fold spread per party
    ['party_0_std_test_score', 'party_0_test_score', 'party_1_std_test_score', 'party_1_test_score', 'party_2_std_test_score', 'party_2_test_score']
    """

    _parameter_constraints = {**BaseFederatedSearchCV._parameter_constraints}
    _seedless = True

    def __init__(self, estimator, param_grid, *, scoring=None, n_jobs=None, refit=True, cv=None,
                 verbose=0, pre_dispatch="2*n_jobs", error_score=np.nan, return_train_score=False,
                 random_state=None, aggregate="weighted", final_fit="pooled", checkpoint=None):
        super().__init__(estimator, scoring=scoring, n_jobs=n_jobs, refit=refit, cv=cv,
                         verbose=verbose, pre_dispatch=pre_dispatch, error_score=error_score,
                         return_train_score=return_train_score, random_state=random_state,
                         aggregate=aggregate, final_fit=final_fit, checkpoint=checkpoint)
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
""" + docs.join(docs.SEARCH, "estimator") + """    param_distributions : dict, list of dicts or SearchSpace
        Lists of values or frozen ``scipy.stats`` distributions (``loguniform``, ``randint``,
        ``uniform``...) per parameter name, as in ``RandomizedSearchCV``.
    n_iter : int, default=10
        Number of configurations. When every parameter is a list and the grid is smaller, the
        whole grid is searched (with a warning).
""" + docs.common_params() + """
    Attributes
    ----------
""" + docs.common_attributes() + """
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
                 final_fit="pooled", checkpoint=None):
        super().__init__(estimator, scoring=scoring, n_jobs=n_jobs, refit=refit, cv=cv,
                         verbose=verbose, pre_dispatch=pre_dispatch, error_score=error_score,
                         return_train_score=return_train_score, random_state=random_state,
                         aggregate=aggregate, final_fit=final_fit, checkpoint=checkpoint)
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
