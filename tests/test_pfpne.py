import math

import numpy as np
import pytest

from fedsearch.algorithms.xarmed.party import pull_reply
from fedsearch.algorithms.xarmed.tasks import PullReply
from fedsearch.research.simulate import simulate
from fedsearch.algorithms.fedpne.strategy import FedPNEStrategy
from fedsearch.algorithms.pfpne.party import personal_elimination, personal_recommendation
from fedsearch.algorithms.pfpne.strategy import COLLABORATIVE, PERSONAL, PFPNEStrategy, transition_depth
from fedsearch.algorithms.pfpne.tasks import PersonalReply, PersonalTask
from fedsearch.research.synthetic import garland, make_parties


def run(strategy, funcs, noise=0.0, seed=0, fail=None, personal=None):
    """Fake parties: party ``p`` answers with ``funcs[p]`` (plus noise), in the personal stage
    with ``personal[p]`` when given. Returns ({round: tasks}, {party: its personal phases})."""
    rng = np.random.default_rng(seed)
    rounds, phases, r = {}, {}, 0
    while (tasks := strategy.configure(r)) is not None:
        replies = {}
        for p, t in tasks.items():
            if isinstance(t, PersonalTask):  # the party's own work, at the party
                f = (personal or funcs)[p]
                phases[p], spent = personal_elimination(t, lambda x, f=f: f(x) + noise * rng.standard_normal(len(x)))
                replies[p] = PersonalReply(node=personal_recommendation(phases[p]), n_evaluations=spent, n_samples=1)
            else:
                replies[p] = pull_reply(t, funcs[p](t.points) + noise * rng.standard_normal(len(t.points)))
        if fail is not None:
            replies = fail(r, replies)
        strategy.aggregate(r, replies)
        rounds[r] = tasks
        r += 1
    return rounds, phases


def left(points):
    """Parties 0-2 of the double-elimination case: a peak at 0.2, nothing on the right half."""
    x = points[:, 0]
    return np.where(x < 0.5, 1.0 - np.abs(x - 0.2), 0.0)


def right(points):
    """Party 3: a peak at 0.8, 0.2 on the left half."""
    x = points[:, 0]
    return np.where(x >= 0.5, 1.0 - np.abs(x - 0.8), 0.2)


HETEROGENEOUS = [left, left, left, right]
# nu1 = 0.2, Delta = 0.1: H0 = 1, a single collaborative depth, wide enough a gap to eliminate there
SMALL_NU = dict(nu1=0.2, gap=0.1, pull="center")


# --------------------------------------------------------------------------- H0 from Delta
@pytest.mark.parametrize("delta_gap, nu1, rho, expected", [
    (0.01, 1.0, 0.5, 7),     # the paper's setting: 0.5^7 = 0.0078 <= 0.01 < 0.5^6 = 0.0156
    (0.1, 1.0, 0.5, 4),      # 0.0625 <= 0.1 < 0.125
    (0.25, 1.0, 0.5, 2),     # exactly nu1 rho^2: the boundary belongs to depth 2
    (0.3, 1.0, 0.5, 2),
    (0.5, 1.0, 0.5, 1),
    (1.0, 1.0, 0.5, 0),      # Delta >= nu1: no collaboration
    (5.0, 1.0, 0.5, 0),
    (0.01, 0.5, 0.5, 6),     # log(0.02) / log(0.5) = 5.64
    (0.01, 1.0, 0.25, 4),    # log(0.01) / log(0.25) = 3.32
    (0.1, 0.2, 0.5, 1),
])
def test_transition_depth_hand_computed(delta_gap, nu1, rho, expected):
    assert transition_depth(delta_gap, nu1=nu1, rho=rho) == expected
    assert PFPNEStrategy(1, 2, 10, nu1=nu1, rho=rho, gap=delta_gap).h0 == expected


def test_transition_depth_is_the_first_depth_where_smoothness_reaches_delta():
    rng = np.random.default_rng(0)
    for delta_gap, nu1, rho in zip(rng.uniform(1e-4, 0.9, 200), rng.uniform(0.95, 3, 200), rng.uniform(0.1, 0.9, 200)):
        h0 = transition_depth(delta_gap, nu1=nu1, rho=rho)
        assert nu1 * rho**h0 <= delta_gap * (1 + 1e-9) < nu1 * rho ** (h0 - 1)


