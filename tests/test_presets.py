"""The search spaces and single-shot baselines of FLoRA App. D.2."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import cross_val_score

from fedsearch import presets
from fedsearch.searchcv._inputs import check_estimator_params
from fedsearch.space import SearchSpace


def _bounds(space):
    low, high = space.to_params(np.zeros(space.n_dims)), space.to_params(np.ones(space.n_dims))
    return {k: (low[k], high[k]) for k in low}


def test_hgb_space_and_default():
    estimator, space, default = presets.get("hgb")
    assert type(estimator).__name__ == "HistGradientBoostingClassifier"
    b = _bounds(space)
    assert b["max_iter"] == (10, 200) and b["min_samples_leaf"] == (1, 40)
    assert b["learning_rate"] == pytest.approx((1e-3, 1.0))
    assert b["l2_regularization"] == pytest.approx((1e-4, 1.0))
    # log scale: the middle of the cube is the geometric mean
    assert space.to_params(np.full(4, 0.5))["learning_rate"] == pytest.approx(10 ** -1.5)
    # the paper's "12_regularization": 0 is l2_regularization = 0, scikit-learn's default
    assert default == {"max_iter": 100, "learning_rate": 0.1, "min_samples_leaf": 20, "l2_regularization": 0.0}
    assert not space.contains(default)  # 0 lies outside the log range; only used via set_params
    defaults = type(estimator)().get_params()
    assert all(defaults[k] == v for k, v in default.items())


def test_svc_space_and_default():
    estimator, space, default = presets.get("svc")
    assert estimator.kernel == "rbf" and estimator.class_weight == "balanced"  # the paper's code
    b = _bounds(space)
    assert b["C"] == pytest.approx((0.01, 1000.0)) and b["gamma"] == pytest.approx((1e-5, 10.0))
    assert b["tol"] == pytest.approx((1e-5, 1e-1))
    assert default == {"C": 1.0, "gamma": 0.1, "tol": 1e-3} and space.contains(default)


def test_mlp_space_default_and_fixed_settings():
    estimator, space, default = presets.get("mlp")
    b = _bounds(space)
    assert b["hidden_layer_sizes"] == (50, 200)
    assert b["alpha"] == pytest.approx((1e-5, 10.0)) and b["learning_rate_init"] == pytest.approx((1e-5, 0.1))
    assert default == {"hidden_layer_sizes": 100, "alpha": 1e-4, "learning_rate_init": 1e-3}
    fixed = dict(solver="adam", activation="relu", early_stopping=True, shuffle=True, batch_size="auto",
                 tol=1e-4, validation_fraction=0.1, beta_1=0.9, beta_2=0.999, epsilon=1e-8)
    params = estimator.get_params()
    assert {k: params[k] for k in fixed} == fixed
    assert params["random_state"] == 5489  # the paper's code


@pytest.mark.parametrize("scaled", [False, True, "minmax"])
@pytest.mark.parametrize("name", ["hgb", "svc", "mlp"])
def test_default_and_space_points_are_accepted_by_the_estimator(name, scaled, cancer):
    estimator, space, default = presets.get(name, scaled=scaled)
    X, y = cancer
    point = space.to_params(np.full(space.n_dims, 0.2))
    for params in (default, point):
        est = clone(estimator).set_params(**params)
        assert {k: est.get_params()[k] for k in params} == params
        # the parameter validation fit runs first accepts every value (raises otherwise)
        check_estimator_params(estimator, SearchSpace({k: [v] for k, v in params.items()}), "the preset")
    check_estimator_params(estimator, space, "the preset")  # every listed value, every median
    if name == "hgb":  # the cheapest to fit for real
        est = clone(estimator).set_params(**point)
        est.set_params(**{k: 10 for k in est.get_params() if k.endswith("max_iter")}).fit(X, y)
        assert est.predict(X).shape == y.shape


def test_scaled_preset_standardises_inside_each_fit():
    X, y = load_breast_cancer(return_X_y=True)  # raw: feature scales from 1e-3 to 1e3
    raw, _, default = presets.get("svc")
    scaled, space, scaled_default = presets.get("svc", scaled=True)
    assert scaled_default == {f"svc__{k}": v for k, v in default.items()}
    assert space.param_names == ["svc__C", "svc__gamma", "svc__tol"]
    # the RBF baseline on raw features of unequal scales barely beats the majority class (0.63);
    # standardised (inside each fold), it learns
    raw_acc = cross_val_score(clone(raw).set_params(**default), X, y, cv=3).mean()
    scaled_acc = cross_val_score(clone(scaled).set_params(**scaled_default), X, y, cv=3).mean()
    assert raw_acc < 0.7 and scaled_acc > 0.9


def test_presets_are_fresh_and_names():
    assert presets.names() == ["hgb", "mlp", "svc"]
    a, b = presets.get("hgb"), presets.get("hgb")
    assert a.estimator is not b.estimator and a.default is not b.default
    with pytest.raises(ValueError, match="Unknown preset 'xgb'"):
        presets.get("xgb")


def test_minmax_preset_scales_inside_each_fit_and_bad_scalers_are_refused():
    X, y = load_breast_cancer(return_X_y=True)
    estimator, space, default = presets.get("svc", scaled="minmax")
    assert type(estimator.steps[0][1]).__name__ == "MinMaxScaler" and space.param_names[0] == "svc__C"
    assert presets.get("svc", scaled=True).estimator.steps[0][0] == "standardscaler"
    assert cross_val_score(clone(estimator).set_params(**default), X, y, cv=3).mean() > 0.9
    with pytest.raises(ValueError, match=r"The 'scaled' parameter of presets.get must be a bool or one of "
                                         r"\{'minmax', 'standard'\}. Got 'robust' instead."):
        presets.get("svc", scaled="robust")
