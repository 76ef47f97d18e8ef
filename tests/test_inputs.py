"""Issue 13: nothing private leaks in an error, no silent misuse of inputs, drop-in means drop-in.

Every refusal is checked the same way (:func:`assert_refused`): a good search is fitted first,
then the bad input raises the expected error naming the parameter and value, no fit of the base
estimator starts (for the errors that need no scores), and the old fitted state is kept.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import loguniform
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.compose import make_column_transformer
from sklearn.decomposition import PCA
from sklearn.exceptions import FitFailedWarning
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import recall_score
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.utils.metadata_routing import MetadataRouter

from fedsearch import (FederatedGridSearchCV, FederatedRandomizedSearchCV, FLoRASearchCV,
                       LevelOrderSearchCV, PFPNESearchCV)
from fedsearch.federation.inprocess import InProcessFederation, PooledData
from fedsearch.messages import ErrorReply, EvaluateReply, EvaluateTask, SetupTask, decode, encode
from fedsearch.party.data import FoldResult, summarise_folds
from fedsearch.searchcv._results import ResultsTable
from fedsearch.searchcv.ensemble import PartyEnsemble
from fedsearch.searchcv._inputs import check_estimator_params, split_parties
from fedsearch.space import SearchSpace

FITS = []  # one entry per fit of a base estimator (the in-process parties run sequentially)


class CountingLogisticRegression(LogisticRegression):
    def fit(self, X, y, sample_weight=None):
        FITS.append(1)
        return super().fit(X, y, sample_weight=sample_weight)


class CountingRidge(Ridge):
    def fit(self, X, y, sample_weight=None):
        FITS.append(1)
        return super().fit(X, y, sample_weight=sample_weight)


class FailsAtShiftedParty(ClassifierMixin, BaseEstimator):
    """A logistic regression that fails for C >= 10 (or always, with ``always``) on data whose
    first feature is shifted (one party's)."""

    def __init__(self, C=1.0, always=False):
        self.C = C
        self.always = always

    def fit(self, X, y):
        if (self.always or self.C >= 10) and np.asarray(X)[:, 0].mean() > 50:
            raise ValueError("boom: the value 123.456 of this party")
        self.model_ = LogisticRegression(C=self.C).fit(X, y)
        self.classes_ = self.model_.classes_
        return self

    def predict(self, X):
        return self.model_.predict(X)


def assert_refused(good, good_fit, bad, bad_fit, error, match, *, fits_allowed=False):
    """Fit ``good`` (a search), then ``bad`` (the same object with bad parameters, or None for
    the same search) on the bad input: ``error`` matching ``match``, no fit started unless
    ``fits_allowed``, and the old fitted state kept."""
    search = good
    search.fit(*good_fit[0], **good_fit[1])
    before = {k: v for k, v in vars(search).items() if k.endswith("_") and not k.startswith("_")}
    if bad:
        search.set_params(**bad)
    FITS.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FitFailedWarning)
        with pytest.raises(error, match=match):
            search.fit(*bad_fit[0], **bad_fit[1])
    if not fits_allowed:
        assert not FITS, f"{len(FITS)} fits started before the error"
    after = {k: v for k, v in vars(search).items() if k.endswith("_") and not k.startswith("_")}
    assert after.keys() == before.keys() and all(after[k] is before[k] for k in before), \
        "the old fitted state must be kept"


def _shifted(cancer, n_parties=2):
    X, y = cancer
    Xs = [X[i::n_parties].copy() for i in range(n_parties)]
    Xs[-1][:, 0] += 100.0
    return Xs, [y[i::n_parties] for i in range(n_parties)]


def _regression():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4))
    return X, X @ np.array([1.0, -2.0, 0.5, 0.0]) * 30 + 150 + rng.normal(scale=50, size=120)


