"""Federated X-armed bandits with a scikit-learn face: Fed-PNE and the level-order bandit.

The reward of a pull is a party's mean cross-validation score of the configuration; the bandits
assume rewards in ``[0, 1]``. Bounded scorers (accuracy, balanced accuracy, ROC AUC, F1,
precision, recall, Jaccard...) are used as they are; any other scorer needs
``reward_bounds=(low, high)``, which rescales the score to ``(score - low) / (high - low)`` on
the way to the strategy (``cv_results_`` keeps the raw scores).
"""

from __future__ import annotations

import dataclasses
import numbers

import numpy as np
from sklearn.base import is_classifier

from . import _validation as v
from .messages import EvaluateReply, EvaluateTask
from .partition import SPLITS
from .search import _COMMON_ATTRIBUTES, _COMMON_PARAMS, BaseFederatedSearchCV
from .space import SearchSpace
from .strategies.base import Strategy
from .strategies.fedpne import PULLS, FedPNEStrategy
from .strategies.levelorder import LevelOrderStrategy

__all__ = ["FedPNESearchCV", "LevelOrderSearchCV", "BOUNDED_SCORERS"]

#: scikit-learn scorer names whose values lie in [0, 1]
BOUNDED_SCORERS = frozenset(
    ["accuracy", "balanced_accuracy", "top_k_accuracy", "average_precision", "roc_auc", "roc_auc_ovr",
     "roc_auc_ovo", "roc_auc_ovr_weighted", "roc_auc_ovo_weighted", "rand_score", "homogeneity_score",
     "completeness_score", "v_measure_score", "normalized_mutual_info_score", "fowlkes_mallows_score"]
    + [f"{m}{s}" for m in ("f1", "precision", "recall", "jaccard")
       for s in ("", "_micro", "_macro", "_weighted", "_samples")]
)


def _is_bounds(value) -> bool:
    return (isinstance(value, (tuple, list)) and len(value) == 2
            and all(isinstance(b, numbers.Real) and not isinstance(b, bool) and np.isfinite(b) for b in value)
            and value[0] < value[1])


_BOUNDS = v.Constraint(_is_bounds, "a pair (low, high) of finite floats with low < high")
_POSITIVE = v.interval(numbers.Real, 0, None, closed="neither")
_PROBABILITY = v.interval(numbers.Real, 0, 1, closed="neither")


class _RewardAdapter(Strategy):
    """Stands between a search CV and its bandit.

    - Passes the bandit ``(score - low) / (high - low)`` instead of the party's score, and scales
      a DP task's noise by ``high - low`` on the party's side, so that the rescaled reward carries
      exactly the bandit's ``sigma`` (sensitivity 1 on the rescaled scale).
    - Under DP, ends with one more round in which every party evaluates the recommendation with
      the same noise: the recommendation is then in ``cv_results_`` and the search CV does not
      need its (noise-free) validation round, so no clean score leaves a party.
    """

    def __init__(self, strategy, bounds, seed: int):
        self.strategy = strategy
        self.low, self.scale = float(bounds[0]), float(bounds[1] - bounds[0])
        self.noise_std = getattr(strategy, "noise_std_", 0.0) * self.scale
        self._rng = np.random.default_rng([seed, 1])
        self._validation_round = None

    def configure(self, round):
        if self._validation_round is not None:
            return None
        tasks = self.strategy.configure(round)
        if tasks is not None:
            return {p: dataclasses.replace(t, noise_std=t.noise_std * self.scale) if t.noise_std else t
                    for p, t in tasks.items()}
        if not self.noise_std:
            return None
        self._validation_round = round
        point = self.strategy.recommend()[None, :]
        seeds = self._rng.integers(2**32, size=self.strategy.n_parties)
        return {p: EvaluateTask(point, noise_std=self.noise_std, seed=int(seed))
                for p, seed in enumerate(seeds)}

    def aggregate(self, round, replies):
        if round == self._validation_round:
            return
        self.strategy.aggregate(round, {
            p: dataclasses.replace(r, scores=(np.asarray(r.scores) - self.low) / self.scale)
            if isinstance(r, EvaluateReply) and r.error is None else r
            for p, r in replies.items()})

    def recommend(self, party=None):
        return self.strategy.recommend(party)