def test_collaborative_phases_are_depths_1_to_h0():
    strategy = PFPNEStrategy(1, 3, 3000, gap=0.1, random_state=0)  # H0 = 4
    run(strategy, [left] * 3)
    assert [int(ph.nodes.depth[0]) for ph in strategy.phases_] == [1, 2, 3, 4]
    # every party pulls ceil(tau_h / M) times each node of K^h (Algorithm 2, line 6)
    for ph in strategy.phases_:
        assert np.all(ph.pulls == math.ceil(strategy.tau(int(ph.nodes.depth[0])) / 3))


@pytest.mark.parametrize("bad", [0, -0.1, math.inf, "0.1", True])
def test_gap_must_be_positive(bad):
    with pytest.raises(ValueError, match="The 'gap' parameter of PFPNEStrategy must be a float in the range"):
        PFPNEStrategy(1, 2, 10, gap=bad)


# --------------------------------------------------------------------------- double elimination
def test_a_node_eliminated_only_collaboratively_stays_available_to_the_party_that_needs_it():
    strategy = PFPNEStrategy(1, 4, 400, random_state=0, **SMALL_NU)
    assert strategy.h0 == 1
    _, personal = run(strategy, HETEROGENEOUS)
    (collab,) = strategy.phases_
    # the federation (3 parties on the left) eliminates the right half (1, 2)
    assert collab.nodes.keys() == [(1, 1), (1, 2)]
    assert collab.eliminated.tolist() == [False, True]
    t1 = strategy.tau(1)
    for m in range(4):
        phase = next(ph for ph in personal[m] if ph.nodes.depth[0] == 1)
        assert phase.nodes.keys() == [(1, 1), (1, 2)]
        assert phase.protected.tolist() == [True, False]          # K^1 = {(1, 1)}
        # its collaborative pull counts: tau_1 - ceil(tau_1 / M) more local pulls make T_{m,1,2} = tau_1
        assert phase.pulls.tolist() == [0, t1 - math.ceil(t1 / 4)]
        assert phase.counts[1] == t1
        assert phase.means[0] == collab.means[0]                  # global statistics on K^1
        assert phase.widths[0] == collab.widths[0]
        # eliminated a second time by parties 0-2 only
        assert phase.eliminated.tolist() == [False, m < 3]
    assert 0.5 <= strategy.recommend(party=3)[0] <= 1.0
    assert abs(strategy.recommend(party=3)[0] - 0.8) < 0.02
    for m in range(3):
        assert abs(strategy.recommend(party=m)[0] - 0.2) < 0.02
    # the federation's recommendation is the collaborative one, on the left
    assert strategy.recommend()[0] < 0.5
    # Fed-PNE, on the same parties, leaves party 3 on the left half
    fedpne = FedPNEStrategy(1, 4, 400, nu1=0.2, pull="center", random_state=0)
    run(fedpne, HETEROGENEOUS)
    assert fedpne.recommend(party=3)[0] < 0.5


def test_personal_elimination_never_eliminates_a_collaborative_survivor():
    # K^1 = {(1, 1)} with a low global mean; the party's own rewards put (1, 2) far above it
    tree = PFPNEStrategy(1, 2, 200, nu1=0.2, gap=0.1, split="longest", random_state=0).partition
    task = PersonalTask(tree=(1, "longest", tree.seed), depth=[1, 1], index=[1, 2], eliminated=[False, True],
                        means=[0.2, 0.1], widths=[0.01, 0.01], own_means=[0.2, 0.9], own_counts=[5, 5], budget=50,
                        horizon=200, nu1=0.2, rho=0.5, c=0.1, c1=1.0, delta=0.5, pull="center")
    phases, spent = personal_elimination(task, lambda x: np.where(x[:, 0] >= 0.5, 0.9, 0.2))
    first = phases[0]  # depth 1: the root, alone, is never judged
    assert first.nodes.keys() == [(1, 1), (1, 2)] and first.protected.tolist() == [True, False]
    assert first.means.tolist() == [0.2, 0.9] and first.widths[0] == 0.01
    # eq. 1 would drop (1, 1) (0.2 + 0.01 + 0.1 < 0.9 - b), but a survivor of K^h is never eliminated here
    assert 0.2 + 0.01 + 0.2 * 0.5 < 0.9 - first.widths[1]
    assert first.eliminated.tolist() == [False, False]
    assert phases[1].nodes.keys() == [(2, 1), (2, 2), (2, 3), (2, 4)]
    assert spent == 50 and personal_recommendation(phases)[1] > 2  # the party's own peak, on the right


