"""Personalized federated search with a scikit-learn face: PF-PNE, one configuration and one model
per party."""

from __future__ import annotations

import numpy as np

from ... import _validation as v
from ...searchcv import docs
from ...searchcv.personal import PERSONAL_FINAL_FITS, PersonalSearchMixin
from ..xarmed.estimator import BANDIT_ATTRIBUTES, BANDIT_PARAMS, BanditSearchCV
from .strategy import PFPNEStrategy

__all__ = ["PFPNESearchCV"]

_FINAL_FIT_PARAM = """    final_fit : {"local", "pooled", "ensemble"} or None, default="local"
        How the final models are trained. ``"local"``: each party fits *its own* configuration
        (``best_params_per_party_``) on its own data; only the configuration is sent to the party
        (in this in-process simulation the fitted model comes back to the caller, in a deployment
        it would stay with its party). ``best_estimators_`` holds them and
        ``predict(X, party=id)`` uses one; without ``party``, the models' predictions are
        averaged by party size. ``"pooled"`` and ``"ensemble"``: one model of the federation's
        configuration ``best_params_``, as in :class:`FedPNESearchCV` (``"ensemble"`` also
        fills ``best_estimators_``, every member with ``best_params_``). None: no final model.
"""

_PERSONAL_ATTRIBUTES = """    best_params_per_party_ : dict
        ``{party id: params}``: each party's personal configuration, the recommendation of its
        Personalized Elimination (the federation's when the budget ended the search during the
        collaborative stage).
    best_estimators_ : dict
        ``{party id: estimator}`` fitted on that party's data; with ``final_fit="local"`` each
        with its party's own configuration. Absent for ``final_fit="pooled"`` or None.
    personal_results_ : dict of list
        With ``share_evaluations=True`` (absent otherwise: a party's score of its own
        configuration would cross the boundary). One row per party, loadable by
        ``pandas.DataFrame``: ``party``, ``params_personal``,
        ``params_global`` and, for each metric, ``personal_test_<metric>`` (the party's mean CV
        score of its own configuration), ``global_test_<metric>`` (of the federation's
        configuration) and ``gain_test_<metric>`` (their difference: what personalisation
        bought that party). Measured in one extra round where every party cross-validates
        both configurations (answered from its cache when it already had). The federation's
        configuration is the collaborative-stage recommendation (``best_params_``, unless
        ``refit`` is a callable).
    collaborative_rounds_ : list of int
        The rounds of the collaborative stage; the later search rounds are each party's own
        work (see ``strategy_.round_stages_``).
"""


