"""The transport seam: an estimator runs over any Federation, and the results do not depend on
which transport, which joblib backend or which form of seed."""

import sys
from pathlib import Path

import joblib
import numpy as np
import pytest

from fedsearch.algorithms.flora.local_search import RandomLocalSearch, register_local_search
from fedsearch.federation import SETUP_ROUND, InProcessFederation
from fedsearch.messages import SetupTask, decode, encode
from fedsearch.searchcv._inputs import split_parties
from fedsearch.testing import JSONFederation

sys.path.insert(0, str(Path(__file__).with_name("golden")))
import capture  # noqa: E402 - the golden problem: six estimators, one small federation


def _summary(search):
    res = search.cv_results_
    return res["params"], res["mean_test_score"], search.best_params_


@pytest.fixture(scope="module")
def problem():
    return capture.problem()


@pytest.mark.parametrize("name", list(capture.searches()))
def test_json_transport_gives_the_in_process_results(problem, name):
    Xs, ys = problem
    local = capture.searches()[name].set_params(refit=False)
    remote = capture.searches()[name].set_params(refit=False)
    local.fit(Xs, ys)
    remote.fit(federation=JSONFederation(datasets=split_parties(Xs, ys)))
    params, scores, best = _summary(remote)
    assert params == local.cv_results_["params"] and best == local.best_params_
    np.testing.assert_array_equal(scores, local.cv_results_["mean_test_score"])
    # the same messages crossed; tasks of the same sizes (replies carry measured fit times)
    a, b = remote.federation_log_, local.federation_log_
    assert {k: a[k] for k in ("round", "party", "direction", "message")} == \
        {k: b[k] for k in ("round", "party", "direction", "message")}
    to_party = [i for i, d in enumerate(a["direction"]) if d == "to_party"]
    assert [a["bytes"][i] for i in to_party] == [b["bytes"][i] for i in to_party]
    assert remote.n_rounds_ == local.n_rounds_


def test_setup_is_sent_once_and_logged_before_round_zero(problem):
    Xs, ys = problem
    search = capture.searches()["grid"].fit(Xs, ys)
    log = search.federation_log_
    setup = [i for i, r in enumerate(log["round"]) if r == SETUP_ROUND]
    assert [log["message"][i] for i in setup] == ["SetupTask"] * 3 + ["SetupReply"] * 3
    assert min(r for r in log["round"] if r != SETUP_ROUND) == 0
    task = next(m for r, _, d, m in search.transcript_ if r == SETUP_ROUND and d == "to_party")
    again = decode(encode(task))
    assert isinstance(again, SetupTask) and again.scoring == "roc_auc"
    assert type(again.estimator) is type(task.estimator) and again.estimator is not task.estimator
    assert again.space.to_params([0.5]) == task.space.to_params([0.5])


def test_a_transport_that_cannot_pool_refuses_the_pooled_final_fit(problem):
    Xs, ys = problem
    search = capture.searches()["grid"]
    with pytest.raises(ValueError, match="final_fit='pooled'.*final_fit='ensemble'"):
        search.fit(federation=JSONFederation(datasets=split_parties(Xs, ys)))
    assert not hasattr(search, "cv_results_")  # refused before any work


def test_data_and_a_federation_together_are_refused(problem):
    Xs, ys = problem
    with pytest.raises(ValueError, match="hold their own data"):
        capture.searches()["grid"].fit(Xs, ys, federation=JSONFederation(datasets=split_parties(Xs, ys)))


def test_pooled_fit_is_recorded_as_a_data_transfer(problem):
    Xs, ys = problem
    search = capture.searches()["grid"].fit(Xs, ys)
    log = search.federation_log_
    pooled = [i for i, m in enumerate(log["message"]) if m == "PooledData"]
    assert [log["party"][i] for i in pooled] == [0, 1, 2]
    assert [log["bytes"][i] for i in pooled] == [X.nbytes + y.nbytes for X, y in zip(Xs, ys)]
    assert all(log["direction"][i] == "to_server" for i in pooled)


@pytest.mark.parametrize("name", ["random", "flora", "fedpne"])
def test_threading_backend_gives_the_loky_results(problem, name):
    Xs, ys = problem
    loky = capture.searches()[name].set_params(n_jobs=2, refit=False).fit(Xs, ys)
    with joblib.parallel_config(backend="threading"):
        threads = capture.searches()[name].set_params(n_jobs=2, refit=False).fit(Xs, ys)
    np.testing.assert_array_equal(threads.cv_results_["mean_test_score"], loky.cv_results_["mean_test_score"])
    assert threads.best_params_ == loky.best_params_


@pytest.mark.parametrize("name", ["random", "flora", "fedpne", "pfpne"])
def test_random_state_int_randomstate_and_generator(problem, name):
    Xs, ys = problem
    runs = []
    for seed in (np.random.RandomState(3), np.random.RandomState(3), np.random.default_rng(3),
                 np.random.default_rng(3)):
        runs.append(capture.searches()[name].set_params(random_state=seed, refit=False).fit(Xs, ys))
    assert runs[0].cv_results_["params"] == runs[1].cv_results_["params"]
    assert runs[2].cv_results_["params"] == runs[3].cv_results_["params"]


def test_the_in_process_federation_is_one_exchange_method():
    overridden = {name for name, value in vars(InProcessFederation).items() if callable(value)}
    assert "_exchange" in overridden and "run_round" not in overridden


class _Centre(RandomLocalSearch):
    """A local search registered by the user: always the centre of the cube."""

    adaptive = True  # run as one unit of work: the searcher's factory travels to the worker

    def ask(self):
        return self.space.canonical([0.5] * self.space.n_dims)


def test_a_local_search_registered_here_reaches_the_workers(problem):
    # the workers (loky processes) never ran this registration: the party sends the factory itself
    Xs, ys = problem
    register_local_search("centre-for-workers", _Centre)
    search = capture.searches()["flora"].set_params(local_search="centre-for-workers", n_iter=2, n_jobs=2,
                                                    refit=False).fit(Xs, ys)
    for result in search.local_results_.values():
        assert result["error"] is None and len(result["points"]) == 2
        np.testing.assert_allclose(result["points"], 0.5, atol=1e-9)