def test_personal_elimination_hand_computed_widths():
    strategy = PFPNEStrategy(1, 4, 400, random_state=0, **SMALL_NU)
    _, personal = run(strategy, HETEROGENEOUS)
    phase = next(ph for ph in personal[0] if ph.nodes.depth[0] == 1)
    # b_{m,h,i} = c sqrt(log(c1 T / delta) / T_{m,h,i}), delta = 1/M
    b = 0.1 * math.sqrt(math.log(400 * 4) / phase.counts[1])
    assert phase.widths[1] == pytest.approx(b)
    assert phase.means[1] == 0.0
    # eq. 1: 0 + b + nu1 rho = 0.1 + b below the best lower bound mu^p - b^p
    assert 0.0 + b + 0.2 * 0.5 < phase.means[0] - phase.widths[0]


def test_one_party_pulls_nothing_again_at_the_collaborative_depths():
    # with M = 1 the collaborative pulls ceil(tau_h / 1) already meet tau_h
    strategy = PFPNEStrategy(1, 1, 2000, gap=0.1, random_state=0)
    _, personal = run(strategy, [left])
    phases = personal[0]
    assert all(not ph.pulls.any() for ph in phases if ph.nodes.depth[0] <= strategy.h0)
    assert any(ph.pulls.any() for ph in phases if ph.nodes.depth[0] > strategy.h0)


# --------------------------------------------------------------------------- stages and communication
def test_no_global_aggregation_after_the_collaborative_stage():
    strategy = PFPNEStrategy(1, 4, 400, random_state=0, **SMALL_NU)
    rounds, _ = run(strategy, HETEROGENEOUS)
    stages = [strategy.round_stages_[r] for r in sorted(rounds)]
    # one round per collaborative depth, then a single personal round (the broadcast)
    assert strategy.h0 == 1 and stages == [COLLABORATIVE, PERSONAL]
    assert strategy.collaborative_rounds_ == [0]
    # global aggregations (phases_) happen in collaborative rounds only, at depths <= H0
    assert [ph.round for ph in strategy.phases_] == strategy.collaborative_rounds_
    assert all(ph.nodes.depth.max() <= strategy.h0 for ph in strategy.phases_)
    # collaborative rounds send every party the same points
    assert all(np.array_equal(t.points, rounds[0][0].points) for t in rounds[0].values())


def test_the_personal_task_broadcasts_the_collaborative_survivors_and_the_party_own_statistics():
    strategy = PFPNEStrategy(1, 4, 400, random_state=0, **SMALL_NU)
    rounds, _ = run(strategy, HETEROGENEOUS)
    (collab,) = strategy.phases_
    tasks = rounds[1]
    assert all(isinstance(t, PersonalTask) for t in tasks.values()) and sorted(tasks) == [0, 1, 2, 3]
    for m, t in tasks.items():
        # Algorithm 2, line 11: K^h with (mu_{h,i}, b_{h,i}), the same for every party
        assert t.depth.tolist() == [1, 1] and t.index.tolist() == [1, 2]
        assert t.eliminated.tolist() == collab.eliminated.tolist() == [False, True]
        assert np.array_equal(t.means, collab.means) and np.array_equal(t.widths, collab.widths)
        # the party's own local means and counts of the collaborative stage, and its remaining budget
        assert np.array_equal(t.own_means, collab.stats.local_means[m])
        assert t.own_counts.tolist() == collab.stats.counts[m].tolist()
        assert t.budget == t.cost == 400 - strategy.spent_
    # each party its own pull stream
    assert len({t.draw_seed for t in tasks.values()}) == 4


