"""Conformance checks that every strategy and every transport must pass, and a JSON transport
for tests.

:class:`JSONFederation` carries every task and reply through :func:`fedsearch.messages.encode`
/ :func:`~fedsearch.messages.decode` (no pickle, no object shared between the server and a
party): what runs over it would run over a real wire. :func:`strategy_checks` yields the checks a
strategy must pass; a test module applies them to every strategy with
:func:`parametrize_with_strategy_checks`::

    from fedsearch.testing import parametrize_with_strategy_checks

    @parametrize_with_strategy_checks({"mine": make_my_strategy})
    def test_strategy(factory, check):
        check(factory)

A factory is called as ``factory(n_dims=..., n_parties=..., n_iter=..., random_state=...)``,
like the strategies registered for :func:`fedsearch.research.simulate.simulate`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from .federation import Federation
from .messages import ErrorReply, SetupTask, decode, encode
from .party import BaseParty
from .party.data import Party

__all__ = ["JSONFederation", "FailingParty", "strategy_checks", "parametrize_with_strategy_checks"]


class JSONFederation(Federation):
    """A transport whose parties see only JSON: each task is encoded, decoded on the party's
    side, answered there in one process, and the reply comes back the same way.

    Parameters
    ----------
    parties : sequence of party, default=None
        Ready parties (synthetic ones, for ``simulate``).
    datasets : sequence of PartyData, default=None
        The parties' own data; each party builds itself from its data and the *decoded*
        :class:`~fedsearch.messages.SetupTask`.
    """

    def __init__(self, parties: Sequence | None = None, *, datasets: Sequence | None = None):
        if (parties is None) == (datasets is None):
            raise TypeError("JSONFederation takes either parties or datasets.")
        self._parties = None if parties is None else list(parties)
        self._datasets = None if datasets is None else list(datasets)
        super().__init__([p.party_id for p in (self._parties or self._datasets)])

    def _exchange(self, round, tasks: Mapping) -> dict:
        replies = {}
        for p, task in tasks.items():
            received = decode(encode(task))
            if isinstance(received, SetupTask):
                d = self._datasets[p]
                if p == 0:
                    self._parties = [None] * len(self._datasets)
                self._parties[p] = Party.from_setup(d.party_id, d.X, d.y, received, fit_params=d.fit_params,
                                                    groups=d.groups)
                reply = self._parties[p].setup_reply()
            else:
                reply = self._parties[p].handle(received)
            replies[p] = decode(encode(reply))
        return replies


class FailingParty(BaseParty):
    """A party that answers every task with an error (for the "a failing party is tolerated"
    check)."""

    n_samples = 1
    metric = "score"
    error_score = np.nan
    return_train_score = False
    reports_metrics = False

    def __init__(self, n_dims: int, party_id="failing"):
        super().__init__()
        self.n_dims = n_dims
        self.party_id = party_id

    def units(self, task):
        raise RuntimeError("this party always fails")

    def handle(self, task):
        return ErrorReply(error="RuntimeError: this party always fails", kind="task")


def _parties(n_parties: int, seed: int):
    """Synthetic parties on Himmelblau's function (2-D), each with its own shift."""
    from .research.synthetic import himmelblau, make_parties

    return make_parties(himmelblau(), n_parties, kind="shift", noise_std=0.05, random_state=seed)


def _run(factory, *, n_parties=3, n_iter=40, seed=0, parties=None, federation=None):
    from .research.simulate import simulate

    parties = parties if parties is not None else _parties(n_parties, seed)
    strategy = factory(n_dims=2, n_parties=len(parties), n_iter=n_iter, random_state=seed)
    return simulate(strategy, parties, n_iter=n_iter, random_state=seed, federation=federation), strategy


def check_same_seed_same_result(factory):
    """Two runs with one seed make the same requests and the same recommendation."""
    a, _ = _run(factory)
    b, _ = _run(factory)
    for pa, pb in zip(a.points, b.points):
        np.testing.assert_array_equal(pa, pb)
    np.testing.assert_array_equal(a.recommendation, b.recommendation)


def check_recommend_is_pure(factory):
    """Asking for a recommendation changes nothing: the same answer twice, for every party."""
    _, strategy = _run(factory)
    first = [strategy.recommend()] + [strategy.recommend(party=p) for p in range(3)]
    second = [strategy.recommend()] + [strategy.recommend(party=p) for p in range(3)]
    for x, y in zip(first, second):
        np.testing.assert_array_equal(x, y)
    assert strategy.configure(10**6) is None, "a finished strategy asked for more work"


def check_budget_respected(factory):
    """No party is asked for more evaluations than its budget (``simulate`` raises otherwise),
    and the budget is mostly used."""
    trace, _ = _run(factory, n_iter=30)
    assert np.all(trace.n_evaluations <= 30)


def check_failing_party_tolerated(factory):
    """A party that fails every task does not stop the search; the recommendation is a point of
    the cube."""
    parties = [*_parties(2, 0), FailingParty(2)]
    trace, _ = _run(factory, parties=parties)
    assert trace.recommendation.shape == (2,) and np.all((0 <= trace.recommendation) & (trace.recommendation <= 1))


def check_json_transport(factory):
    """The strategy gives the same run over a JSON transport as in process."""
    local, _ = _run(factory)
    remote, _ = _run(factory, federation=JSONFederation)
    for pa, pb in zip(local.points, remote.points):
        np.testing.assert_array_equal(pa, pb)
    np.testing.assert_array_equal(local.recommendation, remote.recommendation)


def strategy_checks() -> list[Callable]:
    """The checks every strategy must pass."""
    return [check_same_seed_same_result, check_recommend_is_pure, check_budget_respected,
            check_failing_party_tolerated, check_json_transport]


def parametrize_with_strategy_checks(factories: Mapping[str, Callable]):
    """``pytest.mark.parametrize`` over every (factory, check) pair, with readable ids."""
    import pytest

    cases = [(factory, check) for factory in factories.values() for check in strategy_checks()]
    ids = [f"{name}-{check.__name__}" for name in factories for check in strategy_checks()]
    return pytest.mark.parametrize("factory, check", cases, ids=ids)
