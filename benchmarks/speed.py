"""Where the time goes: federated grid search against GridSearchCV, parallel efficiency, server time.

Part 1. ``FederatedGridSearchCV`` over p parties against ``GridSearchCV`` on the pooled data doing
the *same fits*: the pooled search gets, as its ``cv``, every party's own folds mapped to rows of
the pooled data, so both fit the same models on the same rows and only the orchestration differs.
Both run with ``n_jobs`` workers and ``refit=False``; the pair is timed back to back ``--repeats``
times in alternating order, after an untimed warm-up. Reported: the median of the pairs' wall
ratios (issue 2, item 10: the federated search must not be slower by more than 10%), and the
median ratio of wall time per second of fitting and scoring (from ``cv_results_``), the
orchestration's overhead whatever load other processes put on the fits.

Part 2. For every search of the library that has landed, at an equal per-party budget (the grid's
size): its wall time against ``work_sum``, the workers' seconds over every unit of party work
(fit and score of one configuration on one fold; for FLoRA with an adaptive local search, ``bo``
or ``tpe``, one party's whole local search), divided by the workers (parallel efficiency =
work_sum / (n_jobs x wall)), and the strategy's own server-side time (``configure`` +
``aggregate`` + ``recommend``). FLoRA's default ``random`` local search draws its trials at once,
so its units are single fits as grid search's. Because an adaptive local search fits its folds in
threads inside a unit, that unit's wall time is not its work: part 2 also reports
``fit_sum``, the seconds of fitting and scoring of every (configuration, party, fold) from
``cv_results_`` (the rule of part 1; inflated when fits share cores with threads), and ``cpu``,
the CPU seconds of this process and its workers (from ``/proc``) with
``cpu_efficiency = cpu / (n_jobs x wall)``: the share of the workers' cores the search used.

Part 3. The local searchers' own cost (FLoRA's parties): CPU seconds of one ``ask`` + ``tell``
over 200 trials (``--trials``) on the HGB space of the paper (a cheap synthetic objective, so that only the
searcher is timed), for ``random``, ``bo`` (GP-EI) and ``tpe`` (hyperopt, when installed).

Every search runs under ``threadpoolctl.threadpool_limits(1)`` in this process, and joblib's
workers limit their BLAS / OpenMP threads to cores / n_jobs: without it a BLAS or OpenMP call
in a small fit oversubscribes the cores and swamps every figure.
"""

from __future__ import annotations

import os
import time

import numpy as np
from scipy.stats import loguniform
from sklearn.datasets import make_classification
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from threadpoolctl import threadpool_limits

import fedsearch
from fedsearch import presets
from fedsearch.algorithms.flora.local_search import make_local_search
from fedsearch.datasets import load_benchmark, split_iid
from ._common import plot_bars, print_table, search_record, seeds, unavailable_record, write_runs

SCORING = "balanced_accuracy"
# method -> (estimator class name, extra constructor arguments)
METHODS = {
    "grid": ("FederatedGridSearchCV", {}),
    "random": ("FederatedRandomizedSearchCV", {}),
    "flora": ("FLoRASearchCV", {}),
    "fedpne": ("FedPNESearchCV", {}),
    "levelorder": ("LevelOrderSearchCV", {}),
    "pfpne": ("PFPNESearchCV", {}),
}
QUICK = {"n_samples": 600, "parties": 3, "cv": 3, "grid": 2, "repeats": 1, "trials": 30}
FULL = {"n_samples": 4000, "parties": 4, "cv": 5, "grid": 4, "repeats": 5, "trials": 200}


def add_arguments(parser) -> None:
    parser.add_argument("--dataset", default=None,
                        help="a benchmark file (e.g. eeg_eye_state; default: make_classification)")
    parser.add_argument("--n-samples", type=int, default=None,
                        help=f"rows used (default {FULL['n_samples']}, quick {QUICK['n_samples']})")
    parser.add_argument("--parties", type=int, default=None,
                        help=f"IID parties (default {FULL['parties']}, quick {QUICK['parties']})")
    parser.add_argument("--cv", type=int, default=None,
                        help=f"folds per party (default {FULL['cv']}, quick {QUICK['cv']})")
    parser.add_argument("--grid", type=int, default=None,
                        help=f"values per SVC parameter C and gamma (default {FULL['grid']}, quick {QUICK['grid']})")
    parser.add_argument("--repeats", type=int, default=None,
                        help=f"timings of each pair in part 1 (default {FULL['repeats']}, quick {QUICK['repeats']})")
    parser.add_argument("--trials", type=int, default=None,
                        help=f"trials of each local searcher in part 3 (default {FULL['trials']}, quick {QUICK['trials']})")
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS),
                        help="searches timed in part 2 (default: all)")


