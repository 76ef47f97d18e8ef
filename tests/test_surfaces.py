"""FLoRA's loss surfaces (004_*.txt §2.2, App. B) on hand-made pairs with known answers."""

import numpy as np
import pytest
from scipy.stats import uniform
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures

from fedsearch import SearchSpace
from fedsearch.algorithms.flora.surfaces import SURFACES, LossSurfaces, supports_uncertainty


def _col(*values):
    return np.array(values, dtype=float)[:, None]


def test_mplm_is_at_least_aplm_everywhere():
    rng = np.random.default_rng(0)
    pairs = [(rng.random((30, 2)), rng.random(30)) for _ in range(3)]
    surfaces = LossSurfaces(random_state=0).fit(pairs)
    assert surfaces.global_.n_estimators == 100  # the paper's RandomForestRegressor(n_estimators=100)
    values = surfaces.predict(np.random.default_rng(1).random((500, 2)))
    assert np.all(values["mplm"] >= values["aplm"] - 1e-12)
    # and APLM / MPLM are exactly the mean / max of the per-party regressors
    local = np.array([f.predict(np.random.default_rng(1).random((500, 2))) for f in surfaces.local_])
    np.testing.assert_allclose(values["aplm"], local.mean(0))
    np.testing.assert_allclose(values["mplm"], local.max(0))


def test_aplm_mplm_are_per_party_not_the_global_model():
    # party A saw only [0, .5] with loss 0, party B only [.5, 1] with loss 1: each local forest is
    # constant, so APLM = 0.5 and MPLM = 1 everywhere, while the global model follows the data
    grid = np.linspace(0, 1, 21)
    pairs = [(grid[grid < 0.5][:, None], np.zeros(10)), (grid[grid > 0.5][:, None], np.ones(10))]
    values = LossSurfaces(random_state=0).fit(pairs).predict(_col(0.1, 0.25, 0.75, 0.9))
    np.testing.assert_allclose(values["aplm"], 0.5)
    np.testing.assert_allclose(values["mplm"], 1.0)
    assert np.all(values["sgm"][:2] < 0.1) and np.all(values["sgm"][2:] > 0.9)


def test_aplm_picks_the_configuration_good_for_all_while_sgm_follows_one_party():
    # §2.2: party 0 found a region near 0.9 that is excellent for it alone (and sampled it a
    # lot); parties 1 and 2 found 0.9 bad. 0.3 is good (loss 0.2) for everybody.
    good_all = np.linspace(0.27, 0.33, 5)
    outlier = (np.concatenate([good_all, np.linspace(0.86, 0.94, 15)]),
               np.concatenate([np.full(5, 0.2), np.full(15, 0.02)]))
    others = (np.concatenate([good_all, np.linspace(0.05, 0.1, 5), np.linspace(0.8, 0.85, 5)]),
              np.concatenate([np.full(5, 0.2), np.full(5, 0.7), np.full(5, 0.9)]))
    pairs = [(x[:, None], y) for x, y in (outlier, others, others)]
    best = LossSurfaces(random_state=0).fit(pairs).minimize()
    assert 0.8 < best["sgm"][0] <= 1.0                   # fooled by party 0's outlier region
    assert 0.2 < best["aplm"][0] < 0.4
    assert 0.2 < best["mplm"][0] < 0.4


@pytest.mark.parametrize("alpha", [0.0, 1.0, 2.5])
def test_sgm_u_is_sgm_plus_alpha_times_the_spread_of_the_trees(alpha):
    rng = np.random.default_rng(0)
    pairs = [(rng.random((20, 2)), rng.random(20)) for _ in range(2)]
    surfaces = LossSurfaces(alpha=alpha, random_state=0).fit(pairs)
    U = rng.random((50, 2))
    trees = np.array([t.predict(U) for t in surfaces.global_.estimators_])
    values = surfaces.predict(U)
    np.testing.assert_allclose(values["sgm"], surfaces.global_.predict(U))
    np.testing.assert_allclose(values["sgm+u"], trees.mean(0) + alpha * trees.std(0))


