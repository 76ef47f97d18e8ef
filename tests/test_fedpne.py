import math

import numpy as np
import pytest

from fedsearch.algorithms.fedpne.strategy import FedPNEStrategy, NodeStatistics, confidence_width, eliminate, tau
from fedsearch.privacy import gaussian_noise_for_epsilon
from fedsearch.algorithms.xarmed.party import pull_reply
from fedsearch.algorithms.xarmed.tasks import PullReply, PullTask


def quadratic(points, optimum=0.3):
    """A bounded objective with a known maximiser: 1 - mean squared distance to ``optimum``."""
    return 1.0 - np.mean((points - optimum) ** 2, axis=1)


def step(points):
    """1 on the left half of the first coordinate, 0 on the right half."""
    return (points[:, 0] < 0.5).astype(float)


def run(strategy, func, noise=0.0, seed=0, fail=None):
    """A fake party loop: every party answers with ``func`` (plus noise); returns all tasks."""
    rng = np.random.default_rng(seed)
    rounds, round = [], 0
    while (tasks := strategy.configure(round)) is not None:
        replies = {}
        for p, task in tasks.items():
            scores = func(task.points) + noise * rng.standard_normal(len(task.points))
            replies[p] = pull_reply(task, scores)
        if fail is not None:
            replies = fail(round, replies)
        strategy.aggregate(round, replies)
        rounds.append(tasks)
        round += 1
    return rounds


# --------------------------------------------------------------------------- formulas
def test_tau_hand_computed():
    # c = 0.1, c1 = 1, nu1 = 1, rho = 0.5, T = 1000, delta = 1/M = 0.1: log(c1 T / delta) = log(1e4)
    kw = dict(horizon=1000, nu1=1.0, rho=0.5, c=0.1, c1=1.0, delta=0.1)
    log = math.log(1e4)
    assert [tau(h, **kw) for h in range(5)] == [math.ceil(0.01 * log * 4**h) for h in range(5)]
    assert [tau(h, **kw) for h in range(5)] == [1, 1, 2, 6, 24]
    assert tau(np.array([2, 3]), **kw).tolist() == [2, 6]
    assert tau(1, **{**kw, "nu1": 0.5}) == math.ceil(0.04 * log * 4)
    assert FedPNEStrategy(1, 10, 1000).tau(4) == 24  # default delta is 1/M


def test_confidence_width_hand_computed():
    b = confidence_width([10, 40, 0], horizon=1000, c=0.1, c1=1.0, delta=0.1)
    assert np.allclose(b[:2], [0.1 * math.sqrt(math.log(1e4) / 10), 0.1 * math.sqrt(math.log(1e4) / 40)])
    assert b[2] == np.inf
    # log(c1 T / delta) <= 0 is floored at 0: no width, tau_h = 0 (and still one pull per node)
    assert confidence_width([5], horizon=1, c=0.1, c1=0.5, delta=0.9)[0] == 0
    assert tau(3, horizon=1, nu1=1.0, rho=0.5, c=0.1, c1=0.5, delta=0.9) == 0


def test_elimination_rule_eq1():
    # nu1 rho^3 = 0.125; best lower bound 0.9 - 0.1 = 0.8
    means = np.array([0.5, 0.9, 0.7, 0.57, 0.58, np.nan])
    widths = np.full(6, 0.1)
    out = eliminate(means, widths, np.full(6, 3), nu1=1.0, rho=0.5)
    # 0.5+0.225 < 0.8 yes; best no; 0.925 no; 0.795 < 0.8 yes; 0.805 no; NaN (failed) yes
    assert out.tolist() == [True, False, False, True, False, True]
    # the widths of the best node count too
    assert not eliminate([0.5, 0.9], [0.1, 0.2], [3, 3], nu1=1.0, rho=0.5)[0]
    assert not eliminate([np.nan, np.nan], [0.1, 0.1], [1, 1], nu1=1.0, rho=0.5).any()