def _settings(args) -> dict:
    base = QUICK if args.quick else FULL
    return {k: getattr(args, k) if getattr(args, k, None) is not None else v for k, v in base.items()}


def _data(args, n_samples, seed):
    if args.dataset is None:
        return make_classification(n_samples=n_samples, n_features=20, n_informative=10, random_state=seed)
    data = load_benchmark(args.dataset, args.data_dir, shuffle=True, random_state=seed)
    return data.data[:n_samples], data.target[:n_samples]


def _timed(method, clock):
    def call(*a, **k):
        t0 = time.perf_counter()
        try:
            return method(*a, **k)
        finally:
            clock[0] += time.perf_counter() - t0

    return call


def instrumented(cls):
    """A subclass of search ``cls`` that also records ``strategy_time_`` and ``work_time_sum_``.

    ``strategy_time_``: seconds in the strategy's ``configure``, ``aggregate`` and ``recommend``
    (the server's own work); ``work_time_sum_``: the workers' seconds over every unit of party
    work (fit and score of one configuration on one fold, or a party's local search).
    """

    class Instrumented(cls):
        def _make_strategy(self, *args, **kwargs):
            strategy = super()._make_strategy(*args, **kwargs)
            self._strategy_clock = clock = [0.0]
            for name in ("configure", "aggregate", "recommend"):
                setattr(strategy, name, _timed(getattr(strategy, name), clock))
            return strategy

        def _after_search(self, strategy, federation, space):
            extra = super()._after_search(strategy, federation, space)
            return {**extra, "strategy_time_": self._strategy_clock[0], "work_time_sum_": federation.compute_time}

    Instrumented.__name__ = Instrumented.__qualname__ = cls.__name__
    return Instrumented


def _pipeline():
    return make_pipeline(StandardScaler(), SVC())


def _grid(g: int) -> dict:
    return {"svc__C": list(np.logspace(-1, 2, g)), "svc__gamma": list(np.logspace(-3, 0, g))}


def _party_folds(y, parties, cv):
    """Every party's own folds (the splits its ``Party`` computes), as rows of the pooled data."""
    splits = []
    for pid in np.unique(parties):
        rows = np.flatnonzero(parties == pid)
        splits += [(rows[tr], rows[te]) for tr, te in StratifiedKFold(cv).split(rows, y[rows])]
    return splits


def _time_fit(search, X, y, **fit_kwargs) -> float:
    t0 = time.perf_counter()
    search.fit(X, y, **fit_kwargs)
    return time.perf_counter() - t0


