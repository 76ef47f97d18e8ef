"""FLoRA's party side: a party's own search, answered by any party (data or synthetic) through the
:class:`~fedsearch.party.objective.LocalObjective` protocol.

An adaptive search (``bo``, ``tpe``) is one unit of work: ask, evaluate, tell in turn. A search
whose searcher does not adapt (``random``, ``adaptive = False``) on a deterministic party is
drawn at once and its (trial, fold) fits are independent units, as a grid search's, so that the
round keeps every worker busy; the reply is the same either way."""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
from joblib.parallel import get_active_backend
from sklearn.utils.parallel import Parallel, delayed

from ...party import Unit, register_handler
from ...party.data import CrossValidation, fit_and_score_fold, summarise_folds
from ...party.evaluate import evaluation_reply
from ...space import point_key
from .local_search import local_search_factory, local_search_methods
from .tasks import LocalSearchReply, LocalSearchTask

__all__ = ["run_local_search"]


@dataclass
class _SearchOutput:
    trials: list  # (canonical point, summary, repeated?)
    error: BaseException | None = None


@dataclass(frozen=True)
class _FoldsInThreads:
    """A data party's cross-validation of one configuration with its folds fitted in threads.

    An adaptive local search is one unit of work per party, so a round of ``p`` searches on
    ``n_jobs`` workers leaves workers idle whenever ``p`` is not a multiple of ``n_jobs`` (3
    parties on 2 workers: at most 3/4 busy). Fitting the folds of each trial concurrently lets a
    worker whose neighbour is idle use the free core; the fits and their order are those of the
    sequential evaluation, so the results are the same.
    """

    cv: CrossValidation

    def __call__(self, point):
        cv = self.cv
        params = cv.space.to_params(point)
        return summarise_folds(Parallel(n_jobs=len(cv.folds), prefer="threads")(
            delayed(fit_and_score_fold)(cv.estimator, cv.X, cv.y, train, test, params, cv.scoring,
                                        cv.fit_params, cv.return_train_score)
            for train, test in cv.folds))


def _in_a_worker() -> bool:
    """Whether this code runs inside a worker of a parallel call (``n_jobs`` > 1)."""
    return get_active_backend()[0].nesting_level > 0


def run_local_search(evaluate, space, metric, stop_on_error, factory, n_iter, seed, progress=None) -> _SearchOutput:
    """A party's adaptive local search (runs in one worker): ask, evaluate, tell (Algorithm 1, line 3).

    ``evaluate(point) -> summary`` is the party's :meth:`LocalObjective.evaluator`; a data
    party's folds are fitted in threads when the search runs in a worker of a parallel round
    (:class:`_FoldsInThreads`). A configuration proposed again is not re-evaluated (its summary
    is reused) but still counts as one of the ``n_iter`` trials. ``factory(space, seed)`` builds
    the local searcher; ``progress`` (the unit's callbacks' task) gets one sub-task per trial.
    """
    if isinstance(evaluate, CrossValidation) and len(evaluate.folds) > 1 and _in_a_worker():
        evaluate = _FoldsInThreads(evaluate)
    trials, seen = [], {}
    try:
        searcher = factory(space, seed)
        for _ in range(n_iter):
            trial = progress.child("trial").begin() if progress is not None else None
            u = space.canonical(searcher.ask())
            key = point_key(u)
            repeated = key in seen
            summary = trials[seen[key]][1] if repeated else evaluate(u)
            if not repeated:
                seen[key] = len(trials)
            failed = summary["test"] is None
            trials.append((u, summary, repeated))
            if trial is not None:
                trial.end()
            if failed and stop_on_error:
                break
            searcher.tell(u, np.nan if failed else float(summary["test"][metric]))
    except Exception as exc:  # noqa: BLE001 - a failing search is data, not a crash
        return _SearchOutput(trials, exc)
    return _SearchOutput(trials)


