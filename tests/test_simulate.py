import numpy as np
import pytest

from fedsearch.research import synthetic
from fedsearch.messages import EvaluateReply, EvaluateTask
from fedsearch.research.simulate import STRATEGIES, simulate
from fedsearch.strategy import Strategy
from fedsearch.algorithms.candidates.strategy import RandomSearchStrategy
from fedsearch.research.synthetic import FunctionParty, Objective


def _linear(slope, intercept, maximizer):
    return Objective(lambda X: intercept + slope * X[:, 0], 1, "linear", maximizer=[maximizer])


class Scripted(Strategy):
    """Plays a fixed script: rounds of {party: points}."""

    def __init__(self, script, recommendation=(0.5,), per_party=None):
        self.script = script
        self.recommendation = np.asarray(recommendation, dtype=float)
        self.per_party = per_party

    def configure(self, round):
        if round >= len(self.script):
            return None
        return {p: EvaluateTask(np.array(pts, dtype=float)[:, None]) for p, pts in self.script[round].items()}

    def aggregate(self, round, replies):
        pass

    def recommend(self, party=None):
        if party is None or self.per_party is None:
            return self.recommendation.copy()
        return np.asarray(self.per_party[party], dtype=float)


SCRIPT = [{0: [0.25], 1: [0.25]}, {0: [0.5]}]


def test_regret_hand_computed_global():
    # f1 = x, f2 = x / 2: global 0.75 x, maximum 0.75 at x = 1
    parties = [FunctionParty(_linear(1.0, 0.0, 1.0)), FunctionParty(_linear(0.5, 0.0, 1.0))]
    trace = simulate(Scripted(SCRIPT, recommendation=[0.8]), parties, n_iter=2)
    # party 0: (0.75 - 0.1875) + (0.75 - 0.375); party 1: 0.75 - 0.1875
    assert trace.cumulative_regret() == pytest.approx((0.9375 + 0.5625) / 2)
    np.testing.assert_allclose(trace.cumulative_regret(curve=True), [0.5625, 0.75])
    assert trace.simple_regret() == pytest.approx(0.75 - 0.6)
    # local: f1* = 1, f2* = 0.5
    assert trace.cumulative_regret("local") == pytest.approx(((0.75 + 0.5) + 0.375) / 2)


def test_regret_hand_computed_local_differs_from_global():
    # f1 = x and f2 = 1 - x: the global objective is flat (regret 0), the local ones are not
    parties = [FunctionParty(_linear(1.0, 0.0, 1.0)), FunctionParty(_linear(-1.0, 1.0, 0.0))]
    trace = simulate(Scripted(SCRIPT, per_party=[[1.0], [0.25]]), parties, n_iter=2)
    assert trace.cumulative_regret() == pytest.approx(0.0)
    assert trace.cumulative_regret("local") == pytest.approx(((0.75 + 0.5) + 0.25) / 2)
    np.testing.assert_allclose(trace.cumulative_regret("local", curve=True), [0.5, 0.75])
    assert trace.simple_regret("local") == pytest.approx((0.0 + 0.25) / 2)
    with pytest.raises(ValueError, match="'kind' parameter"):
        trace.cumulative_regret("party")


def test_trace_records_points_rewards_rounds_and_bytes():
    parties = [FunctionParty(_linear(1.0, 0.0, 1.0)), FunctionParty(_linear(0.5, 0.0, 1.0))]
    trace = simulate(Scripted(SCRIPT), parties, n_iter=2)
    np.testing.assert_array_equal(trace.points[0][:, 0], [0.25, 0.5])
    np.testing.assert_array_equal(trace.points[1][:, 0], [0.25])
    np.testing.assert_allclose(trace.rewards[0], [0.25, 0.5])  # no noise
    np.testing.assert_array_equal(trace.rounds[0], [0, 1])
    np.testing.assert_array_equal(trace.n_evaluations, [2, 1])
    assert trace.n_rounds == 2
    assert trace.bytes_per_round.shape == (2,) and trace.bytes_per_round[0] > trace.bytes_per_round[1] > 0
    assert trace.server_time >= 0


