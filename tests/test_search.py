
import numpy as np
import pandas as pd
import pytest
from scipy.stats import loguniform, randint
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.exceptions import FitFailedWarning
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

from fedsearch import FederatedGridSearchCV, FederatedRandomizedSearchCV
from fedsearch.federation.inprocess import InProcessFederation, PooledData
from fedsearch.searchcv._inputs import split_parties
from fedsearch.messages import EvaluateReply, EvaluateTask, SetupReply, SetupTask, encode

def test_one_party_matches_gridsearchcv(cancer):
    X, y = cancer
    grid = {"C": [0.01, 0.1, 1.0]}
    ours = FederatedGridSearchCV(LogisticRegression(), grid, cv=3, scoring="roc_auc").fit(X, y)
    ref = GridSearchCV(LogisticRegression(), grid, cv=3, scoring="roc_auc").fit(X, y)
    np.testing.assert_allclose(ours.cv_results_["mean_test_score"], ref.cv_results_["mean_test_score"])
    np.testing.assert_array_equal(ours.cv_results_["rank_test_score"], ref.cv_results_["rank_test_score"])
    assert ours.best_params_ == ref.best_params_ and ours.best_index_ == ref.best_index_
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X))


@pytest.mark.parametrize("aggregate", ["weighted", "mean", "min"])
def test_party_scores_and_aggregate_by_hand(cancer, aggregate):
    X, y = cancer
    parties = np.where(np.arange(len(y)) < 160, "big", "small")
    grid = {"C": [0.01, 1.0]}
    search = FederatedGridSearchCV(LogisticRegression(), grid, cv=3, aggregate=aggregate).fit(
        X, y, parties=parties)
    res = search.cv_results_
    by_hand, folds = {}, {}
    for pid, mask in (("big", parties == "big"), ("small", parties == "small")):
        folds[pid] = np.array([
            cross_val_score(LogisticRegression(C=c), X[mask], y[mask], cv=3) for c in grid["C"]]).T
        by_hand[pid] = folds[pid].mean(axis=0)
        np.testing.assert_allclose(res[f"party_{pid}_test_score"], by_hand[pid])
        np.testing.assert_allclose(res[f"party_{pid}_std_test_score"], folds[pid].std(axis=0))
    big, small = by_hand["big"], by_hand["small"]
    expected = {"weighted": (160 * big + 80 * small) / 240, "mean": (big + small) / 2,
                "min": np.minimum(big, small)}[aggregate]
    np.testing.assert_allclose(res["mean_test_score"], expected)
    every_fold = np.vstack([folds["big"], folds["small"]])  # split0-2: party "big", split3-5: "small"
    for k, fold in enumerate(every_fold):
        np.testing.assert_allclose(res[f"split{k}_test_score"], fold)
    np.testing.assert_allclose(res["std_test_score"], every_fold.std(axis=0))  # the spread over folds
    np.testing.assert_allclose(res["std_across_parties_test_score"], np.std([big, small], axis=0))
    assert search.best_index_ == int(np.argmax(expected))
    assert search.best_score_ == pytest.approx(expected.max())
    assert search.party_ids_ == ["big", "small"] and search.party_sizes_ == {"big": 160, "small": 80}


def test_three_input_forms_agree(cancer):
    X, y = cancer
    labels = np.arange(len(y)) % 2
    est = FederatedGridSearchCV(LogisticRegression(), {"C": [0.1, 1.0]}, cv=3)
    by_label = clone(est).fit(X, y, parties=labels).cv_results_["mean_test_score"]
    by_list = clone(est).fit([X[labels == 0], X[labels == 1]], [y[labels == 0], y[labels == 1]])
    by_dict = clone(est).fit({"a": X[labels == 0], "b": X[labels == 1]}, {"a": y[labels == 0], "b": y[labels == 1]})
    np.testing.assert_allclose(by_list.cv_results_["mean_test_score"], by_label)
    np.testing.assert_allclose(by_dict.cv_results_["mean_test_score"], by_label)
    assert by_dict.party_ids_ == ["a", "b"] and "party_a_test_score" in by_dict.cv_results_
    single = clone(est).fit(X, y)
    assert single.n_parties_ == 1 and single.party_ids_ == [0]


