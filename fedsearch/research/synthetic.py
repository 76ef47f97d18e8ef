"""Synthetic objectives and simulated parties: the papers' synthetic experiments, runnable as they were.

Every objective is a function on the unit cube ``[0, 1]^d`` to *maximise*, with values in
``[0, 1]`` (the rewards of the X-armed bandits must be bounded there), vectorised
(``f(points of shape (n, d)) -> (n,)``), and knows its true maximum and a maximiser. The
maximiser is known in closed form for the base functions and computed numerically otherwise
(dense grid, then a local refinement of the best grid points).

:func:`make_parties` builds a federation of :class:`FunctionParty` with the papers'
heterogeneity, and :func:`global_objective` the federation's objective, the mean of the local
ones (Fed-PNE, Sec. 2.1).

Examples
--------
>>> from fedsearch.research import synthetic
>>> f = synthetic.garland()
>>> round(f.maximum, 5), round(float(f.maximizer[0]), 4)
(0.99777, 0.5236)
>>> parties = synthetic.make_parties(f, n_parties=3, kind="shift", random_state=0)
>>> g = synthetic.global_objective(parties)
>>> g.n_dims, bool(g.maximum <= f.maximum)
(1, True)
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats
from scipy.optimize import minimize

from ..party import BaseParty, Unit
from ..space import SearchSpace

__all__ = [
    "Objective", "FunctionParty", "OBJECTIVES", "garland", "double_sine", "himmelblau", "rastrigin",
    "ackley", "sine_product", "make_parties", "global_objective", "mean_objective", "gp_sample_parties",
]


class Objective:
    """A function on the unit cube to maximise, with its true maximum.

    Parameters
    ----------
    func : callable
        ``func(X)`` with ``X`` of shape (n, n_dims) in the unit cube returns shape (n,).
    n_dims : int
    name : str
    maximizer : array-like of shape (n_dims,) or None, default=None
        A maximiser known in closed form; None: computed numerically when first asked.
    parts : sequence of callable or None, default=None
        For an additively separable function, ``func(X) = sum_i parts[i](X[:, i])``: the maximum
        is then found one dimension at a time (exact in any dimension, e.g. Rastrigin 10-D).

    Attributes
    ----------
    maximum : float
        ``max_x f(x)`` over the unit cube.
    maximizer : ndarray of shape (n_dims,)
        A point where it is attained.
    """

    def __init__(self, func: Callable, n_dims: int, name: str, *, maximizer=None, parts=None):
        self.func = func
        self.n_dims = int(n_dims)
        self.name = name
        self.parts = None if parts is None else tuple(parts)
        self._known = None if maximizer is None else np.asarray(maximizer, dtype=float).reshape(self.n_dims)
        # set by _local(): f(x) = base(clip(x - shift, 0, 1)) + offset, so that a mean of such
        # objectives with one base and one shift stays one cheap evaluation (global_objective)
        self._form: tuple | None = None

    def __call__(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        if X.ndim == 1:
            X = X.reshape(-1, self.n_dims)
        if X.ndim != 2 or X.shape[1] != self.n_dims:
            raise ValueError(f"{self.name} takes points of shape (n, {self.n_dims}). Got {X.shape}.")
        return np.asarray(self.func(X), dtype=float).reshape(len(X))

    @functools.cached_property
    def maximizer(self) -> np.ndarray:
        if self._known is not None:
            return self._known.copy()
        if self.parts is not None:
            return np.array([_argmax_1d(p) for p in self.parts])
        return _argmax_nd(self, self.n_dims)

    @functools.cached_property
    def maximum(self) -> float:
        return float(self(self.maximizer)[0])

    def __repr__(self) -> str:
        return f"Objective({self.name!r}, n_dims={self.n_dims})"


# --------------------------------------------------------------------------- numerical maximisation
def _argmax_1d(func: Callable, n_grid: int = 200_001, n_refine: int = 5) -> float:
    """Maximiser of a vectorised 1-D ``func`` on [0, 1]: a dense grid, then each of the best
    ``n_refine`` grid peaks refined by repeated zooming (a 101-point grid over the bracket, which
    shrinks 50-fold per step, down to machine precision). Unlike derivative or parabolic methods,
    zooming also pins cusp maxima such as Garland's."""
    x = np.linspace(0.0, 1.0, n_grid)
    y = func(x)
    peaks = np.flatnonzero((y >= np.roll(y, 1)) & (y >= np.roll(y, -1)))
    best = peaks[np.argsort(y[peaks])[::-1][:n_refine]] if len(peaks) else [int(np.argmax(y))]
    cands = []
    for i in best:
        center, half = x[i], 1.0 / (n_grid - 1)
        while half > 1e-16:
            t = np.clip(np.linspace(center - half, center + half, 101), 0.0, 1.0)
            center, half = t[np.argmax(func(t))], half / 50
        cands.append((float(func(np.array([center]))[0]), float(center)))
    return max(cands)[1]


