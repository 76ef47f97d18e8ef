"""The handler of :class:`~fedsearch.messages.EvaluateTask`, for every kind of party."""

from __future__ import annotations

import numpy as np

from ..messages import EvaluateReply, EvaluateTask
from .registry import register_handler

__all__ = ["evaluation_reply"]


def _fresh(party, points: np.ndarray) -> np.ndarray:
    """The points that need new work: all of them for a stochastic objective, else the distinct
    configurations the party has not cached."""
    if not party.deterministic:
        return points
    keys, fresh = set(), []
    for point in points:
        key = party._key(point)
        if key not in keys and party.cached(point) is None:
            keys.add(key)
            fresh.append(point)
    return np.array(fresh).reshape(len(fresh), points.shape[1])


def _units_evaluate(party, task: EvaluateTask) -> list:
    party.check_points(task.points)
    return party.evaluation_units(_fresh(party, task.points))


def _reply_evaluate(party, task: EvaluateTask, outputs: list) -> EvaluateReply:
    fresh = _fresh(party, task.points)
    summaries = party.summarise(fresh, outputs)
    n = len(task.points)
    if party.deterministic:
        new = set()
        for point, summary in zip(fresh, summaries):
            party.remember(point, summary)
            new.add(party._key(point))
        rows, cached, seen = [], np.zeros(n, dtype=bool), set()
        for i, point in enumerate(task.points):
            key = party._key(point)
            cached[i] = key not in new or key in seen
            seen.add(key)
            rows.append(party.cached(point))
    else:
        rows, cached = summaries, None
    return evaluation_reply(party, rows, cached, task.noise_std, task.seed)


def evaluation_reply(party, rows: list, cached, noise_std: float = 0.0, seed=None) -> EvaluateReply:
    """The :class:`EvaluateReply` of a party's summaries ``rows`` of some points, in order
    (``cached[i]``: answered without a new fit); ``noise_std > 0`` releases the noisy objective
    alone (DP-Fed-PNE, App. D.2). Any handler that sends evaluations builds them here."""
    n = len(rows)
    metrics = next((list(r["test"]) for r in rows if r["test"] is not None), [party.metric])
    fill = np.nan if party.error_score == "raise" else float(party.error_score)

    def column(part, name):
        return np.array([r[part][name] if r[part] is not None and name in r[part] else
                         (fill if part == "test" else np.nan) for r in rows])

    test = {m: column("test", m) for m in metrics}
    # the objective is NaN where a configuration failed, whatever error_score (which only fills
    # the test scores of cv_results_): a failure never steers a search towards itself
    scores = np.where([r["test"] is None for r in rows], np.nan, test[party.metric])
    private = noise_std > 0
    if private:
        # DP (DP-Fed-PNE, App. D.2): the party perturbs its own rewards, and releases nothing
        # else about them (no noise-free scores, spreads or train scores).
        scores = scores + np.random.default_rng(seed).normal(0.0, noise_std, size=n)
        test = {party.metric: scores}
    if not party.reports_metrics:
        return EvaluateReply(scores=scores, n_samples=party.n_samples)
    return EvaluateReply(
        scores=scores,
        n_samples=party.n_samples,
        test_scores=test,
        std_scores={} if private else {m: column("std", m) for m in metrics},
        train_scores={m: column("train", m) for m in metrics} if party.return_train_score and not private else {},
        split_scores={} if private else _splits(rows, "splits", metrics),
        split_train_scores=_splits(rows, "train_splits", metrics) if party.return_train_score and not private else {},
        fit_time=np.array([0.0 if c else r["fit_time"] for r, c in zip(rows, cached)]),
        score_time=np.array([0.0 if c else r["score_time"] for r, c in zip(rows, cached)]),
        std_fit_time=np.array([0.0 if c else r.get("std_fit_time", 0.0) for r, c in zip(rows, cached)]),
        std_score_time=np.array([0.0 if c else r.get("std_score_time", 0.0) for r, c in zip(rows, cached)]),
        errors=tuple(r["error"] for r in rows),
        error_kinds=tuple(r.get("kind") for r in rows),
        cached=cached,
    )


def _splits(rows, key: str, metrics) -> dict:
    """{metric: (n_points, n_splits)} of the per-fold scores (NaN rows for failures); empty
    when the party's summaries have none (a synthetic party)."""
    width = max((len(r[key][m]) for r in rows if r.get(key) for m in metrics if m in r[key]), default=0)
    if not width:
        return {}
    return {m: np.array([r[key][m] if r.get(key) and m in r[key] else [np.nan] * width for r in rows])
            for m in metrics}


register_handler(EvaluateTask, _units_evaluate, _reply_evaluate)