def test_arg_min_searches_the_whole_space_not_only_the_observed_points():
    # a quadratic regressor extrapolates: the minimum at 0.5 was never observed
    x = np.array([0.05, 0.1, 0.2, 0.8, 0.9, 0.95])
    pairs = [(x[:, None], (x - 0.5) ** 2), (x[:, None], 2 * (x - 0.5) ** 2)]
    quadratic = make_pipeline(PolynomialFeatures(2), LinearRegression())
    surfaces = LossSurfaces(quadratic, random_state=0).fit(pairs)
    assert surfaces.surfaces_ == ("sgm", "aplm", "mplm")  # no uncertainty: no SGM+U
    assert not supports_uncertainty(quadratic)
    for s, point in surfaces.minimize().items():
        assert abs(point[0] - 0.5) < 0.02, s
    with pytest.raises(ValueError, match="not available"):
        surfaces.predict(_col(0.5), ["sgm+u"])


def test_recommendations_are_valid_configurations():
    space = SearchSpace.from_api_config({
        "n": {"type": "int", "space": "linear", "range": (1, 7)},
        "kind": {"type": "cat", "values": ["a", "b", "c"]},
        "lr": {"type": "real", "space": "log", "range": (1e-3, 1.0)},
    })
    rng = np.random.default_rng(0)
    pairs = []
    for _ in range(3):
        U = np.array([space.canonical(u) for u in rng.random((25, 3))])
        pairs.append((U, np.abs(U - 0.4).sum(1)))
    surfaces = LossSurfaces(RandomForestRegressor(n_estimators=20), random_state=0).fit(pairs)
    for s, point in surfaces.minimize(space, n_candidates=500).items():
        np.testing.assert_allclose(point, space.canonical(point), err_msg=s)
        assert space.contains(space.to_params(point))


def test_failed_evaluations_count_as_the_worst_loss():
    x = np.linspace(0, 1, 11)
    losses = np.where(x > 0.7, np.nan, 0.5 - 0.4 * x)  # better and better... until it fails
    surfaces = LossSurfaces(random_state=0).fit([(x[:, None], losses)])
    for point in surfaces.minimize().values():
        assert point[0] <= 0.75


def test_deterministic_for_a_seed_and_minimize_is_pure():
    rng = np.random.default_rng(3)
    pairs = [(rng.random((15, 3)), rng.random(15)) for _ in range(2)]
    forest = RandomForestRegressor(n_estimators=20)
    a = LossSurfaces(forest, random_state=7).fit(pairs)
    b = LossSurfaces(forest, random_state=7).fit(pairs)
    first = a.minimize()
    for s in SURFACES:
        np.testing.assert_array_equal(first[s], b.minimize()[s])
        np.testing.assert_array_equal(first[s], a.minimize()[s])


def test_parties_without_a_finite_loss_are_left_out():
    x = _col(0.1, 0.5, 0.9)
    surfaces = LossSurfaces(random_state=0).fit([(x, np.full(3, np.nan)), (x, _col(1, 2, 3).ravel())])
    assert surfaces.parties_ == [1] and len(surfaces.local_) == 1
    with pytest.raises(ValueError, match="No party uploaded a finite loss"):
        LossSurfaces().fit([(x, np.full(3, np.nan))])


def test_snapping_with_a_continuous_space_changes_nothing():
    space = SearchSpace({"x": uniform(0, 1)})
    x = _col(0.1, 0.4, 0.9)
    surfaces = LossSurfaces(random_state=0).fit([(x, np.array([0.3, 0.1, 0.5]))])
    assert surfaces.minimize(space)["sgm"][0] == surfaces.minimize()["sgm"][0]


def test_ties_are_broken_by_the_parties_mean_loss():
    # party 2 is at chance level everywhere (a flat 0.5, App. D's oil spill can do this): MPLM is
    # 0.5 on the whole cube, and the tie goes to the lowest APLM, near the others' optimum 0.3
    x = np.linspace(0, 1, 21)
    bowl = 0.1 + 0.3 * (x - 0.3) ** 2
    pairs = [(x[::-1, None], bowl[::-1]), (x[:, None], bowl), (x[:, None], np.full(21, 0.5))]
    surfaces = LossSurfaces(RandomForestRegressor(n_estimators=20), random_state=0).fit(pairs)
    np.testing.assert_allclose(surfaces.predict(_col(0.0, 0.3, 1.0))["mplm"], 0.5)
    assert abs(surfaces.minimize()["mplm"][0] - 0.3) < 0.1