# --------------------------------------------------------------------------- node statistics
def test_node_statistics_means_counts_and_failures():
    task = PullTask(tree=(1, "random", 0), depth=2, index=[1, 2, 3], counts=[2, 0, 1])
    replies = {
        0: pull_reply(task, [0.2, 0.4, 1.0], 5),
        1: pull_reply(task, [0.6, np.nan, 0.0], 5),
        2: PullReply(means=np.array([]), counts=np.array([], int), n_samples=5, error="boom"),
    }
    stats = NodeStatistics.from_replies(replies, 4, 3)
    assert stats.replied.tolist() == [True, True, False, False]
    assert set(stats.failures) == {2, 3} and stats.failures[2] == "boom"
    assert np.allclose(stats.sums[:2], [[0.6, 0, 1.0], [0.6, 0, 0.0]])
    assert stats.counts[:2].tolist() == [[2, 0, 1], [1, 0, 1]]
    local = stats.local_means
    assert np.allclose(local[:2, [0, 2]], [[0.3, 1.0], [0.6, 0.0]])
    assert np.isnan(local[:, 1]).all()
    assert np.allclose(stats.global_means()[[0, 2]], [0.45, 0.5])  # mean of the local means
    assert np.isnan(stats.global_means()[1])
    assert np.allclose(stats.global_means([3, 1, 5, 5])[[0, 2]], [0.375, 0.75])  # weighted
    assert stats.n_pulls.tolist() == [3, 0, 2]
    wrong = NodeStatistics.from_replies({0: pull_reply(task, [0.0, 0.0, 0.0])}, 1, 2)
    assert not wrong.replied[0] and "3 means for 2 nodes" in wrong.failures[0]


# --------------------------------------------------------------------------- the algorithm
def test_first_phases_hand_computed():
    # M = 10, T = 1000: tau = 1, 1, 2, 6, 24 at depths 0..4. Phase 1 expands the root while
    # |K| tau_h <= M or tau_h <= 1: depth 3 (8 nodes, 8 * 6 = 48 > 10), t = ceil(6 / 10) = 1.
    s = FedPNEStrategy(1, 10, 1000, pull="center", random_state=0)
    tasks = s.configure(0)
    assert set(tasks) == set(range(10))
    pts = tasks[0].points
    assert all(np.array_equal(t.points, pts) for t in tasks.values())  # same points for everyone
    assert np.allclose(pts[:, 0], (np.arange(8) + 0.5) / 8)
    s.aggregate(0, {p: pull_reply(tasks[p], step(pts)) for p in tasks})
    ph = s.phases_[0]
    assert ph.nodes.depth.tolist() == [3] * 8 and ph.nodes.index.tolist() == list(range(1, 9))
    assert ph.pulls.tolist() == [1] * 8
    assert np.allclose(ph.widths, 0.1 * math.sqrt(math.log(1e4) / 10))  # T_{h,i} = M t = 10
    # means 1 on the left, 0 on the right: 0 + 0.096 + 0.125 < 1 - 0.096 -> right half eliminated
    assert ph.eliminated.tolist() == [False] * 4 + [True] * 4
    # phase 2: children of (3, 1..4) = (4, 1..8); 8 * tau_4 = 192 > 10, no expansion; t = ceil(24/10)
    tasks = s.configure(1)
    assert len(tasks[0].points) == 8 * 3
    assert np.allclose(tasks[0].points[::3, 0], (np.arange(8) + 0.5) / 16)
    s.aggregate(1, {p: pull_reply(t, step(t.points)) for p, t in tasks.items()})
    assert s.phases_[1].nodes.index.tolist() == list(range(1, 9))
    assert s.spent_ == 8 + 24 and s.n_phases == 2


def test_truncated_last_phase_spends_exactly_the_budget():
    # T = 12, M = 10: tau = 1, 1, 1, 4, 13; phase 1 = 8 nodes at depth 3 (8 pulls each party);
    # phase 2 would cost 8 nodes x ceil(13 / 10) = 16 > 4 left: 4 random nodes get one pull.
    s = FedPNEStrategy(1, 10, 12, pull="center", random_state=0)
    rounds = run(s, step)
    assert [len(r[0].points) for r in rounds] == [8, 4]
    last = s.phases_[-1]
    assert last.truncated and sorted(last.pulls.tolist()) == [0, 0, 0, 0, 1, 1, 1, 1]
    assert not last.eliminated[last.pulls == 0].any()
    assert s.spent_ == 12 and s.configure(2) is None
    # T = 45: tau_3 = 4, tau_4 = 15, tau_5 = 59. Phases: 8 nodes x 1, 8 nodes at depth 4 x 2 (all
    # left of 0.5, none eliminated), then 16 nodes at depth 5 would need 6 pulls each but 21 are
    # left: floor(21 / 16) = 1 pull for all and one more for 21 mod 16 = 5 random nodes.
    s = FedPNEStrategy(1, 10, 45, pull="center", random_state=0)
    rounds = run(s, step)
    assert [len(r[0].points) for r in rounds] == [8, 16, 21]
    last = s.phases_[-1]
    assert last.truncated and s.spent_ == 45
    assert sorted(last.pulls.tolist()) == [1] * 11 + [2] * 5
    assert np.allclose(last.widths, s.confidence_width(10 * last.pulls))


