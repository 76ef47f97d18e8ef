"""A party's own hyper-parameter search on the unit cube (FLoRA, 004_*.txt, Algorithm 1 line 3).

Every local searcher follows one small ask/tell interface::

    searcher = make_local_search("bo", space, seed=0)
    for _ in range(n_iter):
        u = searcher.ask()              # a point of [0, 1]^d (canonical when a space is known)
        searcher.tell(u, score)         # the party's objective at u, higher is better, NaN = failed

Three searchers are built in: ``"random"`` (uniform points of the cube, i.e. the user's prior),
``"bo"`` (Gaussian-process Bayesian optimisation with expected improvement) and ``"tpe"``
(hyperopt's tree-structured Parzen estimators, the paper's own local search; optional extra).
Any other searcher is plugged in with :func:`register_local_search`; the task that asks a party to
search only carries the searcher's *name*, so it stays plain serialisable data, and a remote party
registers the same name on its side.
"""

from __future__ import annotations

import warnings
from typing import Callable, Protocol

import numpy as np
from scipy import stats
from scipy.stats import qmc

from ..._optional import import_optional
from ...space import SearchSpace, point_key

__all__ = [
    "LocalSearcher", "RandomLocalSearch", "BayesianLocalSearch", "TPELocalSearch", "make_local_search",
    "register_local_search", "local_search_methods", "DEFAULT_LOCAL_SEARCH",
]


class LocalSearcher(Protocol):
    """The interface of a party's local optimiser (maximises the score).

    A searcher class may declare ``adaptive = False`` when what it asks never depends on what it
    was told (random search). A data party then draws all its trials at once and evaluates them
    as independent units of work, one per fold, as a grid search's: a round of such searches
    keeps every worker busy whatever the number of parties. Absent, a searcher is adaptive and a
    party runs its ask / evaluate / tell loop as one unit.
    """

    def ask(self) -> np.ndarray:
        """The next point of the unit cube to evaluate."""

    def tell(self, point, score: float) -> None:
        """The objective at ``point`` (higher is better; NaN when the evaluation failed)."""


class RandomLocalSearch:
    """Uniform random points of the unit cube (the user's prior through the space's quantiles).

    Points are drawn and snapped to configurations ``block`` at a time (one vectorised
    :meth:`SearchSpace.canonical` call); the sequence is the one of drawing them one by one.

    Parameters
    ----------
    space : SearchSpace
    seed : int or None, default=None

    Examples
    --------
    >>> from fedsearch import SearchSpace
    >>> from scipy.stats import uniform
    >>> searcher = RandomLocalSearch(SearchSpace({"x": uniform(0, 1)}), seed=0)
    >>> u = searcher.ask()
    >>> searcher.tell(u, 0.5)
    >>> u.shape
    (1,)
    """

    adaptive = False  # what it asks does not depend on the scores
    block = 128

    def __init__(self, space: SearchSpace, seed=None):
        self.space = space
        self.rng = np.random.default_rng(seed)
        self._drawn: list[np.ndarray] = []

    def ask(self) -> np.ndarray:
        if not self._drawn:  # rows of one (block, d) draw are the next block draws of d numbers
            self._drawn = list(self.space.canonical(self.rng.random((self.block, self.space.n_dims)))[::-1])
        return self._drawn.pop()

    def tell(self, point, score: float) -> None:
        """Random search ignores the scores."""


