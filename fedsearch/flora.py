"""FLoRA: single-shot federated hyper-parameter search by loss-surface aggregation.

Zhou et al., *Single-shot general hyper-parameter optimization for federated learning*
(004_*.txt, Algorithm 1). Each party runs its own adaptive search of ``n_iter`` configurations
on its own data, with no coordination (line 3), and uploads its (configuration, loss) pairs once
(line 5). The server fits a loss surface on the pairs (line 6, :mod:`fedsearch.surfaces`),
recommends its arg-min over the whole space (line 7), optionally has every party cross-validate
that recommendation once, and the final model is trained once (line 8).

This module holds the messages of the local search, the party's handler for them, the
server-side :class:`FLoRAStrategy` and the estimator :class:`FLoRASearchCV`.
"""

from __future__ import annotations

import numbers
import traceback
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from . import _validation as v
from .local_search import local_search_methods, make_local_search
from .messages import EvaluateReply, EvaluateTask, Reply, Task, message
from .metrics import heterogeneity
from .party import Party, Unit, fit_and_score_fold, register_task
from .search import _COMMON_ATTRIBUTES, _COMMON_PARAMS, BaseFederatedSearchCV
from .space import SearchSpace
from .strategies.base import Strategy
from .surfaces import SURFACES, LossSurfaces, supports_uncertainty

__all__ = ["LocalSearchTask", "LocalSearchReply", "FLoRAStrategy", "FLoRASearchCV"]


# --------------------------------------------------------------------------- messages
@message
class LocalSearchTask(Task):
    """Run a local hyper-parameter search of ``n_iter`` configurations (Algorithm 1, line 3).

    Parameters
    ----------
    n_iter : int
        ``T``: how many configurations the party cross-validates.
    method : str, default="bo"
        The party's local optimiser, by name (:func:`fedsearch.local_search.make_local_search`).
    seed : int or None, default=None
        Seed of the local optimiser.
    n_best : int or None, default=None
        ``T'`` of App. D.7: upload only the ``n_best`` pairs with the lowest loss (None: all).
    """

    n_iter: int
    method: str = "bo"
    seed: int | None = None
    n_best: int | None = None

    kind = "local_search"


@message
class LocalSearchReply(Reply):
    """The pairs ``E_i = {(theta_t, L_t)}`` of one party's local search (eq. 2.6), uploaded once.

    Attributes
    ----------
    points : ndarray of shape (n_pairs, n_dims)
        The configurations tried (canonical points of the unit cube), in the order tried.
    scores : ndarray of shape (n_pairs,)
        The party's mean CV score of each (the objective, higher is better); ``error_score``
        (NaN by default) where the configuration failed.
    losses : ndarray of shape (n_pairs,)
        ``1 - scores``, the loss of the paper (App. D.9).
    trials : ndarray of int of shape (n_pairs,)
        The position of each pair in the local search (0 .. n_iter - 1).
    n_evaluations : int
        Configurations tried (``n_iter`` unless the search stopped on an error).
    n_failed : int
        How many of them failed, uploaded or not.
    n_samples : int
        The party's number of samples.
    test_scores, std_scores, train_scores, fit_time, score_time, errors
        As in :class:`~fedsearch.messages.EvaluateReply`, one entry per pair.
    error : str or None
        Set when the search itself failed (the pairs tried until then are still uploaded).
    """

    points: np.ndarray
    scores: np.ndarray
    losses: np.ndarray
    trials: np.ndarray
    n_evaluations: int
    n_failed: int
    n_samples: int
    test_scores: dict = field(default_factory=dict)
    std_scores: dict = field(default_factory=dict)
    train_scores: dict = field(default_factory=dict)
    fit_time: np.ndarray | None = None
    score_time: np.ndarray | None = None
    errors: tuple = ()
    error: str | None = None

    def as_evaluation(self) -> tuple[EvaluateTask, EvaluateReply]:
        """The pairs as if the party had been sent them in an :class:`EvaluateTask`."""
        keys = [tuple(np.round(p, 12)) for p in self.points]
        cached = np.array([k in keys[:i] for i, k in enumerate(keys)], dtype=bool)
        reply = EvaluateReply(
            scores=self.scores, n_samples=self.n_samples, test_scores=self.test_scores,
            std_scores=self.std_scores, train_scores=self.train_scores, fit_time=self.fit_time,
            score_time=self.score_time, errors=self.errors, cached=cached,
        )
        return EvaluateTask(self.points), reply


# --------------------------------------------------------------------------- party side
@dataclass
class _SearchOutput:
    trials: list  # (canonical point, fold results, repeated?)
    error: str | None = None