def test_same_seed_same_results_for_any_n_jobs(cancer):
    X, y = cancer
    parties = np.arange(len(y)) % 3
    space = {"C": loguniform(1e-3, 1e2), "class_weight": [None, "balanced"]}
    runs = [FederatedRandomizedSearchCV(LogisticRegression(), space, n_iter=6, cv=3, random_state=7,
                                        n_jobs=n_jobs).fit(X, y, parties=parties) for n_jobs in (1, 2)]
    a, b = (r.cv_results_ for r in runs)
    assert a["params"] == b["params"]
    for key in [k for k in a if "test" in k]:
        np.testing.assert_array_equal(a[key], b[key])
    other = FederatedRandomizedSearchCV(LogisticRegression(), space, n_iter=6, cv=3, random_state=8).fit(
        X, y, parties=parties)
    assert other.cv_results_["params"] != a["params"]


def test_pipeline_multimetric_refit_by_name(cancer):
    X, y = cancer
    pipe = Pipeline([("scale", StandardScaler()), ("tree", DecisionTreeClassifier(random_state=0))])
    search = FederatedGridSearchCV(
        pipe, {"tree__max_depth": [1, 3, None], "scale": [StandardScaler(), "passthrough"]}, cv=3,
        scoring={"acc": "accuracy", "auc": "roc_auc"}, refit="auc", return_train_score=True,
    ).fit(X, y, parties=np.arange(len(y)) % 2)
    res = search.cv_results_
    assert search.multimetric_ and set(search.scorer_) == {"acc", "auc"}
    for col in ("mean_test_acc", "rank_test_auc", "party_0_test_auc", "party_1_train_acc", "mean_train_auc"):
        assert col in res
    assert search.best_index_ == int(np.argmax(res["mean_test_auc"]))
    assert search.best_score_ == pytest.approx(res["mean_test_auc"].max())
    assert search.score(X, y) == pytest.approx(search.scorer_["auc"](search.best_estimator_, X, y))
    df = pd.DataFrame(res)
    assert len(df) == 6 and df["params"].tolist() == res["params"]
    with pytest.raises(ValueError, match="'refit' parameter.*must be a metric name"):
        FederatedGridSearchCV(pipe, {"tree__max_depth": [1]}, scoring=["accuracy", "roc_auc"]).fit(X, y)
    with pytest.raises(ValueError, match="must be one of the scoring metrics"):
        FederatedGridSearchCV(pipe, {"tree__max_depth": [1]}, scoring=["accuracy"], refit="auc").fit(X, y)


def test_refit_callable_and_refit_false(cancer):
    X, y = cancer
    grid = {"C": [0.001, 0.1, 10.0]}
    search = FederatedGridSearchCV(LogisticRegression(), grid, cv=3, refit=lambda res: 0).fit(X, y)
    assert search.best_index_ == 0 and search.best_params_ == {"C": 0.001}
    no_refit = FederatedGridSearchCV(LogisticRegression(), grid, cv=3, refit=False).fit(X, y)
    assert not hasattr(no_refit, "best_estimator_") and "best_params_" in vars(no_refit)
    with pytest.raises(AttributeError, match="refit is not False"):
        no_refit.predict(X)


class FailsOnShiftedData(ClassifierMixin, BaseEstimator):
    """Fits a logistic regression, but fails for C=10 on data whose first feature is shifted."""

    def __init__(self, C=1.0):
        self.C = C

    def fit(self, X, y):
        if self.C == 10 and X[:, 0].mean() > 50:
            raise ValueError("boom: cannot fit C=10 here")
        self.model_ = LogisticRegression(C=self.C).fit(X, y)
        self.classes_ = self.model_.classes_
        return self

    def predict(self, X):
        return self.model_.predict(X)


def _shifted_parties(cancer):
    X, y = cancer
    Xb = X[120:].copy()
    Xb[:, 0] += 100
    return [X[:120], Xb], [y[:120], y[120:]]


def test_a_failing_party_is_reported_as_data(cancer):
    Xs, ys = _shifted_parties(cancer)
    search = FederatedGridSearchCV(FailsOnShiftedData(), {"C": [0.1, 10]}, cv=3)
    with pytest.warns(FitFailedWarning, match=r"1 of 2 configurations failed in party 1.*\(fit\): ValueError"):
        search.fit(Xs, ys)
    res = search.cv_results_
    assert np.isnan(res["party_1_test_score"][1]) and not np.isnan(res["party_0_test_score"][1])
    assert np.isnan(res["mean_test_score"][1]), "a failure must not be averaged away"
    assert res["n_failed_parties"].tolist() == [0, 1] and search.best_params_ == {"C": 0.1}
    numeric = FederatedGridSearchCV(FailsOnShiftedData(), {"C": [0.1, 10]}, cv=3, error_score=-1.0,
                                    aggregate="min")
    with pytest.warns(FitFailedWarning):
        numeric.fit(Xs, ys)
    assert numeric.cv_results_["mean_test_score"][1] == -1.0


