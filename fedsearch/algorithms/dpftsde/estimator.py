"""DP-FTS-DE with a scikit-learn face: a personal configuration per party, with differential privacy
on everything the server broadcasts."""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from ... import _validation as v
from ..._random import draw_seed
from ...privacy import ACCOUNTANTS, NEIGHBORING, _epsilon_curve, noise_multiplier_for_epsilon
from ...searchcv import BaseFederatedSearchCV, docs
from ...searchcv.personal import PERSONAL_FINAL_FITS, PersonalSearchMixin
from ...space import SearchSpace
from ._schedules import P_SCHEDULES
from .strategy import DPFTSDEStrategy, default_clip

__all__ = ["DPFTSDESearchCV"]

#: the noise std on the shared function's value above which the aggregate is mostly noise:
#: scores of bounded scorers (and the prior of the parties' posteriors) are of unit scale
NOISE_WARNING_LEVEL = 1.0

_PARAMS = """    estimator : estimator object
        The base estimator (a Pipeline works; its parameters are named ``step__param``).
    param_distributions : dict, list of dicts or SearchSpace
        Lists of values or frozen ``scipy.stats`` distributions per parameter name.
    n_iter : int, default=70
        Cross-validations per party: ``n_init`` initial ones, then one per BO iteration
        (``n_iter - n_init`` iterations and as many private releases).
    n_init : int, default=10
        Initial configurations per party, uniform in the party's sub-region (Algo. 2 l.2).
    n_features : int, default=100
        ``M``, the random Fourier features shared by every party.
    length_scale : float, default=0.01
        Length scale of the shared features' SE kernel on the unit cube, the paper's value. Small
        length scales make the shared function a spike at each observation over prior noise (notes
        §3.5); a larger one (0.2) lets the non-private aggregate carry information.
    n_regions : int, default=4
        ``P`` sub-regions of equal volume (distributed exploration); 1 switches it off.
    region_weight : float, default=15.0
        ``a``: at first the parties assigned to a region weigh ``exp(a)`` times the others in its
        vector; the weights then decay to uniform (10 rounds constant, 30 of decay; App. B).
    p_schedule : {"1/t", "1/sqrt(t)"}, float or callable, default="1/t"
        ``p_t``, the probability that a party follows its own GP at BO iteration ``t``:
        ``1 - 1/t`` (real-world experiments), ``1 - 1/sqrt(t)`` (synthetic), a constant, or a
        callable of ``t``. ``1.0`` is standard Thompson sampling, each party alone.
    server_branch : {"argmax", "random"}, default="argmax"
        With probability ``1 - p_t`` a party maximises the server's aggregate (the algorithm) or
        takes a uniform random point (the ablation that tells whether the aggregate informs).
    dp : bool, default=True
        Poisson-subsample, clip and noise the aggregate (DP-FTS-DE, DP-FTS with ``n_regions=1``)
        or take the plain weighted sum of every party's vector (FTS-DE, FTS).
    sampling_rate : float, default=0.35
        ``q``: each party's vector enters a round's aggregate with this probability.
    clip : float or None, default=None
        ``S``; each vector is clipped to ``S / sqrt(P)``. None: ``1.1 sqrt(M P)`` (22 for the
        defaults), which reproduces the paper's four choices.
    noise_multiplier : float, default=1.0
        ``z``: the noise on region ``i``'s vector has std ``z max_n(phi_n^(i)) S / q``.
    target_epsilon : float or None, default=None
        When set, ``noise_multiplier`` is ignored and ``z`` is the smallest noise multiplier whose
        privacy loss after ``n_iter - n_init`` releases is at most ``target_epsilon`` (with
        ``delta`` and ``accountant``).
    delta : float or None, default=None
        The delta of the guarantee, required when ``dp=True``. The paper's ``1 / N**1.1`` is far
        too large for a few parties (0.30 for three); a common choice is ``1e-5`` or below
        ``1 / n_parties``.
    accountant : {"paper", "rdp", "pld"}, default="paper"
        How ``epsilon_`` is computed (:func:`fedsearch.privacy.subsampled_gaussian_epsilon`):
        the paper's moments accountant, or Google's ``dp-accounting`` (``fedsearch[dp]``), tighter.
        ``"rdp"`` and ``"pld"`` take a fraction of a second per round for ``privacy_``.
    neighboring : {"add_remove", "replace"}, default="add_remove"
        The adjacency of the guarantee: one party's presence (the paper's), or the content of one
        party's data (``"replace"``, about twice the epsilon; only with ``accountant="pld"``).
    share_scores : bool, default=True
        Whether parties send the trusted server their configurations and scores besides their
        vectors: then ``cv_results_`` holds every evaluation, ``best_params_`` is cross-validated by
        every party and ``personal_results_`` compares each party's configuration with it. With
        False no score leaves a party: a party sends its vectors and, in its last round, its best
        configuration; ``cv_results_`` has one unscored row (``best_params_``, the first party's
        configuration) and there is no ``personal_results_``.
"""