def run_local_search(estimator, X, y, folds, space, scoring, objective, fit_params,
                     return_train_score, stop_on_error, method, n_iter, seed) -> _SearchOutput:
    """A party's local search (runs in a worker): ask, cross-validate on the party's folds, tell.

    A configuration proposed again is not refitted (its folds are reused) but still counts as
    one of the ``n_iter`` trials.
    """
    trials, seen = [], {}
    try:
        searcher = make_local_search(method, space, seed)
        for _ in range(n_iter):
            u = space.canonical(searcher.ask())
            key = tuple(np.round(u, 12))
            repeated = key in seen
            if repeated:
                results = trials[seen[key]][1]
            else:
                params = space.to_params(u)
                results = [fit_and_score_fold(estimator, X, y, train, test, params, scoring,
                                              fit_params, return_train_score) for train, test in folds]
                seen[key] = len(trials)
            failed = any(r.error is not None for r in results)
            trials.append((u, results, repeated))
            if failed and stop_on_error:
                break
            searcher.tell(u, np.nan if failed else float(np.mean([r.test[objective] for r in results])))
    except Exception as exc:  # noqa: BLE001 - a failing search is data, not a crash
        return _SearchOutput(trials, "".join(traceback.format_exception_only(exc)).strip())
    return _SearchOutput(trials)


def _units_local_search(party: Party, task: LocalSearchTask) -> list[Unit]:
    if not isinstance(task.n_iter, numbers.Integral) or task.n_iter < 1:
        raise ValueError(f"Party {party.party_id!r} got n_iter={task.n_iter!r}; it must be a positive int.")
    if task.n_best is not None and (not isinstance(task.n_best, numbers.Integral) or task.n_best < 1):
        raise ValueError(f"Party {party.party_id!r} got n_best={task.n_best!r}; it must be None or a positive int.")
    if task.method not in local_search_methods():
        raise ValueError(f"Party {party.party_id!r} does not know the local search {task.method!r}; "
                         f"it knows {local_search_methods()}.")
    return [Unit(run_local_search, (
        party.estimator, party.X, party.y, party.folds, party.space, party.scoring, party.objective,
        party.fit_params, party.return_train_score, party.error_score == "raise", task.method,
        int(task.n_iter), task.seed,
    ))]


def _reply_local_search(party: Party, task: LocalSearchTask, outputs: list) -> LocalSearchReply:
    out: _SearchOutput = outputs[0]
    fill = np.nan if party.error_score == "raise" else float(party.error_score)
    rows = []
    for u, results, repeated in out.trials:
        summary = party.record_results(u, results)  # the validation round may reuse it
        rows.append((u, summary, repeated))
    n = len(rows)
    scores = np.array([r["test"][party.objective] if r["test"] is not None else fill for _, r, _ in rows])
    keep = np.arange(n)
    if task.n_best is not None and task.n_best < n:  # T' lowest losses (App. D.7); failures last
        keep = np.sort(np.argsort(np.where(np.isnan(scores), -np.inf, -scores), kind="stable")[:task.n_best])
    metrics = next((list(r["test"]) for _, r, _ in rows if r["test"] is not None), [party.objective])

    def column(part, name):
        default = fill if part == "test" else np.nan
        return np.array([rows[i][1][part][name] if rows[i][1][part] is not None else default for i in keep])

    def timing(key):  # a repeated configuration was not refitted
        return np.array([0.0 if rows[i][2] else rows[i][1][key] for i in keep])

    return LocalSearchReply(
        points=np.array([rows[i][0] for i in keep]).reshape(len(keep), party.space.n_dims),
        scores=scores[keep],
        losses=1.0 - scores[keep],  # the paper's loss: 1 - balanced accuracy (App. D.9)
        trials=keep.astype(int),
        n_evaluations=n,
        n_failed=int(sum(r["error"] is not None for _, r, _ in rows)),
        n_samples=party.n_samples,
        test_scores={m: column("test", m) for m in metrics},
        std_scores={m: column("std", m) for m in metrics},
        train_scores={m: column("train", m) for m in metrics} if party.return_train_score else {},
        fit_time=timing("fit_time"),
        score_time=timing("score_time"),
        errors=tuple(rows[i][1]["error"] for i in keep),
        error=out.error,
    )


register_task(Party, "local_search", _units_local_search, _reply_local_search)