# --------------------------------------------------------------------------- the tables
def _classification_rows(X, y):
    half = len(y) // 2
    Xs, ys = [X[:half], X[half:]], [y[:half], y[half:]]
    df = pd.DataFrame(X[:, :3], columns=["a", "b", "c"])
    df["c"] = pd.Categorical(np.where(X[:, 2] > 0, "hi", "lo"))
    other = df[half:].copy()
    other["c"] = pd.Categorical(other["c"].astype(str), categories=["hi", "lo", "mid"])
    labels = np.where(y == 1, "yes", "no")
    grid = {"C": [0.1, 1.0]}
    return [
        # the earlier table (README: bad input is refused before any work)
        ("empty space", dict(param_grid={}), ((X, y), {}), ValueError, "empty"),
        ("empty list", dict(param_grid={"C": []}), ((X, y), {}), ValueError, "'C' has an empty list"),
        ("unknown name", dict(param_grid={"nope": [1]}), ((X, y), {}), ValueError,
         "Invalid parameter 'nope'.*Valid parameters are"),
        ("distribution in a grid", dict(param_grid={"C": loguniform(1, 2)}), ((X, y), {}), TypeError,
         "distributions.*FederatedRandomizedSearchCV"),
        ("aggregate", dict(aggregate="median"), ((X, y), {}), ValueError,
         r"The 'aggregate' parameter of FederatedGridSearchCV must be one of \{'weighted', 'mean', "
         r"'min'\}. Got 'median' instead."),
        ("cv=1", dict(cv=1), ((X, y), {}), ValueError, r"The 'cv' parameter .* must be an int in the range \[2, inf\)"),
        ("final_fit", dict(final_fit="average"), ((X, y), {}), ValueError, "'final_fit' parameter.*Got 'average'"),
        ("error_score", dict(error_score="ignore"), ((X, y), {}), ValueError, "'error_score' parameter.*Got 'ignore'"),
        ("parties length", {}, ((X, y), {"parties": np.zeros(5)}), ValueError,
         r"'parties' must hold one party label per sample of X: expected shape \(240,\), got shape \(5,\)"),
        ("too many folds", dict(cv=50), ((X, y), {"parties": np.arange(240) % 6}), ValueError,
         "cv=50 folds but party 0 has only 40 samples"),
        ("too few class members", dict(cv=60), ((X, y), {"parties": np.arange(240) % 2}), ValueError,
         r"cv=60 stratified folds but party 0 has only \d+ members of class"),
        ("feature counts", {}, (([X[:100], X[100:, :29]], [y[:100], y[100:]]), {}), ValueError,
         "Party 1 has 29 features but party 0 has 30"),
        ("empty party", {}, (([X[:100], X[:0]], [y[:100], y[:0]]), {}), ValueError, "Party 1 has no samples"),
        ("one class", {}, (([X[:100], X[y == 1][:50]], [y[:100], y[y == 1][:50]]), {}), ValueError,
         r"Party 1 has only one class in y \(\[1\]\)"),
        ("column order", {}, (([df[:half], df[half:][["a", "c", "b"]]], [y[:half], y[half:]]), {}), ValueError,
         r"Party 1 has columns \['a', 'c', 'b'\] but party 0 has \['a', 'b', 'c'\]"),
        ("y not per party", {}, ((Xs, y), {}), ValueError, "'y' must be a list of 2 arrays"),
        # item 2: per-party fit parameters are given per party
        ("one sample_weight for a list of parties", {}, ((Xs, ys), {"sample_weight": np.ones(half)}), ValueError,
         r"the fit parameter 'sample_weight' must be given per party: a list of 2 values .* Got ndarray of "
         r"length 120 instead"),
        ("sample_weight dict with other keys", {}, (({"a": Xs[0], "b": Xs[1]}, {"a": ys[0], "b": ys[1]}),
                                                    {"sample_weight": {"a": np.ones(half)}}), ValueError,
         r"the fit parameter 'sample_weight' must be given per party.*Got a dict with keys \[\"'a'\"\]"),
        ("per-party sample_weight of a wrong length", {}, ((Xs, ys), {"sample_weight": [np.ones(half), np.ones(3)]}),
         ValueError, r"The fit parameter 'sample_weight' must hold one value per sample of party 1 \(120\). Got 3"),
        # item 6: parties are checked against each other
        ("label kinds", {}, (([X[:half], X[half:]], [labels[:half], y[half:]]), {}), ValueError,
         "The labels y of party 1 are numbers but those of party 0 are strings"),
        ("categories", {}, (([df[:half], other], [y[:half], y[half:]]), {}), ValueError,
         r"Column 'c' of party 1 is categorical with other categories \(3\) than at party 0 \(2\)"),
        ("column dtypes", {}, (([df[:half], other.astype({"c": str})], [y[:half], y[half:]]), {}), ValueError,
         r"Column 'c' of party 1 has dtype (str|object) but party 0 has category"),
        ("frame types", {}, (([df[:half], df[half:].to_numpy()], [y[:half], y[half:]]), {}), ValueError,
         "Party 1 gives X as ndarray but party 0 as DataFrame"),
        # item 7: early, clear errors
        ("unknown fit parameter", {}, ((X, y), {"sample_wieght": np.ones(240)}), ValueError,
         r"The fit parameter 'sample_wieght' of FederatedGridSearchCV.fit must be a parameter of the "
         r"estimator's fit \(CountingLogisticRegression.fit takes \['sample_weight'\]\). Got 'sample_wieght'"),
        ("wrong-length fit parameter", {}, ((X, y), {"sample_weight": np.ones(5)}), ValueError,
         r"The fit parameter 'sample_weight' must hold one value per sample of X \(240\). Got 5 values"),
        ("wrong-typed grid value", dict(param_grid={"C": [1.0, "a"]}), ((X, y), {}), ValueError,
         r"The search space of FederatedGridSearchCV must hold values the estimator accepts. Got C='a' "
         r"instead.*The 'C' parameter of CountingLogisticRegression must be a float"),
        ("wrong-typed value of a pipeline step",
         dict(estimator=make_pipeline(StandardScaler(), CountingLogisticRegression()),
              param_grid={"countinglogisticregression__C": [1.0, -1]}),
         ((X, y), {}), ValueError, r"Got countinglogisticregression__C=-1 instead, which CountingLogisticRegression "
                                   r"refuses: The 'C' parameter of CountingLogisticRegression must be a float"),
        ("estimator class", dict(estimator=LogisticRegression), ((X, y), {}), TypeError,
         r"The 'estimator' parameter of FederatedGridSearchCV must be an estimator instance \(with fit and "
         r"get_params\). Got the class LogisticRegression \(pass an instance: LogisticRegression\(\)\) instead."),
    ], grid


