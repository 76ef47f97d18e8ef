"""FLoRA end to end (004_*.txt Algorithm 1): local searches, one upload, surfaces, validation."""

import math

import numpy as np
import pytest
from scipy.stats import uniform
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.ensemble import RandomForestRegressor
from sklearn.exceptions import FitFailedWarning

from fedsearch import FLoRASearchCV, SearchSpace
from fedsearch.federation import InProcessFederation
from fedsearch.party import Party
from fedsearch.algorithms.flora import FLoRAStrategy, LocalSearchReply, LocalSearchTask
from fedsearch.algorithms.flora.local_search import RandomLocalSearch, register_local_search
from fedsearch.messages import EvaluateReply, EvaluateTask, decode, encode
from fedsearch.research.metrics import compare_to_baseline, heterogeneity, relative_regret

SPACE = {"theta": uniform(0, 1)}


class Offset(RegressorMixin, BaseEstimator):
    """A regressor whose error is known: predictions are off by ``(theta - c) * k``, where ``c``
    and ``k`` come from the party's own data (columns 0 and 1); ``y`` is column 2. With
    ``scoring="neg_mean_squared_error"`` a party's score of ``theta`` is ``-((theta - c) k)^2``."""

    n_fits = 0

    def __init__(self, theta=0.5, fail_above=None):
        self.theta = theta
        self.fail_above = fail_above

    def fit(self, X, y):
        type(self).n_fits += 1
        if self.fail_above is not None and self.theta > self.fail_above:
            raise ValueError("theta too large")
        self.center_, self.slope_ = X[:, 0].mean(), X[:, 1].mean()
        return self

    def predict(self, X):
        return X[:, 2] + (self.theta - self.center_) * self.slope_


def party_data(center, slope, n=20, seed=0):
    z = np.random.default_rng(seed).normal(size=n)
    return np.column_stack([np.full(n, center), np.full(n, slope), z]), z


def true_scores(theta, parties):
    return np.array([-((theta - c) * k) ** 2 for c, k in parties])


TWO = [(0.2, 1.0), (0.8, 3.0)]  # two parties with very different data


def search(parties=TWO, **kw):
    Xs, ys = zip(*(party_data(c, k, seed=i) for i, (c, k) in enumerate(parties)))
    params = dict(n_iter=10, local_search="random", cv=2, scoring="neg_mean_squared_error",
                  random_state=0, regressor=RandomForestRegressor(n_estimators=25))  # fast tests
    params.update(kw)
    return FLoRASearchCV(Offset(), SPACE, **params).fit(list(Xs), list(ys))


def test_relative_regret_and_heterogeneity_by_hand():
    # Table 7, Oil Spill: baseline 63.22, best 74.58; a score of 69.0 has regret 5.58 / 11.36
    assert relative_regret(69.0, 74.58, 63.22) == pytest.approx(5.58 / 11.36)
    assert relative_regret(74.58, 74.58, 63.22) == 0.0
    assert relative_regret(63.22, 74.58, 63.22) == pytest.approx(1.0)
    assert np.isnan(relative_regret(0.5, 0.7, 0.7))
    # Table 7, PC3: PMax 64.37 / PMin 61.67 = 1.04 (losses are 1 - balanced accuracy)
    assert heterogeneity([1 - 0.6167, 1 - 0.6437, np.nan]) == pytest.approx(0.6437 / 0.6167)
    assert heterogeneity([0.3, 0.3]) == 1.0


def test_compare_to_baseline_reproduces_table3_wilcoxon_values():
    # Table 3: 7 wins of 7 over the seven datasets give (28, 0.00898) (HGB, MPLM and APLM);
    # 6 wins whose loss ranks second smallest give (26, 0.02126) (HGB, SGM)
    out = compare_to_baseline([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7])
    assert (out["wins"], out["ties"], out["losses"], out["statistic"]) == (7, 0, 0, 28.0)
    assert out["pvalue"] == pytest.approx(0.00898, abs=1e-5)
    out = compare_to_baseline([0.1, 0.2, 0.3, 0.4, 0.5, 0.9, 1.2])  # gains ..., 0.1, -0.2
    assert (out["wins"], out["losses"], out["statistic"]) == (6, 1, 26.0)
    assert out["pvalue"] == pytest.approx(0.02126, abs=1e-5)
    assert (out["q1"], out["median"], out["q3"]) == pytest.approx((0.25, 0.4, 0.7))