class _BanditSearchCV(BaseFederatedSearchCV):
    """What the X-armed-bandit search CVs share: reward checks, rescaling, seeding."""

    _parameter_constraints = {
        **BaseFederatedSearchCV._parameter_constraints,
        "n_iter": [v.interval(numbers.Integral, 1, None, closed="left")],
        "nu1": [_POSITIVE],
        "rho": [_PROBABILITY],
        "delta": [v.NONE, _PROBABILITY],
        "split": [v.options(*SPLITS)],
        "pull": [v.options(*PULLS)],
        "reward_bounds": [v.NONE, _BOUNDS],
        "aggregate": [v.options("mean", "weighted")],
    }

    def _get_space(self):
        return SearchSpace(self.param_distributions)

    def _reward_scorer(self):
        """The scoring spec of the objective metric (a name, a callable or None)."""
        names, multimetric = self._metric_names()
        if not multimetric:
            return self.scoring
        objective = self._objective(names, multimetric)
        return self.scoring[objective] if isinstance(self.scoring, dict) else objective

    def _check_search_params(self, parties):
        if self.reward_bounds is not None:
            return
        scorer = self._reward_scorer()
        if scorer is None and is_classifier(self.estimator):
            return  # the classifier's score is its accuracy
        if isinstance(scorer, str) and scorer in BOUNDED_SCORERS:
            return
        shown = "the estimator's score method" if scorer is None else repr(scorer)
        raise ValueError(
            f"{type(self).__name__} needs rewards in [0, 1], and the scoring {shown} is not known "
            f"to lie there. Use a bounded scorer (such as 'accuracy', 'balanced_accuracy', "
            f"'roc_auc' or 'f1') or pass reward_bounds=(low, high) to rescale the score to "
            f"(score - low) / (high - low)."
        )

    def _wrap(self, strategy, seed):
        if self.reward_bounds is None and not getattr(strategy, "noise_std_", 0):
            return strategy
        return _RewardAdapter(strategy, self.reward_bounds or (0.0, 1.0), seed)

    def _seed_and_weights(self, weights, random_state):
        seed = int(random_state.randint(np.iinfo(np.int32).max))
        return seed, (weights if self.aggregate == "weighted" else None)

    def _after_search(self, strategy, federation, space):
        return {"strategy_": getattr(strategy, "strategy", strategy)}


_BANDIT_ATTRIBUTES = """    strategy_ : Strategy
        The server-side state machine after the search (its phases or levels, failures and
        partition), for inspection.
"""

_REWARD_PARAMS = """    reward_bounds : tuple (low, high) or None, default=None
        Range of the objective score, rescaled to ``(score - low) / (high - low)`` for the
        bandit (which assumes rewards in ``[0, 1]``). Needed for scorers not known to be
        bounded (``r2``, ``neg_*``, callables); ``fit`` raises before any work without it.
    aggregate : {"mean", "weighted"}, default="mean"
        The global objective: the plain mean of the parties' scores (the paper's
        ``f = (1/M) sum_m f_m``) or their mean weighted by party size; it is both what the
        bandit optimises and the ``mean_test_<metric>`` of ``cv_results_``.
"""


