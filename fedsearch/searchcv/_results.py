"""``cv_results_``: the table of every configuration the parties cross-validated."""

from __future__ import annotations

import warnings

import numpy as np
from scipy.stats import rankdata

from ..algorithms.candidates.strategy import aggregate_scores
from ..messages import EvaluateReply
from ..space import SearchSpace, point_key

__all__ = ["ResultsTable"]


class ResultsTable:
    """Collects the parties' :class:`EvaluateReply` summaries, one row per configuration.

    A row is a configuration (deduplicated on its canonical point: integer and categorical
    rounding make repeats common); a party that never evaluated it has NaN in its columns.
    """

    def __init__(self, space: SearchSpace, party_ids: list, weights, metrics: list[str],
                 return_train_score: bool, n_splits: list[int]):
        self.space = space
        self.n_splits = [int(k) for k in n_splits]
        self.party_ids = list(party_ids)
        self.weights = np.asarray(weights, dtype=float)
        self.metrics = list(metrics)
        self.return_train_score = return_train_score
        self._rows: dict[tuple, int] = {}
        self._points: list[np.ndarray] = []
        self._cells: dict[tuple[int, int], dict] = {}  # (row, party) -> summary

    def row_of(self, point) -> int | None:
        return self._rows.get(self.space.key(point))

    def complete(self, point) -> bool:
        """Whether every party has evaluated ``point``."""
        row = self.row_of(point)
        return row is not None and all((row, p) in self._cells for p in range(len(self.party_ids)))

    def _rows_for(self, points) -> list[int]:
        """The row of each of ``points``, a new one for a configuration not seen yet (the points
        snapped together: :meth:`SearchSpace.key` of each, vectorised)."""
        canonical = self.space.canonical(np.asarray(points, dtype=float).reshape(len(points), self.space.n_dims))
        rows = []
        for c in canonical:
            k = point_key(c)
            if k not in self._rows:
                self._rows[k] = len(self._points)
                self._points.append(c)
            rows.append(self._rows[k])
        return rows

    def add_unevaluated(self, point) -> int:
        """A row for a configuration no party evaluated (a recommendation taken on trust)."""
        return self._rows_for([point])[0]

    def add(self, tasks: dict, replies: dict) -> None:
        """Take one round's evaluations. A reply that is not an evaluation (a local search's
        upload, a node pull) provides ``as_evaluation(task) -> (EvaluateTask, EvaluateReply)``,
        ``(None, None)`` when it holds no configuration's score."""
        for p, reply in replies.items():
            task = tasks[p]
            if hasattr(reply, "as_evaluation"):
                task, reply = reply.as_evaluation(task)
            if not isinstance(reply, EvaluateReply):
                continue
            for i, row in enumerate(self._rows_for(task.points)):
                cell = self._cells.setdefault((row, p), {
                    "test": {}, "train": {}, "splits": {}, "train_splits": {}, "fit_time": [],
                    "score_time": [], "error": None, "kind": None})
                if reply.error is not None or (reply.errors and reply.errors[i] is not None):
                    cell["error"] = reply.error or reply.errors[i]
                    cell["kind"] = reply.kind if reply.error is not None else (
                        reply.error_kinds[i] if reply.error_kinds else None)
                for m, values in reply.test_scores.items():
                    cell["test"][m] = float(values[i])
                for m, values in reply.train_scores.items():
                    cell["train"][m] = float(values[i])
                for m, values in reply.split_scores.items():
                    cell["splits"][m] = np.asarray(values[i], dtype=float)
                for m, values in reply.split_train_scores.items():
                    cell["train_splits"][m] = np.asarray(values[i], dtype=float)
                if reply.fit_time is not None and not (reply.cached is not None and reply.cached[i]):
                    for name in ("fit_time", "score_time"):  # (mean, spread) over the party's folds
                        spread = getattr(reply, f"std_{name}")
                        cell[name].append((float(getattr(reply, name)[i]),
                                           0.0 if spread is None else float(spread[i])))

    @property
    def n_rows(self) -> int:
        return len(self._points)

    def failures(self) -> dict:
        """{party index: [(row, error kind, error message), ...]} of every failed evaluation."""
        out: dict[int, list] = {}
        for (row, p), cell in sorted(self._cells.items()):
            if cell["error"] is not None:
                out.setdefault(p, []).append((row, cell["kind"], cell["error"]))
        return out

    def outcome(self) -> tuple[np.ndarray, np.ndarray]:
        """Boolean masks of the rows: (evaluated by every party, failed in some party)."""
        complete, failed = np.zeros(self.n_rows, dtype=bool), np.zeros(self.n_rows, dtype=bool)
        for row in range(self.n_rows):
            cells = [self._cells.get((row, p)) for p in range(len(self.party_ids))]
            complete[row] = all(c is not None for c in cells)
            failed[row] = any(c is not None and c["error"] is not None for c in cells)
        return complete, failed

    def nothing_succeeded(self) -> bool:
        """Whether no configuration succeeded in every party: a party failed every configuration
        it evaluated, or every configuration that all parties evaluated failed in one of them."""
        complete, failed = self.outcome()
        tried, lost = np.zeros(len(self.party_ids), dtype=int), np.zeros(len(self.party_ids), dtype=int)
        for (_, p), cell in self._cells.items():
            tried[p] += 1
            lost[p] += cell["error"] is not None
        return bool(np.any((tried > 0) & (lost == tried)) or (complete.any() and not np.any(complete & ~failed)))

    def split_scores(self, metric: str, part: str = "test") -> np.ndarray:
        """Array (n_splits of every party, n_rows) of the folds' scores, party after party
        (NaN where a party did not evaluate a row or did not report its folds)."""
        key = "splits" if part == "test" else "train_splits"
        offsets = np.concatenate([[0], np.cumsum(self.n_splits)])
        out = np.full((offsets[-1], self.n_rows), np.nan)
        for (row, p), cell in self._cells.items():
            values = cell[key].get(metric)
            if values is not None and len(values) == self.n_splits[p]:
                out[offsets[p]:offsets[p + 1], row] = values
        return out

    def party_scores(self, metric: str, part: str = "test") -> np.ndarray:
        """Array (n_parties, n_rows) of each party's mean score (NaN where not evaluated)."""
        out = np.full((len(self.party_ids), self.n_rows), np.nan)
        for (row, p), cell in self._cells.items():
            out[p, row] = cell[part].get(metric, np.nan)
        return out

    def best_score(self, metric: str, aggregate: str) -> float | None:
        """The best federated score so far among the configurations every party evaluated."""
        scores = aggregate_scores(self.party_scores(metric), self.weights, aggregate)
        return float(np.nanmax(scores)) if np.any(np.isfinite(scores)) else None

    def _times(self, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Mean and spread of ``name`` (``"fit_time"``, ``"score_time"``) over the folds of every
        party, as ``GridSearchCV``'s over its folds, from each party's mean and spread over its
        own folds; and the spread of the parties' means (0 where no party timed a row)."""
        n = self.n_rows
        timings = [(row, self.n_splits[p], mean, std)  # one entry per evaluation that fitted
                   for (row, p), cell in self._cells.items() for mean, std in cell[name]]
        folds, total, squares = np.zeros(n), np.zeros(n), np.zeros(n)
        for row, k, mean, _ in timings:
            folds[row] += k
            total[row] += k * mean
        timed = folds > 0
        mean_all = np.zeros(n)
        mean_all[timed] = total[timed] / folds[timed]
        for row, k, mean, std in timings:  # within-party spread + spread of the party means
            squares[row] += k * (std ** 2 + (mean - mean_all[row]) ** 2)
        spread = np.zeros(n)
        spread[timed] = np.sqrt(squares[timed] / folds[timed])
        per_party = np.full((len(self.party_ids), n), np.nan)
        for (row, p), cell in self._cells.items():
            if cell[name]:
                per_party[p, row] = np.mean([mean for mean, _ in cell[name]])
        with np.errstate(all="ignore"):
            across = _nan_reduce(np.nanstd, per_party)
        return mean_all, spread, across

    def results(self, aggregate: str) -> dict:
        """``cv_results_`` in scikit-learn's layout, plus per-party columns."""
        n = self.n_rows
        params = self.space.to_params_many(np.array(self._points).reshape(n, self.space.n_dims))
        res: dict = {}
        for name in ("fit_time", "score_time"):
            res[f"mean_{name}"], res[f"std_{name}"], res[f"std_across_parties_{name}"] = self._times(name)
        for pname in self.space.param_names:
            res[f"param_{pname}"] = _param_column([prm.get(pname, _ABSENT) for prm in params])
        res["params"] = params
        parts = ("test", "train") if self.return_train_score else ("test",)
        offsets = np.concatenate([[0], np.cumsum(self.n_splits)])
        for part in parts:
            for m in self.metrics:
                scores = self.party_scores(m, part)
                splits = self.split_scores(m, part)
                for k, values in enumerate(splits):
                    res[f"split{k}_{part}_{m}"] = values
                res[f"mean_{part}_{m}"] = aggregate_scores(scores, self.weights, aggregate)
                with np.errstate(all="ignore"):
                    # the spread over the folds of every party, as scikit-learn's over its folds
                    res[f"std_{part}_{m}"] = _nan_reduce(np.nanstd, splits, fill=np.nan)
                if part == "test":
                    res[f"rank_test_{m}"] = _rank(res[f"mean_test_{m}"])
                for p, pid in enumerate(self.party_ids):
                    res[f"party_{pid}_{part}_{m}"] = scores[p]
                    with np.errstate(all="ignore"):
                        res[f"party_{pid}_std_{part}_{m}"] = _nan_reduce(
                            np.nanstd, splits[offsets[p]:offsets[p + 1]], fill=np.nan)
                with np.errstate(all="ignore"):
                    res[f"std_across_parties_{part}_{m}"] = scores.std(axis=0)
        failed = self.failures()
        res["n_failed_parties"] = np.array(
            [sum(any(f[0] == row for f in failed.get(p, [])) for p in range(len(self.party_ids)))
             for row in range(n)], dtype=int)
        return res


_ABSENT = object()


def _param_column(values: list) -> np.ma.MaskedArray:
    """A ``param_<name>`` column as ``GridSearchCV`` builds it: masked where the configuration
    has no such parameter, of the values' common dtype when they have one, else of object."""
    present = [v for v in values if v is not _ABSENT]
    try:
        with warnings.catch_warnings():  # NumPy's about objects with a .dtype attribute
            warnings.simplefilter("ignore", DeprecationWarning)
            dtype = np.result_type(*present)
    except (TypeError, ValueError):
        dtype = np.dtype(object)
    if any(np.min_scalar_type(v) == object for v in present):  # a .dtype property can mislead
        dtype = np.dtype(object)
    if len(present) == len(values) and dtype != object:
        return np.ma.MaskedArray(present, mask=False, dtype=dtype)
    column = np.ma.MaskedArray(np.empty(len(values), dtype=dtype), mask=True)
    for i, value in enumerate(values):
        if value is not _ABSENT:
            column[i] = value  # unmasks it
    return column


def _nan_reduce(func, a: np.ndarray, fill: float = 0.0) -> np.ndarray:
    """``func`` over axis 0 of the columns that hold a value; ``fill`` for the others."""
    out = np.full(a.shape[1], fill)
    has = ~np.all(np.isnan(a), axis=0)
    out[has] = func(a[:, has], axis=0)
    return out


def _rank(scores: np.ndarray) -> np.ndarray:
    """Rank 1 is best; ties share the lowest rank; NaN ranks last (as in scikit-learn)."""
    if np.all(np.isnan(scores)):
        return np.ones(len(scores), dtype=np.int32)
    worst = np.nanmin(scores) - 1
    return rankdata(-np.where(np.isnan(scores), worst, scores), method="min").astype(np.int32)