_FINAL_FIT = """    aggregate : {"mean", "weighted", "min"}, default="mean"
        ``mean_test_<metric>`` of ``cv_results_`` from the parties' scores (the search itself is
        personal: each party uses only its own).
    final_fit : {"local", "pooled", "ensemble"} or None, default="local"
        ``"local"``: each party fits its own configuration (``best_params_per_party_``) on its own
        data; ``best_estimators_`` holds the models and ``predict(X, party=id)`` uses one (without
        ``party``, their predictions averaged by party size). ``"pooled"`` and ``"ensemble"``: one
        model of ``best_params_``. None: no final model.
"""

_ATTRIBUTES = """    best_params_per_party_ : dict
        ``{party id: params}``: each party's best configuration among those it evaluated.
    best_estimators_ : dict
        ``{party id: estimator}`` fitted on that party's data (``final_fit="local"`` or
        ``"ensemble"``).
    personal_results_ : dict of list
        With ``share_scores=True``: one row per party comparing, on its data, its own
        configuration with the federation's (as in :class:`PFPNESearchCV`).
    epsilon_ : float
        The privacy loss of everything broadcast, for ``delta_`` (``inf`` with ``dp=False``, 0
        when nothing was broadcast: standard TS).
    delta_ : float or None
    noise_multiplier_ : float or None
        ``z`` as used (calibrated from ``target_epsilon`` when given).
    privacy_ : dict of list
        Per release (server-side facts, themselves not private): ``epsilon`` after it,
        ``noise_std`` per region, ``n_selected`` parties, ``n_clipped`` vectors.
    strategy_ : DPFTSDEStrategy
        The server after the search.
"""


