"""The X-armed searches' protocol (node ids down, one mean per node up), DP-Fed-PNE's releases and
accounting, and checks that fail on the mutations of issue 12."""

import math
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.tree import DecisionTreeClassifier

from fedsearch.privacy import classic_gaussian_epsilon, gaussian_epsilon, gaussian_noise_for_epsilon
from fedsearch.algorithms.fedpne.strategy import FedPNEStrategy, eliminate
from fedsearch.algorithms.levelorder.strategy import LevelOrderStrategy
from fedsearch.algorithms.xarmed.tasks import PullReply, PullTask
from fedsearch.algorithms.xarmed.tree import Partition
from fedsearch.messages import decode, encode
from fedsearch.party import Party
from fedsearch.research.simulate import simulate
from fedsearch.research.synthetic import FunctionParty, Objective, double_sine, garland, make_parties, sine_product
from fedsearch.space import SearchSpace
from fedsearch.testing import JSONFederation


def peak(center=0.3):
    return Objective(lambda X: 1 - np.abs(X[:, 0] - center), 1, "peak")


def reply(means, counts=None):
    means = np.asarray(means, dtype=float)
    return PullReply(means=means, counts=np.ones(len(means), int) if counts is None else counts, n_samples=1)


# --------------------------------------------------------------------------- the protocol
def test_party_pulls_the_named_nodes_and_replies_one_mean_per_node():
    tree = Partition(2, random_state=3)
    nodes = tree.children(tree.children(tree.root()))
    task = PullTask(tree=(2, "random", tree.seed), depth=2, index=nodes.index, counts=[3, 1, 0, 2], draw_seed=5)
    points = task.points
    assert len(points) == 6 and np.all(points[:3] >= nodes.lower[0]) and np.all(points[:3] <= nodes.upper[0])
    f = Objective(lambda X: X.sum(axis=1), 2, "sum")
    out = FunctionParty(f).handle(decode(encode(task)))
    assert isinstance(out, PullReply) and out.evaluation is None
    np.testing.assert_allclose(out.means[[0, 1, 3]], [points[:3].sum(1).mean(), points[3].sum(), points[4:].sum(1).mean()])
    assert np.isnan(out.means[2]) and out.counts.tolist() == [3, 1, 0, 2]
    shared = FunctionParty(f).handle(PullTask(**{**task.__dict__, "share": True}))
    np.testing.assert_allclose(shared.evaluation.scores, points.sum(axis=1))


def test_one_task_object_serves_every_party_and_bytes_fall():
    parties = make_parties(garland(), 10, random_state=0)
    trace = simulate("fedpne", parties, n_iter=5000, random_state=0, federation=JSONFederation)
    # 5,000 points down and 5,000 rewards up per party before; node ids and means now
    assert trace.bytes_per_round.sum() / 10 < 10_000
    assert all(np.array_equal(trace.points[p], trace.points[0]) for p in range(10))
    assert trace.n_evaluations.tolist() == [5000] * 10


def test_search_cv_lists_the_shared_configurations_and_only_node_means_otherwise():
    from fedsearch import FedPNESearchCV

    X, y = make_classification(120, 6, random_state=0)
    Xs, ys = [X[:60], X[60:]], [y[:60], y[60:]]
    space = {"max_depth": list(range(1, 9)), "min_samples_leaf": list(range(1, 9))}
    shared = FedPNESearchCV(DecisionTreeClassifier(random_state=0), space, n_iter=12, cv=2, random_state=0).fit(Xs, ys)
    private = FedPNESearchCV(DecisionTreeClassifier(random_state=0), space, n_iter=12, cv=2, random_state=0,
                             share_evaluations=False).fit(Xs, ys)
    assert len(shared.cv_results_["params"]) > 1 and len(private.cv_results_["params"]) == 1
    assert shared.best_params_ == private.best_params_
    up = [m for _, _, d, m in private.transcript_ if d == "to_server" and isinstance(m, PullReply)]
    assert up and all(m.evaluation is None for m in up)