def test_compare_to_baseline_ties_and_nan_by_hand():
    # gains 0.5 and -1 (the tie and the NaN are dropped): ranks 1 and 2, statistic 1;
    # normal approximation: mean n(n+1)/4 = 1.5, variance n(n+1)(2n+1)/24 = 1.25
    out = compare_to_baseline([1.0, 0.5, 2.0, np.nan, 1.0 + 1e-12])
    assert (out["n"], out["wins"], out["ties"], out["losses"], out["statistic"]) == (4, 1, 2, 1, 1.0)
    z = (1.0 - 1.5) / np.sqrt(1.25)
    assert out["pvalue"] == pytest.approx(0.5 * math.erfc(z / math.sqrt(2)))
    tied = compare_to_baseline([1.0, 1.0])
    assert tied["ties"] == 2 and np.isnan(tied["statistic"]) and np.isnan(tied["pvalue"])


def test_one_upload_per_party_one_validation_round_then_the_final_fit():
    s = search(n_iter=6)
    kinds = [(r, pid, d, type(m).__name__) for r, pid, d, m in s.transcript_]
    assert kinds == [
        (-1, 0, "to_party", "SetupTask"), (-1, 1, "to_party", "SetupTask"),
        (-1, 0, "to_server", "SetupReply"), (-1, 1, "to_server", "SetupReply"),
        (0, 0, "to_party", "LocalSearchTask"), (0, 1, "to_party", "LocalSearchTask"),
        (0, 0, "to_server", "LocalSearchReply"), (0, 1, "to_server", "LocalSearchReply"),
        (1, 0, "to_party", "EvaluateTask"), (1, 1, "to_party", "EvaluateTask"),
        (1, 0, "to_server", "EvaluateReply"), (1, 1, "to_server", "EvaluateReply"),
        (2, 0, "to_server", "PooledData"), (2, 1, "to_server", "PooledData"),  # the pooled final fit
    ]
    validated = [m.points for r, _, d, m in s.transcript_ if r == 1 and d == "to_party"]
    assert all(len(p) == 1 for p in validated)
    np.testing.assert_allclose(validated[0][0], [s.best_params_["theta"]])
    assert s.best_estimator_.theta == s.best_params_["theta"]  # the final fit, on the pooled data


def test_budget_is_exactly_n_iter_evaluations_per_party():
    space = SearchSpace(SPACE)
    parties = [Party(i, *party_data(c, k, seed=i), estimator=Offset(), space=space, cv=2,
                     scoring="neg_mean_squared_error") for i, (c, k) in enumerate(TWO)]
    strategy = FLoRAStrategy(2, space, n_iter=7, local_search="bo", validate=False, random_state=0)
    Offset.n_fits = 0
    replies = InProcessFederation(parties).run_round(0, strategy.configure(0))
    assert Offset.n_fits == 2 * 7 * 2  # parties x n_iter x folds, nothing more
    for r in replies.values():
        assert isinstance(r, LocalSearchReply) and r.n_evaluations == 7 and len(r.points) == 7
        np.testing.assert_array_equal(r.trials, np.arange(7))
        np.testing.assert_allclose(r.losses, 1 - r.scores)
    # the party's score is its own CV score: -((theta - c) k)^2, exactly
    r0 = replies[0]
    np.testing.assert_allclose(r0.scores, -((r0.points[:, 0] - 0.2) * 1.0) ** 2)
    assert decode(encode(r0)).n_evaluations == 7  # plain data: it can cross a real wire


def test_n_best_uploads_the_lowest_losses_only():
    full = search(n_iter=10)
    best = search(n_iter=10, n_best=3)
    for pid in (0, 1):
        f, b = full.local_results_[pid], best.local_results_[pid]
        assert b["n_evaluations"] == 10 and len(b["points"]) == 3
        np.testing.assert_allclose(np.sort(b["losses"]), np.sort(f["losses"])[:3])
        np.testing.assert_array_equal(b["trials"], np.sort(b["trials"]))


