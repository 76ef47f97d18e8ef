import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from scipy.stats import loguniform, randint, uniform

from fedsearch import SearchSpace

MIXED = {
    "C": loguniform(1e-3, 1e3),
    "degree": randint(1, 6),
    "tol": uniform(0.1, 0.4),
    "kernel": ["rbf", "poly", "linear"],
    "shrinking": [True, False],
    "class_weight": [None, "balanced"],
}
API = {
    "max_iter": {"type": "int", "space": "linear", "range": (10, 200)},
    "learning_rate": {"type": "real", "space": "log", "range": (1e-3, 1.0)},
    "leaves": {"type": "int", "space": "log", "range": (2, 256)},
    "loss": {"type": "cat", "values": ["log_loss", "hinge"]},
    "early": {"type": "bool"},
}
unit_points = st.lists(st.floats(0.0, 1.0), min_size=6, max_size=6)


@settings(max_examples=200, deadline=None)
@given(unit_points)
def test_params_round_trip_exactly(u):
    space = SearchSpace(MIXED)
    params = space.to_params(u)
    assert space.contains(params)
    again = space.to_params(space.to_unit(params))
    assert again["degree"] == params["degree"] and isinstance(again["degree"], int)
    for name in ("kernel", "shrinking", "class_weight"):
        assert again[name] is params[name] or again[name] == params[name]
    assert again["C"] == pytest.approx(params["C"], rel=1e-9)
    assert again["tol"] == pytest.approx(params["tol"], rel=1e-9)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=5, max_size=5))
def test_api_config_round_trip(u):
    space = SearchSpace.from_api_config(API)
    params = space.to_params(u)
    assert 10 <= params["max_iter"] <= 200 and isinstance(params["max_iter"], int)
    assert 2 <= params["leaves"] <= 256 and 1e-3 <= params["learning_rate"] <= 1.0
    assert space.to_params(space.to_unit(params)) == pytest.approx(params)
    # the canonical point is a fixed point: canonical(canonical(u)) == canonical(u)
    c = space.canonical(u)
    np.testing.assert_allclose(space.canonical(c), c, atol=1e-12)


@pytest.mark.parametrize("dist", [loguniform(1e-2, 1e2), uniform(-1, 3), stats.norm(2, 0.5)])
def test_uniform_cube_points_follow_the_distribution(dist):
    space = SearchSpace({"a": dist})
    u = np.random.default_rng(0).uniform(size=(2000, 1))
    values = [space.to_params(p)["a"] for p in u]
    assert stats.kstest(values, dist.cdf).pvalue > 0.01


def test_discrete_distribution_frequencies_and_bins():
    space = SearchSpace({"k": randint(1, 5), "c": ["a", "b", "c", "d"]})
    u = np.random.default_rng(1).uniform(size=(4000, 2))
    ks = np.array([space.to_params(p)["k"] for p in u])
    cs = np.array([space.to_params(p)["c"] for p in u])
    for value in (1, 2, 3, 4):
        assert abs(np.mean(ks == value) - 0.25) < 0.03
    for value in "abcd":
        assert abs(np.mean(cs == value) - 0.25) < 0.03
    # a list of k values cuts [0, 1] into k equal bins, whose centres are the unit coordinates
    assert space.to_unit({"k": 1, "c": "c"})[1] == pytest.approx(0.625)
    assert space.to_params([0.0, 0.2499])["c"] == "a" and space.to_params([1.0, 0.25])["c"] == "b"


def test_log_scale_maps_midpoint_to_geometric_mean():
    space = SearchSpace.from_api_config({"C": {"type": "real", "space": "log", "range": (0.01, 1000.0)}})
    assert space.to_params([0.5])["C"] == pytest.approx(np.sqrt(0.01 * 1000.0))
    ints = SearchSpace.from_api_config({"h": {"type": "int", "space": "linear", "range": (50, 200)}})
    # 151 integers in equal bins: u = 0 -> 50, u = 1 -> 200, the bin centre of 125 maps back
    assert ints.to_params([0.0])["h"] == 50 and ints.to_params([1.0])["h"] == 200
    assert ints.to_params(ints.to_unit({"h": 125}))["h"] == 125


