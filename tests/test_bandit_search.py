import math
import warnings

import numpy as np
import pytest
from scipy.stats import loguniform
from sklearn.datasets import make_classification, make_regression
from sklearn.exceptions import FitFailedWarning
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import make_scorer, accuracy_score
from sklearn.tree import DecisionTreeClassifier

from fedsearch import FedPNESearchCV, LevelOrderSearchCV
from fedsearch.federation import SETUP_ROUND
from fedsearch.privacy import gaussian_noise_for_epsilon
from fedsearch.algorithms.xarmed.tasks import PullReply, PullTask
from fedsearch.algorithms.fedpne.strategy import FedPNEStrategy
from fedsearch.algorithms.levelorder.strategy import LevelOrderStrategy

SPACE = {"ccp_alpha": loguniform(1e-4, 0.5)}
TREE = DecisionTreeClassifier(random_state=0)


@pytest.fixture(scope="module")
def parties():
    X, y = make_classification(n_samples=90, n_features=5, random_state=0)
    return [X[i::3] for i in range(3)], [y[i::3] for i in range(3)]


@pytest.fixture(scope="module")
def regression_parties():
    X, y = make_regression(n_samples=60, n_features=4, noise=5.0, random_state=0)
    return [X[i::2] for i in range(2)], [y[i::2] for i in range(2)]


def messages(search, kind, direction):
    return [(r, p, m) for r, p, d, m in search.transcript_ if d == direction and isinstance(m, kind)]


def test_fedpne_search_runs_phases_within_budget(parties):
    Xs, ys = parties
    search = FedPNESearchCV(TREE, SPACE, n_iter=20, cv=2, random_state=0).fit(Xs, ys)
    strategy = search.strategy_
    assert isinstance(strategy, FedPNEStrategy) and strategy.spent_ == 20
    tasks = messages(search, PullTask, "to_party")
    for p in range(3):  # each party cross-validates at most n_iter configurations in the search
        search_tasks = [m for r, q, m in tasks if q == p and r < strategy.n_phases]
        assert sum(m.cost for m in search_tasks) == sum(len(m.points) for m in search_tasks) == 20
    # one round per phase, plus the validation round of the recommended centre (pull="uniform")
    assert search.n_rounds_ == strategy.n_phases + 1
    rounds = set(search.federation_log_["round"]) - {SETUP_ROUND}  # the set-up precedes round 0
    assert rounds == set(range(search.n_rounds_ + 1))  # and the pooled fit's transfer follows
    # every row is evaluated by every party (same points for all), the best one measured
    results = search.cv_results_
    assert np.all(results["n_failed_parties"] == 0)
    assert all(np.isfinite(results[f"party_{p}_test_score"]).all() for p in range(3))
    assert np.isclose(search.best_score_, results["mean_test_score"][search.best_index_])
    assert np.isclose(search.best_params_["ccp_alpha"], SPACE["ccp_alpha"].ppf(strategy.recommend()[0]))
    assert search.predict(Xs[0]).shape == ys[0].shape


def test_same_seed_same_search(parties):
    Xs, ys = parties
    a, b = (FedPNESearchCV(TREE, SPACE, n_iter=10, cv=2, random_state=3).fit(Xs, ys)
            for _ in range(2))
    assert a.best_params_ == b.best_params_
    assert a.cv_results_["params"] == b.cv_results_["params"]
    assert np.array_equal(a.cv_results_["mean_test_score"], b.cv_results_["mean_test_score"])


def test_mean_and_weighted_aggregate(parties):
    Xs, ys = parties
    Xs, ys = [Xs[0], np.vstack(Xs[1:])], [ys[0], np.concatenate(ys[1:])]
    search = FedPNESearchCV(TREE, SPACE, n_iter=8, cv=2, pull="center",
                            aggregate="weighted", random_state=0).fit(Xs, ys)
    assert np.allclose(search.strategy_.weights, [30, 60])
    phase = search.strategy_.phases_[0]
    assert np.allclose(phase.means, np.average(phase.stats.local_means, axis=0, weights=[30, 60]))
    plain = FedPNESearchCV(TREE, SPACE, n_iter=8, cv=2, random_state=0).fit(Xs, ys)
    assert plain.strategy_.weights is None