def test_error_score_raise_names_the_party(cancer):
    Xs, ys = _shifted_parties(cancer)
    search = FederatedGridSearchCV(FailsOnShiftedData(), {"C": [0.1, 10]}, cv=3, error_score="raise")
    search.set_params(error_score=np.nan).fit(Xs[:1], ys[:1])  # a fitted state to keep
    before = search.cv_results_
    search.set_params(error_score="raise")
    with pytest.raises(ValueError, match=r"Party 1 failed fitting \{'C': 10\}: ValueError: fitting") as info:
        search.fit(Xs, ys)
    assert "boom" not in str(info.value) and info.value.__context__ is None and info.value.__cause__ is None
    assert search.cv_results_ is before, "a failed fit leaves the old state"
    # the party may opt in to share its messages
    shared = InProcessFederation(datasets=split_parties(Xs, ys), share_errors=True)
    with pytest.raises(ValueError, match="Party 1 failed fitting .*boom"):
        search.fit(federation=shared)
    assert "boom" in shared.parties[1].errors_[0]["message"]


def test_transcript_carries_no_party_data(cancer):
    X, y = cancer
    parties = np.arange(len(y)) % 3
    search = FederatedRandomizedSearchCV(
        LogisticRegression(), {"C": loguniform(1e-2, 1e2)}, n_iter=4, cv=3, random_state=0,
        return_train_score=True).fit(X, y, parties=parties)
    sizes = {int(n) for n in np.bincount(parties)} | {len(y)}
    data_values = set(np.round(X.ravel(), 10)) | set(np.round(y.astype(float), 10)) - {0.0, 1.0}
    log = pd.DataFrame(search.federation_log_)
    assert list(log.columns) == ["round", "party", "direction", "message", "bytes"]
    # per party: the set-up and its reply, one task and one reply, and the pooled fit's transfer
    assert len(search.transcript_) == len(log) == 5 * 3
    assert log.message.value_counts().to_dict() == {
        "SetupTask": 3, "SetupReply": 3, "EvaluateTask": 3, "EvaluateReply": 3, "PooledData": 3}
    pooled = log[log.message == "PooledData"]
    assert pooled.bytes.tolist() == [X[parties == p].nbytes + y[parties == p].nbytes for p in range(3)]
    for _, _, _, msg in search.transcript_:
        if isinstance(msg, (SetupTask, PooledData)):
            continue  # the search's settings; the pooled rows, recorded as what they are
        assert isinstance(msg, (EvaluateTask, EvaluateReply, SetupReply))
        encode(msg)  # plain serialisable data
        for value in vars(msg).values():
            arrays = list(value.values()) if isinstance(value, dict) else [value]
            for arr in arrays:
                if isinstance(arr, np.ndarray):
                    assert arr.shape[0] not in sizes, "an array with a party's row count crossed over"
                    if arr.dtype.kind == "f":
                        assert not set(np.round(arr.ravel(), 10)) & data_values


def test_ensemble_final_fit_averages_party_models(cancer):
    X, y = cancer
    Xs, ys = [X[:150], X[150:]], [y[:150], y[150:]]
    search = FederatedGridSearchCV(LogisticRegression(), {"C": [0.1, 1.0]}, cv=3,
                                   final_fit="ensemble").fit(Xs, ys)
    C = search.best_params_["C"]
    models = [LogisticRegression(C=C).fit(x, t) for x, t in zip(Xs, ys)]
    expected = (150 * models[0].predict_proba(X) + 90 * models[1].predict_proba(X)) / 240
    np.testing.assert_allclose(search.predict_proba(X), expected)
    np.testing.assert_array_equal(search.predict(X), expected.argmax(1))
    np.testing.assert_array_equal(search.classes_, [0, 1])
    assert search.federation_log_["message"].count("FitReply") == 2


def test_per_sample_fit_params_are_cut_per_party(cancer):
    X, y = cancer
    parties = np.arange(len(y)) % 2
    w = np.where(y == 1, 5.0, 1.0)
    search = FederatedGridSearchCV(LogisticRegression(), {"C": [1.0]}, cv=3).fit(
        X, y, parties=parties, sample_weight=w)
    unweighted = FederatedGridSearchCV(LogisticRegression(), {"C": [1.0]}, cv=3).fit(X, y, parties=parties)
    ref = LogisticRegression().fit(X, y, sample_weight=w)
    np.testing.assert_allclose(search.best_estimator_.coef_, ref.coef_, rtol=1e-6)
    assert not np.allclose(unweighted.best_estimator_.coef_, ref.coef_)