def test_list_of_dicts_is_a_union_of_subspaces():
    space = SearchSpace([{"kernel": ["linear"], "C": [1, 10]},
                         {"kernel": ["rbf"], "C": [1, 10], "gamma": [0.1, 1.0]}])
    assert space.n_dims == 1 + 2 + 3
    grid = [space.to_params(p) for p in space.grid()]
    assert len(grid) == 2 + 4
    assert {"kernel": "rbf", "C": 10, "gamma": 0.1} in grid
    assert all(set(p) in ({"kernel", "C"}, {"kernel", "C", "gamma"}) for p in grid)
    for p in grid:
        assert space.to_params(space.to_unit(p)) == p


def test_pipeline_names_and_object_values():
    from sklearn.preprocessing import MinMaxScaler, StandardScaler

    scalers = [StandardScaler(), MinMaxScaler(), "passthrough"]
    space = SearchSpace({"scaler": scalers, "svc__C": [0.1, 1.0]})
    for p in space.grid():
        params = space.to_params(p)
        assert any(params["scaler"] is s for s in scalers)
        assert space.to_params(space.to_unit(params))["scaler"] is params["scaler"]


@pytest.mark.parametrize("spec, error, match", [
    ({}, ValueError, "empty"),
    ([], ValueError, "empty"),
    ({"C": []}, ValueError, "'C' has an empty list"),
    ({"C": object()}, TypeError, "'C' must be a frozen scipy.stats distribution.*lacks rvs, ppf, cdf"),
    ({"C": "rbf"}, TypeError, "'C' must be a list of values or a frozen scipy.stats"),
    ("C", TypeError, "must be a dict or a list of dicts"),
])
def test_bad_spaces_raise_clear_errors(spec, error, match):
    with pytest.raises(error, match=match):
        SearchSpace(spec)


def test_bad_api_config_and_points():
    with pytest.raises(ValueError, match=r"api_config\['x'\]\['type'\] must be one of"):
        SearchSpace.from_api_config({"x": {"type": "float", "range": (0, 1)}})
    space = SearchSpace({"a": [1, 2]})
    with pytest.raises(ValueError, match="unit cube"):
        space.to_params([1.5])
    with pytest.raises(ValueError, match="shape"):
        space.to_params([0.1, 0.2])
    with pytest.raises(ValueError, match="not a configuration"):
        space.to_unit({"a": 3})


@pytest.mark.parametrize("spec", [
    MIXED,
    SearchSpace.from_api_config(API),
    {"a": stats.norm(0, 1), "b": randint(1, 20), "c": [1, "x", None]},
    [{"a": randint(1, 20), "b": [True, False]}, {"c": uniform(2, 3), "k": ["p", "q", "r"]}],
])
def test_vectorised_conversions_equal_the_pointwise_ones_bit_for_bit(spec):
    space = SearchSpace(spec)
    U = np.random.default_rng(0).random((500, space.n_dims))
    U[:5], U[5:10] = 0.0, 1.0  # the ends of every quantile function and bin
    U[10:40] = np.round(U[10:40] * 6) / 6  # bin edges
    pointwise = np.array([space.canonical(u) for u in U])
    assert space.canonical(U).tobytes() == pointwise.tobytes()
    many = space.to_params_many(U)
    for u, params in zip(U, many):
        one = space.to_params(u)
        assert list(params) == list(one)
        assert all(type(params[k]) is type(one[k]) and (params[k] == one[k] or params[k] is one[k])
                   for k in one)


def test_vectorised_conversions_check_their_points():
    space = SearchSpace(MIXED)
    with pytest.raises(ValueError, match=r"shape \(n, 6\)"):
        space.canonical(np.zeros((3, 5)))
    with pytest.raises(ValueError, match="unit cube"):
        space.to_params_many(np.full((2, 6), 1.5))