def _argmax_nd(f: Objective, d: int, n_refine: int = 5) -> np.ndarray:
    """Maximiser of ``f`` on [0, 1]^d: a grid for d <= 2 (a 2^16-point random sample above, so
    only approximate), refined by bounded Nelder-Mead from the best points."""
    if d == 1:
        return np.array([_argmax_1d(lambda t: f(t[:, None]))])
    if d == 2:
        g = np.linspace(0.0, 1.0, 1001)
        X = np.stack(np.meshgrid(g, g, indexing="ij"), axis=-1).reshape(-1, 2)
    else:
        X = np.random.default_rng(0).random((1 << 16, d))
    y = f(X)
    starts = X[np.argsort(y)[::-1][:n_refine]]
    best_x, best_y = starts[0], float(y.max())
    for x0 in starts:
        res = minimize(lambda x: -f(x)[0], x0, method="Nelder-Mead", bounds=[(0.0, 1.0)] * d,
                       options={"xatol": 1e-12, "fatol": 1e-14, "maxiter": 4000})
        if -res.fun > best_y:
            best_x, best_y = np.clip(res.x, 0.0, 1.0), -float(res.fun)
    return np.asarray(best_x, dtype=float)


def _to_domain(X: np.ndarray, low: float, high: float) -> np.ndarray:
    return low + (high - low) * X


# --------------------------------------------------------------------------- base objectives
def garland() -> Objective:
    """Garland, ``f(x) = x (1 - x) (4 - sqrt|sin(60 x)|)`` on [0, 1] (Fed-PNE App. E.2).

    Already in [0, 1]; not rescaled. Its maximum is not 1: near a zero of ``sin(60 x)`` the
    ``sqrt`` cusp dominates, so the local maxima are the zeros ``k pi / 60`` and the largest is
    ``x = pi / 6`` with ``f = 4 (pi/6)(1 - pi/6) ~ 0.997772`` (a 10^-6 grid reports ~0.99686,
    because the cusp is so sharp).
    """
    return Objective(lambda X: X[:, 0] * (1 - X[:, 0]) * (4 - np.sqrt(np.abs(np.sin(60 * X[:, 0])))),
                     1, "garland", maximizer=[np.pi / 6])


def double_sine(rho1: float = 0.3, rho2: float = 0.8) -> Objective:
    """DoubleSine on [0, 1] (Fed-PNE App. E.2, after Grill et al. 2015), normalised to [0, 1].

    With ``u = |2x - 1|``, ``a_i = -log2(rho_i)`` and ``s(t) = (sin(2 pi t) + 1) / 2``:
    ``g(x) = s(log2(u) / 2) (u^a2 - u^a1) - u^a2``, ``g(1/2) = 0``. Since ``0 <= s <= 1`` and
    ``u^a2 >= u^a1``, ``-1 <= g <= -u^a1 <= 0``: the maximum 0 is at ``x = 1/2`` and the minimum
    -1 at ``x`` in {0, 1}; ``f = g + 1``. (App. E.2 prints the last exponent as ``a1``; with it the
    function would exceed its envelope, so we follow the envelope form of Grill et al.)
    """
    a1, a2 = -np.log2(rho1), -np.log2(rho2)

    def f(X):
        u = np.abs(2 * X[:, 0] - 1)
        s = (np.sin(2 * np.pi * np.log2(np.where(u > 0, u, 1.0)) / 2) + 1) / 2
        g = np.where(u > 0, s * (u ** a2 - u ** a1) - u ** a2, 0.0)
        return g + 1.0

    return Objective(f, 1, "double_sine", maximizer=[0.5])