def _grid(cancer):
    X, y = cancer
    rows, grid = _classification_rows(X, y)
    return [(name, FederatedGridSearchCV(CountingLogisticRegression(), grid, cv=3), ((X, y), {}), *rest)
            for name, *rest in rows]


N_ROWS = 28


@pytest.mark.parametrize("row", range(N_ROWS))
def test_bad_input_is_refused_before_any_fit_and_keeps_the_old_state(cancer, row):
    name, search, good_fit, bad, bad_fit, error, match = _grid(cancer)[row]
    assert_refused(search, good_fit, bad, bad_fit, error, match)


def test_the_table_is_complete(cancer):
    assert len(_grid(cancer)) == N_ROWS


LATE = [  # refusals of other estimators and targets; those that need scores let fits run
    "n_iter", "inf in a regression target", "unfrozen distribution", "reward_bounds", "flora finite loss",
    "nothing succeeded in every party",
]


@pytest.mark.parametrize("name", LATE)
def test_other_refusals_keep_the_old_state(cancer, name):
    X, y = _regression()
    y_inf = y.copy()
    y_inf[7] = np.inf
    space = {"alpha": loguniform(0.1, 10)}
    if name == "n_iter":
        search = FederatedRandomizedSearchCV(CountingRidge(), space, n_iter=2, cv=3, random_state=0)
        return assert_refused(search, ((X, y), {}), dict(n_iter=0), ((X, y), {}), ValueError,
                              r"The 'n_iter' parameter of FederatedRandomizedSearchCV must be an int in the "
                              r"range \[1, inf\). Got 0 instead.")
    if name == "inf in a regression target":  # refused up front, like NaN
        search = FederatedGridSearchCV(CountingRidge(), {"alpha": [1.0]}, cv=3)
        return assert_refused(search, ((X, y), {}), None, ((X, y_inf), {}), ValueError,
                              "The labels y of party 0 contain infinity")
    if name == "unfrozen distribution":
        search = FederatedRandomizedSearchCV(CountingRidge(), space, n_iter=2, cv=3, random_state=0)
        return assert_refused(search, ((X, y), {}), dict(param_distributions={"alpha": loguniform}),
                              ((X, y), {}), TypeError,
                              r"The distribution of parameter 'alpha' must be a frozen scipy.stats "
                              r"distribution.*Got the unfrozen scipy.stats.loguniform instead.")
    if name == "reward_bounds":  # an MSE of thousands cannot be rescaled by (-1, 0)
        search = LevelOrderSearchCV(CountingRidge(), space, n_iter=4, cv=3, scoring="neg_mean_squared_error",
                                    reward_bounds=(-1e6, 0.0), random_state=0)
        return assert_refused(search, ((X, y), {}), dict(reward_bounds=(-1.0, 0.0)), ((X, y), {}), ValueError,
                              r"The 'reward_bounds' parameter of LevelOrderSearchCV must contain the scores it "
                              r"rescales: party 0 scored -\d+.*Got \(-1.0, 0.0\) instead.", fits_allowed=True)
    Xs, ys = _shifted(cancer)
    if name == "flora finite loss":
        Xs[0][:, 0] += 100.0  # both parties fail every configuration
        search = FLoRASearchCV(FailsAtShiftedParty(), {"C": loguniform(0.01, 1)}, n_iter=3, cv=3,
                               local_search="random", random_state=0)
        bad = dict(estimator=FailsAtShiftedParty(always=True))
        return assert_refused(search, ((Xs, ys), {}), bad, ((Xs, ys), {}), ValueError,
                              r"no party uploaded a finite loss \(party 0: every configuration failed, the "
                              r"first with ValueError: fitting or scoring", fits_allowed=True)
    search = FederatedGridSearchCV(FailsAtShiftedParty(), {"C": [0.1, 1.0]}, cv=3)
    assert_refused(search, ((Xs, ys), {}), dict(estimator=FailsAtShiftedParty(always=True)), ((Xs, ys), {}),
                   ValueError, r"No configuration succeeded in every party \(2 tried\).*party 1: fit "
                   r"\(ValueError: fitting or scoring", fits_allowed=True)