@pytest.mark.parametrize("n_parties, n_iter", [(1, 7), (3, 100), (10, 333), (50, 1000), (7, 2), (1, 1)])
def test_budget_never_exceeded(n_parties, n_iter):
    s = FedPNEStrategy(2, n_parties, n_iter, random_state=1)
    rounds = run(s, quadratic, noise=0.1)
    per_party = [sum(len(r[p].points) for r in rounds) for p in range(n_parties)]
    assert per_party == [s.spent_] * n_parties
    assert s.spent_ == n_iter  # the truncated phase spends what is left
    for r in rounds:
        for task in r.values():
            assert isinstance(task, PullTask)
            assert task.points.min() >= 0 and task.points.max() <= 1


def test_same_seed_same_result_and_seeds_differ():
    def trace(seed):
        s = FedPNEStrategy(2, 4, 300, random_state=seed)
        rounds = run(s, quadratic, noise=0.05, seed=5)
        return np.concatenate([r[0].points for r in rounds]), s.recommend()

    (pa, ra), (pb, rb), (pc, _) = trace(3), trace(3), trace(4)
    assert np.array_equal(pa, pb) and np.array_equal(ra, rb)
    assert pa.shape != pc.shape or not np.array_equal(pa, pc)


def test_recommend_is_pure():
    a = FedPNEStrategy(2, 3, 200, random_state=0)
    b = FedPNEStrategy(2, 3, 200, random_state=0)
    assert np.array_equal(a.recommend(), [0.5, 0.5])
    for round in range(2):
        ta, tb = a.configure(round), b.configure(round)
        for _ in range(3):
            a.recommend()
            a.recommend(party=1)
        assert np.array_equal(ta[0].points, tb[0].points)
        replies = {p: pull_reply(t, quadratic(t.points)) for p, t in ta.items()}
        a.aggregate(round, replies)
        b.aggregate(round, replies)
        assert np.array_equal(a.recommend(), a.recommend()) and np.array_equal(a.recommend(), b.recommend())
    assert a.spent_ == b.spent_ and len(a.phases_) == len(b.phases_)


def test_configure_twice_returns_the_same_tasks():
    s = FedPNEStrategy(1, 2, 50, random_state=0)
    assert s.configure(0) is s.configure(0)
    assert s.spent_ == len(s.configure(0)[0].points)
    with pytest.raises(RuntimeError, match="without a matching configure"):
        s.aggregate(3, {})


def test_tolerates_a_failed_party():
    def party_one_fails(round, replies):
        replies = dict(replies)
        replies[1] = PullReply(means=np.array([]), counts=np.array([], int), n_samples=1, error="party 1 is down")
        return replies

    s = FedPNEStrategy(1, 3, 200, random_state=0)
    run(s, quadratic, fail=party_one_fails)
    assert [f[1:] for f in s.failures_] == [(1, "party 1 is down")] * s.n_phases
    first = s.phases_[0]
    assert first.stats.replied.tolist() == [True, False, True]
    assert np.all(np.isfinite(first.means))
    assert abs(s.recommend()[0] - 0.3) < 0.1


def test_a_node_that_fails_is_eliminated_not_averaged_away():
    def fails_right(points):
        out = quadratic(points)
        out[points[:, 0] > 0.75] = np.nan
        return out

    s = FedPNEStrategy(1, 2, 100, pull="center", random_state=0)
    run(s, fails_right)
    first = s.phases_[0]
    bad = first.nodes.centers[:, 0] > 0.75
    assert np.isnan(first.means[bad]).all() and first.eliminated[bad].all()
    assert np.isfinite(first.means[~bad]).all()


def test_no_reply_at_all_repeats_the_phase():
    s = FedPNEStrategy(1, 2, 100, random_state=0)
    first = s.configure(0)
    s.aggregate(0, {p: PullReply(means=np.array([]), counts=np.array([], int), n_samples=1, error="down") for p in first})
    again = s.configure(1)
    assert len(again[0].points) == len(first[0].points)
    assert s.phases_[0].nodes.keys() == s._active.keys()
    assert np.array_equal(s.recommend(), [0.5])