_HIMMELBLAU_MAX = 890.0  # max of g over [-5, 5]^2, at the corner (5, 5) (tested on a grid)


def himmelblau() -> Objective:
    """Himmelblau on [-5, 5]^2, maximised: ``f = 1 - g / 890``,
    ``g = (x^2 + y - 11)^2 + (x + y^2 - 7)^2`` (PF-PNE App. C.2). ``g`` is 0 at its four minima
    (one at (3, 2), unit point (0.8, 0.7)) and 890 at (5, 5), its maximum on the square."""

    def f(X):
        x, y = _to_domain(X[:, 0], -5, 5), _to_domain(X[:, 1], -5, 5)
        return 1.0 - ((x ** 2 + y - 11) ** 2 + (x + y ** 2 - 7) ** 2) / _HIMMELBLAU_MAX

    return Objective(f, 2, "himmelblau", maximizer=[0.8, 0.7])


def _rastrigin_term(x: np.ndarray) -> np.ndarray:
    return x ** 2 - 10 * np.cos(2 * np.pi * x) + 10


@functools.cache
def _rastrigin_term_max() -> float:
    # the term is even; its maximum on [-1, 1] is near |x| = 1/2 (found numerically)
    return float(_rastrigin_term(_to_domain(np.array([_argmax_1d(lambda t: _rastrigin_term(_to_domain(t, -1, 1)))]), -1, 1))[0])


def rastrigin(n_dims: int = 10) -> Objective:
    """Rastrigin on [-1, 1]^d (any d), maximised: ``f = 1 - sum_i r(x_i) / (d max r)`` with
    ``r(x) = x^2 - 10 cos(2 pi x) + 10`` (PF-PNE App. C.2); maximum 1 at the centre.
    Separable, so shifted versions keep an exact maximum in any dimension."""
    scale = n_dims * _rastrigin_term_max()
    parts = [lambda t: 1.0 / n_dims - _rastrigin_term(_to_domain(t, -1, 1)) / scale] * n_dims
    return Objective(lambda X: 1.0 - _rastrigin_term(_to_domain(X, -1, 1)).sum(axis=1) / scale,
                     n_dims, f"rastrigin{n_dims}", maximizer=np.full(n_dims, 0.5), parts=parts)


def _ackley_raw(X: np.ndarray) -> np.ndarray:
    x = _to_domain(X, -1, 1)
    return (-20 * np.exp(-0.2 * np.sqrt(np.mean(x ** 2, axis=1))) - np.exp(np.mean(np.cos(2 * np.pi * x), axis=1))
            + 20 + np.e)


@functools.cache
def _ackley_max(n_dims: int) -> float:
    raw = Objective(_ackley_raw, n_dims, "ackley_raw")
    return raw.maximum


def ackley(n_dims: int = 2) -> Objective:
    """Ackley on [-1, 1]^d, maximised: ``f = 1 - g / max g`` with the usual
    ``g = -20 exp(-0.2 sqrt(mean x^2)) - exp(mean cos(2 pi x)) + 20 + e`` (PF-PNE App. C.3);
    maximum 1 at the centre. ``max g`` on the box is computed numerically (exact on a grid for
    d <= 2, approximate by random search and refinement above)."""
    scale = _ackley_max(n_dims)
    return Objective(lambda X: 1.0 - _ackley_raw(X) / scale, n_dims, f"ackley{n_dims}",
                     maximizer=np.full(n_dims, 0.5))


def sine_product() -> Objective:
    """``f(x) = (sin(13 x) sin(27 x) / 2 + 1) / 2`` on [0, 1], the first test function of the
    level-order bandit paper (003, Sec. 6); values in [1/4, 3/4], not rescaled."""
    return Objective(lambda X: 0.5 * (np.sin(13 * X[:, 0]) * np.sin(27 * X[:, 0]) / 2 + 1), 1, "sine_product")


