"""FLoRA's server: one round of local searches, one loss surface, one recommendation."""

from __future__ import annotations

import numpy as np

from ..._random import as_generator
from ...messages import EvaluateReply, EvaluateTask
from ...space import point_key
from ...strategy import Strategy, register_strategy
from ..candidates.strategy import aggregate_scores
from .local_search import DEFAULT_LOCAL_SEARCH
from .surfaces import SURFACES, LossSurfaces
from .tasks import LocalSearchReply, LocalSearchTask

__all__ = ["FLoRAStrategy", "heterogeneity"]


def heterogeneity(best_losses):
    """The inter-party heterogeneity ``gamma_p`` of FLoRA §3 (and App. C.5).

    .. math:: \\gamma_p = \\frac{1 - \\min_{i} L^{(i)}_\\star}{1 - \\max_{i} L^{(i)}_\\star},
              \\qquad L^{(i)}_\\star = \\min_t L^{(i)}_t

    with :math:`L^{(i)}_\\star` the lowest loss (``1 - score``) party :math:`i` saw in its local
    search: the ratio of the best party's best score to the worst party's best score
    ("PMax / PMin" of Table 7). It is at least 1; near 1 the parties look alike. Meaningful for
    scores in ``[0, 1]`` such as (balanced) accuracy.

    Parameters
    ----------
    best_losses : array-like of shape (n_parties,)
        Each party's lowest observed loss; NaN entries (failed parties) are ignored.

    Returns
    -------
    float
        NaN when no party has a finite loss.

    Examples
    --------
    >>> round(heterogeneity([0.1, 0.2, 0.25]), 6)   # 0.9 / 0.75
    1.2
    """
    losses = np.asarray(best_losses, dtype=float)
    losses = losses[np.isfinite(losses)]
    if losses.size == 0:
        return float("nan")
    return float((1.0 - losses.min()) / (1.0 - losses.max()))