class BayesianLocalSearch:
    """Bayesian optimisation on the unit cube: a Gaussian process and expected improvement.

    The first ``n_initial`` points are a Latin hypercube. Afterwards each :meth:`ask` fits a
    Gaussian process (constant x Matern-5/2 with one length scale per coordinate, plus white
    noise, on standardised scores) to every point told so far and returns the maximiser of the
    expected improvement (Jones et al. 1998)

        EI(u) = (mu(u) - y* - xi) Phi(z) + sigma(u) phi(z),   z = (mu(u) - y* - xi) / sigma(u),

    over ``n_candidates`` uniform points plus Gaussian perturbations of the five best points told
    (local refinement, steps of 0.1 and 0.02). Points are snapped to valid configurations
    (:meth:`SearchSpace.canonical`) and a configuration already evaluated is never proposed
    again while a new one is available. Failed evaluations (NaN scores) are modelled as the
    worst score seen, which steers the search away from them.

    The kernel's hyper-parameters (amplitude, length scales, noise) are re-estimated by maximum
    marginal likelihood only every ``refit_every`` new points, warm-started from their last
    estimate, capped at ``max_optimizer_iter`` L-BFGS iterations and on at most
    ``max_estimation_points`` points drawn at random; in between, the GP reuses them, so a fit is
    one Cholesky factorisation. A trial's cost then stays near that of the prediction on the
    candidates (linear in the number of points for a few hundred points) instead of a full
    hyper-parameter search on every point at every ask.

    Parameters
    ----------
    space : SearchSpace
    seed : int or None, default=None
    n_initial : int, default=10
        Space-filling points before the model is used.
    n_candidates : int, default=1000
        Uniform candidates of the acquisition optimiser per :meth:`ask`.
    xi : float, default=0.01
        Exploration margin of the expected improvement, in units of the score's std.
    refit_every : int, default=10
        New points between two estimations of the kernel's hyper-parameters (1: every ask).
    max_optimizer_iter : int, default=50
        L-BFGS iterations of one estimation of the hyper-parameters.
    max_estimation_points : int, default=100
        Points (drawn at random when more were told) the hyper-parameters are estimated on.

    Examples
    --------
    >>> from fedsearch import SearchSpace
    >>> from scipy.stats import uniform
    >>> space = SearchSpace({"x": uniform(0, 1)})
    >>> searcher = BayesianLocalSearch(space, seed=0, n_initial=3)
    >>> for _ in range(12):
    ...     u = searcher.ask()
    ...     searcher.tell(u, -(u[0] - 0.3) ** 2)
    >>> bool(abs(searcher.best_point()[0] - 0.3) < 0.05)
    True
    """

    def __init__(self, space: SearchSpace, seed=None, *, n_initial=10, n_candidates=1000, xi=0.01,
                 refit_every=10, max_optimizer_iter=50, max_estimation_points=100):
        self.space = space
        self.rng = np.random.default_rng(seed)
        self.n_initial = n_initial
        self.n_candidates = n_candidates
        self.xi = xi
        self.refit_every = refit_every
        self.max_optimizer_iter = max_optimizer_iter
        self.max_estimation_points = max_estimation_points
        self._kernel = None  # the last estimated kernel, reused until the next estimation
        self._estimated_at = 0  # how many points it was estimated on
        self._initial = qmc.LatinHypercube(d=space.n_dims, seed=self.rng).random(n_initial)
        self._points: list[np.ndarray] = []
        self._scores: list[float] = []

    def tell(self, point, score: float) -> None:
        self._points.append(np.asarray(point, dtype=float))
        self._scores.append(float(score))

    def best_point(self) -> np.ndarray:
        """The best point told so far."""
        return self._points[int(np.nanargmax(self._scores))].copy()

    def ask(self) -> np.ndarray:
        n = len(self._points)
        scores = np.asarray(self._scores, dtype=float)
        if n < self.n_initial or np.sum(np.isfinite(scores)) < 2:
            u = self._initial[n] if n < self.n_initial else self.rng.random(self.space.n_dims)
            return self._new(np.atleast_2d(u))
        return self._new(self._by_expected_improvement(np.array(self._points), scores))

    # ------------------------------------------------------------------ internals
    def _by_expected_improvement(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Candidates sorted by decreasing expected improvement."""
        from sklearn.gaussian_process import GaussianProcessRegressor
        from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel

        y = np.where(np.isfinite(y), y, np.nanmin(y))  # a failure counts as the worst score seen
        std = y.std()
        z = (y - y.mean()) / (std if std > 0 else 1.0)
        d = X.shape[1]
        estimate = self._kernel is None or len(X) - self._estimated_at >= self.refit_every
        kernel = self._kernel if self._kernel is not None else (
            ConstantKernel(1.0, (1e-2, 1e2)) * Matern(np.full(d, 0.3), (1e-2, 1e1), nu=2.5)
            + WhiteKernel(1e-2, (1e-6, 1e0)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # length scales at their bounds are harmless here
            if estimate:  # on at most max_estimation_points of the points: a bounded cost
                rows = np.arange(len(X))
                if len(X) > self.max_estimation_points:
                    rows = np.sort(self.rng.choice(len(X), self.max_estimation_points, replace=False))
                self._estimation_rows = rows
                self._kernel = GaussianProcessRegressor(kernel, optimizer=self._lbfgs).fit(X[rows], z[rows]).kernel_
                self._estimated_at = len(X)
            gp = GaussianProcessRegressor(self._kernel, optimizer=None).fit(X, z)

        best = X[np.argsort(-z)[:5]]
        local = np.concatenate([
            np.clip(best[:, None, :] + self.rng.normal(0, step, (len(best), 50, d)), 0, 1).reshape(-1, d)
            for step in (0.1, 0.02)
        ])
        cand = np.vstack([self.rng.random((self.n_candidates, d)), local])
        mu, sigma = gp.predict(cand, return_std=True)
        sigma = np.maximum(sigma, 1e-9)
        imp = mu - z.max() - self.xi
        t = imp / sigma
        ei = imp * stats.norm.cdf(t) + sigma * stats.norm.pdf(t)
        return cand[np.argsort(-ei, kind="stable")]

    def _lbfgs(self, obj_func, initial_theta, bounds):
        """Maximum marginal likelihood from the last estimate, at most ``max_optimizer_iter`` steps."""
        from scipy.optimize import minimize

        res = minimize(obj_func, initial_theta, method="L-BFGS-B", jac=True, bounds=bounds,
                       options={"maxiter": self.max_optimizer_iter})
        return res.x, res.fun

    def _new(self, ordered: np.ndarray) -> np.ndarray:
        """The first of ``ordered`` whose configuration was not evaluated yet (canonical)."""
        seen = {tuple(np.round(p, 12)) for p in self._points}
        for c in self.space.canonical(ordered[:50]):
            if tuple(np.round(c, 12)) not in seen:
                return c
        for _ in range(100):  # a small discrete space may be exhausted near the optimum
            c = self.space.canonical(self.rng.random(self.space.n_dims))
            if tuple(np.round(c, 12)) not in seen:
                return c
        return self.space.canonical(ordered[0])


class TPELocalSearch:
    """Tree-structured Parzen estimators (hyperopt's TPE), the paper's own local search.

    The FLoRA paper's parties ran hyperopt's ``tpe.suggest`` with one suggestion per iteration
    (the protocol facts of its published runs, ``flora_paper_runs/README.md``). TPE spreads its
    trials more than the GP-EI searcher: ``n_startup`` random trials, then wide Parzen kernels
    over the good and the bad trials. The wider spread is what the loss surfaces are fitted on,
    so it matters for APLM and MPLM (issue 16). The search runs on the unit cube (one
    ``hp.uniform(0, 1)`` per coordinate), so the user's prior, log scales included, is TPE's
    prior; points are snapped to valid configurations. A failed evaluation is reported to TPE as
    a failure, which it leaves out of both densities.

    Needs the optional package ``hyperopt`` (``pip install 'fedsearch[tpe]'``).

    Parameters
    ----------
    space : SearchSpace
    seed : int or None, default=None
    n_startup : int, default=20
        Random trials before the Parzen estimators are used (hyperopt's ``n_startup_jobs``).

    Examples
    --------
    >>> from fedsearch import SearchSpace
    >>> from scipy.stats import uniform
    >>> searcher = TPELocalSearch(SearchSpace({"x": uniform(0, 1)}), seed=0, n_startup=5)
    >>> for _ in range(30):
    ...     u = searcher.ask()
    ...     searcher.tell(u, -(u[0] - 0.3) ** 2)
    >>> bool(abs(searcher.best_point()[0] - 0.3) < 0.05)
    True
    """

    def __init__(self, space: SearchSpace, seed=None, *, n_startup=20):
        self._hyperopt = hyperopt = import_optional("hyperopt", "tpe", "The local search 'tpe'")
        self.space = space
        self.rng = np.random.default_rng(seed)
        self.n_startup = n_startup
        self._names = [f"u{j}" for j in range(space.n_dims)]
        self._domain = hyperopt.Domain(lambda _: 0.0, {n: hyperopt.hp.uniform(n, 0.0, 1.0) for n in self._names})
        self._trials = hyperopt.Trials()
        self._asked = {}  # point key -> the trial documents waiting for their score
        self._points, self._scores = [], []

    def ask(self) -> np.ndarray:
        ids = self._trials.new_trial_ids(1)
        docs = self._hyperopt.tpe.suggest(ids, self._domain, self._trials, int(self.rng.integers(2**31)),
                                          n_startup_jobs=self.n_startup)
        self._trials.insert_trial_docs(docs)
        self._trials.refresh()
        doc = self._trials._dynamic_trials[-1]
        u = self.space.canonical(np.array([doc["misc"]["vals"][n][0] for n in self._names]))
        self._asked.setdefault(point_key(u), []).append(doc)
        return u

    def tell(self, point, score: float) -> None:
        waiting = self._asked.get(point_key(point))
        if not waiting:
            raise ValueError(f"The point {np.asarray(point).tolist()} was not asked by this searcher.")
        doc = waiting.pop(0)
        doc["state"] = self._hyperopt.JOB_STATE_DONE
        doc["result"] = ({"status": self._hyperopt.STATUS_FAIL} if not np.isfinite(score)
                         else {"status": self._hyperopt.STATUS_OK, "loss": -float(score)})
        self._trials.refresh()
        self._points.append(np.asarray(point, dtype=float))
        self._scores.append(float(score))

    def best_point(self) -> np.ndarray:
        """The best point told so far."""
        return self._points[int(np.nanargmax(self._scores))].copy()


_METHODS: dict[str, Callable] = {"random": RandomLocalSearch, "bo": BayesianLocalSearch, "tpe": TPELocalSearch}

#: FLoRA's default local search (estimator, strategy, task, benchmark): the flora benchmark's
#: low-noise protocol chose it at the paper's budget (issue 16, ``docs/benchmarks.md``).
DEFAULT_LOCAL_SEARCH = "random"


def register_local_search(name: str, factory: Callable) -> None:
    """Make ``factory(space, seed) -> LocalSearcher`` available to parties as ``name``.

    Examples
    --------
    >>> class Centre(RandomLocalSearch):
    ...     def ask(self):
    ...         return self.space.canonical([0.5] * self.space.n_dims)
    >>> register_local_search("centre", Centre)
    >>> "centre" in local_search_methods()
    True
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"A local search name must be a non-empty string. Got {name!r}.")
    if not callable(factory):
        raise TypeError(f"The factory of local search {name!r} must be callable. Got {factory!r}.")
    _METHODS[name] = factory


def local_search_methods() -> list[str]:
    """The names :func:`make_local_search` knows."""
    return sorted(_METHODS)


def local_search_factory(method: str) -> Callable:
    """The factory ``(space, seed) -> LocalSearcher`` registered as ``method``.

    The party resolves the name where it assembles its work, and the factory itself travels with
    the unit of work: a worker process (loky, dask, ray) never looks a name up in a registry that
    only the party's process filled.
    """
    if method not in _METHODS:
        raise ValueError(
            f"Unknown local search {method!r}; known: {local_search_methods()} "
            f"(add one with fedsearch.algorithms.flora.local_search.register_local_search)."
        )
    return _METHODS[method]


def make_local_search(method: str, space: SearchSpace, seed=None) -> LocalSearcher:
    """A fresh searcher ``method`` over ``space`` seeded with ``seed``."""
    return local_search_factory(method)(space, seed)
