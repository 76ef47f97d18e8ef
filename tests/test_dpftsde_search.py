"""DP-FTS-DE end to end: the estimator, the strategy through simulate, and what crosses the wire."""

import dataclasses
import warnings

import numpy as np
import pytest
from scipy.stats import loguniform
from sklearn.datasets import load_breast_cancer
from sklearn.exceptions import FitFailedWarning
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from fedsearch import DPFTSDESearchCV
from fedsearch.algorithms.dpftsde import FTSStepReply, FTSStepTask
from fedsearch.algorithms.dpftsde._regions import assign_regions, region_weights
from fedsearch.algorithms.dpftsde._schedules import weight_exponent
from fedsearch.messages import EvaluateReply
from fedsearch.privacy import subsampled_gaussian_epsilon
from fedsearch.research.simulate import simulate
from fedsearch.research.synthetic import gp_sample_parties, himmelblau, make_parties
from fedsearch.strategy import STRATEGIES

SPACE = {"logisticregression__C": loguniform(1e-3, 1e2)}
CHEAP = dict(n_init=3, n_candidates=50, n_restarts=1, n_features_local=30)


def _data(n_parties=4):
    X, y = load_breast_cancer(return_X_y=True)
    return [X[i::n_parties] for i in range(n_parties)], [y[i::n_parties] for i in range(n_parties)]


def _search(**kw):
    model = make_pipeline(StandardScaler(), LogisticRegression(solver="liblinear"))
    params = dict(n_iter=6, n_init=3, delta=1e-5, scoring="roc_auc", cv=2, random_state=0) | kw
    return DPFTSDESearchCV(model, SPACE, **params)


def _fit(search, n_parties=4):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # few parties: the aggregate is mostly noise
        return search.fit(*_data(n_parties))


@pytest.fixture(scope="module")
def private_search():
    return _fit(_search(sampling_rate=0.5))


@pytest.mark.slow
def test_parties_receive_only_the_noised_aggregate(private_search):
    search = private_search
    sent = [(r, p, m) for r, p, d, m in search.transcript_ if d == "to_party" and isinstance(m, FTSStepTask)]
    received = {(r, p): m for r, p, d, m in search.transcript_ if d == "to_server" and isinstance(m, FTSStepReply)}
    assert {m.round for _, _, m in sent} == set(range(4))  # n_iter - n_init + 1 rounds
    for round_ in range(1, 4):
        tasks = [m for r, _, m in sent if m.round == round_]
        # every party gets the same message but for its own seed and box: nothing says who was sampled
        common = [{f.name: getattr(t, f.name) for f in dataclasses.fields(t) if f.name not in ("seed", "region")}
                  for t in tasks]
        for other in common[1:]:
            assert other.keys() == common[0].keys()
            for key, value in common[0].items():
                np.testing.assert_array_equal(other[key], value)
        broadcast = tasks[0].omega
        assert broadcast.shape == (4, 100)
        # the broadcast is no party's vector, nor a scaled copy of one
        for p in range(4):
            vector = received[(round_ - 1, p)].omega
            for region in broadcast:
                assert abs(np.corrcoef(region, vector)[0, 1]) < 0.9
    assert all(m.omega is None for _, _, m in sent if m.round == 0)
    fields = {f.name for f in dataclasses.fields(FTSStepTask)}
    assert not fields & {"selected", "subsample", "parties", "clipped", "vectors"}


@pytest.mark.slow
def test_private_search_reports_its_privacy(private_search):
    search = private_search
    T = 6 - 3
    assert search.epsilon_ == pytest.approx(subsampled_gaussian_epsilon(0.5, 1.0, T, 1e-5))
    assert search.delta_ == 1e-5 and search.noise_multiplier_ == 1.0
    assert len(search.privacy_["epsilon"]) == T and np.all(np.diff(search.privacy_["epsilon"]) > 0)
    # noise std per region = z max_n(phi_n^(i)) S / q, with the weights of each release's round
    S = 1.1 * np.sqrt(100 * 4)
    for k, std in enumerate(search.privacy_["noise_std"]):
        w = region_weights(assign_regions(4, 4), 4, weight_exponent(k))
        np.testing.assert_allclose(std, 1.0 * w.max(axis=1) * S / 0.5)
    assert sorted(search.best_params_per_party_) == [0, 1, 2, 3]
    assert search.predict(_data()[0][2][:3], party=2).shape == (3,)
    assert np.isfinite(search.best_score_)  # validated in every party
    assert set(search.personal_results_) >= {"party", "personal_test_score", "global_test_score"}