class DPFTSDESearchCV(PersonalSearchMixin, BaseFederatedSearchCV):
    __doc__ = """Personalized federated search by DP-FTS-DE: a configuration per party, privately.

    DP-FTS-DE (Dai, Low, Jaillet, NeurIPS 2021, Algorithms 1-2) is federated Thompson sampling.
    Every party models its own cross-validation score with a GP over ``n_features`` random
    Fourier features shared by all parties; in each round it sends the server one sample of its
    posterior weight vector (never data, never scores unless ``share_scores``). The server
    builds one vector per sub-region of the search space, a weighted sum that first favours the
    parties that explored that region and then all equally; with ``dp`` each party's vector
    enters with probability ``q``, clipped, and Gaussian noise is added (the subsampled Gaussian
    mechanism). Every party receives the noised vectors and, with probability ``1 - p_t``,
    evaluates the maximiser of the function they define, otherwise its own GP's Thompson
    sample.

    **What is private.** Only the server's broadcasts are differentially private, with respect
    to the presence of one party (``epsilon_``, ``delta_``): the noised vectors, and everything
    a party derives from them. Not covered: what the parties send the (trusted) server, that is
    their vectors and, with ``share_scores=True``, their configurations and scores; nor
    ``cv_results_``, ``best_params_``, ``best_params_per_party_`` or the final models. Parties
    never learn which parties were subsampled or any other party's vector.

    **When it helps.** With uniform weights the noise on the shared function's value has std
    ``z S / (q N)`` for ``N`` parties: 2.2 for the paper's 29 parties, far above the unit scale
    of bounded scores. ``fit`` warns when it exceeds 1: the server's suggestions are then close
    to random, and the search is close to each party's own Thompson sampling plus random
    exploration. Scores are used raw, as in the paper: use a bounded scorer (accuracy,
    ROC AUC...).

    The variants are parameter settings: standard TS (``p_schedule=1.0, n_regions=1,
    dp=False``), FTS (``n_regions=1, dp=False``), FTS-DE (``dp=False``), DP-FTS
    (``n_regions=1``) and DP-FTS-DE (the defaults). See
    :class:`~fedsearch.algorithms.dpftsde.strategy.DPFTSDEStrategy` for the rounds.

    Parameters
    ----------
""" + _PARAMS + docs.common_params(exclude=("aggregate", "final_fit")) + _FINAL_FIT + """
    Attributes
    ----------
""" + docs.common_attributes() + _ATTRIBUTES + """
    See Also
    --------
    PFPNESearchCV : personal configurations by elimination, without differential privacy.
    fedsearch.privacy.subsampled_gaussian_epsilon : plan a privacy budget before a search.

    Examples
    --------
    >>> import warnings
    >>> from scipy.stats import loguniform
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from fedsearch import DPFTSDESearchCV
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> Xs, ys = [X[0::3], X[1::3], X[2::3]], [y[0::3], y[1::3], y[2::3]]   # three hospitals
    >>> model = make_pipeline(StandardScaler(), LogisticRegression(solver="liblinear"))
    >>> search = DPFTSDESearchCV(model, {"logisticregression__C": loguniform(1e-3, 1e2)}, n_iter=8,
    ...                          n_init=4, target_epsilon=4.0, delta=1e-5, scoring="roc_auc", cv=3,
    ...                          random_state=0)
    >>> with warnings.catch_warnings(record=True) as caught:   # three parties: mostly noise
    ...     search = search.fit(Xs, ys)
    >>> "mostly noise" in str(caught[0].message)
    True
    >>> round(search.epsilon_, 2), round(search.noise_multiplier_, 2)
    (4.0, 1.45)
    >>> sorted(search.best_params_per_party_)
    [0, 1, 2]
    >>> search.predict(Xs[1][:4], party=1).shape
    (4,)
    """

    _parameter_constraints = {
        **BaseFederatedSearchCV._parameter_constraints,
        "n_iter": [v.POSITIVE_INT],
        "n_init": [v.POSITIVE_INT],
        "n_features": [v.POSITIVE_INT],
        "length_scale": [v.POSITIVE],
        "n_regions": [v.POSITIVE_INT],
        "region_weight": [v.POSITIVE],
        "p_schedule": [v.options(*P_SCHEDULES), v.interval(numbers.Real, 0, 1), v.CALLABLE],
        "server_branch": [v.options("argmax", "random")],
        "dp": [v.BOOLEAN],
        "sampling_rate": [v.interval(numbers.Real, 0, 1, closed="right")],
        "clip": [v.NONE, v.POSITIVE],
        "noise_multiplier": [v.POSITIVE],
        "target_epsilon": [v.NONE, v.POSITIVE],
        "delta": [v.NONE, v.OPEN_UNIT],
        "accountant": [v.options(*ACCOUNTANTS)],
        "neighboring": [v.options(*NEIGHBORING)],
        "share_scores": [v.BOOLEAN],
        "final_fit": [v.options(*PERSONAL_FINAL_FITS), v.NONE],
    }

    def __init__(self, estimator, param_distributions, *, n_iter=70, n_init=10, n_features=100, length_scale=0.01,
                 n_regions=4, region_weight=15.0, p_schedule="1/t", server_branch="argmax", dp=True,
                 sampling_rate=0.35, clip=None, noise_multiplier=1.0, target_epsilon=None, delta=None,
                 accountant="paper", neighboring="add_remove", share_scores=True, scoring=None, n_jobs=None,
                 refit=True, cv=None, verbose=0, pre_dispatch="2*n_jobs", error_score=np.nan,
                 return_train_score=False, random_state=None, aggregate="mean", final_fit="local",
                 checkpoint=None):
        super().__init__(estimator, scoring=scoring, n_jobs=n_jobs, refit=refit, cv=cv, verbose=verbose,
                         pre_dispatch=pre_dispatch, error_score=error_score,
                         return_train_score=return_train_score, random_state=random_state,
                         aggregate=aggregate, final_fit=final_fit, checkpoint=checkpoint)
        self.param_distributions = param_distributions
        self.n_iter, self.n_init = n_iter, n_init
        self.n_features, self.length_scale = n_features, length_scale
        self.n_regions, self.region_weight = n_regions, region_weight
        self.p_schedule, self.server_branch = p_schedule, server_branch
        self.dp, self.sampling_rate, self.clip = dp, sampling_rate, clip
        self.noise_multiplier, self.target_epsilon, self.delta = noise_multiplier, target_epsilon, delta
        self.accountant, self.neighboring = accountant, neighboring
        self.share_scores = share_scores

    @property
    def _validate_recommendation(self) -> bool:
        return self.share_scores  # validating best_params_ in every party sends scores

    def _get_space(self):
        return SearchSpace(self.param_distributions)

    @property
    def _releases(self) -> int:
        collaborative = not (isinstance(self.p_schedule, numbers.Real) and self.p_schedule == 1)
        return self.n_iter - self.n_init if collaborative else 0

    def _check_search_params(self, n_parties):
        name = type(self).__name__
        if self.n_init > self.n_iter:
            raise ValueError(f"The 'n_init' parameter of {name} must be at most n_iter={self.n_iter}. "
                             f"Got {self.n_init} instead.")
        if self.dp and self.delta is None:
            raise ValueError(
                f"{name} with dp=True needs an explicit delta (the probability that the guarantee fails), "
                f"for example delta=1e-5; the paper's 1 / N**1.1 is {n_parties ** -1.1:.3g} for your "
                f"{n_parties} parties. Pass dp=False for no privacy.")
        if self.dp and self.delta >= 1 / n_parties:
            warnings.warn(f"delta={self.delta!r} is at least 1 / n_parties = {1 / n_parties:.3g}: a mechanism "
                          f"that publishes one party's vector outright meets such a guarantee.", UserWarning,
                          stacklevel=3)

    def _calibrated_noise(self, n_parties) -> float:
        """``z``, from ``target_epsilon`` when given, and the warning when the aggregate is mostly noise."""
        z = self.noise_multiplier
        if self.target_epsilon is not None and self._releases > 0:
            z = noise_multiplier_for_epsilon(self.target_epsilon, self.sampling_rate, self._releases, self.delta,
                                             self.accountant, neighboring=self.neighboring)
        clip = default_clip(self.n_features, self.n_regions) if self.clip is None else self.clip
        noise_on_f = z * clip / (self.sampling_rate * n_parties)  # uniform weights, unit-norm features
        if self._releases > 0 and noise_on_f > NOISE_WARNING_LEVEL:
            warnings.warn(
                f"With {n_parties} parties, sampling_rate={self.sampling_rate:g}, noise multiplier {z:.3g} and "
                f"clip {clip:.3g}, the private aggregate adds noise of std {noise_on_f:.3g} to the shared "
                f"function's value at every point (z S / (q N), once the weights are uniform; more before), "
                f"above the unit scale of the scores: the server's suggestions are mostly noise. About "
                f"{int(np.ceil(z * clip / (self.sampling_rate * NOISE_WARNING_LEVEL)))} parties would be needed.",
                UserWarning, stacklevel=4)
        return z

    def _make_strategy(self, space, n_parties, weights, random_state):
        z = self._calibrated_noise(n_parties) if self.dp else None
        return DPFTSDEStrategy(
            n_dims=space.n_dims, n_parties=n_parties, n_iter=self.n_iter, n_init=self.n_init,
            n_features=self.n_features, length_scale=self.length_scale, n_regions=self.n_regions,
            region_weight=self.region_weight, p_schedule=self.p_schedule, server_branch=self.server_branch,
            dp=self.dp, sampling_rate=self.sampling_rate, clip=self.clip,
            noise_multiplier=z if self.dp else self.noise_multiplier, share_scores=self.share_scores,
            random_state=draw_seed(random_state))

    def _after_search(self, strategy, federation, space):
        fitted = {"strategy_": strategy,
                  "best_params_per_party_": {pid: space.to_params(strategy.recommend(party=p))
                                             for p, pid in enumerate(federation.party_ids)}}
        if self.share_scores:
            fitted["personal_results_"] = self._personal_results(strategy, federation, space)
        releases = strategy.releases_
        if not self.dp or strategy.n_releases == 0:
            return {**fitted, "epsilon_": np.inf if releases else 0.0, "delta_": None, "noise_multiplier_": None,
                    "privacy_": {}}
        curve = _epsilon_curve(strategy.sampling_rate, strategy.noise_multiplier, len(releases), self.delta,
                               self.accountant, self.neighboring)
        return {**fitted, "epsilon_": float(curve[-1]), "delta_": self.delta,
                "noise_multiplier_": strategy.noise_multiplier,
                "privacy_": {"epsilon": curve.tolist(),
                             "noise_std": [r["noise_std"].tolist() for r in releases],
                             "n_selected": [r["n_selected"] for r in releases],
                             "n_clipped": [r["n_clipped"] for r in releases]}}