class PFPNESearchCV(PersonalSearchMixin, BanditSearchCV):
    __doc__ = """Personalized federated hyper-parameter search by PF-PNE: a configuration per party.

    PF-PNE (Li, Song, Honorio, Lin, Algorithms 1-3) searches a binary tree of boxes of the unit
    cube of a :class:`~fedsearch.space.SearchSpace`, in two stages:

    1. *Collaborative* (depths ``1 .. H0``, ``H0 = ceil(log_rho(gap / nu1))``): Fed-PNE's
       phases, one round per depth: every party cross-validates the same configurations, the
       server averages the parties' mean scores, eliminates the boxes that are worse than the
       best by the confidence widths and the box size, and broadcasts the survivors with their
       global statistics.
    2. *Personal*, at the party: one last round sends each party the broadcast (the surviving
       boxes of every collaborative depth with their global statistics, its own statistics of
       the others, its remaining budget); the party runs the stage alone, in one unit of work:
       it restarts from the root and re-examines, on its own data, the boxes the federation
       eliminated (and their descendants) until it has ``tau_h`` scores of each, compares them
       with the broadcast global statistics and eliminates only what is bad for itself. A box is
       dropped only after both eliminations, so a party whose best configurations differ from
       the federation's still finds them. Its scores, means and eliminations stay at the party:
       it replies its recommended box and how many configurations it evaluated, and, with
       ``share_evaluations=True``, its score of each (so that ``cv_results_`` lists them).

    ``best_params_`` is the federation's configuration (the collaborative stage's
    recommendation, cross-validated by every party when the search did not); each party's own
    is in ``best_params_per_party_``, and ``personal_results_`` compares the two on each
    party's data. See :class:`~fedsearch.algorithms.pfpne.strategy.PFPNEStrategy` for the algorithm,
    the budget and the recommendations. The confidence ``delta`` of ``tau_h`` and of the widths
    is ``1 / M`` (Theorem 3.1).

    Parameters
    ----------
""" + docs.join(docs.SEARCH, "estimator", "param_distributions") + """    n_iter : int, default=100
        Cross-validations per party (``T``, the per-party budget; never exceeded). Repeated
        configurations are answered from the party's cache.
    gap : float, default=0.01
        ``Delta`` (Assumption 3): a bound on the gap between the federation's best score and any
        party's best score. It sets ``H0``, the depth where collaboration stops: small, long
        collaboration (Fed-PNE as ``gap -> 0``); ``gap >= nu1``, each party alone. 0.01 in
        all the paper's experiments (App. C.1).
    nu1 : float, default=1.0
        Smoothness constant (App. C.1).
    rho : float, default=0.5
        Smoothness ratio in ``(0, 1)`` (App. C.1).
    c : float, default=0.1
        Confidence constant (App. C.1).
    c1 : float, default=1.0
        Confidence constant inside the logarithm (App. C.1).
    split : {"random", "longest"}, default="random"
        Which dimension a box is halved along: seeded uniformly random (the paper) or longest.
    pull : {"uniform", "center"}, default="uniform"
        A uniformly random configuration of the box per pull, or the box's centre (the paper's
        experiments; repeated pulls are then answered from the party's cache).
""" + docs.join(BANDIT_PARAMS, "reward_bounds", "share_evaluations", "aggregate") + docs.common_params(exclude=("aggregate", "final_fit")) + _FINAL_FIT_PARAM + """
    Attributes
    ----------
""" + docs.common_attributes() + docs.join(BANDIT_ATTRIBUTES, "strategy_") + _PERSONAL_ATTRIBUTES + """
    See Also
    --------
    FedPNESearchCV : one configuration for the whole federation.

    Examples
    --------
    >>> import pandas as pd
    >>> from scipy.stats import loguniform
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from fedsearch import PFPNESearchCV
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> Xs, ys = [X[0::3], X[1::3], X[2::3]], [y[0::3], y[1::3], y[2::3]]   # three hospitals
    >>> model = make_pipeline(StandardScaler(), LogisticRegression(solver="liblinear"))
    >>> search = PFPNESearchCV(model, {"logisticregression__C": loguniform(1e-3, 1e2)}, n_iter=12,
    ...                        gap=0.25, scoring="roc_auc", cv=3, random_state=0).fit(Xs, ys)
    >>> sorted(search.best_params_per_party_)
    [0, 1, 2]
    >>> search.predict(Xs[1][:4], party=1).shape
    (4,)
    >>> pd.DataFrame(search.personal_results_)[["party", "personal_test_score", "global_test_score"]].shape
    (3, 3)
    """

    _parameter_constraints = {
        **BanditSearchCV._parameter_constraints,
        "gap": [v.POSITIVE],
        "c": [v.POSITIVE],
        "c1": [v.POSITIVE],
        "final_fit": [v.options(*PERSONAL_FINAL_FITS), v.NONE],
    }

    def __init__(self, estimator, param_distributions, *, n_iter=100, gap=0.01, nu1=1.0, rho=0.5, c=0.1,
                 c1=1.0, split="random", pull="uniform", reward_bounds=None, share_evaluations=True, scoring=None, n_jobs=None,
                 refit=True, cv=None, verbose=0, pre_dispatch="2*n_jobs", error_score=np.nan,
                 return_train_score=False, random_state=None, aggregate="mean", final_fit="local", checkpoint=None):
        super().__init__(estimator, scoring=scoring, n_jobs=n_jobs, refit=refit, cv=cv,
                         verbose=verbose, pre_dispatch=pre_dispatch, error_score=error_score,
                         return_train_score=return_train_score, random_state=random_state,
                         aggregate=aggregate, final_fit=final_fit, checkpoint=checkpoint)
        self.param_distributions = param_distributions
        self.n_iter = n_iter
        self.gap, self.nu1, self.rho, self.c, self.c1 = gap, nu1, rho, c, c1
        self.split, self.pull = split, pull
        self.reward_bounds, self.share_evaluations = reward_bounds, share_evaluations

    def _make_strategy(self, space, n_parties, weights, random_state):
        seed, weights = self._seed_and_weights(weights, random_state)
        return self._wrap(PFPNEStrategy(
            space.n_dims, n_parties, self.n_iter, nu1=self.nu1, rho=self.rho, c=self.c, c1=self.c1,
            gap=self.gap, split=self.split, pull=self.pull, share=self.share_evaluations, weights=weights, random_state=seed), seed)

    def _after_search(self, strategy, federation, space):
        fitted = super()._after_search(strategy, federation, space)
        fitted.update(best_params_per_party_={pid: space.to_params(strategy.recommend(party=p))
                                              for p, pid in enumerate(federation.party_ids)},
                      collaborative_rounds_=fitted["strategy_"].collaborative_rounds_)
        if self.share_evaluations:  # the parties' scores of their own configurations cross only when shared
            fitted["personal_results_"] = self._personal_results(strategy, federation, space)
        return fitted
