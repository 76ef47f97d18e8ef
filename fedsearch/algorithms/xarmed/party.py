"""The party side of :class:`~fedsearch.algorithms.xarmed.tasks.PullTask`: pull the nodes, reply one
mean per node (any party, data or synthetic, through the
:class:`~fedsearch.party.objective.LocalObjective` protocol)."""

from __future__ import annotations

import dataclasses
import math
from collections import Counter

import numpy as np

from ...messages import EvaluateTask
from ...party import register_handler
from ...party.evaluate import _fresh, _reply_evaluate
from .tasks import PullReply, PullTask
from .nodes import PULLS

__all__ = ["node_means", "node_sums", "pull_reply"]


def node_sums(scores: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(sums, finite counts)`` of the finite scores of consecutive runs of ``counts[j]`` scores."""
    counts = np.asarray(counts, dtype=np.int64)
    owner = np.repeat(np.arange(len(counts)), counts)  # the node of each score
    finite = np.isfinite(scores)
    if finite.all():
        n = counts.copy()
    else:
        owner, scores = owner[finite], scores[finite]
        n = np.bincount(owner, minlength=len(counts))
    return np.bincount(owner, weights=scores, minlength=len(counts)), n


def node_means(scores: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(means, finite counts)`` of consecutive runs of ``counts[j]`` scores (``mu_{m,h,i}``,
    Fed-PNE Algorithm 1, line 8); NaN mean where a node has no finite score."""
    counts = np.asarray(counts, dtype=np.int64)
    if len(counts) and counts[0] > 0 and np.all(counts == counts[0]) and np.isfinite(scores).all():  # a phase
        return scores.reshape(len(counts), counts[0]).mean(axis=1), counts.copy()
    sums, n = node_sums(scores, counts)
    return np.divide(sums, n, out=np.full(len(counts), np.nan), where=n > 0), n


def pull_reply(task: PullTask, scores, n_samples: int = 1, metric: str = "score") -> PullReply:
    """The reply of a party whose score of each of ``task.points`` is ``scores`` (no DP): its
    mean per node (what a test's fake party answers, too)."""
    means, counts = node_means(np.asarray(scores, dtype=float), task.counts)
    return PullReply(means=means, counts=counts, n_samples=n_samples, metric=metric)


def _check(party, task: PullTask) -> None:
    n_dims = task.tree[0]
    if n_dims != party.n_dims:
        raise ValueError(f"Party {party.party_id!r} got a tree of {n_dims} dimensions; its search space has "
                         f"{party.n_dims}.")
    if task.pull not in PULLS:
        raise ValueError(f"Party {party.party_id!r} got pull={task.pull!r}; it knows {list(PULLS)}.")
    if len(task.counts) != len(task.index) or (len(task.counts) and task.counts.min() < 0):
        raise ValueError(f"Party {party.party_id!r} got {len(task.counts)} pull counts for {len(task.index)} "
                         f"nodes; it needs one non-negative count per node.")


def _units_pull(party, task: PullTask) -> list:
    _check(party, task)  # the points are the party's own draws inside the cube: not checked again
    return party.evaluation_units(_fresh(party, task.points))


def _quantity(party, points: np.ndarray) -> tuple | None:
    """What a node's mean is a mean of, for a party whose scores are deterministic: the
    proportions of its distinct configurations (the mean of ``t`` pulls of one configuration
    is that configuration's score, whichever node it came from)."""
    if not party.deterministic:
        return None  # every pull is a fresh observation: no two releases are the same quantity
    counts = Counter(party._key(p) for p in points)
    g = math.gcd(*counts.values())
    return tuple(sorted((k, c // g) for k, c in counts.items()))


def _release(party, task: PullTask, points: np.ndarray, means: np.ndarray) -> np.ndarray:
    """DP-Fed-PNE (App. D.2, Algorithm 3, line 8): ``clip(mean) + N(0, sigma^2)`` per node,
    drawn once per quantity: a repeat is answered with the value already released."""
    low, high = task.clip if task.clip is not None else (-np.inf, np.inf)
    clipped = np.clip(means, low, high)
    rng = np.random.default_rng(task.noise_seed)
    noisy = clipped + rng.normal(0.0, task.noise_std, size=len(means))
    starts = np.concatenate([[0], np.cumsum(task.counts)])
    for j in range(len(means)):
        key = _quantity(party, points[starts[j]:starts[j + 1]])
        if key is None or not np.isfinite(clipped[j]):
            continue
        noisy[j] = party.released.setdefault((float(low), float(high), float(task.noise_std), key), noisy[j])
    return noisy


def _reply_pull(party, task: PullTask, outputs: list) -> PullReply:
    points = task.points
    private = task.noise_std > 0
    if task.share or party.deterministic:
        evaluation = _reply_evaluate(party, EvaluateTask(points), outputs)
        scores = np.asarray(evaluation.scores, dtype=float)
    else:  # a fresh observation per pull: the scores alone, vectorised
        evaluation, scores = None, party.scores(points, outputs)
    out = pull_reply(task, scores, party.n_samples, party.metric)
    if private:
        return dataclasses.replace(out, means=_release(party, task, points, out.means))
    return dataclasses.replace(out, evaluation=evaluation) if task.share else out


register_handler(PullTask, _units_pull, _reply_pull)