# --------------------------------------------------------------------------- item 1: no data crosses
def test_no_data_value_crosses_in_an_error():
    rng = np.random.default_rng(0)
    n = 90
    X = pd.DataFrame({"diagnosis": rng.choice(["flu", "cold"], size=n), "age": rng.normal(50, 10, size=n)})
    y = (X["age"] > 50).astype(int).to_numpy()
    X.loc[5, "diagnosis"] = "HIV+ Jane Doe"  # a rare category: unknown to the folds that do not train on it
    model = make_pipeline(make_column_transformer((OneHotEncoder(handle_unknown="error"), ["diagnosis"]),
                                                  remainder="passthrough"), LogisticRegression())
    datasets = split_parties([X[:45], X[45:]], [y[:45], y[45:]])
    federation = InProcessFederation(datasets=datasets)
    search = FederatedGridSearchCV(model, {"logisticregression__C": [0.1, 1.0]}, cv=3, final_fit=None)
    with warnings.catch_warnings(record=True) as record, pytest.raises(ValueError) as raised:
        warnings.simplefilter("always")
        search.fit(federation=federation)  # party 0 fails every configuration: nothing to recommend
    texts = [str(w.message) for w in record] + [str(raised.value)]
    # every message (the SetupTask is the server's own settings, sent before any party data exists)
    wire = b"".join(encode(m) for _, _, _, m in federation.transcript if not isinstance(m, (PooledData, SetupTask)))
    assert {type(m).__name__ for _, _, d, m in federation.transcript if d == "to_server"} == {"SetupReply", "EvaluateReply"}
    for secret in ("Jane", "HIV", "unknown categories"):
        assert secret.encode() not in wire, f"{secret!r} crossed the boundary"
        assert not any(secret in t for t in texts), f"{secret!r} is in a warning or the error"
    assert b"fitting or scoring the configuration failed at the party" in wire and b'"fit"' in wire
    assert "party 0: fit (ValueError: fitting or scoring the configuration failed" in str(raised.value)
    # the full message stays at the party
    assert any("HIV+ Jane Doe" in e["message"] for e in federation.parties[0].errors_)
    assert all(not p.errors_ for p in federation.parties[1:])