# --------------------------------------------------------------------------- mutations of issue 12
def test_best_node_is_the_highest_mean_not_the_highest_lower_bound():
    # by mean the best is node 0 (0.9 - 0.5 = 0.4): node 2's 0.6 + 0.01 + 0.01 survives;
    # by lower bound it would be node 1 (0.79) and node 2 would go
    out = eliminate([0.9, 0.8, 0.6], [0.5, 0.01, 0.01], [3, 3, 3], nu1=0.08, rho=0.5)
    assert out.tolist() == [False, False, False]


def test_fedpne_expands_while_tau_h_is_at_most_one():
    # M = 1, T = 1000, delta = 0.5, c = 0.1: c^2 log(2000) = 0.076, tau_h = ceil(0.076 * 4^h) = 1, 1, 2:
    # |K| tau_1 = 2 > M but tau_1 <= 1, so the first phase is at depth 2 (4 nodes, 2 pulls each)
    s = FedPNEStrategy(1, 1, 1000, delta=0.5, random_state=0)
    task = s.configure(0)[0]
    assert (task.depth, len(task.index), task.counts.tolist()) == (2, 4, [2, 2, 2, 2])


def test_levelorder_expands_within_three_nu1_rho_h():
    s = LevelOrderStrategy(1, 1, 10_000, random_state=0)
    for r in range(2):  # level 0 (root), level 1: means 0.9 and 0.0, 0.9 < 3 * 1 * 0.5 = 1.5 apart
        task = s.configure(r)[0]
        s.aggregate(r, {0: reply([0.9, 0.0][:len(task.index)])})
    assert len(s.configure(2)[0].index) == 4  # both nodes of level 1 expanded (with 1*nu1*rho^h only one)