@pytest.mark.parametrize("pull", ["uniform", "center"])
def test_a_party_personal_stage_depends_on_its_own_objective_only(pull):
    upside_down = [left, lambda x: 1.0 - right(x), left, right]  # party 1 changes its mind after stage 1
    a = PFPNEStrategy(1, 4, 400, random_state=0, **{**SMALL_NU, "pull": pull})
    b = PFPNEStrategy(1, 4, 400, random_state=0, **{**SMALL_NU, "pull": pull})
    rounds_a, phases_a = run(a, HETEROGENEOUS)
    rounds_b, phases_b = run(b, HETEROGENEOUS, personal=upside_down)
    from fedsearch.messages import encode

    assert all(encode(rounds_a[r][m]) == encode(rounds_b[r][m]) for r in rounds_a for m in range(4))
    for m in (0, 2, 3):
        assert np.array_equal(a.recommend(party=m), b.recommend(party=m))
    assert not np.array_equal(phases_a[1][-1].means, phases_b[1][-1].means)
    assert not np.array_equal(a.recommend(party=1), b.recommend(party=1))
    assert np.array_equal(a.recommend(), b.recommend())


def test_no_collaboration_when_delta_reaches_nu1():
    strategy = PFPNEStrategy(1, 4, 200, gap=1.0, pull="center", random_state=0)
    rounds, _ = run(strategy, HETEROGENEOUS)
    assert list(rounds) == [0] and all(t.budget == 200 and len(t.index) == 0 for t in rounds[0].values())
    assert strategy.h0 == 0 and strategy.phases_ == [] and strategy.collaborative_rounds_ == []
    assert set(strategy.round_stages_.values()) == {PERSONAL}
    assert strategy.recommend().tolist() == [0.5]  # no collaborative recommendation
    assert abs(strategy.recommend(party=3)[0] - 0.8) < 0.05


# --------------------------------------------------------------------------- budget, determinism, failures
@pytest.mark.parametrize("n_iter, n_parties, delta_gap", [(1, 3, 0.01), (7, 2, 0.01), (60, 4, 0.1), (333, 5, 0.01),
                                                         (500, 3, 0.3), (50, 1, 0.5)])
def test_budget_is_spent_exactly_and_never_exceeded(n_iter, n_parties, delta_gap):
    parties = make_parties(garland(), n_parties, kind="shift", scale=0.1, random_state=0)
    strategy = PFPNEStrategy(1, n_parties, n_iter, gap=delta_gap, random_state=0)
    trace = simulate(strategy, parties, n_iter=n_iter)  # raises if a party is asked for more
    assert trace.n_evaluations.tolist() == [n_iter] * n_parties
    assert strategy.party_spent_.tolist() == [n_iter] * n_parties


def test_same_seed_same_run_and_recommend_is_pure():
    def go(seed):
        parties = make_parties(garland(), 3, kind="shift", scale=0.1, noise_std=0.1, random_state=1)
        strategy = PFPNEStrategy(1, 3, 300, gap=0.1, share=True, random_state=seed)
        trace = simulate(strategy, parties, n_iter=300, random_state=1)
        return strategy, trace

    (s1, t1), (_, t2), (_, t3) = go(0), go(0), go(1)
    assert all(np.array_equal(a, b) for a, b in zip(t1.points, t2.points))
    assert np.array_equal(t1.recommendations, t2.recommendations)
    assert not all(np.array_equal(a, b) for a, b in zip(t1.points, t3.points))
    before = [s1.recommend(party=m).copy() for m in range(3)] + [s1.recommend()]
    after = [s1.recommend(party=m) for m in range(3)] + [s1.recommend()]
    assert all(np.array_equal(a, b) for a, b in zip(before, after))
    assert s1.configure(t1.n_rounds) is None


def test_recommend_party_is_checked():
    strategy = PFPNEStrategy(1, 2, 10)
    with pytest.raises(ValueError, match=r"party must be an int in the range \[0, 1\]"):
        strategy.recommend(party=2)


