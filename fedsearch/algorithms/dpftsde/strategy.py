"""DP-FTS-DE's server (Algo. 1): shared features, rounds of Thompson steps, private aggregates."""

from __future__ import annotations

import functools
import math
import numbers

import numpy as np

from ..._random import as_generator
from ...strategy import Strategy, register_strategy
from ._features import FourierFeatures
from ._mechanism import plain_aggregate, private_aggregate
from ._regions import assign_regions, make_regions, region_weights
from ._schedules import P_SCHEDULES, local_probability, weight_exponent
from .tasks import FTSStepReply, FTSStepTask

__all__ = ["DPFTSDEStrategy", "default_clip"]


def default_clip(n_features: int, n_regions: int) -> float:
    """``S = 1.1 sqrt(M P)``: reproduces all four of the paper's clipping thresholds (notes §1.2).

    A posterior sample of ``M`` unit-norm features is mostly prior in the directions without data,
    so its norm is about ``sqrt(M)``; the threshold ``S / sqrt(P)`` then clips about 1% of them.
    """
    return 1.1 * math.sqrt(n_features * n_regions)


@register_strategy("dp-fts-de")
class DPFTSDEStrategy(Strategy):
    """DP-FTS-DE (Dai, Low, Jaillet 2021, Algorithms 1-2), a personal search: every party runs
    Thompson sampling on its own scores, helped by the server's aggregate of their vectors.

    Round 0: each party evaluates ``n_init`` uniform points of its assigned box and sends a
    sample ``omega_n`` of its posterior over ``M`` shared random Fourier features. Round
    ``t = 1 .. n_iter - n_init``: the server has built, from round ``t - 1``'s vectors, one
    vector per sub-region (a weighted sum: Poisson-subsampled, clipped and noised when ``dp``);
    each party follows its own GP with probability ``p_t`` and otherwise maximises the broadcast
    function, evaluates one point and sends a fresh sample. The last round's vectors are not
    aggregated: ``n_iter - n_init`` releases in all (notes §2.3.6).

    Parameters
    ----------
    n_dims, n_parties, n_iter : int
        Dimensions, parties and evaluations per party (``n_init`` + the BO iterations).
    n_init : int, default=10
        Initial points per party.
    n_features : int, default=100
        ``M``, shared random features.
    length_scale : float, default=0.01
        Length scale of the shared features' SE kernel on the unit cube (the paper's 0.01 makes
        the shared function spiky: notes §3.5).
    obs_noise : float, default=1e-6
        ``lambda`` of the parties' posteriors (eq. 2).
    n_regions : int, default=4
        ``P`` sub-regions; 1 switches distributed exploration off.
    region_weight : float, default=15.0
        ``a`` of the softmax weights.
    weight_schedule : (int, int), default=(10, 30)
        Rounds with ``a_t = a + 1``, then rounds of linear decay to uniform (App. B; the synthetic
        experiment used (6, 5)).
    p_schedule : {"1/t", "1/sqrt(t)"}, float or callable, default="1/t"
        ``p_t``: ``1 - 1/t`` or ``1 - 1/sqrt(t)`` at BO iteration ``t``, a constant (1.0: standard
        TS, no collaboration), or a callable of ``t``.
    server_branch : {"argmax", "random"}, default="argmax"
        What a party does with probability ``1 - p_t``: maximise the broadcast (the algorithm)
        or take a uniform random point (the ablation that shows whether the aggregate informs).
    dp : bool, default=True
        Subsample, clip and noise the aggregate (DP-FTS-DE) or take the plain weighted sum of all
        parties' vectors (FTS-DE, FTS).
    sampling_rate : float, default=0.35
        ``q``.
    clip : float or None, default=None
        ``S``; None: :func:`default_clip`.
    noise_multiplier : float, default=1.0
        ``z``.
    share_scores : bool, default=True
        Parties send their points and scores to the (trusted) server besides their vectors.
    n_features_local, n_candidates, n_restarts : int, default=100, 1000, 20
        The parties' own-GP features and the arg-max's random points and L-BFGS-B starts.
    random_state : int, Generator or None, default=None

    Attributes
    ----------
    features_ : FourierFeatures
    regions_ : ndarray of shape (P, n_dims, 2)
    assignment_ : ndarray of shape (n_parties,)
    n_rounds_ : int
        ``n_iter - n_init + 1`` rounds of tasks.
    omega_ : ndarray of shape (P, M) or None
        The last broadcast.
    releases_ : list of dict
        Per aggregate: ``round``, ``a_t``, ``n_selected``, ``n_clipped`` and ``noise_std``
        (server-side diagnostics; never broadcast).
    best_points_ : dict
        ``{party: point}``, each party's best configuration (from its last reply, or from the
        points and scores it shared); a party none of whose evaluations succeeded has none, and
        ``recommend(party)`` gives it the federation's.
    failures_ : dict
        ``{round: {party: error}}``.
    """

    def __init__(self, *, n_dims, n_parties, n_iter, n_init=10, n_features=100, length_scale=0.01,
                 obs_noise=1e-6, n_regions=4, region_weight=15.0, weight_schedule=(10, 30), p_schedule="1/t",
                 server_branch="argmax", dp=True, sampling_rate=0.35, clip=None, noise_multiplier=1.0,
                 share_scores=True, n_features_local=100, n_candidates=1000, n_restarts=20, random_state=None):
        if n_init < 1 or n_iter < n_init:
            raise ValueError(f"DP-FTS-DE needs 1 <= n_init <= n_iter; got n_init={n_init}, n_iter={n_iter}.")
        if isinstance(p_schedule, str) and p_schedule not in P_SCHEDULES:
            raise ValueError(f"Unknown p_schedule {p_schedule!r}; known: {sorted(P_SCHEDULES)}, a float or a callable.")
        if server_branch not in ("argmax", "random"):
            raise ValueError(f"server_branch must be 'argmax' or 'random'; got {server_branch!r}.")
        self.n_dims, self.n_parties, self.n_iter, self.n_init = n_dims, n_parties, n_iter, n_init
        self.n_features, self.length_scale, self.obs_noise = n_features, length_scale, obs_noise
        self.n_regions, self.region_weight, self.weight_schedule = n_regions, region_weight, tuple(weight_schedule)
        self.p_schedule = float(p_schedule) if isinstance(p_schedule, numbers.Real) else p_schedule
        self.server_branch = server_branch
        self.dp, self.sampling_rate, self.noise_multiplier = dp, sampling_rate, noise_multiplier
        self.clip = default_clip(n_features, n_regions) if clip is None else clip
        self.share_scores = share_scores
        self.n_features_local, self.n_candidates, self.n_restarts = n_features_local, n_candidates, n_restarts

        rng = as_generator(random_state)
        self.search_id = int(rng.integers(2**31))
        self.features_ = FourierFeatures.draw(n_features, n_dims, length_scale, rng)
        self._server_rng = np.random.default_rng(rng.integers(2**63))
        self._seed_root = int(rng.integers(2**63))
        self.regions_ = make_regions(n_dims, n_regions)
        self.assignment_ = assign_regions(n_parties, n_regions)
        self.n_rounds_ = n_iter - n_init + 1
        self.omega_ = None
        self.releases_: list[dict] = []
        self.best_points_: dict = {}
        self._best_scores: dict = {}
        self.failures_: dict = {}

    @property
    def collaborative(self) -> bool:
        """False for standard TS (``p_t = 1`` always): nothing is aggregated or broadcast."""
        return not (isinstance(self.p_schedule, float) and self.p_schedule == 1.0)

    @property
    def n_releases(self) -> int:
        """Aggregates broadcast (and counted by the accountant): ``n_iter - n_init`` when collaborating."""
        return self.n_rounds_ - 1 if self.collaborative else 0

    def _p(self, iteration: int) -> float:
        if isinstance(self.p_schedule, float):
            return self.p_schedule
        return local_probability(iteration, self.p_schedule)

    def _seed(self, round: int, party: int) -> int:
        return int(np.random.SeedSequence([self._seed_root, round, party]).generate_state(1)[0])

    def configure(self, round):
        if round >= self.n_rounds_:
            return None
        return {n: FTSStepTask(
            search_id=self.search_id, round=round, seed=self._seed(round, n),
            frequencies=self.features_.frequencies, offsets=self.features_.offsets, regions=self.regions_,
            region=int(self.assignment_[n]), n_init=self.n_init,
            p=1.0 if round == 0 else self._p(round),
            omega=self.omega_ if round > 0 and self.collaborative else None,
            obs_noise=self.obs_noise, server_branch=self.server_branch, share_scores=self.share_scores,
            last=round == self.n_rounds_ - 1, n_features_local=self.n_features_local,
            n_candidates=self.n_candidates, n_restarts=self.n_restarts,
        ) for n in range(self.n_parties)}

    def aggregate(self, round, replies):
        omegas = np.zeros((self.n_parties, self.n_features))
        present = np.zeros(self.n_parties, dtype=bool)
        for n, reply in replies.items():
            if not isinstance(reply, FTSStepReply) or reply.error is not None:
                self.failures_.setdefault(round, {})[n] = getattr(reply, "error", None) or type(reply).__name__
                continue
            omegas[n], present[n] = reply.omega, True
            self._track_best(n, reply)
        if not self.collaborative or round >= self.n_rounds_ - 1:
            return  # nothing consumes an aggregate after the last round
        a_t = weight_exponent(round, self.region_weight, *self.weight_schedule)
        weights = region_weights(self.assignment_, self.n_regions, a_t)
        if self.dp:
            release = private_aggregate(omegas, present, weights, self._server_rng, sampling_rate=self.sampling_rate,
                                        clip=self.clip, noise_multiplier=self.noise_multiplier)
        else:
            release = plain_aggregate(omegas, present, weights)
        self.omega_ = release.omega
        self.releases_.append({"round": round, "a_t": a_t, "n_selected": int(release.selected.sum()),
                               "n_clipped": int(release.clipped.sum()), "noise_std": release.noise_std.copy()})

    def _track_best(self, n, reply: FTSStepReply) -> None:
        if reply.best_point is not None:
            self.best_points_[n] = np.asarray(reply.best_point, dtype=float)
            return
        if reply.evaluation is None:  # the party keeps its scores
            return
        scores = np.where(np.isnan(reply.evaluation.scores), -np.inf, reply.evaluation.scores)
        if len(scores) and scores.max() > self._best_scores.get(n, -np.inf):
            self._best_scores[n] = float(scores.max())
            self.best_points_[n] = np.asarray(reply.points[int(np.argmax(scores))], dtype=float)

    def recommend(self, party=None):
        """A party's best configuration; for the federation (``party=None``), the best of the
        parties' configurations by their shared scores (the first party's without scores)."""
        if party is not None and party in self.best_points_:
            return self.best_points_[party].copy()
        if self._best_scores:
            best = max(self._best_scores, key=self._best_scores.get)
            return self.best_points_[best].copy()
        if self.best_points_:
            return self.best_points_[min(self.best_points_)].copy()
        return np.full(self.n_dims, 0.5)


def _variant(name: str, **settings):
    """Register a variant of DP-FTS-DE under its own name (its settings can still be overridden)."""
    factory = functools.partial(DPFTSDEStrategy, **settings)
    register_strategy(name)(factory)
    return factory


# §1.7 of the notes: every variant is a parameter setting of the same algorithm.
_variant("dp-fts", n_regions=1)
_variant("fts-de", dp=False)
_variant("fts", n_regions=1, dp=False)
_variant("ts", n_regions=1, dp=False, p_schedule=1.0)