OBJECTIVES: dict[str, Callable[..., Objective]] = {
    "garland": garland, "double_sine": double_sine, "himmelblau": himmelblau, "rastrigin": rastrigin,
    "ackley": ackley, "sine_product": sine_product,
}


# --------------------------------------------------------------------------- heterogeneity
def _local(base: Objective, shift: np.ndarray, offset: float, name: str) -> Objective:
    """``x -> base(clip(x - shift, 0, 1)) + offset``.

    Clipping keeps a shifted objective defined (and in range) on the whole cube; when
    ``x* + shift`` stays in the cube the maximiser moves with the shift and the maximum is
    ``f* + offset``, otherwise the maximum is computed numerically.
    """
    shift = np.asarray(shift, dtype=float)
    moved = base.maximizer + shift
    known = moved if np.all((moved >= 0) & (moved <= 1)) else None
    parts = None
    if base.parts is not None:
        parts = [(lambda p, s: (lambda t: p(np.clip(t - s, 0.0, 1.0))))(p, s) for p, s in zip(base.parts, shift)]
        parts[0] = (lambda p0: (lambda t: p0(t) + offset))(parts[0])
    obj = Objective(lambda X: base(np.clip(X - shift, 0.0, 1.0)) + offset, base.n_dims, name,
                    maximizer=known, parts=parts)
    obj._form = (base, shift, offset)
    return obj


def mean_objective(objectives: Sequence[Objective], name: str = "global") -> Objective:
    """The mean of ``objectives`` (one evaluation when they differ only by offsets), with its
    own maximum."""
    forms = [o._form for o in objectives]
    if all(fm is not None for fm in forms):
        base, shift = forms[0][0], forms[0][1]
        if all(fm[0] is base and np.array_equal(fm[1], shift) for fm in forms):
            return _local(base, shift, float(np.mean([fm[2] for fm in forms])), name)
    objectives = list(objectives)
    first = objectives[0].maximizer if all(o._known is not None for o in objectives) else None
    # a point maximising every objective maximises their mean
    known = first if first is not None and all(np.array_equal(o.maximizer, first) for o in objectives) else None
    parts = None
    if all(o.parts is not None for o in objectives):
        parts = [(lambda ps: (lambda t: np.mean([p(t) for p in ps], axis=0)))([o.parts[i] for o in objectives])
                 for i in range(objectives[0].n_dims)]
    return Objective(lambda X: np.mean([o(X) for o in objectives], axis=0), objectives[0].n_dims, name,
                     maximizer=known, parts=parts)