def test_the_party_log_keeps_the_full_message(cancer, caplog):
    Xs, ys = _shifted(cancer)
    with caplog.at_level("INFO", logger="fedsearch.party"), pytest.warns(FitFailedWarning) as record:
        FederatedGridSearchCV(FailsAtShiftedParty(), {"C": [0.1, 10]}, cv=3).fit(Xs, ys)
    assert "123.456" in caplog.text and not any("123.456" in str(w.message) for w in record)


class NamesAGroup(KFold):
    """A splitter whose error quotes a party's value (as a group-aware splitter may)."""

    def split(self, X, y=None, groups=None):
        if isinstance(groups[0], str):
            raise ValueError(f"group {groups[0]!r} has too few samples")
        return super().split(X, y, groups)


def test_a_party_that_cannot_be_set_up_sends_no_data_value(cancer, caplog):
    X, y = cancer
    Xs, ys = [X[:120], X[120:]], [y[:120], y[120:]]
    groups = [np.array(["HIV+ Jane Doe"] * 120), np.arange(120)]
    search = FederatedGridSearchCV(LogisticRegression(), {"C": [1.0]}, cv=3).fit(Xs, ys)
    before = search.cv_results_
    search.set_params(cv=NamesAGroup(3))
    federation = InProcessFederation(datasets=split_parties(Xs, ys, groups=groups))
    with caplog.at_level("INFO", logger="fedsearch.party"), warnings.catch_warnings(record=True) as record, \
            pytest.raises(ValueError, match=r"The parties could not be set up; party 0: setup \(ValueError: the "
                                            r"party could not be set up \(.*\)\.$") as raised:
        warnings.simplefilter("always")
        search.fit(federation=federation)
    assert search.cv_results_ is before, "the old fitted state is kept"
    # the failure is a reply of party 0, in the transcript, as data; party 1 was set up
    replies = [(pid, m) for r, pid, d, m in federation.transcript if d == "to_server"]
    assert [(pid, type(m).__name__) for pid, m in replies] == [(0, "ErrorReply"), (1, "SetupReply")]
    assert replies[0][1].kind == "setup"
    wire = b"".join(encode(m) for *_, m in federation.transcript)
    texts = [str(w.message) for w in record] + [str(raised.value)]
    assert b"Jane" not in wire and not any("Jane" in t for t in texts)
    assert "HIV+ Jane Doe" in caplog.text, "the full message stays in the party's log"
    # the party may opt in to share its messages
    shared = InProcessFederation(datasets=split_parties(Xs, ys, groups=groups), share_errors=True)
    with pytest.raises(ValueError, match="HIV\\+ Jane Doe"):
        search.fit(federation=shared)