def test_fitted_attributes():
    s = search(surface="mplm")
    assert sorted(s.surface_params_) == ["aplm", "mplm", "sgm", "sgm+u"]
    assert s.best_params_ == s.surface_params_["mplm"]
    assert s.heterogeneity_ == pytest.approx(
        heterogeneity([np.nanmin(r["losses"]) for r in s.local_results_.values()]))
    assert {len(r["params"]) for r in s.local_results_.values()} == {10}
    # best_score_ is measured by every party, with their sample-size weights
    theta = s.best_params_["theta"]
    assert s.best_score_ == pytest.approx(true_scores(theta, TWO).mean())
    # cv_results_: every uploaded configuration plus the validated one, which alone has a
    # federation score and rank 1
    res = s.cv_results_
    assert len(res["params"]) == 21
    row = s.best_index_
    assert res["params"][row] == s.best_params_ and res["rank_test_score"][row] == 1
    assert np.isnan(np.delete(res["mean_test_score"], row)).all()
    party0 = res["party_0_test_score"]
    assert np.sum(np.isfinite(party0)) == 11  # its 10 pairs + the validation


def test_default_local_search_is_random_search_on_the_wire():
    """The default chosen by issue 16's benchmark reaches the parties' tasks."""
    Xs, ys = zip(*(party_data(c, k, seed=i) for i, (c, k) in enumerate(TWO)))
    s = FLoRASearchCV(Offset(), SPACE, n_iter=4, cv=2, scoring="neg_mean_squared_error", random_state=0,
                      regressor=RandomForestRegressor(n_estimators=5)).fit(list(Xs), list(ys))
    assert s.get_params()["local_search"] == "random"
    methods = {m.method for _, _, d, m in s.transcript_ if d == "to_party" and isinstance(m, LocalSearchTask)}
    assert methods == {"random"}


def test_same_seed_same_search():
    a, b = search(local_search="bo", n_iter=11), search(local_search="bo", n_iter=11)  # GP at step 11
    assert a.best_params_ == b.best_params_ and a.surface_params_ == b.surface_params_
    np.testing.assert_array_equal(a.local_results_[1]["points"], b.local_results_[1]["points"])
    c = search(local_search="bo", n_iter=11, random_state=1)
    assert not np.array_equal(a.local_results_[1]["points"], c.local_results_[1]["points"])


def test_mplm_is_no_worse_for_the_worst_party_than_sgm():
    s = search(n_iter=15, local_search="bo")  # adaptive: pairs gather near each party's optimum
    worst = {k: true_scores(p["theta"], TWO).min() for k, p in s.surface_params_.items()}
    assert worst["mplm"] >= worst["sgm"]
    # and MPLM's pick is close to the best compromise (theta = 0.65, worst score -0.2025)
    assert worst["mplm"] > -0.35


def test_failed_configurations_are_reported_and_avoided():
    Xs, ys = zip(*(party_data(c, k, seed=i) for i, (c, k) in enumerate([(0.95, 1.0), (0.9, 1.0)])))
    with pytest.warns(FitFailedWarning, match=r"configurations failed in party [01].*\(fit\): ValueError: fitting"):
        s = FLoRASearchCV(Offset(fail_above=0.7), SPACE, n_iter=12, local_search="random", cv=2,
                          scoring="neg_mean_squared_error", random_state=0).fit(list(Xs), list(ys))
    for r in s.local_results_.values():
        failed = np.array([p["theta"] > 0.7 for p in r["params"]])
        assert r["n_failed"] == failed.sum() > 0
        assert np.isnan(r["scores"][failed]).all() and np.isfinite(r["scores"][~failed]).all()
    for params in s.surface_params_.values():
        assert params["theta"] <= 0.7