class FedPNESearchCV(_BanditSearchCV):
    __doc__ = """Federated hyper-parameter search by Fed-PNE (federated phased node elimination).

    The search space is the unit cube of a :class:`~fedsearch.space.SearchSpace` cut into a
    binary tree of boxes. Each phase (one communication round) the server sends every party the
    same points, ``t = ceil(tau_h / M)`` in each active box; each party cross-validates them on
    its own data and replies with its mean scores; the server averages them, eliminates the boxes
    that are worse than the best by the confidence widths and the box size (Fed-PNE eq. 1) and
    splits the survivors. Rounds grow like ``log n_iter``. See
    :class:`~fedsearch.strategies.fedpne.FedPNEStrategy` for the algorithm, the budget-truncated
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
    estimator : estimator object
        The base estimator (a Pipeline works; its parameters are named ``step__param``).
    param_distributions : dict, list of dicts or SearchSpace
        Lists of values or frozen ``scipy.stats`` distributions per parameter name.
    n_iter : int, default=100
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
""" + _REWARD_PARAMS + _COMMON_PARAMS.replace(
        '    aggregate : {"weighted", "mean", "min"}, default="weighted"\n'
        "        The federation's score of a configuration from the parties' mean CV scores: weighted by\n"
        "        party size, plain mean, or the worst party.\n", "") + """
    Attributes
    ----------
""" + _COMMON_ATTRIBUTES + _BANDIT_ATTRIBUTES + """
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
        **_BanditSearchCV._parameter_constraints,
        "c": [_POSITIVE],
        "c1": [_POSITIVE],
        "dp_epsilon": [v.NONE, _POSITIVE],
        "dp_delta": [v.NONE, _PROBABILITY],
    }

    def __init__(self, estimator, param_distributions, *, n_iter=100, nu1=1.0, rho=0.5, c=0.1, c1=1.0,
                 delta=None, split="random", pull="uniform", dp_epsilon=None, dp_delta=None,
                 reward_bounds=None, scoring=None, n_jobs=None, refit=True, cv=None, verbose=0,
                 pre_dispatch="2*n_jobs", error_score=np.nan, return_train_score=False,
                 random_state=None, aggregate="mean", final_fit="pooled"):
        super().__init__(estimator, scoring=scoring, n_jobs=n_jobs, refit=refit, cv=cv,
                         verbose=verbose, pre_dispatch=pre_dispatch, error_score=error_score,
                         return_train_score=return_train_score, random_state=random_state,
                         aggregate=aggregate, final_fit=final_fit)
        self.param_distributions = param_distributions
        self.n_iter = n_iter
        self.nu1, self.rho, self.c, self.c1, self.delta = nu1, rho, c, c1, delta
        self.split, self.pull = split, pull
        self.dp_epsilon, self.dp_delta = dp_epsilon, dp_delta
        self.reward_bounds = reward_bounds

    def _check_search_params(self, parties):
        if (self.dp_epsilon is None) != (self.dp_delta is None):
            raise ValueError(f"DP-Fed-PNE needs both dp_epsilon and dp_delta; {type(self).__name__} "
                             f"got dp_epsilon={self.dp_epsilon!r}, dp_delta={self.dp_delta!r}.")
        super()._check_search_params(parties)

    def _make_strategy(self, space, n_parties, weights, random_state):
        seed, weights = self._seed_and_weights(weights, random_state)
        return self._wrap(FedPNEStrategy(
            space.n_dims, n_parties, self.n_iter, nu1=self.nu1, rho=self.rho, c=self.c, c1=self.c1,
            delta=self.delta, split=self.split, pull=self.pull, dp_epsilon=self.dp_epsilon,
            dp_delta=self.dp_delta, weights=weights, random_state=seed), seed)


class LevelOrderSearchCV(_BanditSearchCV):
    __doc__ = """Federated hyper-parameter search by the level-order parallel X-armed bandit.

    The search space is the unit cube of a :class:`~fedsearch.space.SearchSpace` cut into a
    binary tree of boxes, traversed level by level (Chen et al., Algorithm 1): each level is one
    communication round in which every party cross-validates the centre of every box of the
    level ``T_h`` times (answered from its cache after the first, since cross-validation is
    deterministic); the boxes whose federated score is within ``3 nu1 rho^h`` of the best are
    split into the next level. The search stops before the first level that does not fit in
    ``n_iter`` and recommends the best box of the deepest level. See
    :class:`~fedsearch.strategies.levelorder.LevelOrderStrategy`.

    Parameters
    ----------
    estimator : estimator object
        The base estimator (a Pipeline works; its parameters are named ``step__param``).
    param_distributions : dict, list of dicts or SearchSpace
        Lists of values or frozen ``scipy.stats`` distributions per parameter name.
    n_iter : int, default=100
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
""" + _REWARD_PARAMS + _COMMON_PARAMS.replace(
        '    aggregate : {"weighted", "mean", "min"}, default="weighted"\n'
        "        The federation's score of a configuration from the parties' mean CV scores: weighted by\n"
        "        party size, plain mean, or the worst party.\n", "") + """
    Attributes
    ----------
""" + _COMMON_ATTRIBUTES + _BANDIT_ATTRIBUTES + """
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

    def __init__(self, estimator, param_distributions, *, n_iter=100, nu1=1.0, rho=0.5, delta=None,
                 split="random", pull="center", reward_bounds=None, scoring=None, n_jobs=None,
                 refit=True, cv=None, verbose=0, pre_dispatch="2*n_jobs", error_score=np.nan,
                 return_train_score=False, random_state=None, aggregate="mean", final_fit="pooled"):
        super().__init__(estimator, scoring=scoring, n_jobs=n_jobs, refit=refit, cv=cv,
                         verbose=verbose, pre_dispatch=pre_dispatch, error_score=error_score,
                         return_train_score=return_train_score, random_state=random_state,
                         aggregate=aggregate, final_fit=final_fit)
        self.param_distributions = param_distributions
        self.n_iter = n_iter
        self.nu1, self.rho, self.delta = nu1, rho, delta
        self.split, self.pull = split, pull
        self.reward_bounds = reward_bounds

    def _make_strategy(self, space, n_parties, weights, random_state):
        seed, weights = self._seed_and_weights(weights, random_state)
        return self._wrap(LevelOrderStrategy(
            space.n_dims, n_parties, self.n_iter, nu1=self.nu1, rho=self.rho, delta=self.delta,
            split=self.split, pull=self.pull, weights=weights, random_state=seed), seed)