@pytest.mark.parametrize("estimator, scoring", [
    (Ridge(), "r2"),
    (Ridge(), None),                      # a regressor's score is r2
    (Ridge(), "neg_mean_squared_error"),
    (LogisticRegression(), make_scorer(accuracy_score)),  # callables are not known to be bounded
    (LogisticRegression(), "matthews_corrcoef"),
])
@pytest.mark.parametrize("cls", [FedPNESearchCV, LevelOrderSearchCV])
def test_unbounded_scorer_fails_before_any_work(cls, estimator, scoring, regression_parties, parties):
    class Exploding(type(estimator)):
        def fit(self, X, y, **kwargs):
            raise RuntimeError("no fit should happen")

    data = regression_parties if isinstance(estimator, Ridge) else parties
    search = cls(Exploding(), {"alpha" if isinstance(estimator, Ridge) else "C": loguniform(1e-2, 1)},
                 n_iter=4, scoring=scoring, cv=2)
    with pytest.raises(ValueError, match=r"rewards in \[0, 1\].*reward_bounds=\(low, high\)"):
        search.fit(*data)


@pytest.mark.parametrize("scoring, refit", [
    ("balanced_accuracy", True), ("roc_auc", True), ("f1_macro", True), (None, True),
    (["accuracy", "neg_log_loss"], "accuracy"), ({"auc": "roc_auc", "nll": "neg_log_loss"}, "auc"),
])
def test_bounded_scorers_are_accepted(parties, scoring, refit):
    Xs, ys = parties
    search = FedPNESearchCV(TREE, SPACE, n_iter=4, cv=2, scoring=scoring, refit=refit,
                            final_fit=None, random_state=0).fit(Xs[:2], ys[:2])
    assert search.strategy_.spent_ == 4


def test_multimetric_objective_must_be_bounded(parties):
    Xs, ys = parties
    search = FedPNESearchCV(TREE, SPACE, n_iter=4, cv=2,
                            scoring=["accuracy", "neg_log_loss"], refit="neg_log_loss")
    with pytest.raises(ValueError, match="'neg_log_loss' is not known"):
        search.fit(Xs, ys)


def test_reward_bounds_rescale_what_the_bandit_sees(regression_parties):
    Xs, ys = regression_parties
    search = FedPNESearchCV(Ridge(), {"alpha": loguniform(1e-2, 1e2)}, n_iter=8, cv=2, scoring="r2",
                            pull="center", reward_bounds=(-1.0, 1.0), random_state=0).fit(Xs, ys)
    phase = search.strategy_.phases_[0]
    raw = np.array([m.evaluation.scores for r, p, m in sorted(messages(search, PullReply, "to_server"),
                                                   key=lambda x: (x[0], x[1])) if r == 0])
    assert np.all(phase.pulls == 1)  # one pull per node: the local mean is the reward
    assert np.allclose(phase.stats.local_means, (raw + 1.0) / 2.0)
    # cv_results_ keeps the raw r2: the best score is the mean of the parties' raw scores
    row = search.best_index_
    assert np.isclose(search.best_score_, np.mean([search.cv_results_[f"party_{q}_test_score"][row]
                                                   for q in range(2)]))
    assert np.allclose(search.cv_results_["party_0_test_score"][:8], raw[0])  # rows in pull order


def test_dp_noise_is_sent_to_the_parties_and_scaled_with_bounds(parties, regression_parties):
    Xs, ys = parties
    sigma = gaussian_noise_for_epsilon(4.0, 6 + 1, 0.01)  # the party-level target over n_iter + 1 releases
    search = FedPNESearchCV(TREE, SPACE, n_iter=6, cv=2, dp_epsilon=4.0, dp_delta=0.01,
                            random_state=0).fit(Xs, ys)
    tasks = messages(search, PullTask, "to_party")
    # no clean score leaves a party: the recommendation is evaluated with the same noise too
    assert tasks and all(math.isclose(t.noise_std, sigma) and t.clip == (0.0, 1.0) for _, _, t in tasks)
    assert len({t.noise_seed for _, _, t in tasks}) == len(tasks)
    assert search.n_rounds_ == search.strategy_.n_phases + 1
    last = [t for r, _, t in tasks if r == search.n_rounds_ - 1]
    assert all(np.array_equal(t.points, search.strategy_.recommend()[None]) and t.pull == "center" for t in last)
    assert np.isfinite(search.best_score_) and len(search.cv_results_["params"]) == 1
    Xr, yr = regression_parties
    search = FedPNESearchCV(Ridge(), {"alpha": loguniform(1e-2, 1e2)}, n_iter=4, cv=2, scoring="r2",
                            reward_bounds=(-3.0, 1.0), dp_epsilon=4.0, dp_delta=0.01,
                            random_state=0).fit(Xr, yr)
    tasks = messages(search, PullTask, "to_party")
    sigma = gaussian_noise_for_epsilon(4.0, 4 + 1, 0.01)
    assert tasks and all(math.isclose(t.noise_std, 4.0 * sigma) and t.clip == (-3.0, 1.0) for _, _, t in tasks)