def test_api_config_and_parameter_validation():
    Xs, ys = zip(*(party_data(c, k, seed=i) for i, (c, k) in enumerate(TWO)))
    api = {"theta": {"type": "real", "space": "linear", "range": (0.0, 1.0)}}
    s = FLoRASearchCV(Offset(), api, n_iter=4, local_search="random", cv=2, random_state=0,
                      scoring="neg_mean_squared_error").fit(list(Xs), list(ys))
    assert 0 <= s.best_params_["theta"] <= 1
    bad = [
        (dict(n_iter=0), "The 'n_iter' parameter of FLoRASearchCV must be an int in the range \\[1, inf\\)"),
        (dict(surface="avg"), "The 'surface' parameter of FLoRASearchCV must be"),
        (dict(local_search="smac"), "The 'local_search' parameter of FLoRASearchCV must be one of"),
        (dict(n_best=0), "The 'n_best' parameter of FLoRASearchCV"),
    ]
    for params, match in bad:
        with pytest.raises(ValueError, match=match):
            FLoRASearchCV(Offset(), SPACE, cv=2, **params).fit(list(Xs), list(ys))


def test_without_validation_the_recommendation_is_predicted_not_measured():
    s = search(validate=False)
    assert s.federation_log_["message"].count("EvaluateTask") == 0
    row = s.best_index_
    assert s.cv_results_["params"][row] == s.best_params_ == s.surface_params_["aplm"]
    assert np.isnan(s.best_score_) and np.isnan(s.cv_results_["mean_test_score"][row])
    assert all(np.isnan(s.cv_results_[f"party_{p}_test_score"][row]) for p in s.party_ids_)


def test_strategy_tolerates_a_failed_party():
    strategy = FLoRAStrategy(2, n_iter=3, validate=True, random_state=0)
    assert [type(t).__name__ for t in strategy.configure(0).values()] == ["LocalSearchTask"] * 2
    ok = _upload([0.1, 0.5, 0.9], [0.5, 0.9, 0.6])
    failed = LocalSearchReply(points=np.zeros((0, 1)), losses=np.zeros(0), trials=np.zeros(0, int),
                              n_evaluations=0, n_failed=0, n_samples=10,
                              evaluation=EvaluateReply(scores=np.zeros(0), n_samples=10), error="boom")
    strategy.aggregate(0, {0: ok, 1: failed})
    assert strategy.failed_parties_ == {1: "boom"}
    assert strategy.surfaces_.parties_ == [0]
    tasks = strategy.configure(1)
    assert isinstance(tasks[1], EvaluateTask) and len(tasks) == 2  # the failed party validates too
    np.testing.assert_array_equal(strategy.recommend(), strategy.recommend())  # pure
    np.testing.assert_array_equal(strategy.recommend(party=0), [0.5])  # its best upload
    strategy.aggregate(1, {})
    assert strategy.configure(2) is None
    lost = FLoRAStrategy(1, n_iter=3, random_state=0)
    lost.aggregate(0, {0: failed})
    with pytest.raises(ValueError, match="no party uploaded a finite loss"):
        lost.recommend()


def test_local_search_task_is_validated_by_the_party():
    space = SearchSpace(SPACE)
    party = Party(0, *party_data(0.2, 1.0), estimator=Offset(), space=space, cv=2)
    with pytest.raises(ValueError, match="n_iter=0"):
        party.units(LocalSearchTask(0))
    with pytest.raises(ValueError, match="n_best=0"):
        party.units(LocalSearchTask(5, n_best=0))
    with pytest.raises(ValueError, match="does not know the local search 'smac'"):
        party.units(LocalSearchTask(5, method="smac"))


def test_local_search_fits_are_reused_by_a_later_evaluation_of_the_same_point():
    space = SearchSpace(SPACE)
    party = Party(0, *party_data(0.2, 1.0), estimator=Offset(), space=space, cv=2,
                  scoring="neg_mean_squared_error")
    task = LocalSearchTask(3, method="random", seed=0)
    reply = party.reply(task, [unit.func(*unit.args) for unit in party.units(task)])
    evaluate = EvaluateTask(np.asarray(reply.points)[:1])
    assert party.units(evaluate) == []  # nothing to refit: record_results cached the fold results
    again = party.reply(evaluate, [])
    assert again.cached.all()
    assert again.scores[0] == pytest.approx(reply.scores[0])


class _RandomAsOneUnit(RandomLocalSearch):
    """Random search run as an adaptive searcher is: one unit, ask / evaluate / tell in turn."""

    adaptive = True


