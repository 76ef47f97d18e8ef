"""The parties' local searches: the ask/tell interface, determinism, budget use, failures."""

import importlib.util
import sys

import numpy as np
import pytest
from scipy.stats import uniform

from fedsearch import SearchSpace
from fedsearch.algorithms.flora.local_search import (
    BayesianLocalSearch, RandomLocalSearch, TPELocalSearch, local_search_methods, make_local_search,
    register_local_search,
)

needs_hyperopt = pytest.mark.skipif(
    importlib.util.find_spec("hyperopt") is None,
    reason="the optional extra 'tpe' (hyperopt) is not installed")

SPACE2 = SearchSpace({"a": uniform(0, 1), "b": uniform(0, 1)})


def _run(searcher, f, n):
    points, scores = [], []
    for _ in range(n):
        u = searcher.ask()
        s = f(u)
        searcher.tell(u, s)
        points.append(u)
        scores.append(s)
    return np.array(points), np.array(scores)


def _bowl(u):
    return -float(np.sum((np.asarray(u) - np.array([0.3, 0.7])) ** 2))


@pytest.mark.parametrize("method", ["random", "bo", pytest.param("tpe", marks=needs_hyperopt)])
def test_same_seed_same_trials(method):
    a, _ = _run(make_local_search(method, SPACE2, seed=1), _bowl, 12)
    b, _ = _run(make_local_search(method, SPACE2, seed=1), _bowl, 12)
    c, _ = _run(make_local_search(method, SPACE2, seed=2), _bowl, 12)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert a.shape == (12, 2) and a.min() >= 0 and a.max() <= 1


@pytest.mark.slow
def test_bo_finds_a_better_point_than_random_search():
    best = {m: np.mean([_run(make_local_search(m, SPACE2, seed=s), _bowl, 25)[1].max() for s in range(2)])
            for m in ("random", "bo")}
    assert best["bo"] > best["random"]
    assert best["bo"] > -0.005  # within ~0.07 of the optimum


def test_bo_does_not_repeat_a_configuration_of_a_discrete_space():
    space = SearchSpace.from_api_config({"k": {"type": "int", "space": "linear", "range": (1, 12)}})
    points, _ = _run(BayesianLocalSearch(space, seed=0, n_initial=3), lambda u: -abs(u[0] - 0.5), 12)
    assert len({space.to_params(u)["k"] for u in points}) == 12  # the 12 configurations, once each


def test_points_are_canonical():
    space = SearchSpace.from_api_config({"k": {"type": "int", "space": "linear", "range": (1, 5)},
                                         "c": {"type": "cat", "values": ["x", "y"]}})
    for searcher in (RandomLocalSearch(space, seed=0), BayesianLocalSearch(space, seed=0, n_initial=2)):
        for u, _ in zip(*_run(searcher, lambda u: float(u.sum()), 6)):
            np.testing.assert_allclose(u, space.canonical(u))


def test_bo_tolerates_failed_evaluations():
    def f(u):
        return np.nan if u[0] > 0.5 else _bowl(u)
    points, scores = _run(BayesianLocalSearch(SPACE2, seed=0, n_initial=4), f, 16)
    assert np.isnan(scores).any() and np.isfinite(scores).any()
    # after the initial design the failing half is mostly avoided
    assert np.mean(points[4:, 0] > 0.5) < 0.5


def test_register_a_local_search():
    class Corner(RandomLocalSearch):
        def ask(self):
            return np.zeros(self.space.n_dims)

    register_local_search("corner-test", Corner)
    assert "corner-test" in local_search_methods()
    np.testing.assert_array_equal(make_local_search("corner-test", SPACE2, 0).ask(), [0, 0])
    with pytest.raises(ValueError, match="Unknown local search 'nope'"):
        make_local_search("nope", SPACE2)
    with pytest.raises(TypeError, match="must be callable"):
        register_local_search("bad", 3)


def test_bo_estimates_the_kernel_every_refit_every_points_on_a_bounded_subset(monkeypatch):
    sizes = []
    fit = BayesianLocalSearch._lbfgs

    def counting(self, obj_func, theta, bounds):
        sizes.append(len(self._estimation_rows))
        return fit(self, obj_func, theta, bounds)

    monkeypatch.setattr(BayesianLocalSearch, "_lbfgs", counting)
    searcher = BayesianLocalSearch(SPACE2, seed=0, n_initial=10, refit_every=5, max_estimation_points=12)
    _run(searcher, _bowl, 30)
    # asks at 10..29 points told: estimated at 10, 15, 20, 25, on at most 12 of them
    assert sizes == [10, 12, 12, 12]


@needs_hyperopt
def test_tpe_finds_the_optimum_and_tolerates_failures():
    points, scores = _run(TPELocalSearch(SPACE2, seed=0, n_startup=8),
                          lambda u: np.nan if u[0] > 0.8 else _bowl(u), 40)
    assert np.isnan(scores).any()
    assert np.nanmax(scores) > -0.01
    for u in points:
        np.testing.assert_array_equal(u, SPACE2.canonical(u))
    with pytest.raises(ValueError, match="was not asked by this searcher"):
        TPELocalSearch(SPACE2, seed=0).tell(np.array([0.5, 0.5]), 1.0)


def test_tpe_without_hyperopt_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "hyperopt", None)
    with pytest.raises(ImportError, match=r"The local search 'tpe' needs the optional package 'hyperopt': "
                                          r"pip install 'fedsearch\[tpe\]'"):
        make_local_search("tpe", SPACE2, seed=0)


def test_random_search_draws_in_blocks_the_points_it_would_draw_one_by_one():
    from scipy.stats import loguniform, randint
    space = SearchSpace([{"C": loguniform(1e-2, 1e2), "k": randint(1, 20)}, {"m": ["a", "b", "c"]}])
    searcher, rng = RandomLocalSearch(space, seed=4), np.random.default_rng(4)
    for _ in range(RandomLocalSearch.block + 5):  # across a block's end
        np.testing.assert_array_equal(searcher.ask(), space.canonical(rng.random(space.n_dims)))
