"""``cv_results_``: the table of every configuration the parties cross-validated."""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

from ..algorithms.candidates.strategy import aggregate_scores
from ..messages import EvaluateReply
from ..space import SearchSpace

__all__ = ["ResultsTable"]


class ResultsTable:
    """Collects the parties' :class:`EvaluateReply` summaries, one row per configuration.

    A row is a configuration (deduplicated on its canonical point: integer and categorical
    rounding make repeats common); a party that never evaluated it has NaN in its columns.
    """

    def __init__(self, space: SearchSpace, party_ids: list, weights, metrics: list[str],
                 return_train_score: bool):
        self.space = space
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

    def _row(self, point) -> int:
        k = self.space.key(point)
        if k not in self._rows:
            self._rows[k] = len(self._points)
            self._points.append(self.space.canonical(point))
        return self._rows[k]

    def add_unevaluated(self, point) -> int:
        """A row for a configuration no party evaluated (a recommendation taken on trust)."""
        return self._row(point)

    def add(self, tasks: dict, replies: dict) -> None:
        """Take one round's evaluations. A reply that carries its own points (a local search's
        upload) provides ``as_evaluation() -> (EvaluateTask, EvaluateReply)``."""
        for p, reply in replies.items():
            task = tasks[p]
            if hasattr(reply, "as_evaluation"):
                task, reply = reply.as_evaluation()
            if not isinstance(reply, EvaluateReply):
                continue
            for i, point in enumerate(task.points):
                cell = self._cells.setdefault((self._row(point), p), {
                    "test": {}, "train": {}, "fit_time": [], "score_time": [], "error": None})
                if reply.error is not None or (reply.errors and reply.errors[i] is not None):
                    cell["error"] = reply.error or reply.errors[i]
                for m, values in reply.test_scores.items():
                    cell["test"][m] = float(values[i])
                for m, values in reply.train_scores.items():
                    cell["train"][m] = float(values[i])
                if reply.fit_time is not None and not (reply.cached is not None and reply.cached[i]):
                    cell["fit_time"].append(float(reply.fit_time[i]))
                    cell["score_time"].append(float(reply.score_time[i]))

    @property
    def n_rows(self) -> int:
        return len(self._points)

    def failures(self) -> dict:
        """{party index: [(row, error message), ...]} of every failed evaluation."""
        out: dict[int, list] = {}
        for (row, p), cell in sorted(self._cells.items()):
            if cell["error"] is not None:
                out.setdefault(p, []).append((row, cell["error"]))
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

    def results(self, aggregate: str) -> dict:
        """``cv_results_`` in scikit-learn's layout, plus per-party columns."""
        n = self.n_rows
        params = [self.space.to_params(u) for u in self._points]
        res: dict = {}
        for name, key in (("fit_time", "fit_time"), ("score_time", "score_time")):
            per_party = np.full((len(self.party_ids), n), np.nan)
            for (row, p), cell in self._cells.items():
                if cell[key]:
                    per_party[p, row] = np.mean(cell[key])
            with np.errstate(all="ignore"):
                res[f"mean_{name}"] = _nan_reduce(np.nanmean, per_party)
                res[f"std_{name}"] = _nan_reduce(np.nanstd, per_party)
        for pname in self.space.param_names:
            values = np.ma.MaskedArray(np.empty(n, dtype=object), mask=True)
            for i, prm in enumerate(params):
                if pname in prm:
                    values[i] = prm[pname]
            res[f"param_{pname}"] = values
        res["params"] = params
        parts = ("test", "train") if self.return_train_score else ("test",)
        for part in parts:
            for m in self.metrics:
                scores = self.party_scores(m, part)
                for p, pid in enumerate(self.party_ids):
                    res[f"party_{pid}_{part}_{m}"] = scores[p]
                res[f"mean_{part}_{m}"] = aggregate_scores(scores, self.weights, aggregate)
                with np.errstate(all="ignore"):
                    res[f"std_{part}_{m}"] = scores.std(axis=0)
                if part == "test":
                    res[f"rank_test_{m}"] = _rank(res[f"mean_test_{m}"])
        failed = self.failures()
        res["n_failed_parties"] = np.array(
            [sum(any(r == row for r, _ in failed.get(p, [])) for p in range(len(self.party_ids)))
             for row in range(n)], dtype=int)
        return res


def _nan_reduce(func, a: np.ndarray) -> np.ndarray:
    out = np.zeros(a.shape[1])
    has = ~np.all(np.isnan(a), axis=0)
    out[has] = func(a[:, has], axis=0)
    return out


def _rank(scores: np.ndarray) -> np.ndarray:
    """Rank 1 is best; ties share the lowest rank; NaN ranks last (as in scikit-learn)."""
    if np.all(np.isnan(scores)):
        return np.ones(len(scores), dtype=np.int32)
    worst = np.nanmin(scores) - 1
    return rankdata(-np.where(np.isnan(scores), worst, scores), method="min").astype(np.int32)