# --------------------------------------------------------------------------- parties
class FunctionParty(BaseParty):
    """A simulated party whose local objective is a synthetic function.

    It answers every task a data party answers (an evaluation, FLoRA's local search...) through
    the same handlers: ``score = f_m(x) + observation noise`` (one unit of work per task,
    evaluated vectorised), plus a DP task's own ``noise_std`` (DP-Fed-PNE App. D.2).

    Parameters
    ----------
    objective : Objective
        The party's noise-free local objective ``f_m``.
    noise_std : float, default=0.0
        Standard deviation of the Gaussian observation noise of each evaluation.
    party_id : hashable, default=None
    random_state : int or None, default=None
        Seed of the observation noise.

    Attributes
    ----------
    objective : Objective
    space : SearchSpace
        The unit cube (one uniform dimension per coordinate).
    n_samples : int
        1 (a synthetic party has no samples; weighted and plain means coincide).

    Examples
    --------
    >>> import numpy as np
    >>> from fedsearch.messages import EvaluateTask
    >>> from fedsearch.research.synthetic import FunctionParty, garland
    >>> party = FunctionParty(garland(), party_id="a")
    >>> round(float(party.handle(EvaluateTask(np.array([[np.pi / 6]]))).scores[0]), 6)
    0.997772
    """

    n_samples = 1
    metric = "score"
    error_score = np.nan
    return_train_score = False
    reports_metrics = False

    def __init__(self, objective: Objective, *, noise_std: float = 0.0, party_id=None, random_state=None):
        super().__init__()
        self.objective = objective
        self.noise_std = float(noise_std)
        self.party_id = party_id
        self.space = SearchSpace({f"x{i}": stats.uniform(0.0, 1.0) for i in range(objective.n_dims)})
        self.reset(random_state)

    @property
    def n_dims(self) -> int:
        return self.objective.n_dims

    def reset(self, random_state=None) -> None:
        """Restart the observation-noise stream from ``random_state``."""
        self.random_state = random_state
        self._rng = np.random.default_rng(random_state)

    def evaluation_units(self, points) -> list[Unit]:
        return [Unit(self.objective, (points,))]

    def scores(self, points, outputs) -> np.ndarray:
        values = np.asarray(outputs[0], dtype=float) if len(points) else np.empty(0)
        if self.noise_std > 0:
            values = values + self._rng.normal(0.0, self.noise_std, size=len(values))
        return values

    def summarise(self, points, outputs) -> list:
        return [{"test": {self.metric: float(v)}, "error": None} for v in self.scores(points, outputs)]

    def evaluator(self, seed=None) -> "_NoisyFunction":
        return _NoisyFunction(self.objective, self.noise_std, np.random.default_rng([0 if seed is None else seed, 7]))

    def __repr__(self) -> str:
        return f"FunctionParty({self.party_id!r}, {self.objective.name})"


@dataclass
class _NoisyFunction:
    """One point at a time, with its own noise stream (for work inside one unit); ``scores``
    evaluates a batch of points at once (vectorised)."""

    objective: Objective
    noise_std: float
    rng: np.random.Generator

    def __call__(self, point) -> dict:
        value = float(self.objective(np.asarray(point)[None, :])[0])
        if self.noise_std > 0:
            value += float(self.rng.normal(0.0, self.noise_std))
        return {"test": {"score": value}, "std": None, "train": None, "error": None,
                "fit_time": 0.0, "score_time": 0.0}

    def scores(self, points) -> np.ndarray:
        values = np.asarray(self.objective(np.asarray(points)), dtype=float)
        if self.noise_std > 0:
            values = values + self.rng.normal(0.0, self.noise_std, size=len(values))
        return values


KINDS = ("perturb", "shift")


def make_parties(objective: Objective, n_parties: int, kind: str = "perturb", *, scale: float | None = None,
                 noise_std: float = 0.1, random_state=None) -> list[FunctionParty]:
    """A federation of synthetic parties with the papers' heterogeneity.

    Parameters
    ----------
    objective : Objective
        The base function ``f``.
    n_parties : int
    kind : {"perturb", "shift"}, default="perturb"
        ``"perturb"``: Fed-PNE App. E.2, a consistent random perturbation, i.e. one Gaussian
        offset per party drawn once, ``f_m = f + e_m``, ``e_m ~ N(0, scale^2)``; the offsets are
        centred (``sum_m e_m = 0``) so that the global objective is exactly ``f``, as the paper
        defines it (with one party, ``f_1 = f``). Local rewards then leave [0, 1]; the offsets do
        not move any maximiser. ``"shift"``: PF-PNE App. C.2, a random shift on each dimension,
        ``f_m(x) = f(clip(x - s_m, 0, 1))``, ``s_m ~ N(0, scale^2 I)`` in unit-cube coordinates:
        the local maximisers differ, the values stay in [0, 1].
    scale : float or None, default=None
        Standard deviation of the perturbation (default 1.0, the paper's unit normal) or of each
        dimension's shift (default 0.05, 5% of the range; the paper does not state it).
    noise_std : float, default=0.1
        Standard deviation of the Gaussian observation noise of each evaluation.
    random_state : int or None, default=None
        Seeds the heterogeneity and each party's noise stream.

    Returns
    -------
    list of FunctionParty
        ``parties[m].objective`` is ``f_m``; :func:`global_objective` gives their mean.

    Examples
    --------
    >>> from fedsearch.research.synthetic import make_parties, double_sine, global_objective
    >>> parties = make_parties(double_sine(), 4, kind="perturb", random_state=0)
    >>> round(global_objective(parties).maximum, 12)
    1.0
    """
    if kind not in KINDS:
        raise ValueError(f"The 'kind' parameter of make_parties must be a str among {list(KINDS)}. Got {kind!r} instead.")
    if int(n_parties) != n_parties or n_parties < 1:
        raise ValueError(f"The 'n_parties' parameter of make_parties must be an int in the range [1, inf). "
                         f"Got {n_parties!r} instead.")
    seeds = np.random.SeedSequence(random_state).spawn(n_parties + 1)
    rng = np.random.default_rng(seeds[0])
    d = objective.n_dims
    if kind == "perturb":
        offsets = rng.normal(0.0, 1.0 if scale is None else scale, size=n_parties)
        offsets -= offsets.mean()
        shifts = np.zeros((n_parties, d))
    else:
        offsets = np.zeros(n_parties)
        shifts = rng.normal(0.0, 0.05 if scale is None else scale, size=(n_parties, d))
    return [FunctionParty(_local(objective, shifts[m], float(offsets[m]), f"{objective.name}[{kind} {m}]"),
                          noise_std=noise_std, party_id=m, random_state=seeds[m + 1])
            for m in range(n_parties)]


