"""The level-order parallel X-armed bandit's scikit-learn face."""

from __future__ import annotations

import numpy as np

from ... import _validation as v

from ...searchcv import docs
from ..xarmed.estimator import BANDIT_ATTRIBUTES, BANDIT_PARAMS, BanditSearchCV
from .strategy import LevelOrderStrategy

__all__ = ["LevelOrderSearchCV"]


class LevelOrderSearchCV(BanditSearchCV):
    __doc__ = """Federated hyper-parameter search by the level-order parallel X-armed bandit.

    The search space is the unit cube of a :class:`~fedsearch.space.SearchSpace` cut into a
    binary tree of boxes, traversed level by level (Chen et al., Algorithm 1): each level is one
    communication round in which every party cross-validates the centre of every box of the
    level ``T_h`` times (answered from its cache after the first, since cross-validation is
    deterministic); the boxes whose federated score is within ``3 nu1 rho^h`` of the best are
    split into the next level. The search stops before the first level that does not fit in
    ``n_iter`` and recommends the best box of the deepest level. See
    :class:`~fedsearch.algorithms.levelorder.strategy.LevelOrderStrategy`.

    Parameters
    ----------
""" + docs.join(docs.SEARCH, "estimator", "param_distributions") + """    n_iter : int, default=100
        Evaluations per party (the paper's ``n``; never exceeded). Repeats are cached.
    nu1 : float, default=1.0
        Smoothness constant.
    rho : float, default=0.5
        Smoothness ratio in ``(0, 1)``.
    delta : float or None, default=None
        Confidence; None is ``1 / n_iter`` (the choice after Theorem 1).
    split : {"random", "longest"}, default="random"
        Which dimension a box is halved along.
    pull : {"center", "uniform"}, default="center"
        Evaluate the box's centre (the paper) or a uniformly random configuration of it.
""" + docs.join(BANDIT_PARAMS, "reward_bounds", "share_evaluations", "aggregate") + docs.common_params(exclude=("aggregate",)) + """
    Attributes
    ----------
""" + docs.common_attributes() + docs.join(BANDIT_ATTRIBUTES, "strategy_") + """
    See Also
    --------
    FedPNESearchCV : federated phased node elimination.

    Examples
    --------
    >>> from scipy.stats import loguniform
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.svm import SVC
    >>> from fedsearch import LevelOrderSearchCV
    >>> X, y = load_iris(return_X_y=True)
    >>> Xs, ys = [X[0::2], X[1::2]], [y[0::2], y[1::2]]     # one dataset per party
    >>> search = LevelOrderSearchCV(SVC(), {"C": loguniform(1e-2, 1e2)}, n_iter=40, cv=3,
    ...                             random_state=0).fit(Xs, ys)
    >>> search.n_rounds_ == len(search.strategy_.levels_)
    True
    >>> bool(search.best_score_ > 0.9)
    True
    """

    _parameter_constraints = {**BanditSearchCV._parameter_constraints, "delta": [v.NONE, v.OPEN_UNIT]}

    def __init__(self, estimator, param_distributions, *, n_iter=100, nu1=1.0, rho=0.5, delta=None,
                 split="random", pull="center", reward_bounds=None, share_evaluations=True, scoring=None, n_jobs=None,
                 refit=True, cv=None, verbose=0, pre_dispatch="2*n_jobs", error_score=np.nan,
                 return_train_score=False, random_state=None, aggregate="mean", final_fit="pooled", checkpoint=None):
        super().__init__(estimator, scoring=scoring, n_jobs=n_jobs, refit=refit, cv=cv,
                         verbose=verbose, pre_dispatch=pre_dispatch, error_score=error_score,
                         return_train_score=return_train_score, random_state=random_state,
                         aggregate=aggregate, final_fit=final_fit, checkpoint=checkpoint)
        self.param_distributions = param_distributions
        self.n_iter = n_iter
        self.nu1, self.rho, self.delta = nu1, rho, delta
        self.split, self.pull = split, pull
        self.reward_bounds, self.share_evaluations = reward_bounds, share_evaluations

    def _make_strategy(self, space, n_parties, weights, random_state):
        seed, weights = self._seed_and_weights(weights, random_state)
        return self._wrap(LevelOrderStrategy(
            space.n_dims, n_parties, self.n_iter, nu1=self.nu1, rho=self.rho, delta=self.delta,
            split=self.split, pull=self.pull, share=self.share_evaluations, weights=weights, random_state=seed), seed)