def test_party_cache_answers_repeated_configurations(parties):
    Xs, ys = parties
    search = FedPNESearchCV(DecisionTreeClassifier(random_state=0), {"max_depth": [1, 2, 3]}, n_iter=12,
                            cv=2, random_state=0).fit(Xs, ys)
    for p in range(3):
        replies = [m.evaluation for r, q, m in messages(search, PullReply, "to_server") if q == p]
        cached = np.concatenate([m.cached for m in replies])
        assert cached.sum() >= 12 - 3  # at most 3 distinct configurations were fitted
    # a cached answer is the same score as the fit it repeats
    tasks = messages(search, PullTask, "to_party")
    replies = messages(search, PullReply, "to_server")
    seen = {}
    for (_, p, task), (_, _, reply) in zip(tasks, replies):
        for point, score in zip(task.points, reply.evaluation.scores):
            key = (p, min(int(point[0] * 3), 2))
            assert seen.setdefault(key, score) == score
    assert len(search.cv_results_["params"]) == 3


def test_failing_configurations_are_tolerated(parties):
    class FailsAboveOne(DecisionTreeClassifier):
        def fit(self, X, y, **kwargs):
            if self.ccp_alpha > 0.01:
                raise ValueError("ccp_alpha too large")
            return super().fit(X, y, **kwargs)

    Xs, ys = parties
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FitFailedWarning)
        search = FedPNESearchCV(FailsAboveOne(), SPACE, n_iter=20, cv=2, random_state=0).fit(Xs, ys)
    assert search.best_params_["ccp_alpha"] <= 0.01
    first = search.strategy_.phases_[0]
    failed = np.isnan(first.means)
    assert failed.any() and first.eliminated[failed].all()


def test_level_order_search(parties):
    Xs, ys = parties
    search = LevelOrderSearchCV(TREE, SPACE, n_iter=30, cv=2, random_state=0).fit(Xs, ys)
    strategy = search.strategy_
    assert isinstance(strategy, LevelOrderStrategy) and 0 < strategy.spent_ <= 30
    assert search.n_rounds_ == len(strategy.levels_)  # the centre was evaluated by everyone
    assert np.isclose(search.best_params_["ccp_alpha"], SPACE["ccp_alpha"].ppf(strategy.recommend()[0]))
    # T_h pulls of the same centre: one fit per distinct configuration, the rest from the cache
    n_rows = len(search.cv_results_["params"])
    assert n_rows == sum(len(lv.nodes) for lv in strategy.levels_)


@pytest.mark.parametrize("params, match", [
    ({"n_iter": 0}, r"The 'n_iter' parameter of FedPNESearchCV must be an int in the range \[1, inf\)\. "
                    r"Got 0 instead\."),
    ({"rho": 1.5}, "The 'rho' parameter"),
    ({"nu1": 0}, "The 'nu1' parameter"),
    ({"c": -1.0}, "The 'c' parameter"),
    ({"split": "median"}, "The 'split' parameter"),
    ({"pull": "edge"}, "The 'pull' parameter"),
    ({"reward_bounds": (1.0, 0.0)}, "The 'reward_bounds' parameter"),
    ({"aggregate": "min"}, "The 'aggregate' parameter"),
    ({"dp_noise": 1.0}, "The 'dp_delta' parameter of FedPNESearchCV must be a float in the range"),
    ({"dp_noise": 1.0, "dp_epsilon": 1.0, "dp_delta": 0.01}, "The 'dp_noise' parameter of FedPNESearchCV"),
    ({"dp_noise": 1.0, "dp_delta": 0.01, "dp_accountant": "moments"}, "The 'dp_accountant' parameter"),
    ({"dp_epsilon": -1.0, "dp_delta": 0.01}, "The 'dp_epsilon' parameter"),
])
def test_invalid_parameters(parties, params, match):
    with pytest.raises(ValueError, match=match):
        FedPNESearchCV(TREE, SPACE, cv=2, **params).fit(*parties)


def test_level_order_invalid_parameters(parties):
    with pytest.raises(ValueError, match="The 'delta' parameter of LevelOrderSearchCV"):
        LevelOrderSearchCV(TREE, SPACE, delta=2.0).fit(*parties)