class FLoRAStrategy(Strategy):
    """FLoRA's server: one round of local searches, one loss surface, one recommendation.

    Round 0 sends one :class:`LocalSearchTask` to every party. ``aggregate`` fits the four loss
    surfaces of :class:`~fedsearch.algorithms.flora.surfaces.LossSurfaces` on the uploaded pairs and takes the
    arg-min of each over the whole cube. With ``validate=True``, round 1 asks every party to
    cross-validate the recommendation of ``surface`` once (an :class:`EvaluateTask`).

    Parameters
    ----------
    n_parties : int
    space : SearchSpace or None, default=None
        Snaps recommendations to valid configurations (None: plain unit cube).
    n_iter : int, default=100
        ``T``, the local budget of every party.
    local_search : str, default="random"
        The parties' local optimiser (see :mod:`fedsearch.algorithms.flora.local_search`).
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
    n_validate : int, default=1
        Candidates of the validation round (beyond the paper): the arg-min of ``surface``, then
        the other surfaces' distinct arg-mins, then ``default_point``, the first ``n_validate``
        of them. Every party cross-validates all of them in the one validation round, and the
        recommendation is the candidate with the best federated validated score (ties: the
        earlier candidate). 1 is the paper's FLoRA: the arg-min of ``surface``, validated.
    aggregate : {"weighted", "mean", "min"}, default="weighted"
        How the parties' validated scores make the federated score (as the estimators' ``aggregate``).
    default_point : ndarray of shape (n_dims,) or None, default=None
        The estimator's default configuration on the unit cube, the last candidate.

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
        Parties whose local search failed or uploaded no finite loss, with the reason (the
        data-free message of the search's failure, or of its first failed configuration).
    validation_ : dict of int to EvaluateReply
        The validation round's replies.
    candidates_ : list of ndarray
        The points of the validation round.
    validated_scores_ : ndarray
        Their federated validated scores (NaN where a party failed).

    Examples
    --------
    >>> import numpy as np
    >>> strategy = FLoRAStrategy(2, n_iter=3, validate=False, random_state=0)
    >>> [(type(t).__name__, t.n_iter) for t in strategy.configure(0).values()]
    [('LocalSearchTask', 3), ('LocalSearchTask', 3)]
    >>> def upload(points, scores):  # what a party's LocalSearchReply carries
    ...     s = np.array(scores)
    ...     return LocalSearchReply(points=np.array(points)[:, None], losses=1 - s, trials=np.arange(3),
    ...                             n_evaluations=3, n_failed=0, n_samples=10,
    ...                             evaluation=EvaluateReply(scores=s, n_samples=10))
    >>> strategy.aggregate(0, {0: upload([.1, .5, .9], [.6, .9, .5]),
    ...                        1: upload([.2, .5, .8], [.7, .8, .6])})
    >>> strategy.configure(1) is None   # no validation round asked: done
    True
    >>> bool(0.3 < strategy.recommend()[0] < 0.7)
    True
    """

    def __init__(self, n_parties, space=None, *, n_iter=100, local_search=DEFAULT_LOCAL_SEARCH, n_best=None,
                 surface="aplm", regressor=None, alpha=1.0, validate=True, random_state=None,
                 n_validate=1, aggregate="weighted", default_point=None):
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
        self.n_validate = n_validate
        self.aggregate_how = aggregate
        self.default_point = default_point
        rng = as_generator(random_state)
        self._seeds = [int(s) for s in rng.integers(2**31, size=n_parties)]
        self._surface_seed = int(rng.integers(2**31))
        self.local_replies_: dict = {}
        self.surfaces_ = None
        self.surface_points_: dict = {}
        self.heterogeneity_ = float("nan")
        self.failed_parties_: dict = {}
        self.validation_: dict = {}
        self.candidates_: list = []
        self.validated_scores_ = np.empty(0)
        self._round = 0

    def configure(self, round):
        if round == 0:
            # Algorithm 1, lines 2-4: every party searches on its own, with its own seed
            return {p: LocalSearchTask(self.n_iter, self.local_search, self._seeds[p], self.n_best)
                    for p in range(self.n_parties)}
        if round == 1 and self.validate and self.surface in self.surface_points_:
            points = np.array(self.candidates_)
            return {p: EvaluateTask(points) for p in range(self.n_parties)}
        return None

    def _candidates(self) -> list:
        """The chosen surface's arg-min, the other surfaces' distinct ones, the default point."""
        ordered = [self.surface_points_[self.surface]]
        ordered += [self.surface_points_[s] for s in SURFACES if s != self.surface and s in self.surface_points_]
        if self.default_point is not None:
            ordered.append(np.asarray(self.default_point, dtype=float))
        unique = {}
        for u in ordered:
            unique.setdefault(point_key(u), u)
        return list(unique.values())[:self.n_validate]

    def aggregate(self, round, replies):
        if round == 1:
            self.validation_ = dict(sorted(replies.items()))
            answered = [r for r in self.validation_.values() if isinstance(r, EvaluateReply)]
            scores = np.array([r.scores for r in answered], dtype=float).reshape(len(answered), len(self.candidates_))
            weights = np.array([r.n_samples for r in answered], dtype=float)
            self.validated_scores_ = (aggregate_scores(scores, weights, self.aggregate_how) if answered
                                      else np.full(len(self.candidates_), np.nan))  # nobody validated
            return
        # Algorithm 1, line 5: collect E = {E_i}; a party that could not search is a failure
        self.local_replies_ = {p: r for p, r in sorted(replies.items()) if isinstance(r, LocalSearchReply)}
        self.failed_parties_ = {p: _reason(r) for p, r in sorted(replies.items())
                                if r.error is not None or not np.any(np.isfinite(r.losses))}
        uploaded = [r for r in self.local_replies_.values() if len(r.points) > 0]
        best = [np.nanmin(r.losses) if np.any(np.isfinite(r.losses)) else np.nan for r in uploaded]
        self.heterogeneity_ = heterogeneity(best)  # gamma_p, §3
        if not any(np.isfinite(best)):
            return
        # line 6: the loss surfaces; line 7: their arg-min over the whole space (eq. 2.7)
        self.surfaces_ = LossSurfaces(self.regressor, self.alpha, self._surface_seed).fit(
            [(r.points, r.losses) for r in uploaded])
        self.surface_points_ = self.surfaces_.minimize(self.space)
        self.candidates_ = self._candidates()

    def recommend(self, party=None):
        """The arg-min of ``surface``; for ``party``, the best configuration it uploaded."""
        if party is not None:
            r = self.local_replies_.get(party)
            if r is not None and np.any(np.isfinite(r.losses)):
                return r.points[int(np.nanargmin(r.losses))].copy()
        if self.surface not in self.surface_points_:
            details = "; ".join(f"party {p}: {e}" for p, e in self.failed_parties_.items())
            raise ValueError(f"No loss surface could be fitted: no party uploaded a finite loss ({details}).")
        validated = np.where(np.isnan(self.validated_scores_), -np.inf, self.validated_scores_)
        if validated.size and np.isfinite(validated).any():  # the best validated candidate
            return self.candidates_[int(np.argmax(validated))].copy()
        return self.surface_points_[self.surface].copy()


def _reason(reply) -> str:
    """Why a party uploaded no finite loss: its search's error, else its first failed
    configuration's, else the scores it uploaded."""
    if reply.error is not None:
        return reply.error
    first = next((e for e in reply.evaluation.errors if e is not None), None)
    if first is not None:
        return f"every configuration failed, the first with {first}"
    return f"no configuration uploaded a finite score ({len(reply.losses)} uploaded)"


@register_strategy("flora")
def flora_for_simulation(*, n_dims, n_parties, n_iter, random_state=None, validate=True, **options) -> FLoRAStrategy:
    """FLoRA on synthetic parties (``simulate("flora", ...)``): the budget ``n_iter`` of each
    party covers its local search and, with ``validate``, the one validation evaluation."""
    local = n_iter - 1 if validate and n_iter > 1 else n_iter
    return FLoRAStrategy(n_parties, None, n_iter=local, validate=validate and n_iter > 1,
                         random_state=random_state, **options)