def test_random_search_drawn_at_once_replies_as_the_one_unit_search():
    """A non-adaptive search's trials become (trial, fold) units; the reply is the same as when
    the party asks, evaluates and tells in turn: points, losses, repeats, failures, n_best."""
    register_local_search("random-as-one-unit", _RandomAsOneUnit)
    space = SearchSpace({"theta": [0.1, 0.5, 0.9]})  # 3 configurations: 8 trials repeat some
    replies, n_units = {}, {}
    for method in ("random", "random-as-one-unit"):
        party = Party(0, *party_data(0.2, 1.0), estimator=Offset(fail_above=0.6), space=space, cv=2,
                      scoring="neg_mean_squared_error")
        task = LocalSearchTask(8, method=method, seed=3, n_best=6)
        units = party.units(task)
        n_units[method] = len(units)
        replies[method] = party.reply(task, [unit.func(*unit.args) for unit in units])
    drawn, one = replies["random"], replies["random-as-one-unit"]
    assert n_units == {"random": 3 * 2, "random-as-one-unit": 1}  # distinct configurations x folds
    assert drawn.n_evaluations == 8 and drawn.n_failed > 0 and drawn.evaluation.cached.any()
    for key in ("points", "losses", "trials", "n_evaluations", "n_failed"):
        np.testing.assert_array_equal(getattr(drawn, key), getattr(one, key))
    for key in ("scores", "cached", "errors", "error_kinds"):
        np.testing.assert_array_equal(getattr(drawn.evaluation, key), getattr(one.evaluation, key))


class _RandomThatStops(RandomLocalSearch):
    """Random search whose fourth proposal fails: it raises, or (``invalid``) leaves the cube."""

    invalid = False

    def ask(self):
        self._asked = getattr(self, "_asked", 0) + 1
        if self._asked > 3:
            if self.invalid:
                return np.full(self.space.n_dims, 1.5)
            raise RuntimeError("no proposal left")
        return super().ask()


@pytest.mark.parametrize("invalid", [False, True])
def test_a_non_adaptive_searcher_that_fails_replies_as_an_adaptive_one(invalid):
    """The failure of a searcher that does not adapt is recorded after the trials before it, as
    for an adaptive searcher, not raised out of the party."""
    stops = type("Stops", (_RandomThatStops,), {"invalid": invalid})
    register_local_search("random-that-stops", stops)
    register_local_search("random-that-stops-as-one-unit", type("StopsAsOneUnit", (stops,), {"adaptive": True}))
    replies = {}
    for method in ("random-that-stops", "random-that-stops-as-one-unit"):
        party = Party(0, *party_data(0.2, 1.0), estimator=Offset(), space=SearchSpace({"theta": (0.0, 1.0)}),
                      cv=2, scoring="neg_mean_squared_error")
        task = LocalSearchTask(8, method=method, seed=3)
        replies[method] = party.reply(task, [unit.func(*unit.args) for unit in party.units(task)])
    drawn, one = replies.values()
    assert drawn.n_evaluations == 3 and drawn.kind == "local_search"
    assert ("ValueError" if invalid else "RuntimeError") in drawn.error
    assert drawn.error == one.error
    for key in ("points", "losses", "trials", "n_evaluations", "n_failed"):
        np.testing.assert_array_equal(getattr(drawn, key), getattr(one, key))


def test_parallel_search_gives_the_sequential_results_with_folds_in_threads(monkeypatch):
    from fedsearch.algorithms.flora import party as flora_party

    calls = []
    threaded = flora_party._FoldsInThreads.__call__
    monkeypatch.setattr(flora_party._FoldsInThreads, "__call__",
                        lambda self, point: calls.append(point) or threaded(self, point))
    monkeypatch.setattr(flora_party, "_in_a_worker", lambda: True)  # the threads of a worker
    parallel = search(local_search="bo", n_iter=11, cv=3)
    assert len(calls) == 2 * 11  # every trial of both parties went through the threaded folds
    monkeypatch.setattr(flora_party, "_in_a_worker", lambda: False)
    sequential = search(local_search="bo", n_iter=11, cv=3)
    assert len(calls) == 2 * 11
    for p in (0, 1):
        for key in ("points", "scores"):
            np.testing.assert_array_equal(parallel.local_results_[p][key], sequential.local_results_[p][key])
    assert parallel.best_params_ == sequential.best_params_