@pytest.mark.parametrize("pull", ["uniform", "center"])
def test_recommendation_converges_as_the_budget_grows(pull):
    def error(n_iter, seed):
        s = FedPNEStrategy(2, 5, n_iter, pull=pull, random_state=seed)
        run(s, quadratic, noise=0.1, seed=seed)
        return np.linalg.norm(s.recommend() - 0.3)

    small = np.mean([error(20, seed) for seed in range(5)])
    large = np.mean([error(3000, seed) for seed in range(5)])
    assert large < small and large < 0.05


def test_dp_tasks_carry_the_noise_and_one_noise_seed_per_party():
    s = FedPNEStrategy(1, 20, 2000, dp_noise=3.0, dp_delta=1e-3, random_state=0)
    tasks = s.configure(0)
    assert all(t.noise_std == 3.0 for t in tasks.values())
    assert len({t.noise_seed for t in tasks.values()}) == 20  # independent noise per party
    assert s.releases_.tolist() == [len(tasks[0].index)] * 20
    assert FedPNEStrategy(1, 2, 10, random_state=0).configure(0)[0].noise_std == 0
    # a party-level target: the noise of n_iter + 1 releases
    target = FedPNEStrategy(1, 20, 2000, dp_epsilon=1.0, dp_delta=1e-3, random_state=0)
    assert target.noise_std_ == pytest.approx(gaussian_noise_for_epsilon(1.0, 2001, 1e-3))


def test_dp_search_never_renoises_a_configuration_at_a_real_party():
    from sklearn.dummy import DummyClassifier

    from fedsearch.federation import InProcessFederation
    from fedsearch.party import Party
    from fedsearch.space import SearchSpace

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 2)), np.repeat([0, 1], 20)
    space = SearchSpace({"strategy": ["prior", "most_frequent"]})
    parties = [Party(p, X, y, estimator=DummyClassifier(), space=space, cv=2) for p in range(2)]
    federation = InProcessFederation(parties)
    s = FedPNEStrategy(1, 2, 3000, pull="center", dp_noise=2.0, dp_delta=0.01, random_state=0)
    released, round = {0: set(), 1: set()}, 0
    while (tasks := s.configure(round)) is not None:
        replies = federation.run_round(round, tasks)
        for p, r in replies.items():  # two configurations: at most two distinct values per party
            released[p] |= set(np.round(r.means[r.counts > 0], 12).tolist())
        s.aggregate(round, replies)
        round += 1
    assert s.spent_ == 3000 and all(1 <= len(v) <= 2 for v in released.values())
    assert released[0] != released[1]  # each party its own noise


@pytest.mark.parametrize("kwargs, match", [
    ({"n_iter": 0}, r"The 'n_iter' parameter of FedPNEStrategy must be an int in the range \[1, inf\)"),
    ({"n_parties": 2.5}, "n_parties"),
    ({"rho": 1.0}, "rho"),
    ({"nu1": -1.0}, "nu1"),
    ({"delta": 0.0}, "delta"),
    ({"pull": "corner"}, "pull"),
    ({"split": "median"}, "split"),
    ({"dp_epsilon": 1.0}, "The 'dp_delta' parameter of FedPNEStrategy must be a float"),
    ({"dp_epsilon": 1.0, "dp_noise": 1.0, "dp_delta": 0.1}, "The 'dp_noise' parameter of FedPNEStrategy must be None"),
    ({"dp_epsilon": 1.0, "dp_delta": 2.0}, "dp_delta"),
    ({"dp_noise": 1.0, "dp_delta": 0.1, "dp_accountant": "moments"}, "dp_accountant"),
    ({"weights": [1.0]}, "weights"),
    ({"weights": [1.0, -1.0]}, "weights"),
])
def test_invalid_parameters(kwargs, match):
    params = {"n_dims": 1, "n_parties": 2, "n_iter": 10, **kwargs}
    with pytest.raises(ValueError, match=match):
        FedPNEStrategy(params.pop("n_dims"), params.pop("n_parties"), params.pop("n_iter"), **params)


def test_thousand_parties_ten_thousand_pulls_in_few_rounds():
    s = FedPNEStrategy(2, 1000, 10_000, random_state=0)
    rounds = run(s, quadratic)
    assert s.spent_ == 10_000 and len(rounds) <= 12