# --------------------------------------------------------------------------- server side
class FLoRAStrategy(Strategy):
    """FLoRA's server: one round of local searches, one loss surface, one recommendation.

    Round 0 sends one :class:`LocalSearchTask` to every party. ``aggregate`` fits the four loss
    surfaces of :class:`~fedsearch.surfaces.LossSurfaces` on the uploaded pairs and takes the
    arg-min of each over the whole cube. With ``validate=True``, round 1 asks every party to
    cross-validate the recommendation of ``surface`` once (an :class:`EvaluateTask`).

    Parameters
    ----------
    n_parties : int
    space : SearchSpace or None, default=None
        Snaps recommendations to valid configurations (None: plain unit cube).
    n_iter : int, default=100
        ``T``, the local budget of every party.
    local_search : str, default="bo"
        The parties' local optimiser (see :mod:`fedsearch.local_search`).
    n_best : int or None, default=None
        ``T'``: each party uploads only its ``n_best`` lowest-loss pairs.
    surface : {"sgm", "sgm+u", "aplm", "mplm"}, default="aplm"
        The surface whose arg-min is recommended.
    regressor : regressor or None, default=None
        Model of the loss surfaces (None: ``RandomForestRegressor(n_estimators=100)``).
    alpha : float, default=1.0
        Weight of the uncertainty in ``sgm+u``.
    validate : bool, default=True
        Add the validation round.
    random_state : int, RandomState, Generator or None, default=None

    Attributes
    ----------
    local_replies_ : dict of int to LocalSearchReply
    surfaces_ : LossSurfaces or None
        None when no party uploaded a finite loss.
    surface_points_ : dict of str to ndarray
        The arg-min of every surface.
    heterogeneity_ : float
        ``gamma_p`` of §3 from the uploaded losses.
    failed_parties_ : dict of int to str
        Parties whose local search failed, with the error.
    validation_ : dict of int to EvaluateReply
        The validation round's replies.

    Examples
    --------
    >>> import numpy as np
    >>> strategy = FLoRAStrategy(2, n_iter=3, validate=False, random_state=0)
    >>> [(t.kind, t.n_iter) for t in strategy.configure(0).values()]
    [('local_search', 3), ('local_search', 3)]
    >>> def upload(points, scores):  # what a party's LocalSearchReply carries
    ...     s = np.array(scores)
    ...     return LocalSearchReply(points=np.array(points)[:, None], scores=s, losses=1 - s,
    ...                             trials=np.arange(3), n_evaluations=3, n_failed=0, n_samples=10)
    >>> strategy.aggregate(0, {0: upload([.1, .5, .9], [.6, .9, .5]),
    ...                        1: upload([.2, .5, .8], [.7, .8, .6])})
    >>> strategy.configure(1) is None   # no validation round asked: done
    True
    >>> bool(0.3 < strategy.recommend()[0] < 0.7)
    True
    """

    def __init__(self, n_parties, space=None, *, n_iter=100, local_search="bo", n_best=None,
                 surface="aplm", regressor=None, alpha=1.0, validate=True, random_state=None):
        if surface not in SURFACES:
            raise ValueError(f"surface must be one of {list(SURFACES)}. Got {surface!r}.")
        self.n_parties = n_parties
        self.space = space
        self.n_iter = n_iter
        self.local_search = local_search
        self.n_best = n_best
        self.surface = surface
        self.regressor = regressor
        self.alpha = alpha
        self.validate = validate
        if isinstance(random_state, np.random.RandomState):
            random_state = int(random_state.randint(2**31))
        rng = np.random.default_rng(random_state)
        self._seeds = [int(s) for s in rng.integers(2**31, size=n_parties)]
        self._surface_seed = int(rng.integers(2**31))
        self.local_replies_: dict = {}
        self.surfaces_ = None
        self.surface_points_: dict = {}
        self.heterogeneity_ = float("nan")
        self.failed_parties_: dict = {}
        self.validation_: dict = {}
        self._round = 0

    def configure(self, round):
        if round == 0:
            # Algorithm 1, lines 2-4: every party searches on its own, with its own seed
            return {p: LocalSearchTask(self.n_iter, self.local_search, self._seeds[p], self.n_best)
                    for p in range(self.n_parties)}
        if round == 1 and self.validate and self.surface in self.surface_points_:
            point = self.surface_points_[self.surface]
            return {p: EvaluateTask(point[None, :]) for p in range(self.n_parties)}
        return None

    def aggregate(self, round, replies):
        if round == 1:
            self.validation_ = dict(sorted(replies.items()))
            return
        # Algorithm 1, line 5: collect E = {E_i}
        self.local_replies_ = dict(sorted(replies.items()))
        self.failed_parties_ = {p: r.error for p, r in self.local_replies_.items() if r.error is not None}
        uploaded = [r for r in self.local_replies_.values() if len(getattr(r, "points", ())) > 0]
        best = [np.nanmin(r.losses) if np.any(np.isfinite(r.losses)) else np.nan for r in uploaded]
        self.heterogeneity_ = heterogeneity(best)  # gamma_p, §3
        if not any(np.isfinite(best)):
            return
        # line 6: the loss surfaces; line 7: their arg-min over the whole space (eq. 2.7)
        self.surfaces_ = LossSurfaces(self.regressor, self.alpha, self._surface_seed).fit(
            [(r.points, r.losses) for r in uploaded])
        self.surface_points_ = self.surfaces_.minimize(self.space)

    def recommend(self, party=None):
        """The arg-min of ``surface``; for ``party``, the best configuration it uploaded."""
        if party is not None:
            r = self.local_replies_.get(party)
            if r is not None and np.any(np.isfinite(r.losses)):
                return r.points[int(np.nanargmin(r.losses))].copy()
        if self.surface not in self.surface_points_:
            details = "; ".join(f"party {p}: {e}" for p, e in self.failed_parties_.items())
            raise ValueError(f"No loss surface could be fitted: no party uploaded a finite loss. {details}")
        return self.surface_points_[self.surface].copy()