def test_levelorder_spends_its_default_budget_and_warns_when_it_cannot_reach_depth_2():
    party = FunctionParty(peak())
    for n_iter in (100, 1000):
        s = LevelOrderStrategy(1, 1, n_iter, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            r = 0
            while (tasks := s.configure(r)) is not None:
                s.aggregate(r, {0: party.handle(tasks[0])})
                r += 1
        assert s.depth_ >= 2 and n_iter - s.spent_ < len(s.levels_[-1].nodes)
    s = LevelOrderStrategy(1, 1, 4, random_state=0)
    with pytest.warns(UserWarning, match="depth 2"):
        r = 0
        while (tasks := s.configure(r)) is not None:
            s.aggregate(r, {0: party.handle(tasks[0])})
            r += 1


# --------------------------------------------------------------------------- DP-Fed-PNE
def _data_party():
    X, y = make_classification(80, 4, random_state=0)
    space = SearchSpace({"max_depth": [1, 2]})
    return Party(0, X, y, estimator=DecisionTreeClassifier(random_state=0), space=space, cv=2)


def test_a_repeated_quantity_is_released_once_never_renoised():
    party, tree = _data_party(), Partition(1, random_state=0)
    nodes = tree.children(tree.children(tree.root()))  # 4 nodes, 2 configurations
    released = []
    for seed in range(3):
        task = PullTask(tree=(1, "random", tree.seed), depth=2, index=nodes.index, counts=[2, 2, 2, 2],
                        pull="center", noise_std=1.0, noise_seed=seed, clip=(0.0, 1.0))
        released.append(party.handle(task).means)
    released = np.array(released)
    # nodes 0-1 are max_depth=1, nodes 2-3 max_depth=2: one noisy value each, whatever the task
    assert np.unique(released[:, :2]).size == 1 and np.unique(released[:, 2:]).size == 1
    assert released[0, 0] != released[0, 2]


def test_released_means_are_clipped_before_the_noise():
    party = FunctionParty(Objective(lambda X: np.full(len(X), 5.0), 1, "five"))
    task = PullTask(tree=(1, "random", 0), depth=0, index=[1], counts=[4], noise_std=1e-9, clip=(0.0, 1.0))
    assert abs(party.handle(task).means[0] - 1.0) < 1e-6


def test_party_level_accounting():
    # mu-GDP with mu = sqrt(k) / sigma = 1: the closed form at delta = 1e-5
    assert math.isclose(gaussian_epsilon(10.0, 100, 1e-5), 4.3772, abs_tol=1e-3)
    assert gaussian_epsilon(10.0, 400, 1e-5) > gaussian_epsilon(10.0, 100, 1e-5)
    sigma = gaussian_noise_for_epsilon(2.0, 1001, 1e-5)
    assert math.isclose(gaussian_epsilon(sigma, 1001, 1e-5), 2.0, rel_tol=1e-6)
    assert math.isclose(classic_gaussian_epsilon(math.sqrt(2 * math.log(1.25e5)), 1e-5), 1.0)
    pytest.importorskip("dp_accounting")
    assert math.isclose(gaussian_epsilon(10.0, 100, 1e-5, "pld"), gaussian_epsilon(10.0, 100, 1e-5), rel_tol=1e-3)
    assert gaussian_epsilon(10.0, 100, 1e-5, "rdp") >= gaussian_epsilon(10.0, 100, 1e-5)


def test_dp_search_reports_the_party_level_guarantee_and_releases_only_noisy_values():
    from fedsearch import FedPNESearchCV

    X, y = make_classification(120, 6, random_state=0)
    Xs, ys = [X[:60], X[60:]], [y[:60], y[60:]]
    space = {"max_depth": list(range(1, 9))}
    search = FedPNESearchCV(DecisionTreeClassifier(random_state=0), space, n_iter=20, cv=2, pull="center",
                            dp_epsilon=1.0, dp_delta=1e-5, random_state=0, final_fit=None).fit(Xs, ys)
    assert search.strategy_.noise_std_ == pytest.approx(gaussian_noise_for_epsilon(1.0, 21, 1e-5))
    assert set(search.epsilon_) == {0, 1} and all(0 < e <= 1.0 + 1e-9 for e in search.epsilon_.values())
    assert search.delta_ == {0: 1e-5, 1: 1e-5}
    assert search.release_epsilon_ == pytest.approx(classic_gaussian_epsilon(search.strategy_.noise_std_, 1e-5))
    up = [m for _, _, d, m in search.transcript_ if d == "to_server" and isinstance(m, PullReply)]
    assert all(m.evaluation is None for m in up)
    with pytest.raises(ValueError, match="The 'dp_noise' parameter of FedPNESearchCV must be None"):
        FedPNESearchCV(DecisionTreeClassifier(), space, dp_noise=1.0, dp_epsilon=1.0, dp_delta=1e-5).fit(Xs, ys)
    noisy = FedPNESearchCV(DecisionTreeClassifier(random_state=0), space, n_iter=20, cv=2, dp_noise=5.0,
                           dp_delta=1e-5, random_state=0, final_fit=None).fit(Xs, ys)
    releases = noisy.strategy_.releases_ + 1
    assert noisy.epsilon_[0] == pytest.approx(gaussian_epsilon(5.0, int(releases[0]), 1e-5))


# --------------------------------------------------------------------------- regret
@pytest.mark.slow
@pytest.mark.parametrize("objective", [garland, double_sine])
def test_fedpne_regret_below_federated_random_search(objective):
    def regret(name):
        return np.mean([simulate(name, make_parties(objective(), 10, random_state=s), n_iter=1000,
                                 random_state=s).cumulative_regret() for s in range(5)])

    assert regret("fedpne") < regret("random")


@pytest.mark.slow
def test_levelorder_loss_falls_with_more_players():
    def loss(m):  # every player evaluates the same randomly shifted objective (one shift per seed)
        out = []
        for s in range(10):
            shifted = make_parties(sine_product(), 1, kind="shift", scale=0.1, random_state=s)[0].objective
            players = [FunctionParty(shifted, noise_std=0.1, party_id=j) for j in range(m)]
            out.append(simulate("levelorder", players, n_iter=1600, random_state=s).simple_regret())
        return np.mean(out)

    assert loss(4) < loss(1)
