"""Fed-PNE's scikit-learn face."""

from __future__ import annotations

import numbers

import numpy as np

from ... import _validation as v
from ...searchcv import docs
from ..xarmed.estimator import BANDIT_ATTRIBUTES, BANDIT_PARAMS, BanditSearchCV
from .strategy import FedPNEStrategy

__all__ = ["FedPNESearchCV"]


class FedPNESearchCV(BanditSearchCV):
    __doc__ = """Federated hyper-parameter search by Fed-PNE (federated phased node elimination).

    The search space is the unit cube of a :class:`~fedsearch.space.SearchSpace` cut into a
    binary tree of boxes. Each phase (one communication round) the server sends every party the
    same points, ``t = ceil(tau_h / M)`` in each active box; each party cross-validates them on
    its own data and replies with its mean scores; the server averages them, eliminates the boxes
    that are worse than the best by the confidence widths and the box size (Fed-PNE eq. 1) and
    splits the survivors. Rounds grow like ``log n_iter``. See
    :class:`~fedsearch.algorithms.fedpne.strategy.FedPNEStrategy` for the algorithm, the budget-truncated
    last phase and the recommendation; the recommended configuration is cross-validated by every
    party if the search did not (an extra round), so ``best_score_`` is measured.

    With ``dp_epsilon`` and ``dp_delta`` this is DP-Fed-PNE: each party adds Gaussian noise
    ``N(0, 2 log(1.25 / dp_delta) / dp_epsilon^2)`` to every reward before replying, which makes
    the search ``(epsilon, delta, M)``-federated differentially private (Theorem D.1; rewards in
    ``[0, 1]``). ``cv_results_`` then holds the noisy scores only: the recommended
    configuration is evaluated in a last round with the same noise instead of the noise-free
    validation round, so ``best_score_`` is a noisy score too. The final model (``final_fit``)
    is outside the guarantee.

    Parameters
    ----------
""" + docs.join(docs.SEARCH, "estimator", "param_distributions") + """    n_iter : int, default=100
        Cross-validations per party (``T``, the per-party budget; never exceeded). Repeated
        configurations (integer and categorical rounding) are answered from the party's cache.
    nu1 : float, default=1.0
        Smoothness constant (App. E.1.3).
    rho : float, default=0.5
        Smoothness ratio in ``(0, 1)`` (App. E.1.3).
    c : float, default=0.1
        Confidence constant (App. E.1.3).
    c1 : float, default=1.0
        Confidence constant inside the logarithm (App. E.1.3).
    delta : float or None, default=None
        Confidence; None is ``1 / M`` (Theorem 3.1).
    split : {"random", "longest"}, default="random"
        Which dimension a box is halved along: seeded uniformly random (the paper) or longest.
    pull : {"uniform", "center"}, default="uniform"
        A uniformly random configuration of the box per pull, or the box's centre.
    dp_epsilon, dp_delta : float or None, default=None
        Privacy budget of DP-Fed-PNE (both or neither).
""" + docs.join(BANDIT_PARAMS, "reward_bounds", "aggregate") + docs.common_params(exclude=("aggregate",)) + """
    Attributes
    ----------
""" + docs.common_attributes() + docs.join(BANDIT_ATTRIBUTES, "strategy_") + """
    See Also
    --------
    LevelOrderSearchCV : the level-order parallel X-armed bandit.
    FederatedRandomizedSearchCV : the random-search baseline at equal budget.

    Examples
    --------
    >>> from scipy.stats import loguniform
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sklearn.svm import SVC
    >>> from fedsearch import FedPNESearchCV
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> Xs, ys = [X[0::2], X[1::2]], [y[0::2], y[1::2]]     # one dataset per party
    >>> space = {"svc__C": loguniform(1e-2, 1e2), "svc__gamma": loguniform(1e-4, 1e-1)}
    >>> search = FedPNESearchCV(make_pipeline(StandardScaler(), SVC()), space, n_iter=30,
    ...                         scoring="roc_auc", cv=3, random_state=0).fit(Xs, ys)
    >>> search.strategy_.spent_, search.strategy_.n_phases, search.n_rounds_
    (30, 2, 3)
    >>> bool(search.best_score_ > 0.95)
    True
    """

    _parameter_constraints = {
        **BanditSearchCV._parameter_constraints,
        "delta": [v.NONE, v.OPEN_UNIT],
        "c": [v.POSITIVE],
        "c1": [v.POSITIVE],
        "dp_epsilon": [v.NONE, v.POSITIVE],
        "dp_delta": [v.NONE, v.OPEN_UNIT],
    }

    def __init__(self, estimator, param_distributions, *, n_iter=100, nu1=1.0, rho=0.5, c=0.1, c1=1.0,
                 delta=None, split="random", pull="uniform", dp_epsilon=None, dp_delta=None,
                 reward_bounds=None, scoring=None, n_jobs=None, refit=True, cv=None, verbose=0,
                 pre_dispatch="2*n_jobs", error_score=np.nan, return_train_score=False,
                 random_state=None, aggregate="mean", final_fit="pooled", checkpoint=None):
        super().__init__(estimator, scoring=scoring, n_jobs=n_jobs, refit=refit, cv=cv,
                         verbose=verbose, pre_dispatch=pre_dispatch, error_score=error_score,
                         return_train_score=return_train_score, random_state=random_state,
                         aggregate=aggregate, final_fit=final_fit, checkpoint=checkpoint)
        self.param_distributions = param_distributions
        self.n_iter = n_iter
        self.nu1, self.rho, self.c, self.c1, self.delta = nu1, rho, c, c1, delta
        self.split, self.pull = split, pull
        self.dp_epsilon, self.dp_delta = dp_epsilon, dp_delta
        self.reward_bounds = reward_bounds

    def _check_search_params(self, n_parties):
        if (self.dp_epsilon is None) != (self.dp_delta is None):
            raise ValueError(f"DP-Fed-PNE needs both dp_epsilon and dp_delta; {type(self).__name__} "
                             f"got dp_epsilon={self.dp_epsilon!r}, dp_delta={self.dp_delta!r}.")
        super()._check_search_params(n_parties)

    def _make_strategy(self, space, n_parties, weights, random_state):
        seed, weights = self._seed_and_weights(weights, random_state)
        return self._wrap(FedPNEStrategy(
            space.n_dims, n_parties, self.n_iter, nu1=self.nu1, rho=self.rho, c=self.c, c1=self.c1,
            delta=self.delta, split=self.split, pull=self.pull, dp_epsilon=self.dp_epsilon,
            dp_delta=self.dp_delta, weights=weights, random_state=seed), seed)