def test_a_failed_personal_reply_leaves_the_party_with_the_federation_recommendation():
    def fail_party_2(r, replies):
        if r == 1:  # the personal round
            replies[2] = PersonalReply(node=None, n_evaluations=0, n_samples=1, error="disk full")
        return replies

    a = PFPNEStrategy(1, 4, 400, random_state=0, **SMALL_NU)
    b = PFPNEStrategy(1, 4, 400, random_state=0, **SMALL_NU)
    run(a, HETEROGENEOUS)
    run(b, HETEROGENEOUS, fail=fail_party_2)
    assert b.failures_ == [(1, 2, "disk full")]
    assert b.party_spent_.tolist() == [400, 400, b.spent_, 400]
    for m in (0, 1, 3):
        assert np.array_equal(a.recommend(party=m), b.recommend(party=m))
    assert np.array_equal(b.recommend(party=2), b.recommend())
    assert abs(a.recommend(party=2)[0] - 0.2) < 0.05


def test_simulate_by_name_with_local_regret():
    parties = make_parties(garland(), 4, kind="shift", scale=0.15, noise_std=0.05, random_state=0)
    trace = simulate("pfpne", parties, n_iter=400, random_state=0, gap=0.2, pull="center", share=True)
    assert trace.recommendations.shape == (4, 1)
    assert 0 < trace.cumulative_regret("local") < 400
    random = simulate("random", parties, n_iter=400, random_state=0)
    assert trace.cumulative_regret("local") < random.cumulative_regret("local")
    # without share the parties keep their personal pulls: counted, not known (NaN regret)
    kept = simulate("pfpne", parties, n_iter=400, random_state=0, gap=0.2, pull="center")
    assert kept.n_evaluations.tolist() == [400] * 4
    assert np.isnan(kept.cumulative_regret("local"))
    assert np.array_equal(kept.recommendations, trace.recommendations)


# --------------------------------------------------------------------------- the estimator
@pytest.fixture
def hospitals(cancer):
    X, y = cancer
    return [X[0::3], X[1::3], X[2::3]], [y[0::3], y[1::3], y[2::3]]


def _search(**kw):
    from scipy.stats import loguniform
    from sklearn.linear_model import LogisticRegression

    from fedsearch import PFPNESearchCV

    params = dict(n_iter=10, gap=0.25, pull="center", scoring="roc_auc", cv=2, random_state=0)
    return PFPNESearchCV(LogisticRegression(), {"C": loguniform(1e-3, 1e2)}, **{**params, **kw})


def test_estimator_one_configuration_and_one_model_per_party(hospitals):
    import pandas as pd
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    from fedsearch.messages import FitTask

    Xs, ys = hospitals
    search = _search().fit(Xs, ys)
    assert list(search.best_params_per_party_) == search.party_ids_ == [0, 1, 2]
    # best_params_ is the collaborative-stage recommendation
    assert search.best_params_ == search.personal_results_["params_global"][0]
    assert search.best_params_["C"] == pytest.approx(
        search.cv_results_["params"][search.best_index_]["C"])
    table = pd.DataFrame(search.personal_results_)
    assert table["party"].tolist() == [0, 1, 2]
    for p in range(3):
        own = search.best_params_per_party_[p]
        model = search.best_estimators_[p]
        assert model.get_params()["C"] == own["C"]
        # fitted on the party's own data with its own configuration
        fresh = LogisticRegression(C=own["C"]).fit(Xs[p], ys[p])
        assert np.array_equal(model.coef_, fresh.coef_)
        assert np.array_equal(search.predict(Xs[0], party=p), fresh.predict(Xs[0]))
        assert np.allclose(search.predict_proba(Xs[0], party=p), fresh.predict_proba(Xs[0]))
        # each party's own CV score of its own and of the federation's configuration
        for kind, params in (("personal", own), ("global", search.best_params_)):
            expected = cross_val_score(LogisticRegression(**params), Xs[p], ys[p], cv=StratifiedKFold(2),
                                       scoring="roc_auc").mean()
            assert table.loc[p, f"{kind}_test_score"] == pytest.approx(expected)
        assert table.loc[p, "gain_test_score"] == pytest.approx(table.loc[p, "personal_test_score"]
                                                                 - table.loc[p, "global_test_score"])
    # without a party: the party-size-weighted average of the personal models
    assert np.array_equal(search.predict(Xs[0]), search.best_estimator_.predict(Xs[0]))
    with pytest.raises(ValueError, match="Unknown party 7"):
        search.predict(Xs[0], party=7)
    # only the party's own configuration went to it for the final fit
    fit_tasks = [(pid, msg) for _, pid, d, msg in search.transcript_ if isinstance(msg, FitTask)]
    assert len(fit_tasks) == 3
    for pid, task in fit_tasks:
        assert search.strategy_.recommend(party=pid).tolist() == task.point.tolist()
    # the budget of each party in the search rounds
    stages = search.strategy_.round_stages_
    assert search.strategy_.party_spent_.tolist() == [10, 10, 10]
    spent = {p: sum(m.cost for r, pid, d, m in search.transcript_ if d == "to_party" and r in stages and pid == p)
             for p in range(3)}
    assert spent == {0: 10, 1: 10, 2: 10}
    assert search.collaborative_rounds_ == [r for r in sorted(stages) if stages[r] == "collaborative"]