def _tree_cpu() -> float:
    """CPU seconds of this process and of its live descendants (joblib's workers), from /proc;
    NaN where /proc is absent."""
    try:
        parent = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat") as f:
                        fields = f.read().rpartition(")")[2].split()
                except OSError:  # the process ended meanwhile
                    continue
                parent[int(entry)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"))
    except OSError:
        return float("nan")
    tree, total = {os.getpid()}, 0.0
    grown = True
    while grown:
        grown = False
        for pid, (ppid, _) in parent.items():
            if ppid in tree and pid not in tree:
                tree.add(pid)
                grown = True
    for pid in tree:
        total += parent.get(pid, (0, 0.0))[1]
    return total


def _grid_vs_pooled(args, s, seed, X, y, parties) -> list[dict]:
    grid = _grid(s["grid"])
    folds = _party_folds(y, parties, s["cv"])
    n_fits = len(folds) * s["grid"] ** 2
    fed_cls = instrumented(fedsearch.FederatedGridSearchCV)
    rows = []
    for r in range(s["repeats"]):
        order = ("federated", "pooled") if r % 2 == 0 else ("pooled", "federated")
        for kind in order:
            if kind == "federated":
                search = fed_cls(_pipeline(), grid, cv=s["cv"], scoring=SCORING, n_jobs=args.n_jobs, refit=False)
                wall = _time_fit(search, X, y, parties=parties)
                rows.append(search_record(search, part="grid_vs_pooled", method="federated_grid", seed=seed,
                                          repeat=r, n_fits=n_fits, wall=wall, fit_sum=_fit_sum(search, len(folds))))
            else:
                search = GridSearchCV(_pipeline(), grid, cv=folds, scoring=SCORING, n_jobs=args.n_jobs, refit=False)
                wall = _time_fit(search, X, y)
                rows.append({"part": "grid_vs_pooled", "method": "pooled_GridSearchCV", "seed": seed, "repeat": r,
                             "n_fits": n_fits, "wall": wall, "fit_sum": _fit_sum(search, len(folds)),
                             "best_params": search.best_params_, "best_score": float(search.best_score_),
                             "status": "ok"})
            rows[-1]["efficiency"] = rows[-1]["fit_sum"] / (args.n_jobs * wall)
    return rows


def _fit_sum(search, n_folds: int) -> float:
    """Seconds of fitting and scoring over all folds, from ``cv_results_`` (same rule for both searches).

    Both tables hold per-fold means (the federated one over every party's folds), and in part 1
    every configuration is fitted on all ``n_folds`` folds.
    """
    res = search.cv_results_
    return float(np.sum(res["mean_fit_time"] + res["mean_score_time"]) * n_folds)


def _efficiency(args, s, seed, X, y, parties) -> list[dict]:
    budget = s["grid"] ** 2
    dists = {"svc__C": loguniform(1e-1, 1e2), "svc__gamma": loguniform(1e-3, 1)}
    rows = []
    for method in args.methods:
        name, extra = METHODS[method]
        cls = getattr(fedsearch, name)
        fields = {"part": "efficiency", "seed": seed, "budget_per_party": budget}
        space, kwargs = (_grid(s["grid"]), {}) if method == "grid" else (dists, {"n_iter": budget, **extra})
        try:
            search = instrumented(cls)(_pipeline(), space, cv=s["cv"], scoring=SCORING, n_jobs=args.n_jobs,
                                       refit=False, random_state=seed, **kwargs)
            cpu = _tree_cpu()
            wall = _time_fit(search, X, y, parties=parties)
            cpu = _tree_cpu() - cpu
        except TypeError as exc:  # its constructor differs from the one assumed here
            rows.append(unavailable_record(f"{name}: {exc}", method=method, **fields))
            continue
        work, fits = search.work_time_sum_, _fold_fit_sum(search, s["cv"])
        rows.append(search_record(search, method=method, **fields, wall=wall, work_sum=work,
                                  efficiency=work / (args.n_jobs * wall), fit_sum=fits,
                                  fit_efficiency=fits / (args.n_jobs * wall), cpu=cpu,
                                  cpu_efficiency=cpu / (args.n_jobs * wall),
                                  strategy_time=getattr(search, "strategy_time_", None)))
    return rows


def _fold_fit_sum(search, cv: int) -> float:
    """Seconds of fitting and scoring over every (configuration, party, fold) of ``cv_results_``:
    a row's per-fold means times the folds of the parties that evaluated it."""
    res = search.cv_results_
    parties = [k for k in res if k.startswith("party_") and k.endswith("_test_score")]
    evaluated = np.sum([np.isfinite(np.asarray(res[k], dtype=float)) for k in parties], axis=0)
    return float(np.nansum((res["mean_fit_time"] + res["mean_score_time"]) * evaluated * cv))


def _local_search_cost(n_trials) -> list[dict]:
    """CPU milliseconds per ask + tell of each local searcher, by stretch of trials."""
    space = presets.get("hgb").space
    rows = []
    for method in ("random", "bo", "tpe"):
        try:
            searcher = make_local_search(method, space, seed=0)
        except (ImportError, ValueError) as exc:  # hyperopt absent, or an older fedsearch without it
            rows.append(unavailable_record(str(exc), part="local_search", method=method))
            continue
        cost = []
        for _ in range(n_trials):
            t0 = time.process_time()
            u = searcher.ask()
            searcher.tell(u, -float(np.sum((u - 0.3) ** 2)))
            cost.append(time.process_time() - t0)
        cost = 1e3 * np.array(cost)
        stretches = {"ms_trials_1_30": cost[:30], "ms_trials_31_100": cost[30:100],
                     "ms_trials_101_200": cost[100:], "ms_trials_181_200": cost[180:]}
        rows.append({"part": "local_search", "method": method, "status": "ok",  # NaN: fewer trials
                     **{k: c.mean() if c.size else np.nan for k, c in stretches.items()}})
    return rows


def _summary(rows: list[dict], seeds_: list[int]) -> list[dict]:
    """Per seed: median walls, the median of the back-to-back pairs' wall ratios, and of the
    ratios of wall per fit-second (the orchestration's overhead, whatever the load on the fits)."""
    out = []
    for seed in seeds_:
        fed = [r for r in rows if r["seed"] == seed and r["method"] == "federated_grid"]
        pooled = [r for r in rows if r["seed"] == seed and r["method"] == "pooled_GridSearchCV"]
        ratio = float(np.median([f["wall"] / p["wall"] for f, p in zip(fed, pooled)]))
        per_fit = float(np.median([(f["wall"] / f["fit_sum"]) / (p["wall"] / p["fit_sum"])
                                   for f, p in zip(fed, pooled)]))
        out.append({"seed": seed, "federated_s": float(np.median([f["wall"] for f in fed])),
                    "pooled_s": float(np.median([p["wall"] for p in pooled])), "wall_ratio": ratio,
                    "wall_per_fit_ratio": per_fit, "within_10%": bool(ratio <= 1.10)})
    return out


def run(args) -> list[dict]:
    with threadpool_limits(1):
        return _run(args)


def _run(args) -> list[dict]:
    s = _settings(args)
    seeds_ = seeds(args, n_full=1)
    print(f"speed: {s['parties']} IID parties x {s['cv']} folds, SVC grid {s['grid']}x{s['grid']}, "
          f"{s['n_samples']} rows of {args.dataset or 'make_classification'}, n_jobs={args.n_jobs}, "
          f"seeds {seeds_}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    part1, part2 = [], []
    for i, seed in enumerate(seeds_):
        X, y = _data(args, s["n_samples"], seed)
        parties = split_iid(len(y), s["parties"], random_state=seed)
        if i == 0:  # untimed: start the workers and let them import what the fits need
            _grid_vs_pooled(args, {**s, "grid": 1, "repeats": 1}, seed, X, y, parties)
        part1 += _grid_vs_pooled(args, s, seed, X, y, parties)
        part2 += _efficiency(args, s, seed, X, y, parties)

    n_fits = part1[0]["n_fits"]
    print_table(_summary(part1, seeds_),
                ["seed", "federated_s", "pooled_s", "wall_ratio", "wall_per_fit_ratio", "within_10%"],
                title=f"Part 1: FederatedGridSearchCV vs GridSearchCV on pooled data, the same {n_fits} fits, "
                      f"n_jobs={args.n_jobs}; medians over {s['repeats']} back-to-back pair(s), seconds")
    print_table(part1, ["method", "seed", "repeat", "wall", "fit_sum", "efficiency", "best_score"],
                title="Part 1, every run (fit_sum: fit + score seconds from cv_results_; "
                      "efficiency = fit_sum / (n_jobs x wall))")
    print_table(part2, ["method", "seed", "wall", "work_sum", "efficiency", "fit_sum", "fit_efficiency", "cpu",
                        "cpu_efficiency", "strategy_time", "rounds", "best_score", "status"],
                title=f"Part 2: each search at {s['grid'] ** 2} configurations per party (seconds; work_sum: "
                      f"workers' seconds over all party work; efficiency = work_sum / (n_jobs x wall); fit_sum: "
                      f"fit + score seconds of every fold from cv_results_, fit_efficiency = fit_sum / (n_jobs x wall); "
                      f"cpu: CPU seconds of this process and its workers, cpu_efficiency = cpu / (n_jobs x wall); "
                      f"strategy_time: the server-side strategy)")
    part3 = _local_search_cost(s["trials"])
    print_table(part3, ["method", "ms_trials_1_30", "ms_trials_31_100", "ms_trials_101_200", "ms_trials_181_200",
                        "status"],
                title="Part 3: FLoRA's local searchers, CPU ms per ask + tell on the HGB space (synthetic objective)")
    rows = part1 + part2 + part3
    write_runs(args, rows)
    ok = [r for r in part2 if r.get("status") == "ok"]
    if ok:
        methods = list(dict.fromkeys(r["method"] for r in ok))

        def med(m, key):
            return float(np.median([r[key] or 0.0 for r in ok if r["method"] == m]))

        plot_bars(args, "speed_breakdown", methods,
                  {"wall": [med(m, "wall") for m in methods],
                   "party work / workers": [med(m, "work_sum") / args.n_jobs for m in methods],
                   "strategy (server)": [med(m, "strategy_time") for m in methods]},
                  ylabel="seconds", title=f"Where the time goes (n_jobs={args.n_jobs})")
    return rows
