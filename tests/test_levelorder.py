import warnings
import math

import numpy as np
import pytest

from fedsearch.algorithms.xarmed.party import pull_reply
from fedsearch.algorithms.xarmed.tasks import PullReply
from fedsearch.algorithms.levelorder.strategy import LevelOrderStrategy, level_pulls


def quadratic(points, optimum=0.3):
    return 1.0 - np.mean((points - optimum) ** 2, axis=1)


def step(points):
    return (points[:, 0] < 0.5).astype(float)


def run(strategy, func, noise=0.0, seed=0, max_rounds=None, fail=None):
    rng = np.random.default_rng(seed)
    rounds, round = [], 0
    while (max_rounds is None or round < max_rounds) and (tasks := strategy.configure(round)) is not None:
        replies = {p: pull_reply(t, func(t.points) + noise * rng.standard_normal(len(t.points)))
                   for p, t in tasks.items()}
        if fail is not None:
            replies = fail(round, replies)
        strategy.aggregate(round, replies)
        rounds.append(tasks)
        round += 1
    return rounds


def test_level_pulls_hand_computed():
    # T_h = ceil(log(pi^2 (h+1)^2 |S_h| / 3 delta) / (2 (nu1 rho^h)^2 m))
    assert level_pulls(0, 1, n_parties=4, nu1=1.0, rho=0.5, delta=0.01) == 1  # 5.796 / 8
    assert level_pulls(2, 4, n_parties=2, nu1=1.0, rho=0.5, delta=0.01) == 38  # 9.379 / 0.25
    assert level_pulls(2, 4, n_parties=2, nu1=1.0, rho=0.5, delta=0.01) == math.ceil(
        math.log(math.pi**2 * 9 * 4 / 0.03) / (2 * 0.25**2 * 2))
    assert level_pulls(3, 6, n_parties=1, nu1=0.5, rho=0.7, delta=0.1) == math.ceil(
        math.log(math.pi**2 * 16 * 6 / 0.3) / (2 * (0.5 * 0.7**3) ** 2))
    # more parties, fewer pulls each
    assert level_pulls(5, 8, n_parties=16, nu1=1, rho=0.5, delta=0.01) < level_pulls(
        5, 8, n_parties=1, nu1=1, rho=0.5, delta=0.01)


def test_levels_and_expansion_hand_computed():
    # nu1 = 0.1: level 1 keeps nodes within 3 * 0.1 * 0.5 = 0.15 of the best; level 0 expands.
    s = LevelOrderStrategy(1, 2, 10_000, nu1=0.1, delta=0.01, random_state=0)
    run(s, step, max_rounds=3)
    lv0, lv1, lv2 = s.levels_
    assert lv0.nodes.keys() == [(0, 1)]
    assert lv0.pulls.tolist() == [level_pulls(0, 1, n_parties=2, nu1=0.1, rho=0.5, delta=0.01)]
    assert lv1.nodes.keys() == [(1, 1), (1, 2)]
    assert np.allclose(lv1.means, [1.0, 0.0]) and lv1.eliminated.tolist() == [False, True]
    assert lv2.nodes.keys() == [(2, 1), (2, 2)]  # the children of (1, 1) only
    assert lv2.pulls.tolist() == [level_pulls(2, 2, n_parties=2, nu1=0.1, rho=0.5, delta=0.01)] * 2
    # every party pulls the same points: T_h copies of each centre
    assert s.spent_ == sum(int(lv.pulls.sum()) for lv in s.levels_)
    assert s.depth_ == 2


def test_expansion_keeps_nodes_within_three_nu1_rho_h():
    def linear(points):
        return points[:, 0]

    s = LevelOrderStrategy(1, 1, 100_000, nu1=0.1, rho=0.5, delta=0.1, split="longest", random_state=0)
    run(s, linear, max_rounds=4)
    for lv in s.levels_:
        h = lv.nodes.depth[0]
        expected = lv.means >= lv.means.max() - 3 * 0.1 * 0.5**h
        assert np.array_equal(~lv.eliminated, expected)
    # depth 3 centres 1/16 .. 15/16: best 15/16, threshold 0.0375: only (3, 8) is expanded
    assert (~s.levels_[3].eliminated).sum() == 1