def test_budget_is_enforced():
    parties = [FunctionParty(_linear(1.0, 0.0, 1.0))]
    with pytest.raises(RuntimeError, match="budget is n_iter=1"):
        simulate(Scripted([{0: [0.1]}, {0: [0.2]}]), parties, n_iter=1)


def test_random_search_strategy():
    parties = synthetic.make_parties(synthetic.garland(), 3, kind="shift", random_state=0)
    trace = simulate("random", parties, n_iter=250, random_state=0, batch_size=100)
    assert trace.n_rounds == 3
    np.testing.assert_array_equal(trace.n_evaluations, [250, 250, 250])
    # every party evaluated the same uniform points
    for p in range(1, 3):
        np.testing.assert_array_equal(trace.points[p], trace.points[0])
    mean = np.mean(trace.rewards, axis=0)
    np.testing.assert_array_equal(trace.recommendation, trace.points[0][np.argmax(mean)])
    for p in range(3):
        np.testing.assert_array_equal(trace.recommendations[p], trace.points[p][np.argmax(trace.rewards[p])])
    assert trace.simple_regret() < 0.1


def test_random_search_never_recommends_a_failed_point():
    strategy = RandomSearchStrategy(1, 2, 3, batch_size=3, random_state=0)
    tasks = strategy.configure(0)
    points = tasks[0].points
    replies = {0: EvaluateReply(scores=np.array([0.1, 0.9, 0.5]), n_samples=1),
               1: EvaluateReply(scores=np.array([0.1, np.nan, 0.5]), n_samples=1)}
    strategy.aggregate(0, replies)
    np.testing.assert_array_equal(strategy.recommend(), points[2])
    np.testing.assert_array_equal(strategy.recommend(party=0), points[1])
    assert strategy.configure(1) is None
    failed = RandomSearchStrategy(1, 1, 2, random_state=0)
    failed.configure(0)
    failed.aggregate(0, {0: EvaluateReply(scores=np.full(2, np.nan), n_samples=1, error="boom")})
    assert failed.recommend().shape == (1,)  # still a point of the cube


@pytest.mark.parametrize("name", ["random", "fedpne", "levelorder"])
def test_strategies_by_name_are_deterministic_and_within_budget(name):
    objective = synthetic.double_sine()

    def run(seed):
        parties = synthetic.make_parties(objective, 4, kind="perturb", random_state=1)
        return simulate(name, parties, n_iter=300, random_state=seed)

    a, b, c = run(0), run(0), run(1)
    assert np.all(a.n_evaluations <= 300)
    for pa, pb in zip(a.points, b.points):
        np.testing.assert_array_equal(pa, pb)
    for ra, rb in zip(a.rewards, b.rewards):
        np.testing.assert_array_equal(ra, rb)
    np.testing.assert_array_equal(a.recommendation, b.recommendation)
    assert a.cumulative_regret() == b.cumulative_regret()
    assert not all(np.array_equal(ra, rc) for ra, rc in zip(a.rewards, c.rewards))


def test_simulate_argument_errors():
    parties = synthetic.make_parties(synthetic.garland(), 2, random_state=0)
    with pytest.raises(ValueError, match="The 'strategy' parameter of simulate must be .* Got 'hoo' instead"):
        simulate("hoo", parties, n_iter=5)
    with pytest.raises(TypeError, match="only apply to a strategy given by name"):
        simulate(Scripted(SCRIPT), parties, n_iter=5, batch_size=3)


def test_user_registered_strategy():
    STRATEGIES["scripted"] = lambda **kw: Scripted([{0: [0.5], 1: [0.5]}])
    try:
        parties = synthetic.make_parties(synthetic.garland(), 2, random_state=0)
        assert simulate("scripted", parties, n_iter=1).n_rounds == 1
    finally:
        del STRATEGIES["scripted"]
