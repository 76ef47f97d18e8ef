"""DP-FTS-DE's party side (Algo. 2), answered by any party through the LocalObjective protocol.

A party keeps, per search, its history of points and scores and its own GP's hyper-parameters.
That state moves only in :func:`_reply_step`, where the party assembles its reply in its own
process; the units of work (the evaluations, and in later rounds the choice of the point with
its evaluation) are pure functions of their arguments and may run in any worker.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...party import Unit, register_handler
from ...party.evaluate import evaluation_reply
from ._features import FourierFeatures, posterior_sample
from ._local import KernelFit, choose_point, usable_scores
from .tasks import FTSStepReply, FTSStepTask

__all__ = []


@dataclass
class _History:
    points: list = field(default_factory=list)
    scores: list = field(default_factory=list)  # the objective, NaN where the evaluation failed
    kernel: KernelFit | None = None
    next_round: int = 0


def _histories(party) -> dict:
    return vars(party).setdefault("_dpftsde_histories", {})


def _rng(task: FTSStepTask, stream: int) -> np.random.Generator:
    return np.random.default_rng([task.seed, stream])


def _check_task(party, task: FTSStepTask) -> _History | None:
    M, d = np.shape(task.frequencies)
    P = len(task.regions)
    problems = []
    if d != party.n_dims or np.shape(task.offsets) != (M,):
        problems.append(f"features of shape {np.shape(task.frequencies)} and {np.shape(task.offsets)} "
                        f"for a {party.n_dims}-dimensional space")
    if np.shape(task.regions) != (P, party.n_dims, 2) or not 0 <= task.region < P:
        problems.append(f"regions of shape {np.shape(task.regions)} and region {task.region!r}")
    if task.omega is not None and np.shape(task.omega) != (P, M):
        problems.append(f"a broadcast of shape {np.shape(task.omega)}, not {(P, M)}")
    if not 0.0 <= task.p <= 1.0 or (task.p < 1.0 and task.omega is None and task.server_branch == "argmax"):
        problems.append(f"p={task.p!r} with {'no' if task.omega is None else 'a'} broadcast")
    history = _histories(party).get(task.search_id)
    if task.round > 0 and (history is None or task.round != history.next_round):  # round 0 (re)starts
        due = 0 if history is None else history.next_round
        problems.append(f"round {task.round} where round {due} was due")
    if problems:
        raise ValueError(f"Party {party.party_id!r} got an FTSStepTask with " + "; ".join(problems) + ".")
    return history


def _initial_points(party, task: FTSStepTask) -> np.ndarray:
    """Algo. 2 l.2: ``n_init`` uniform points of the party's box (of the whole cube when P = 1)."""
    box = np.asarray(task.regions[task.region], dtype=float)
    u = box[:, 0] + (box[:, 1] - box[:, 0]) * _rng(task, 0).random((task.n_init, party.n_dims))
    return np.array([party.space.canonical(x) for x in u]).reshape(task.n_init, party.n_dims)


def _step(evaluate, X, y, kernel, features, omega, regions, p, server_branch, n_features_local,
          n_candidates, n_restarts, canonical, seed):
    """One BO iteration of a party (a unit of work): choose the point (Algo. 2 l.4-8), evaluate it (l.9)."""
    x, _, kernel = choose_point(X, y, np.random.default_rng([seed, 2]), p=p, features=features, omega_joint=omega,
                                regions=regions, kernel=kernel, n_features_local=n_features_local,
                                n_candidates=n_candidates, n_restarts=n_restarts, server_branch=server_branch,
                                canonical=canonical)
    return x, evaluate(x), kernel


def _units_step(party, task: FTSStepTask) -> list[Unit]:
    history = _check_task(party, task)
    if task.round == 0:
        return party.evaluation_units(_initial_points(party, task))
    features = FourierFeatures(np.asarray(task.frequencies, dtype=float), np.asarray(task.offsets, dtype=float))
    return [Unit(_step, (
        party.evaluator(task.seed), np.array(history.points), usable_scores(history.scores), history.kernel,
        features, task.omega, np.asarray(task.regions, dtype=float), float(task.p), task.server_branch,
        int(task.n_features_local), int(task.n_candidates), int(task.n_restarts), party.space.canonical, task.seed,
    ))]


def _reply_step(party, task: FTSStepTask, outputs: list) -> FTSStepReply:
    if task.round == 0:
        _histories(party)[task.search_id] = _History()
    history = _histories(party)[task.search_id]
    if task.round == 0:
        points = _initial_points(party, task)
        summaries = party.summarise(points, outputs)
    else:
        x, summary, history.kernel = outputs[0]
        points, summaries = x[None, :], [party.checked(x, summary)]
    for point, summary in zip(points, summaries):
        party.remember(point, summary)
        history.points.append(point)
        history.scores.append(summary["test"][party.metric] if summary["test"] is not None else np.nan)
    history.next_round = task.round + 1

    # Algo. 2 l.10, eq. 2: a fresh posterior sample over the shared features, from all observations
    X, y = np.array(history.points), usable_scores(history.scores)
    features = FourierFeatures(np.asarray(task.frequencies, dtype=float), np.asarray(task.offsets, dtype=float))
    omega = posterior_sample(features(X), y, float(task.obs_noise), _rng(task, 1))
    # a party whose every evaluation failed has no best configuration to send (not a failed one)
    has_best = task.last and np.isfinite(np.asarray(history.scores, dtype=float)).any()
    best_point = X[int(np.argmax(y))] if has_best else None

    if not task.share_scores:  # only the vector (and, at the end, a configuration) leaves the party
        return FTSStepReply(omega=omega, n_samples=party.n_samples, points=np.empty((0, party.n_dims)),
                            best_point=best_point)
    # every point was fitted anew this round (the units do not consult the party's cache)
    evaluation = evaluation_reply(party, summaries, np.zeros(len(points), dtype=bool))
    return FTSStepReply(omega=omega, n_samples=party.n_samples, points=points, best_point=best_point,
                        evaluation=evaluation)


register_handler(FTSStepTask, _units_step, _reply_step)