def test_server_workers_do_not_change_the_recommendation():
    one, two = search(n_jobs=None), search(n_jobs=2)
    assert one.surface_params_ == two.surface_params_


def _upload(points, scores):
    s = np.asarray(scores, dtype=float)
    return LocalSearchReply(points=np.asarray(points, dtype=float)[:, None], losses=1 - s,
                            trials=np.arange(len(s)), n_evaluations=len(s), n_failed=0, n_samples=10,
                            evaluation=EvaluateReply(scores=s, n_samples=10))


def test_validated_pick_recommends_the_best_validated_candidate():
    strategy = FLoRAStrategy(2, n_iter=3, n_validate=6, default_point=np.array([0.05]), random_state=0,
                             regressor=RandomForestRegressor(n_estimators=10))
    strategy.aggregate(0, {0: _upload([.1, .5, .9], [.6, .9, .5]), 1: _upload([.2, .5, .8], [.7, .8, .6])})
    tasks = strategy.configure(1)
    points = tasks[0].points
    # the chosen surface's arg-min first, the default configuration last, no point twice
    np.testing.assert_array_equal(points[0], strategy.surface_points_["aplm"])
    np.testing.assert_array_equal(points[-1], [0.05])
    assert len({tuple(p) for p in points}) == len(points) >= 2
    k = len(points)
    scores = np.linspace(0.5, 0.6, k)  # the default configuration validates best ...
    strategy.aggregate(1, {0: EvaluateReply(scores=scores, n_samples=10),
                           1: EvaluateReply(scores=scores, n_samples=30)})
    np.testing.assert_allclose(strategy.validated_scores_, scores)
    np.testing.assert_array_equal(strategy.recommend(), [0.05])  # ... and is recommended
    # a candidate some party failed on is never recommended
    failed = scores.copy()
    failed[-1] = np.nan
    strategy.aggregate(1, {0: EvaluateReply(scores=failed, n_samples=10), 1: EvaluateReply(scores=scores, n_samples=30)})
    np.testing.assert_array_equal(strategy.recommend(), points[-2])


def test_n_validate_one_is_the_paper_and_more_validates_more():
    one = search(n_iter=10)
    assert np.sum(np.isfinite(one.cv_results_["mean_test_score"])) == 1
    many = search(n_iter=10, n_validate=5)
    validated = np.isfinite(many.cv_results_["mean_test_score"])
    assert validated.sum() >= 2  # the surfaces' distinct picks and the estimator's theta=0.5
    assert {"theta": 0.5} in [p for p, v in zip(many.cv_results_["params"], validated) if v]
    assert many.best_score_ == np.nanmax(many.cv_results_["mean_test_score"])
    assert [r for r, pid, _, m in many.transcript_ if pid == 0 and r >= 0].count(1) == 2  # one round


@pytest.mark.parametrize("theta, candidate", [(1.5, {"theta": 1.0}), (-2.0, {"theta": 0.0}), ("x", None)])
def test_validated_default_is_the_nearest_configuration_of_the_space(theta, candidate):
    # HGB's l2_regularization=0 lies below the paper's log range from 1e-4: a number outside its
    # bounds is clipped to them, so the estimator's own configuration still gets validated
    Xs, ys = zip(*(party_data(c, k, seed=i) for i, (c, k) in enumerate(TWO)))
    many = FLoRASearchCV(Offset(theta=theta), SPACE, n_iter=10, n_validate=5, local_search="random", cv=2,
                         scoring="neg_mean_squared_error", random_state=0,
                         regressor=RandomForestRegressor(n_estimators=25)).fit(list(Xs), list(ys))
    validated = [p for p, m in zip(many.cv_results_["params"], many.cv_results_["mean_test_score"]) if np.isfinite(m)]
    surfaces = list(dict.fromkeys(repr(p) for p in many.surface_params_.values()))
    assert len(validated) == len(surfaces) + (candidate is not None)
    if candidate is not None:
        assert validated[-1] == pytest.approx(candidate)