def test_randomized_search_grid_without_replacement_and_warning(cancer):
    X, y = cancer
    space = {"C": [0.1, 1.0, 10.0]}
    with pytest.warns(UserWarning, match="smaller than n_iter=5"):
        search = FederatedRandomizedSearchCV(LogisticRegression(), space, n_iter=5, cv=3, random_state=0).fit(X, y)
    assert sorted(p["C"] for p in search.cv_results_["params"]) == [0.1, 1.0, 10.0]


def test_party_cache_never_refits_a_configuration(cancer):
    """Integer rounding maps many points to one configuration: each party fits it once."""
    X, y = cancer
    search = FederatedRandomizedSearchCV(DecisionTreeClassifier(random_state=0),
                                         {"max_depth": randint(1, 3)}, n_iter=12, cv=3, random_state=0)
    search.fit(X, y, parties=np.arange(len(y)) % 2)
    assert len(search.cv_results_["params"]) == 2
    replies = [msg for _, _, direction, msg in search.transcript_ if isinstance(msg, EvaluateReply)]
    assert len(replies) == 2
    for msg in replies:
        assert (~msg.cached).sum() == 2 and msg.cached.sum() == 10


BAD_INPUTS = [
    (dict(param_grid={}), {}, ValueError, "empty"),
    (dict(param_grid={"C": []}), {}, ValueError, "'C' has an empty list"),
    (dict(param_grid={"nope": [1]}), {}, ValueError, "Invalid parameter 'nope'.*Valid parameters are"),
    (dict(param_grid={"C": loguniform(1, 2)}), {}, TypeError, "distributions.*FederatedRandomizedSearchCV"),
    (dict(aggregate="median"), {}, ValueError, r"The 'aggregate' parameter of FederatedGridSearchCV must be one of \{'weighted', 'mean', 'min'\}. Got 'median' instead."),
    (dict(cv=1), {}, ValueError, r"The 'cv' parameter .* must be an int in the range \[2, inf\)"),
    (dict(final_fit="average"), {}, ValueError, "'final_fit' parameter"),
    (dict(error_score="ignore"), {}, ValueError, "'error_score' parameter"),
    (dict(), {"parties": np.zeros(5)}, ValueError, r"'parties' must hold one party label per sample of X: expected shape \(240,\), got shape \(5,\)"),
    (dict(cv=50), {"parties": np.arange(240) % 6}, ValueError, "cv=50 folds but party 0 has only 40 samples"),
    (dict(cv=60), {"parties": np.arange(240) % 2}, ValueError, r"cv=60 stratified folds but party 0 has only \d+ members of class"),
]


@pytest.mark.parametrize("params, fit_kw, error, match", BAD_INPUTS)
def test_bad_input_is_rejected_before_any_work(cancer, params, fit_kw, error, match):
    X, y = cancer
    kwargs = {"param_grid": {"C": [1.0]}, "cv": 3, **params}
    search = FederatedGridSearchCV(LogisticRegression(), **kwargs)
    with pytest.raises(error, match=match):
        search.fit(X, y, **fit_kw)
    assert not hasattr(search, "cv_results_")


def test_bad_party_data_is_rejected(cancer):
    X, y = cancer
    est = FederatedGridSearchCV(LogisticRegression(), {"C": [1.0]}, cv=3)
    with pytest.raises(ValueError, match="Party 1 has 29 features but party 0 has 30"):
        est.fit([X[:100], X[100:, :29]], [y[:100], y[100:]])
    with pytest.raises(ValueError, match="Party 1 has no samples"):
        est.fit([X[:100], X[:0]], [y[:100], y[:0]])
    with pytest.raises(ValueError, match=r"Party 1 has only one class in y \(\[1\]\)"):
        ones = y == 1
        est.fit([X[:100], X[ones][:50]], [y[:100], y[ones][:50]])
    yf = y.astype(float)
    yf[3] = np.nan
    with pytest.raises(ValueError, match="labels y of party 0 contain NaN"):
        est.fit(X, yf)
    df = pd.DataFrame(X[:, :3], columns=["a", "b", "c"])
    with pytest.raises(ValueError, match=r"Party 1 has columns \['a', 'c', 'b'\] but party 0 has \['a', 'b', 'c'\]"):
        est.fit([df[:100], df[100:][["a", "c", "b"]]], [y[:100], y[100:]])
    with pytest.raises(ValueError, match="'y' must be a list of 2 arrays"):
        est.fit([X[:100], X[100:]], y)
    with pytest.raises(ValueError, match="n_iter"):
        FederatedRandomizedSearchCV(LogisticRegression(), {"C": [1.0]}, n_iter=0).fit(X, y)