def test_the_last_level_gets_the_remainder_of_the_budget():
    for n_parties, n_iter in [(1, 50), (4, 500), (16, 3000), (3, 1)]:
        s = LevelOrderStrategy(2, n_parties, n_iter, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # (3, 1) cannot reach depth 2
            rounds = run(s, quadratic, noise=0.1)
        assert s.spent_ <= n_iter
        per_party = [sum(len(r[p].points) for r in rounds) for p in range(n_parties)]
        assert per_party == [s.spent_] * n_parties
        last = s.levels_[-1]
        # a last level cut to floor(R / |S_h|) pulls per node leaves R < |S_h|; a full last level
        # leaves less than one pull per node of the next (at most 2 |S_h| nodes)
        assert n_iter - s.spent_ < (1 if last.truncated else 2) * len(last.nodes)
        assert last.truncated == (last.pulls[0] < s.level_pulls(int(last.nodes.depth[0]), len(last.nodes)))
    assert s.configure(len(rounds)) is None


def test_anytime_without_budget():
    s = LevelOrderStrategy(1, 4, random_state=0)
    assert s.n_iter is None and s.delta == 0.05
    recommendations = []
    for round in range(6):
        tasks = s.configure(round)
        assert tasks is not None
        s.aggregate(round, {p: pull_reply(t, quadratic(t.points)) for p, t in tasks.items()})
        recommendations.append(s.recommend()[0])
    assert s.depth_ == 5
    assert abs(recommendations[-1] - 0.3) <= abs(recommendations[0] - 0.3)
    assert abs(recommendations[-1] - 0.3) < 1 / 32


def test_answer_is_best_node_of_deepest_level():
    s = LevelOrderStrategy(1, 2, 5000, random_state=0)
    run(s, quadratic, noise=0.05)
    last = s.levels_[-1]
    assert np.array_equal(s.recommend(), last.nodes.centers[np.argmax(last.means)])
    assert s.depth_ == last.nodes.depth[0] == max(lv.nodes.depth[0] for lv in s.levels_)


def test_same_seed_same_result_and_pure_recommend():
    def trace(seed):
        s = LevelOrderStrategy(2, 3, 2000, pull="uniform", random_state=seed)
        rounds = run(s, quadratic, noise=0.1, seed=1)
        for _ in range(3):
            s.recommend()
        return np.concatenate([r[0].points for r in rounds]), s.recommend(), s.spent_

    a, b, c = trace(0), trace(0), trace(1)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) and a[2] == b[2]
    assert a[0].shape != c[0].shape or not np.array_equal(a[0], c[0])
    fresh = LevelOrderStrategy(2, 3, 2000, random_state=0)
    assert np.array_equal(fresh.recommend(), [0.5, 0.5]) and fresh.spent_ == 0


def test_tolerates_failed_parties():
    def party_zero_fails(round, replies):
        return {**replies, 0: PullReply(means=np.array([]), counts=np.array([], int), n_samples=1, error="down")}

    s = LevelOrderStrategy(1, 3, 2000, random_state=0)
    run(s, quadratic, fail=party_zero_fails)
    assert len(s.failures_) == len(s.levels_) and all(f[1] == 0 for f in s.failures_)
    assert all(lv.stats.replied.tolist() == [False, True, True] for lv in s.levels_)
    assert abs(s.recommend()[0] - 0.3) < 0.1
    # no reply at all: the level is repeated
    s = LevelOrderStrategy(1, 2, 2000, random_state=0)
    first = s.configure(0)
    s.aggregate(0, {})
    assert not s.levels_ and len(s.configure(1)[0].points) == len(first[0].points)


def test_weighted_means():
    def by_party(p):
        return lambda points: np.full(len(points), 0.2 if p == 0 else 0.8)

    s = LevelOrderStrategy(1, 2, 100, weights=[3, 1], random_state=0)
    tasks = s.configure(0)
    s.aggregate(0, {p: pull_reply(t, by_party(p)(t.points)) for p, t in tasks.items()})
    assert np.allclose(s.levels_[0].means, (3 * 0.2 + 0.8) / 4)


def test_failed_nodes_are_not_expanded():
    def fails_right(points):
        out = quadratic(points)
        out[points[:, 0] > 0.5] = np.nan
        return out

    s = LevelOrderStrategy(1, 2, 2000, random_state=0)
    run(s, fails_right)
    for lv in s.levels_[1:]:
        bad = np.isnan(lv.means)
        assert lv.eliminated[bad].all()
    assert s.recommend()[0] < 0.5


def test_more_parties_go_deeper_and_lose_less():
    def loss(n_parties, seed):
        s = LevelOrderStrategy(1, n_parties, 3000, random_state=seed)
        run(s, quadratic, noise=0.3, seed=seed)
        return s.depth_, 1 - quadratic(s.recommend()[None])[0]

    one = [loss(1, seed) for seed in range(3)]
    many = [loss(16, seed) for seed in range(3)]
    assert min(d for d, _ in many) > max(d for d, _ in one)
    assert np.mean([x for _, x in many]) <= np.mean([x for _, x in one])


@pytest.mark.parametrize("kwargs, match", [
    ({"n_iter": 0}, "n_iter"),
    ({"rho": 0.0}, "rho"),
    ({"delta": 1.5}, "delta"),
    ({"pull": "edge"}, "pull"),
    ({"weights": [1.0, 0.0]}, "weights"),
])
def test_invalid_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        LevelOrderStrategy(1, 2, **kwargs)