# --------------------------------------------------------------------------- estimator
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
    estimator : estimator object
        The base estimator (a Pipeline works; its parameters are named ``step__param``).
    param_distributions : dict, list of dicts, SearchSpace or api_config dict
        Lists of values or frozen ``scipy.stats`` distributions per parameter name, a
        :class:`SearchSpace`, or the paper's ``api_config`` format
        (``{"C": {"type": "real", "space": "log", "range": (0.01, 1000.0)}}``, App. D.2).
    surface : {"aplm", "mplm", "sgm", "sgm+u"}, default="aplm"
        The loss surface whose arg-min becomes ``best_params_``: average (APLM) or maximum
        (MPLM) of per-party regressors, one regressor on the union of the pairs (SGM), or SGM
        plus ``alpha`` times its uncertainty (SGM+U).
    n_iter : int, default=100
        ``T``: configurations each party cross-validates in its local search.
    local_search : str, default="bo"
        The parties' local optimiser: ``"bo"`` (Gaussian-process Bayesian optimisation),
        ``"random"``, or a name registered with
        :func:`fedsearch.local_search.register_local_search`.
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
""" + _COMMON_PARAMS + """
    Attributes
    ----------
""" + _COMMON_ATTRIBUTES + """    surface_params_ : dict of str to dict
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
    loss their party saw (see :class:`~fedsearch.surfaces.LossSurfaces`).

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
    >>> [(r, type(m).__name__) for r, pid, _, m in search.transcript_ if pid == 0]
    [(0, 'LocalSearchTask'), (0, 'LocalSearchReply'), (1, 'EvaluateTask'), (1, 'EvaluateReply')]
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
    }

    def __init__(self, estimator, param_distributions, *, surface="aplm", n_iter=100,
                 local_search="bo", n_best=None, regressor=None, alpha=1.0, validate=True,
                 scoring=None, n_jobs=None, refit=True, cv=None, verbose=0, pre_dispatch="2*n_jobs",
                 error_score=np.nan, return_train_score=False, random_state=None,
                 aggregate="weighted", final_fit="pooled"):
        super().__init__(estimator, scoring=scoring, n_jobs=n_jobs, refit=refit, cv=cv,
                         verbose=verbose, pre_dispatch=pre_dispatch, error_score=error_score,
                         return_train_score=return_train_score, random_state=random_state,
                         aggregate=aggregate, final_fit=final_fit)
        self.param_distributions = param_distributions
        self.surface = surface
        self.n_iter = n_iter
        self.local_search = local_search
        self.n_best = n_best
        self.regressor = regressor
        self.alpha = alpha
        self.validate = validate

    @property
    def _validate_recommendation(self):
        return self.validate

    def _get_space(self):
        if _is_api_config(self.param_distributions):
            return SearchSpace.from_api_config(self.param_distributions)
        return SearchSpace(self.param_distributions)

    def _check_search_params(self, parties):
        if self.local_search not in local_search_methods():
            raise ValueError(
                f"The 'local_search' parameter of FLoRASearchCV must be one of "
                f"{local_search_methods()} (register more with "
                f"fedsearch.local_search.register_local_search). Got {self.local_search!r} instead."
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
        )

    def _after_search(self, strategy, federation, space):
        party_ids = [party.party_id for party in federation.parties]
        for p, err in strategy.failed_parties_.items():
            warnings.warn(f"The local search of party {party_ids[p]!r} failed: {err}", UserWarning,
                          stacklevel=3)
        out = {
            "surface_params_": {s: space.to_params(u) for s, u in strategy.surface_points_.items()},
            "surfaces_": strategy.surfaces_,
            "heterogeneity_": strategy.heterogeneity_,
            "local_results_": {
                party_ids[p]: {
                    "params": [space.to_params(u) for u in r.points], "points": r.points,
                    "scores": r.scores, "losses": r.losses, "trials": r.trials,
                    "n_evaluations": r.n_evaluations, "n_failed": r.n_failed, "error": r.error,
                }
                for p, r in strategy.local_replies_.items()
            },
        }
        return out