def test_a_flower_party_that_fails_sends_no_data_value(tmp_path, monkeypatch, caplog):
    pytest.importorskip("flwr")
    from flwr.app import RecordDict

    from fedsearch import messages
    from fedsearch.party._flower_client import answer

    (tmp_path / "leaky_silo.py").write_text(
        "from sklearn.datasets import load_iris\n"
        "from sklearn.model_selection import KFold\n"
        "def broken():\n    raise OSError('cannot read row 7: HIV+ Jane Doe')\n"
        "def load():\n    return load_iris(return_X_y=True)\n"
        "class LeakySplit(KFold):\n"
        "    def split(self, X, y=None, groups=None):\n        raise ValueError('row 7 is HIV+ Jane Doe')\n"
        "from sklearn.linear_model import LogisticRegression\n"
        "class LeakyModel(LogisticRegression):\n"
        "    def fit(self, X, y):\n        raise ValueError('unknown category HIV+ Jane Doe')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(messages, "TRUSTED_MODULES", [*messages.TRUSTED_MODULES, "leaky_silo."])
    from leaky_silo import LeakyModel, LeakySplit

    space = SearchSpace({"C": [1.0]})
    setup = encode(SetupTask(estimator=LogisticRegression(), space=space, cv=3)).decode()
    leaky = encode(SetupTask(estimator=LogisticRegression(), space=space, cv=LeakySplit(3))).decode()
    for loader, task in [("leaky_silo:broken", setup),  # its data does not load
                         ("leaky_silo:load", leaky)]:  # the search's set-up fails on its data
        with caplog.at_level("INFO", logger="fedsearch.party"):
            raw = answer(task, {"party": "z", "loader": loader}, RecordDict())
        reply = decode(raw)
        assert isinstance(reply, ErrorReply) and reply.kind == "setup" and reply.error.startswith("party 'z': ")
        assert "Jane" not in raw and "the party could not be set up" in reply.error
        assert "HIV+ Jane Doe" in caplog.text, "the full message stays in the party's log"
        caplog.clear()
    # a party that opts in shares its messages: of its set-up, and of its fits
    raw = answer(setup, {"party": "z", "loader": "leaky_silo:broken", "share_errors": "true"}, RecordDict())
    assert "HIV+ Jane Doe" in decode(raw).error
    failing = encode(SetupTask(estimator=LeakyModel(), space=space, cv=3)).decode()
    evaluate = encode(EvaluateTask(np.array([[0.5]]))).decode()
    for share in (False, True):
        config, state = {"party": "z", "loader": "leaky_silo:load", "share_errors": str(share)}, RecordDict()
        answer(failing, config, state)
        raw = answer(evaluate, config, state)
        assert decode(raw).error_kinds == ("fit",) and ("HIV+ Jane Doe" in raw) == share


# --------------------------------------------------------------------------- item 3: never recommended
def test_a_configuration_that_failed_anywhere_is_never_recommended(cancer):
    Xs, ys = _shifted(cancer)
    # error_score=1.0 would make the failed C=10 the best by score: it must not be chosen
    grid = FederatedGridSearchCV(FailsAtShiftedParty(), {"C": [0.1, 10]}, cv=3, error_score=1.0)
    with pytest.warns(FitFailedWarning, match="never recommended"):
        grid.fit(Xs, ys)
    assert grid.best_params_ == {"C": 0.1} and grid.cv_results_["n_failed_parties"][grid.best_index_] == 0
    space = {"C": loguniform(0.01, 1000)}
    flora = FLoRASearchCV(FailsAtShiftedParty(), space, n_iter=6, cv=3, local_search="random", random_state=0,
                          error_score=1.0)
    level = LevelOrderSearchCV(FailsAtShiftedParty(), space, n_iter=30, cv=3, random_state=0, error_score=1.0)
    for search in (flora, level):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FitFailedWarning)
            search.fit(Xs, ys)
        assert search.cv_results_["n_failed_parties"].max() == 1, "some configurations failed"
        assert search.best_params_["C"] < 10, type(search).__name__
        assert search.cv_results_["n_failed_parties"][search.best_index_] == 0
    # the algorithms' own recommendations avoid the failed region too
    assert all(params["C"] < 10 for params in flora.surface_params_.values())
    assert level.strategy_.recommend()[0] < 0.6  # C = 10 ** (5 u - 2) < 10


# --------------------------------------------------------------------------- item 4: the ensemble
def test_ensemble_predicts_a_class_that_only_some_parties_hold(iris):
    X, y = iris
    idx = np.random.default_rng(0).permutation(len(y))
    X, y = X[idx], y[idx]
    names = ["sepal_length", "sepal_width", "petal_length", "petal_width"]
    df = pd.DataFrame(X, columns=names)
    train, test = df[:100], df[100:]
    party = np.arange(100) % 3
    keep = (y[:100] != 2) | (party == 2)  # class 2 lives at party 2 only
    Xs = [train[keep & (party == p)] for p in range(3)]
    ys = [y[:100][keep & (party == p)] for p in range(3)]
    model = make_pipeline(PCA(n_components=3), LogisticRegression(max_iter=1000))
    for search in (FederatedGridSearchCV(model, {"logisticregression__C": [1.0]}, cv=2, final_fit="ensemble"),
                   PFPNESearchCV(model, {"logisticregression__C": loguniform(0.5, 2)}, n_iter=2, cv=2,
                                 random_state=0, final_fit="local")):
        search.fit(Xs, ys)
        assert search.classes_.tolist() == [0, 1, 2]
        assert recall_score(y[100:], search.predict(test), average=None)[2] > 0.5
        proba = search.predict_proba(test)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
        np.testing.assert_allclose(search.predict_log_proba(test), np.log(proba))
        assert list(search.feature_names_in_) == names
    ensemble = FederatedGridSearchCV(PCA(), {"n_components": [2]}, cv=2, scoring=lambda e, X, y=None: 0.0,
                                     final_fit="ensemble").fit([X[:50], X[50:]])
    members = ensemble.best_estimator_.estimators_
    np.testing.assert_allclose(ensemble.transform(X), (50 * members[0].transform(X) + 100 * members[1].transform(X)) / 150)