@pytest.mark.slow
def test_no_score_leaves_a_party_without_share_scores():
    search = _fit(_search(share_scores=False, sampling_rate=0.5))
    to_server = [m for _, _, d, m in search.transcript_ if d == "to_server"]
    replies = [m for m in to_server if isinstance(m, FTSStepReply)]
    assert replies and all(m.evaluation is None and len(m.points) == 0 for m in replies)
    assert not any(isinstance(m, EvaluateReply) for m in to_server)  # no validation round
    last = [m for m in replies if m.best_point is not None]
    assert len(last) == 4  # each party's configuration, in its last round only
    assert len(search.cv_results_["params"]) == 1 and np.isnan(search.best_score_)
    assert not hasattr(search, "personal_results_")


class _NeedsRows(LogisticRegression):
    """Fails to fit on fewer than 30 rows."""

    def fit(self, X, y, sample_weight=None):
        if len(X) < 30:
            raise ValueError("too few rows")
        return super().fit(X, y, sample_weight)


def test_a_party_whose_every_evaluation_failed_sends_no_best_point():
    """Without shared scores, a failed configuration must not come back as the party's best."""
    Xs, ys = _data()
    Xs[3], ys[3] = Xs[3][:40], ys[3][:40]  # 20 rows per fold: _NeedsRows fails on party 3 at any C
    search = DPFTSDESearchCV(make_pipeline(StandardScaler(), _NeedsRows(solver="liblinear")),
                             {"_needsrows__C": loguniform(1e-3, 1e2)}, n_iter=6, n_init=3, cv=2, dp=False,
                             share_scores=False, final_fit=None, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(Xs, ys)
    last = {}
    for _, party, direction, m in search.transcript_:
        if direction == "to_server" and isinstance(m, FTSStepReply) and m.best_point is not None:
            last[party] = m.best_point
    assert sorted(last) == [0, 1, 2]  # party 3 sends no best point, not one of its failed configurations
    assert 3 not in search.strategy_.best_points_
    assert search.best_params_per_party_[3] == search.best_params_


class _Picky(LogisticRegression):
    """Cannot be fitted above C = 1: a configuration that fails in every party."""

    def fit(self, X, y, sample_weight=None):
        if self.C > 1:
            raise ValueError("C too large")
        return super().fit(X, y, sample_weight)


def test_a_failed_configuration_carries_its_error_kind():
    search = DPFTSDESearchCV(make_pipeline(StandardScaler(), _Picky(solver="liblinear")),
                             {"_picky__C": loguniform(1e-3, 1e2)}, n_iter=4, n_init=3, dp=False, cv=2,
                             final_fit=None, random_state=0)
    with pytest.warns(FitFailedWarning, match=r"configurations failed in party \d.*\(fit\): ValueError: fitting"):
        _fit(search)
    replies = [m for _, _, d, m in search.transcript_ if d == "to_server" and isinstance(m, FTSStepReply)]
    kinds = [(e is None, k) for m in replies for e, k in zip(m.evaluation.errors, m.evaluation.error_kinds)]
    assert (False, "fit") in kinds and set(kinds) <= {(True, None), (False, "fit")}
    assert search.best_params_["_picky__C"] <= 1 and np.isfinite(search.best_score_)


@pytest.mark.slow
def test_seeded_and_independent_of_n_jobs():
    a = _fit(_search(dp=False, n_jobs=1))
    b = _fit(_search(dp=False, n_jobs=2))
    assert a.cv_results_["params"] == b.cv_results_["params"]
    np.testing.assert_array_equal(a.cv_results_["mean_test_score"], b.cv_results_["mean_test_score"])
    assert a.best_params_per_party_ == b.best_params_per_party_
    assert a.epsilon_ == np.inf and a.delta_ is None


def test_validation():
    with pytest.raises(ValueError, match=r"dp=True needs an explicit delta .* 1 / N\*\*1.1 is 0.218 for your 4 parties"):
        _fit(_search(delta=None))
    with pytest.raises(ValueError, match=r"The 'n_init' parameter of DPFTSDESearchCV must be at most n_iter=6. Got 7"):
        _fit(_search(n_init=7))
    with pytest.raises(ValueError, match=r"The 'sampling_rate' parameter of DPFTSDESearchCV must be a float in the range \(0, 1\]"):
        _fit(_search(sampling_rate=0))
    with pytest.raises(ValueError, match=r"The 'accountant' parameter of DPFTSDESearchCV must be one of"):
        _fit(_search(accountant="moments"))


def test_warns_when_the_aggregate_is_mostly_noise():
    search = _search(n_iter=4)
    with pytest.warns(UserWarning, match=r"noise of std 15.7 .* mostly noise. About 63 parties would be needed"):
        search.fit(*_data())
    with pytest.warns(UserWarning, match=r"delta=0.3 is at least 1 / n_parties"):
        _search(n_iter=4, delta=0.3, noise_multiplier=0.01).fit(*_data())


def test_standard_ts_releases_nothing():
    search = _fit(_search(dp=False, p_schedule=1.0, n_regions=1))
    assert search.epsilon_ == 0.0 and not search.strategy_.releases_
    tasks = [m for _, _, d, m in search.transcript_ if isinstance(m, FTSStepTask)]
    assert all(t.omega is None and t.p == 1.0 for t in tasks)


@pytest.mark.parametrize("name", ["dp-fts-de", "dp-fts", "fts-de", "fts", "ts"])
def test_simulate_spends_the_budget_exactly(name):
    parties = make_parties(himmelblau(), 3, kind="shift", noise_std=0.05, random_state=0)
    trace = simulate(name, parties, n_iter=7, random_state=0, **CHEAP)
    assert list(trace.n_evaluations) == [7, 7, 7]
    assert list(trace.rounds[0]) == [0, 0, 0, 1, 2, 3, 4]


def test_the_papers_synthetic_federation_runs():
    parties = gp_sample_parties(5, random_state=0)
    f = parties[0].objective
    assert set(np.round(np.abs(f.func.values - parties[1].objective.func.values), 10)) == {0.0, 0.04}  # +-0.02 each
    assert -0.02 - 1e-12 <= f.func.values.min() < 0.02 and 0.98 < f.func.values.max() <= 1.02 + 1e-12  # f in [0, 1]
    trace = simulate("dp-fts-de", parties, n_iter=8, random_state=0, n_regions=2, sampling_rate=0.5,
                     p_schedule="1/sqrt(t)", weight_schedule=(6, 5), **CHEAP)
    assert list(trace.n_evaluations) == [8] * 5
    # initial points in each party's half of [0, 1] (P = 2, party n explores box n mod 2)
    for n, points in enumerate(trace.points):
        assert np.all((points[:3, 0] >= 0.5 * (n % 2)) & (points[:3, 0] <= 0.5 * (n % 2) + 0.5))


def test_strategy_registry_has_the_variants():
    for name, (P, dp) in {"dp-fts-de": (4, True), "dp-fts": (1, True), "fts-de": (4, False), "fts": (1, False)}.items():
        s = STRATEGIES[name](n_dims=2, n_parties=3, n_iter=15, random_state=0)
        assert (s.n_regions, s.dp, s.collaborative) == (P, dp, True)
    ts = STRATEGIES["ts"](n_dims=2, n_parties=3, n_iter=15, random_state=0)
    assert not ts.collaborative and ts.n_releases == 0