def global_objective(parties: Sequence[FunctionParty]) -> Objective:
    """The federation's objective: the mean of the parties' local objectives (Fed-PNE Sec. 2.1),
    with its own maximum."""
    return mean_objective([p.objective for p in parties])


# --------------------------------------------------------------------------- DP-FTS-DE's objective
@dataclass(frozen=True)
class _GridFunction:
    """A function known on an equally spaced grid of [0, 1], read at the nearest grid point."""

    values: np.ndarray

    def __call__(self, X) -> np.ndarray:
        index = np.rint(np.asarray(X)[:, 0] * (len(self.values) - 1)).astype(int)
        return self.values[index]


def gp_sample_parties(n_parties: int = 200, *, n_grid: int = 1000, length_scale: float = 0.03,
                      perturbation: float = 0.02, noise_std: float = 0.1, random_state=None) -> list[FunctionParty]:
    """The synthetic federation of DP-FTS-DE (002_*.txt, §5.1 and App. B.1.1).

    One function ``f`` is drawn from a GP with an SE kernel (length scale 0.03) on an equally
    spaced grid of ``n_grid`` points of [0, 1] and normalised to [0, 1]. Party ``n`` gets
    ``f_n(x) = f(x) + d``, with ``d = +perturbation`` or ``-perturbation`` with probability 1/2,
    drawn independently for every grid point and every party. Observations carry Gaussian noise
    (variance 0.01 in the paper: ``noise_std=0.1``). The paper's domain is the grid itself; here
    a point of [0, 1] reads its nearest grid point.

    Examples
    --------
    >>> from fedsearch.research.synthetic import gp_sample_parties
    >>> parties = gp_sample_parties(3, random_state=0)
    >>> base = parties[0].objective.func.values - parties[1].objective.func.values
    >>> sorted(set(np.round(base, 2).tolist()))
    [-0.04, 0.0, 0.04]
    """
    rng = np.random.default_rng(random_state)
    grid = np.linspace(0.0, 1.0, n_grid)
    K = np.exp(-0.5 * (grid[:, None] - grid[None, :]) ** 2 / length_scale**2)
    f = rng.multivariate_normal(np.zeros(n_grid), K, method="eigh")
    f = (f - f.min()) / (f.max() - f.min())
    seeds = np.random.SeedSequence(rng.integers(2**63)).spawn(n_parties)
    parties = []
    for n in range(n_parties):
        values = f + perturbation * rng.choice([-1.0, 1.0], size=n_grid)
        best = grid[int(np.argmax(values))]
        parties.append(FunctionParty(Objective(_GridFunction(values), 1, f"gp-sample[{n}]", maximizer=[best]),
                                     noise_std=noise_std, party_id=n, random_state=seeds[n]))
    return parties