def test_ensemble_aligns_the_members_classes_by_label(iris):
    X, y = iris
    outer = LogisticRegression(max_iter=1000).fit(X[y != 1], y[y != 1])  # classes 0 and 2: the middle one lacks
    every = LogisticRegression(max_iter=1000).fit(X, y)
    ensemble = PartyEnsemble([outer, every], [100, 150])
    assert ensemble.classes_.tolist() == [0, 1, 2]
    margin = outer.decision_function(X)  # binary: the score of class 2
    expected = 0.6 * every.decision_function(X)
    expected[:, [0, 2]] += 0.4 * np.column_stack([-margin, margin])
    np.testing.assert_allclose(ensemble.decision_function(X), expected)
    # class 1's probability is every's alone; the others are averaged over both, then normalised
    proba = np.column_stack([0.4 * outer.predict_proba(X)[:, 0] + 0.6 * every.predict_proba(X)[:, 0],
                             every.predict_proba(X)[:, 1],
                             0.4 * outer.predict_proba(X)[:, 1] + 0.6 * every.predict_proba(X)[:, 2]])
    np.testing.assert_allclose(ensemble.predict_proba(X), proba / proba.sum(axis=1, keepdims=True))


# --------------------------------------------------------------------------- item 8: drop-in
@pytest.mark.parametrize("return_train_score", [False, True])
def test_one_party_is_gridsearchcv_column_for_column(cancer, return_train_score):
    X, y = cancer
    grid = {"C": [0.01, 0.1, 1.0], "fit_intercept": [True, False]}
    kw = dict(cv=4, scoring=["accuracy", "roc_auc"], refit="roc_auc", return_train_score=return_train_score)
    search = FederatedGridSearchCV(LogisticRegression(), grid, **kw).fit(X, y)
    ours = search.cv_results_
    ref = GridSearchCV(LogisticRegression(), grid, **kw).fit(X, y).cv_results_
    for key, value in ref.items():
        assert key in ours, key
        assert type(ours[key]) is type(value), key
        if key != "params":
            assert ours[key].dtype == value.dtype, key
        if key.endswith("_time"):  # measured, so not equal: the same shape and meaning
            assert np.shape(ours[key]) == np.shape(value) and np.all(np.asarray(ours[key]) >= 0)
        elif key == "params":
            assert ours[key] == value
        elif key.startswith("param_"):
            assert list(ours[key]) == list(value), key
        elif key.startswith("rank_"):
            np.testing.assert_array_equal(ours[key], value, err_msg=key)
        else:
            np.testing.assert_allclose(ours[key], value, rtol=1e-12, err_msg=key)
    assert ref["std_test_roc_auc"].max() > 0  # the fold spread, not a spread over one party
    # the times: mean and spread over the folds (the party's own), not over the parties
    (reply,) = [m for _, _, d, m in search.transcript_ if isinstance(m, EvaluateReply)]
    for name in ("fit_time", "score_time"):
        np.testing.assert_array_equal(ours[f"mean_{name}"], getattr(reply, name))
        np.testing.assert_array_equal(ours[f"std_{name}"], getattr(reply, f"std_{name}"))
        assert ours[f"std_{name}"].min() > 0 and not ours[f"std_across_parties_{name}"].any()