@pytest.mark.parametrize("share", [False, True])
def test_estimator_personal_evaluations_stay_at_the_party_unless_shared(hospitals, share):
    from fedsearch.messages import EvaluateReply, jsonable

    Xs, ys = hospitals
    search = _search(n_iter=30, gap=0.5, pull="uniform", share_evaluations=share).fit(Xs, ys)
    stages = search.strategy_.round_stages_
    (personal,) = [r for r, stage in stages.items() if stage == PERSONAL]
    assert max(search.collaborative_rounds_) < personal
    replies = {pid: m for r, pid, d, m in search.transcript_ if d == "to_server" and r == personal}
    assert sorted(replies) == [0, 1, 2] and all(isinstance(m, PersonalReply) for m in replies.values())
    spent = search.strategy_.party_spent_ - search.strategy_.spent_
    assert spent.tolist() == [r.n_evaluations for r in replies.values()] and spent.min() > 0
    for pid, reply in replies.items():
        # the recommendation is the party's own (a node of the shared tree)
        depth, index = reply.node
        centre = search.strategy_.partition.nodes(depth, [index]).centers[0]
        assert np.array_equal(search.strategy_.recommend(party=pid), centre)
        if share:  # every configuration the party evaluated, with its score
            assert reply.points.shape == (reply.n_evaluations, 1)
            assert len(reply.evaluation.scores) == reply.n_evaluations
            assert np.all((reply.evaluation.scores >= 0) & (reply.evaluation.scores <= 1))
        else:  # nothing but the recommendation and a count: no score, no point, no mean
            fields = {k: v for k, v in jsonable(reply).items() if v is not None}
            assert fields == {"__message__": "PersonalReply", "node": [depth, index],
                              "n_evaluations": reply.n_evaluations, "n_samples": reply.n_samples}
    # cv_results_ lists the personal evaluations only when shared
    listed = len(search.cv_results_["params"])
    personal_points = sum(r.n_evaluations for r in replies.values())
    assert (listed > personal_points) if share else (listed < personal_points)
    # after the collaborative stage, no reply carries a score of a personal configuration unless shared
    own = {pid: search.strategy_.recommend(party=pid) for pid in range(3)}
    common = search.strategy_.recommend()
    later = [(r, pid, m) for r, pid, d, m in search.transcript_ if r > max(search.collaborative_rounds_)]
    tasks = {(r, pid): m for r, pid, m in later if not hasattr(m, "error")}
    scored = [(tasks[r, pid], pid) for r, pid, m in later if isinstance(m, EvaluateReply)]
    carries_own = [any(np.allclose(x, own[pid]) and not np.allclose(x, common) for x in task.points)
                   for task, pid in scored]
    assert any(carries_own) == share and hasattr(search, "personal_results_") == share


