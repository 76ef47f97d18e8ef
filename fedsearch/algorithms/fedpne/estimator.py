"""Fed-PNE's scikit-learn face."""

from __future__ import annotations


import numpy as np

from ... import _validation as v
from ...privacy import GAUSSIAN_ACCOUNTANTS
from ...searchcv import docs
from ..xarmed.estimator import BANDIT_ATTRIBUTES, BANDIT_PARAMS, BanditSearchCV
from .strategy import FedPNEStrategy, check_dp

__all__ = ["FedPNESearchCV"]


class FedPNESearchCV(BanditSearchCV):
    __doc__ = """Federated hyper-parameter search by Fed-PNE (federated phased node elimination).

    The search space is the unit cube of a :class:`~fedsearch.space.SearchSpace` cut into a
    binary tree of boxes. Each phase (one communication round) the server sends every party the
    same points, ``t = ceil(tau_h / M)`` in each active box; each party cross-validates them on
    its own data and replies with its mean scores; the server averages them, eliminates the boxes
    that are worse than the best by the confidence widths and the box size (Fed-PNE eq. 1) and
    splits the survivors. Only node identities and counts go down (the party draws the
    configurations inside each box from a shared seed) and one mean per box comes up, plus, with
    ``share_evaluations``, the party's score of each configuration. Rounds grow like ``log n_iter``. See
    :class:`~fedsearch.algorithms.fedpne.strategy.FedPNEStrategy` for the algorithm, the budget-truncated
    last phase and the recommendation; the recommended configuration is cross-validated by every
    party if the search did not (an extra round), so ``best_score_`` is measured.

    With ``dp_epsilon`` (or ``dp_noise``) and ``dp_delta`` this is DP-Fed-PNE: each party clips
    every node mean it releases to the reward range and adds Gaussian noise it draws itself,
    once per distinct quantity (a repeat is answered with the value already released). **What
    the guarantee covers:** everything a party releases during the search, the validation of
    the recommendation included, against anyone who sees the messages (the server, the other
    parties), with the party's whole dataset as the unit: ``epsilon_[party], delta_`` hold for
    the change of *any* part of that party's data, accounted over all its releases (they
    compose: each is a function of the same data). ``dp_epsilon`` is a party-level target met
    whatever the search does (the noise is derived for ``n_iter + 1`` releases, the most a party
    can make); ``epsilon_`` reports what the releases actually made cost (at most the target).
    ``release_epsilon_`` is the per-release figure the paper states (Theorem D.1). Not covered:
    the final model (``final_fit``), the parties' sizes (``aggregate="weighted"``) and which
    parties failed. ``cv_results_`` holds only released values: the noisy score of the
    recommendation (a last round replaces the noise-free validation round, so ``best_score_``
    is noisy too) and, with ``pull="center"``, the noisy score of each pulled box's centre.

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
    dp_epsilon : float or None, default=None
        DP-Fed-PNE with this party-level ``epsilon`` over the whole search (with ``dp_delta``):
        the per-release noise is derived from it.
    dp_noise : float or None, default=None
        DP-Fed-PNE with this per-release noise ``sigma`` on rewards in ``[0, 1]`` instead (with
        ``dp_delta``; ``epsilon_`` reports what it cost). Not with ``dp_epsilon``.
    dp_delta : float or None, default=None
        The party-level ``delta`` of DP-Fed-PNE.
    dp_accountant : {"analytic", "pld", "rdp"}, default="analytic"
        How a party's releases compose: the analytic Gaussian mechanism (exact for Gaussian
        releases, no extra package) or Google's ``dp-accounting`` PLD or RDP accountant
        (``pip install 'fedsearch[dp]'``).
""" + docs.join(BANDIT_PARAMS, "reward_bounds", "share_evaluations", "aggregate") + docs.common_params(exclude=("aggregate",)) + """
    Attributes
    ----------
""" + docs.common_attributes() + docs.join(BANDIT_ATTRIBUTES, "strategy_") + """    epsilon_ : dict or None
        DP-Fed-PNE: ``{party id: epsilon}``, the party-level guarantee of that party's releases
        at ``delta_`` (None without DP).
    delta_ : dict or None
        ``{party id: dp_delta}`` (None without DP).
    release_epsilon_ : float or None
        The per-release ``epsilon`` the paper states for the noise used (Theorem D.1:
        ``sigma = sqrt(2 log(1.25 / dp_delta)) / epsilon``; proven below 1 only).

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
        "dp_noise": [v.NONE, v.POSITIVE],
        "dp_delta": [v.NONE, v.OPEN_UNIT],
        "dp_accountant": [v.options(*GAUSSIAN_ACCOUNTANTS)],
    }

    def __init__(self, estimator, param_distributions, *, n_iter=100, nu1=1.0, rho=0.5, c=0.1, c1=1.0,
                 delta=None, split="random", pull="uniform", dp_epsilon=None, dp_noise=None, dp_delta=None,
                 dp_accountant="analytic", reward_bounds=None, share_evaluations=True, scoring=None, n_jobs=None, refit=True, cv=None, verbose=0,
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
        self.dp_epsilon, self.dp_noise, self.dp_delta = dp_epsilon, dp_noise, dp_delta
        self.dp_accountant = dp_accountant
        self.reward_bounds, self.share_evaluations = reward_bounds, share_evaluations

    def _check_search_params(self, n_parties):
        check_dp(type(self).__name__, self.dp_noise, self.dp_epsilon, self.dp_delta)
        super()._check_search_params(n_parties)

    def _make_strategy(self, space, n_parties, weights, random_state):
        seed, weights = self._seed_and_weights(weights, random_state)
        return self._wrap(FedPNEStrategy(
            space.n_dims, n_parties, self.n_iter, nu1=self.nu1, rho=self.rho, c=self.c, c1=self.c1,
            delta=self.delta, split=self.split, pull=self.pull, share=self.share_evaluations,
            dp_noise=self.dp_noise, dp_epsilon=self.dp_epsilon, dp_delta=self.dp_delta,
            dp_accountant=self.dp_accountant, weights=weights, random_state=seed), seed)

    def _after_search(self, strategy, federation, space):
        fitted = super()._after_search(strategy, federation, space)
        bandit = fitted["strategy_"]
        epsilon = bandit.epsilon(extra_releases=int(getattr(strategy, "validated_", False)))
        private = epsilon is not None
        ids = federation.party_ids
        fitted.update(epsilon_=dict(zip(ids, epsilon.tolist())) if private else None,
                      delta_=dict.fromkeys(ids, self.dp_delta) if private else None,
                      release_epsilon_=bandit.release_epsilon_)
        return fitted