def test_times_are_spread_over_the_folds_of_every_party():
    # a party's spread of its fold times is over its folds ...
    times = [0.1, 0.2, 0.6]
    summary = summarise_folds([FoldResult({"score": 1.0}, {}, t, t / 10) for t in times])
    assert summary["fit_time"] == pytest.approx(np.mean(times))
    assert summary["std_fit_time"] == pytest.approx(np.std(times))
    # ... and the table's is over every party's folds, as GridSearchCV's over its own
    folds = {0: [1.0, 2.0, 3.0], 1: [10.0, 20.0]}
    table = ResultsTable(SearchSpace({"C": [1.0]}), [0, 1], [3, 2], ["score"], False, [3, 2])
    task = EvaluateTask(np.array([[0.0]]))
    table.add({0: task, 1: task}, {p: EvaluateReply(
        scores=np.ones(1), n_samples=len(t), test_scores={"score": np.ones(1)},
        fit_time=np.array([np.mean(t)]), std_fit_time=np.array([np.std(t)]),
        score_time=np.array([np.mean(t) / 10]), std_score_time=np.array([np.std(t) / 10])) for p, t in folds.items()})
    res = table.results("weighted")
    every = np.concatenate(list(folds.values()))
    np.testing.assert_allclose(res["mean_fit_time"], [every.mean()])
    np.testing.assert_allclose(res["std_fit_time"], [every.std()])
    np.testing.assert_allclose(res["std_score_time"], [every.std() / 10])
    np.testing.assert_allclose(res["std_across_parties_fit_time"], [np.std([2.0, 15.0])])


def test_the_grid_check_fits_nothing_and_leaves_combinations_to_the_fits():
    FITS.clear()
    check_estimator_params(CountingLogisticRegression(), SearchSpace({"C": [0.1, 1.0]}), "S")
    assert not FITS, "no fit of the estimator (nor of the user's own fit) runs"
    # lbfgs refuses l1, liblinear takes it: a combination is the fits' to judge, not a wrong value
    check_estimator_params(LogisticRegression(), SearchSpace({"penalty": ["l1"], "solver": ["liblinear"]}), "S")
    with pytest.raises(ValueError, match="Got C='a' instead, which LogisticRegression refuses"):
        check_estimator_params(LogisticRegression(), SearchSpace({"C": ["a"]}), "S")


def test_get_metadata_routing_is_a_router():
    search = FederatedGridSearchCV(LogisticRegression(), {"C": [1.0]}, cv=3, scoring=["accuracy", "f1"],
                                   refit="f1")
    routing = search.get_metadata_routing()
    assert isinstance(routing, MetadataRouter)
    assert isinstance(GridSearchCV(LogisticRegression(), {"C": [1.0]}).get_metadata_routing(), MetadataRouter)


# --------------------------------------------------------------------------- item 7: lists of lists
def test_per_party_lists_of_lists_are_per_party_datasets(cancer):
    X, y = cancer
    Xs, ys = [X[:120], X[120:]], [y[:120], y[120:]]
    arrays = FederatedGridSearchCV(LogisticRegression(), {"C": [1.0]}, cv=3).fit(Xs, ys)
    lists = FederatedGridSearchCV(LogisticRegression(), {"C": [1.0]}, cv=3).fit(
        [x.tolist() for x in Xs], [t.tolist() for t in ys])
    assert lists.party_sizes_ == arrays.party_sizes_ == {0: 120, 1: 120}
    np.testing.assert_allclose(lists.cv_results_["mean_test_score"], arrays.cv_results_["mean_test_score"])


class _PointsAtTheLast(FederatedGridSearchCV):
    """A grid search whose strategy recommends its last candidate, whatever the scores (as a
    surface's arg-min or a level's centre may point at a configuration that then fails)."""

    def _make_strategy(self, space, n_parties, weights, random_state):
        strategy = super()._make_strategy(space, n_parties, weights, random_state)
        strategy.recommend = lambda party=None: strategy.candidates[-1].copy()
        return strategy


def test_a_recommendation_that_failed_is_replaced_by_the_best_that_succeeded(cancer):
    Xs, ys = _shifted(cancer)
    search = _PointsAtTheLast(FailsAtShiftedParty(), {"C": [0.1, 1.0, 10]}, cv=3)
    with pytest.warns(FitFailedWarning, match="1 of 3 configurations failed in party 1"):
        search.fit(Xs, ys)
    res = search.cv_results_
    assert res["n_failed_parties"].tolist() == [0, 0, 1]
    assert search.best_index_ == int(np.nanargmax(res["mean_test_score"][:2])) and search.best_params_["C"] < 10