def _drawn_trials(party, task: LocalSearchTask) -> list | None:
    """Every trial of a search that does not adapt to the scores (its searcher's ``adaptive =
    False``), asked in order, when the party's evaluations are deterministic; else None (the
    search runs as one unit). Cheap, so the reply draws them again instead of keeping state. A
    searcher that fails to propose also gives None: the one-unit search then records its failure
    after the trials before it, as it does for an adaptive searcher."""
    factory = local_search_factory(task.method)
    if not party.deterministic or getattr(factory, "adaptive", True):
        return None
    try:  # an invalid point is a failure to propose too, as in the one-unit search
        searcher = factory(party.space, task.seed)
        return list(party.space.canonical(np.array([searcher.ask() for _ in range(int(task.n_iter))])))
    except Exception:  # noqa: BLE001 - the one unit replays it and reports it as data
        return None


def _distinct(trials: list) -> tuple[np.ndarray, list]:
    """The distinct points of ``trials`` in order of first appearance (rows), and each trial's
    index among them."""
    position, distinct, index = {}, [], []
    for u in trials:
        key = point_key(u)
        if key not in position:
            position[key] = len(distinct)
            distinct.append(u)
        index.append(position[key])
    return np.array(distinct), index


def _units_local_search(party, task: LocalSearchTask) -> list[Unit]:
    if not isinstance(task.n_iter, numbers.Integral) or task.n_iter < 1:
        raise ValueError(f"Party {party.party_id!r} got n_iter={task.n_iter!r}; it must be a positive int.")
    if task.n_best is not None and (not isinstance(task.n_best, numbers.Integral) or task.n_best < 1):
        raise ValueError(f"Party {party.party_id!r} got n_best={task.n_best!r}; it must be None or a positive int.")
    if task.method not in local_search_methods():
        raise ValueError(f"Party {party.party_id!r} does not know the local search {task.method!r}; "
                         f"it knows {local_search_methods()}.")
    drawn = _drawn_trials(party, task)
    if drawn is not None:  # every (trial, fold) is its own unit, as in a grid search
        return party.evaluation_units(_distinct(drawn)[0])
    return [Unit(run_local_search, (
        party.evaluator(task.seed), party.space, party.metric, party.error_score == "raise",
        local_search_factory(task.method), int(task.n_iter), task.seed,
    ), task_name="local search", subtasks=int(task.n_iter))]


def _search_output(party, task: LocalSearchTask, outputs: list) -> _SearchOutput:
    """The trials of the search, from its one unit's output or from the drawn trials' fits (the
    same summaries: a repeated configuration reuses its first evaluation in both)."""
    drawn = _drawn_trials(party, task)
    if drawn is None:
        return outputs[0]
    distinct, index = _distinct(drawn)
    summaries = party.summarise(distinct, outputs)
    trials, seen = [], set()
    for u, i in zip(drawn, index):
        trials.append((u, summaries[i], i in seen))
        seen.add(i)
    return _SearchOutput(trials)


def _reply_local_search(party, task: LocalSearchTask, outputs: list) -> LocalSearchReply:
    out = _search_output(party, task, outputs)
    rows = []
    for u, summary, repeated in out.trials:
        summary = party.checked(u, summary)
        party.remember(u, summary)  # the validation round may reuse it
        rows.append((u, summary, repeated))
    n = len(rows)
    # the objective, NaN where a configuration failed whatever its error_score, so that no
    # surface takes a failure for a good region (nor n_best a failure for a good pair)
    scores = np.array([r["test"][party.metric] if r["test"] is not None else np.nan for _, r, _ in rows])
    keep = np.arange(n)
    if task.n_best is not None and task.n_best < n:  # T' lowest losses (App. D.7); failures last
        keep = np.sort(np.argsort(np.where(np.isnan(scores), -np.inf, -scores), kind="stable")[:task.n_best])
    evaluation = evaluation_reply(party, [rows[i][1] for i in keep], np.array([rows[i][2] for i in keep], dtype=bool))
    return LocalSearchReply(
        points=np.array([rows[i][0] for i in keep]).reshape(len(keep), party.n_dims),
        losses=1.0 - evaluation.scores,  # the paper's loss: 1 - balanced accuracy (App. D.9)
        trials=keep.astype(int),
        n_evaluations=n,
        n_failed=int(sum(r["error"] is not None for _, r, _ in rows)),
        n_samples=party.n_samples,
        evaluation=evaluation,
        error=None if out.error is None else party.record_error(out.error, "local_search"),
        kind=None if out.error is None else "local_search",
    )


register_handler(LocalSearchTask, _units_local_search, _reply_local_search)