def test_estimator_reward_bounds_reach_the_party_that_rescales_its_own_scores():
    from sklearn.datasets import make_regression
    from sklearn.linear_model import Ridge

    from fedsearch import PFPNESearchCV

    X, y = make_regression(150, 5, noise=10.0, random_state=0)
    Xs, ys = [X[:75], X[75:]], [y[:75], y[75:]]
    kw = dict(n_iter=12, gap=0.5, pull="center", scoring="r2", cv=2, random_state=0)
    search = PFPNESearchCV(Ridge(), {"alpha": [1e-3, 1e-1, 10.0, 1e3]}, reward_bounds=(-1.0, 1.0), **kw).fit(Xs, ys)
    tasks = [m for _, _, d, m in search.transcript_ if d == "to_party" and isinstance(m, PersonalTask)]
    assert len(tasks) == 2 and all(t.bounds == (-1.0, 1.0) for t in tasks)
    # the broadcast statistics are on the rescaled scale the party rescales its scores to
    assert np.all((tasks[0].means >= 0) & (tasks[0].means <= 1))
    assert all(p["alpha"] <= 10.0 for p in search.best_params_per_party_.values())  # not the over-regularised 1e3
    with pytest.raises(ValueError, match="needs rewards in"):
        PFPNESearchCV(Ridge(), {"alpha": [1e-3, 1e3]}, **kw).fit(Xs, ys)


def test_estimator_global_final_fits_still_work(hospitals):
    from sklearn.linear_model import LogisticRegression

    from fedsearch.searchcv.ensemble import PartyEnsemble

    Xs, ys = hospitals
    pooled = _search(final_fit="pooled").fit(Xs, ys)
    assert isinstance(pooled.best_estimator_, LogisticRegression)
    assert pooled.best_estimator_.get_params()["C"] == pooled.best_params_["C"]
    assert not hasattr(pooled, "best_estimators_")
    with pytest.raises(AttributeError, match="final_fit='local' or 'ensemble'"):
        pooled.predict(Xs[0], party=0)
    ensemble = _search(final_fit="ensemble").fit(Xs, ys)
    assert isinstance(ensemble.best_estimator_, PartyEnsemble)
    assert {m.get_params()["C"] for m in ensemble.best_estimators_.values()} == {ensemble.best_params_["C"]}
    none = _search(final_fit=None, refit=False).fit(Xs, ys)
    assert not hasattr(none, "best_estimator_") and len(none.best_params_per_party_) == 3


@pytest.mark.parametrize("params, match", [
    ({"gap": 0}, r"The 'gap' parameter of PFPNESearchCV must be"),
    ({"final_fit": "personal"}, r"The 'final_fit' parameter of PFPNESearchCV must be"),
    ({"scoring": "neg_log_loss"}, "needs rewards in"),
])
def test_estimator_rejects_bad_parameters_before_any_work(hospitals, params, match):
    Xs, ys = hospitals
    with pytest.raises(ValueError, match=match):
        _search(**params).fit(Xs, ys)


# --------------------------------------------------------------------------- the benchmark suite
def test_personal_benchmark_smoke(capsys):
    import argparse

    from benchmarks import personal
    from benchmarks._common import add_common_arguments

    parser = argparse.ArgumentParser()
    add_common_arguments(parser)
    personal.add_arguments(parser)
    args = parser.parse_args(["--part", "synthetic", "--objectives", "garland", "himmelblau", "--n-iter", "40",
                              "--parties", "3", "--seeds", "0", "1", "--deltas", "0.01", "1.0"])
    args.suite, args.command = "personal", "test"
    rows = personal.run(args)
    out = capsys.readouterr().out
    methods = {r["method"] for r in rows}
    assert {"pf-pne (Delta=0.01)", "pf-pne (Delta=1)", "fedpne", "hct", "random"} <= methods
    assert len(rows) == 2 * 2 * 5
    ok = [r for r in rows if r["status"] == "ok"]
    assert all(r["local_regret"] > 0 for r in ok)
    # PF-PNE without collaboration (Delta >= nu1) communicates once: "search alone", one recommendation back
    assert all(r["communicating_rounds"] == 1 for r in ok if r["method"] == "pf-pne (Delta=1)")
    assert "PF-PNE lowest (as the paper reports)?" in out
