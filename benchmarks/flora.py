"""FLoRA's protocol (004_*.txt, §3 and App. D): single-shot federated HPO against its peers.

For each model, dataset and seed: the pooled data is split into ``p`` parties (IID by default;
``--split`` gives the label skews of App. D.8 or a Dirichlet label or quantity skew); each party
runs its own local search of ``T`` configurations scored by ``k``-fold CV balanced accuracy
(:class:`fedsearch.FLoRASearchCV`, one fit gives the four surfaces' picks). Every pick is then
scored by ``k``-fold CV balanced accuracy on the pooled data (the paper's emulation of the final
federated training). The relative regret ``(a* - a) / (a* - b)`` (§3) compares a pick's score
``a`` with the default configuration's ``b`` (App. D.2) and with ``a*``, the best score of a
centralised search of ``T`` configurations on the pooled data (same local optimiser, same folds,
run once per model and dataset). The paper's setting is ``T = 100``, ``k = 10``, ``p = 3``.
``--scoring-repeats`` scores on other splits, ``a*`` out of sample (the low-noise protocol);
``--paper-frame`` scores as the paper did, on its one split with its own ``a*``.

Competitors, at ``T`` evaluations per party, on the same parties and folds:

- ``random``: federated randomized search (multi-shot): every party cross-validates the same
  ``T`` random configurations, the best weighted mean wins;
- ``fedpne``, ``levelorder``: the federated X-armed bandits (:class:`fedsearch.FedPNESearchCV`,
  :class:`fedsearch.LevelOrderSearchCV`), ``T`` pulls per party;
- ``pfpne``: PF-PNE's global recommendation (:class:`fedsearch.PFPNESearchCV`'s ``best_params_``);
- ``alone``: each party tunes alone (the local searches FLoRA's parties ran), then the ``p``
  party-best configurations are cross-validated on every party (one more federated round of
  ``p`` evaluations per party) and the one that scores best on average wins.

The summary follows Table 3: per model and method, the inter-quartile range of the per-dataset
regrets (mean over seeds), wins/ties/losses against the default and a one-sided Wilcoxon
signed-rank test across datasets (:func:`fedsearch.research.metrics.compare_to_baseline`), then "overall"
across models.
"""

from __future__ import annotations

import csv
import json
import time
from pathlib import Path

import numpy as np
from scipy import stats
from sklearn.base import clone
from sklearn.model_selection import RepeatedStratifiedKFold, StratifiedKFold, cross_val_score
from threadpoolctl import threadpool_limits

from fedsearch import (
    FederatedGridSearchCV, FederatedRandomizedSearchCV, FedPNESearchCV, FLoRASearchCV, LevelOrderSearchCV,
    PFPNESearchCV, presets,
)
from fedsearch.algorithms.flora.local_search import DEFAULT_LOCAL_SEARCH, make_local_search
from fedsearch.algorithms.flora.surfaces import SURFACES
from fedsearch.datasets import SPLITTERS, assign_parties, load_benchmark
from fedsearch.research.metrics import compare_to_baseline, relative_regret

from . import flora_replay
from ._common import plot_boxes, print_table, search_record, seeds, write_runs

DATASETS = ("pc3", "pollen", "electricity", "sonar", "heart_statlog", "oil_spill", "eeg_eye_state")
QUICK_DATASETS = ("heart_statlog", "sonar")
COMPETITORS = ("random", "fedpne", "levelorder", "pfpne", "alone")

# Tables 7 (HGB), 8 (SVM, no electricity) and 9 (MLP), p = 3, T = 100: SSBaseline, Best, PMin,
# PMax (balanced accuracy, %), gamma_p and the relative regret of each surface
PAPER_TABLES = {
    "hgb": {
        "pc3": (58.99, 63.81, 61.67, 64.37, 1.04, 0.66, 0.72, 0.39, 0.38),
        "pollen": (48.86, 52.21, 51.83, 52.64, 1.02, 0.43, 0.54, 0.43, 0.69),
        "electricity": (87.75, 92.84, 88.42, 89.19, 1.01, 0.17, 0.14, 0.09, 0.12),
        "sonar": (87.43, 91.25, 83.75, 88.33, 1.05, 1.33, 0.41, 0.92, 0.71),
        "heart_statlog": (79.42, 85.58, 78.00, 86.50, 1.11, 0.69, 0.55, 0.89, 0.50),
        "oil_spill": (63.22, 74.58, 68.16, 82.16, 1.21, 0.47, 1.13, 0.46, 0.61),
        "eeg_eye_state": (89.96, 94.66, 91.80, 92.29, 1.01, 0.14, 0.12, 0.11, 0.12),
    },
    "svc": {
        "pollen": (49.48, 50.30, 51.55, 53.55, 1.04, 1.35, 1.45, 2.84, 2.30),
        "sonar": (80.20, 89.29, 83.33, 87.92, 1.06, 0.17, 0.17, 0.27, 0.17),
        "heart_statlog": (83.67, 84.92, 77.00, 88.00, 1.14, 0.00, 0.00, 6.80, 0.67),
        "oil_spill": (82.76, 86.54, 77.14, 88.45, 1.15, 1.28, 1.16, 1.12, 0.41),
        "eeg_eye_state": (50.24, 60.51, 69.54, 71.72, 1.03, -0.01, -0.01, -0.02, -0.01),
        "pc3": (74.03, 77.96, 75.26, 76.95, 1.02, 0.59, 0.79, 0.70, 0.79),
    },
    "mlp": {
        "pollen": (50.39, 51.26, 51.46, 52.23, 1.02, 1.88, 1.45, 1.45, 1.31),
        "electricity": (76.95, 78.06, 77.01, 77.39, 1.00, 0.24, 0.41, 0.16, 0.53),
        "sonar": (61.63, 79.32, 69.17, 78.75, 1.14, 0.26, 0.55, 0.52, 0.39),
        "heart_statlog": (72.17, 85.17, 79.50, 89.50, 1.13, 0.46, 0.37, 0.42, 0.28),
        "oil_spill": (50.00, 65.22, 54.83, 63.63, 1.16, 0.80, 1.03, 1.00, 0.79),
        "eeg_eye_state": (49.99, 51.66, 50.02, 51.84, 1.04, 0.99, 0.99, 0.99, 0.99),
        "pc3": (50.00, 59.56, 53.47, 56.60, 1.06, 0.96, 1.00, 0.89, 0.90),
    },
}
_PAPER_TABLE_NUMBER = {"hgb": 7, "svc": 8, "mlp": 9}
_PAPER_COLUMNS = ("baseline", "best", "pmin", "pmax", "gamma_p", "sgm", "sgm+u", "mplm", "aplm")
# Table 3 (p = 3, T = 100, seven datasets): wins/ties/losses against the baseline and the one-sided
# Wilcoxon signed-rank test (statistic, p-value) of each surface, per model and overall
PAPER_TABLE3 = {
    "hgb": {"sgm": ("6/0/1", 26, 0.02126), "sgm+u": ("6/0/1", 27, 0.01400),
            "mplm": ("7/0/0", 28, 0.00898), "aplm": ("7/0/0", 28, 0.00898)},
    "svc": {"sgm": ("4/0/2", 18, 0.05793), "sgm+u": ("4/0/2", 17, 0.08648),
            "mplm": ("3/0/3", 9, 0.62342), "aplm": ("5/0/1", 15, 0.17272)},
    "mlp": {"sgm": ("6/0/1", 21, 0.11836), "sgm+u": ("4/1/2", 15, 0.17272),
            "mplm": ("5/1/1", 18, 0.05793), "aplm": ("6/0/1", 24, 0.04548)},
    "overall": {"sgm": ("16/0/4", 174, 0.00499), "sgm+u": ("14/1/5", 164, 0.00272),
                "mplm": ("15/1/4", 141, 0.03206), "aplm": ("18/0/2", 183.5, 0.00169)},
}


def add_arguments(parser) -> None:
    parser.add_argument("--datasets", nargs="+", default=None, choices=DATASETS, metavar="NAME",
                        help=f"datasets (default: all seven; quick: {' '.join(QUICK_DATASETS)})")
    parser.add_argument("--models", nargs="+", default=["hgb"], choices=presets.names(),
                        help="presets of App. D.2 (default: hgb)")
    parser.add_argument("--n-iter", type=int, default=None,
                        help="T, evaluations per party of every search, and of the centralised "
                             "search (default 100, quick 10)")
    parser.add_argument("--folds", type=int, default=None,
                        help="k of the k-fold CV everywhere (default 10, quick 3)")
    parser.add_argument("--parties", type=int, default=3, help="p (default 3)")
    parser.add_argument("--split", default="iid", choices=("stratified", *SPLITTERS),
                        help="how the pooled data is dealt to parties (default iid; stratified: the "
                             "paper's label-stratified IID split; label_skew: "
                             "Dirichlet over each class; parity_skew / disjoint_labels: App. D.8's "
                             "imb1 / imb2)")
    parser.add_argument("--alpha", type=float, default=0.5,
                        help="Dirichlet concentration of label_skew and quantity_skew (default 0.5)")
    parser.add_argument("--raw-features", action="store_true",
                        help="give SVC and MLP the raw features (default: a MinMaxScaler in "
                             "front, as the paper scaled them, fitted inside every fit on the party's own rows)")
    parser.add_argument("--local-search", nargs="*", default=[DEFAULT_LOCAL_SEARCH],
                        help=f"the parties' local optimiser(s) (default {DEFAULT_LOCAL_SEARCH}, FLoRASearchCV's); several run on the same "
                             "parties and seeds, sharing the pooled scores and the competitors; the bare "
                             "option runs no FLoRA")
    parser.add_argument("--paper-picks", action="store_true",
                        help="also score the paper's own picks of the dataset (flora_paper_runs/picks.csv, "
                             "one run of the paper's) in the same frame, as methods 'paper:<surface>'")
    parser.add_argument("--central-search", default="bo",
                        help="optimiser of the centralised search that gives a* (default bo)")
    parser.add_argument("--competitors", nargs="*", default=list(COMPETITORS), choices=COMPETITORS,
                        help="searches at equal party budget to run beside FLoRA (default: all; "
                             "the bare option runs FLoRA alone)")
    parser.add_argument("--scoring-repeats", type=int, default=1,
                        help="R > 1: the low-noise scoring: every pick, b and a* scored by R x "
                             "stratified k-fold CV on splits other than the one the centralised "
                             "search chose a* on (default 1: one split, a* in sample)")
    parser.add_argument("--paper-frame", action="store_true",
                        help="score every pick as the paper did: one StratifiedKFold(10, shuffle=True, "
                             "random_state=5489) split of the pooled data, the estimator's random_state "
                             "5489, SVC / MLP data min-max scaled over the whole dataset; b the default's "
                             "score there, a* the best of the paper's 600 centralised evaluations "
                             "(flora_paper_runs). With --paper-picks, the paper's picks get its Table 7 "
                             "regrets where the data file holds the paper's rows in its order "
                             "(heart-statlog, sonar)")
    parser.add_argument("--n-validate", type=int, nargs="*", default=[], metavar="K",
                        help="also record FLoRASearchCV(n_validate=K)'s validated pick of every surface "
                             "(method '<surface>+v<K>'), from the same fit as the plain picks: the fit "
                             "validates every candidate, and the pick of the first K is read off")
    parser.add_argument("--cache", type=Path, default=None, metavar="FILE",
                        help="JSON file of pooled scores (the centralised search, b, a* and every pick), "
                             "read and extended, so that runs of other methods or seeds do not re-score")
    parser.add_argument("--report", type=Path, nargs="+", default=None, metavar="CSV",
                        help="instead of running: print the tables (and write --output) of the records "
                             "of earlier runs' flora.csv files, pooled (give the same --models, "
                             "--local-search, --n-validate, --competitors and --split as the runs)")
    parser.add_argument("--replay-paper", action="store_true",
                        help="instead of the protocol: feed the paper's own uploaded pairs "
                             "(flora_paper_runs) to fedsearch's surfaces and score fedsearch's and "
                             "the paper's picks side by side (benchmarks/flora_replay.py)")
    parser.add_argument("--replay-repeats", type=int, default=None,
                        help="with --replay-paper: repeats of stratified 10-fold CV of the low-noise "
                             "'repeated' frame (default 3, quick 0: the paper frame only)")


def _competitor(name, estimator, space, n_iter, cv, seed, n_jobs, flora):
    """The search of competitor ``name``, unfitted (``alone``: its final federated round)."""
    common = dict(scoring="balanced_accuracy", refit=False, cv=cv, random_state=seed, n_jobs=n_jobs)
    if name == "random":
        return FederatedRandomizedSearchCV(estimator, space, n_iter=n_iter, **common)
    if name == "fedpne":
        return FedPNESearchCV(estimator, space, n_iter=n_iter, **common)
    if name == "levelorder":
        return LevelOrderSearchCV(estimator, space, n_iter=n_iter, **common)
    if name == "pfpne":
        return PFPNESearchCV(estimator, space, n_iter=n_iter, final_fit=None, **common)
    # "alone": every party's own best configuration of its local search, cross-validated on all
    bests = []
    for result in flora.local_results_.values():
        scores = np.asarray(result["scores"], dtype=float)
        if np.isfinite(scores).any():
            params = result["params"][int(np.nanargmax(scores))]
            if params not in bests:
                bests.append(params)
    grid = [{k: [v] for k, v in params.items()} for params in bests]
    return FederatedGridSearchCV(estimator, grid, **{k: v for k, v in common.items() if k != "random_state"})


def _validated_picks(flora, ks) -> dict:
    """``{(surface, k): (params, federated validated score)}``: the pick of
    ``FLoRASearchCV(surface=surface, n_validate=k)``, read off one fit that validated every
    candidate (the validation round's candidates are the rows of ``cv_results_`` with a score)."""
    res = flora.cv_results_
    validated = {repr(sorted(p.items())): (p, float(m)) for p, m in zip(res["params"], res["mean_test_score"])
                 if np.isfinite(m)}
    out = {}
    for s in SURFACES:
        ordered = [flora.surface_params_[s]] + [flora.surface_params_[o] for o in SURFACES if o != s]
        keys = list(dict.fromkeys(repr(sorted(p.items())) for p in ordered))
        keys += [key for key in validated if key not in keys]  # the estimator's own configuration
        for k in ks:
            first = [validated[key] for key in keys[:k] if key in validated]
            if first:  # ties: the earlier candidate
                out[s, k] = max(first, key=lambda c: c[1])
    return out


def _runs_of_one_split(model, name, seed, args, n_iter, k, estimator, space, X, y, pooled) -> list[dict]:
    """The long-format records of FLoRA's surfaces (each local search) and every competitor on one
    split of the data."""
    if args.split == "stratified":  # the paper's party split: StratifiedKFold(p, shuffle=True)
        labels = np.empty(len(y), dtype=int)
        for i, (_, rows) in enumerate(StratifiedKFold(args.parties, shuffle=True, random_state=seed).split(X, y)):
            labels[rows] = i
    else:
        labels = assign_parties(y, args.parties, split=args.split, alpha=args.alpha, random_state=seed)
    Xs = [X[labels == i] for i in range(args.parties)]
    ys = [y[labels == i] for i in range(args.parties)]
    cv = StratifiedKFold(k, shuffle=True, random_state=seed)
    common = dict(model=model, dataset=name, split=args.split, seed=seed, T=n_iter, folds=k,
                  parties=args.parties)
    # with --n-validate, one fit validates every candidate (surfaces' arg-mins and the default)
    n_validate = len(SURFACES) + 1 if args.n_validate else 1
    rows = []
    for method in args.local_search:
        t0, c0 = time.perf_counter(), time.process_time()
        flora = FLoRASearchCV(estimator, space, n_iter=n_iter, local_search=method, cv=cv,
                              scoring="balanced_accuracy", refit=False, random_state=seed,
                              n_jobs=args.n_jobs, n_validate=n_validate).fit(Xs, ys)
        flora_time, flora_cpu = time.perf_counter() - t0, time.process_time() - c0
        local_best = [np.nanmax(r["scores"]) for r in flora.local_results_.values()]
        context = dict(local_search=method, pmin=min(local_best), pmax=max(local_best), gamma=flora.heterogeneity_)
        for s in SURFACES:
            row = search_record(flora, **common, method=s, **context)
            del row["best_score"]  # the surfaces' picks have no federated score of their own
            row.update(best_params=flora.surface_params_[s], time=flora_time, cpu=flora_cpu)
            rows.append(row)
        for (s, n), (params, validated) in _validated_picks(flora, args.n_validate).items():
            row = search_record(flora, **common, method=f"{s}+v{n}", **context)
            row.update(best_params=params, best_score=validated, time=flora_time, cpu=flora_cpu)
            rows.append(row)
        if "alone" in args.competitors:
            rows.append(_timed(_competitor("alone", estimator, space, n_iter, cv, seed, args.n_jobs, flora),
                               Xs, ys, dict(common, method="alone", **context), flora_time, flora_cpu))
    context = dict(local_search="-", **{k: rows[0][k] if rows else float("nan") for k in ("pmin", "pmax", "gamma")})
    if args.paper_picks and flora_replay.available(args.data_dir, model, name, args.parties):
        picks = flora_replay.paper_picks(args.data_dir, model, name, args.parties)
        rows += [dict(common, method=f"paper:{s}", **context, best_params=flora_replay.prefixed(estimator, picks[s][0]),
                      status="ok") for s in SURFACES]
    for c in args.competitors:
        if c != "alone":
            rows.append(_timed(_competitor(c, estimator, space, n_iter, cv, seed, args.n_jobs, None),
                               Xs, ys, dict(common, method=c, **context)))
    for row in rows:
        row.update(score=pooled(row["best_params"]), baseline=pooled.baseline, best=pooled.best)
        row["regret"] = relative_regret(row["score"], pooled.best, pooled.baseline)
    return rows


def _timed(search, Xs, ys, fields, wall=0.0, cpu=0.0) -> dict:
    """The record of ``search`` fitted on the parties, with its wall and CPU (this process) time."""
    t0, c0 = time.perf_counter(), time.process_time()
    search.fit(Xs, ys)
    row = search_record(search, **fields)
    row.update(time=time.perf_counter() - t0 + wall, cpu=time.process_time() - c0 + cpu)
    return row


class _CachedScores:
    """A configuration's pooled score (``self(params)``), each taken once: ``store`` (a dict,
    ``--cache``) keeps them across runs under keys that start with ``self._prefix`` (what the
    score depends on besides the configuration). Subclasses set ``baseline`` (``b``), ``best``
    (``a*``), ``_prefix`` and ``_score``."""

    def __init__(self, store=None):
        self._cache = {} if store is None else store

    def __call__(self, params) -> float:
        key = self._prefix + repr(sorted(params.items()))
        if key not in self._cache:
            self._cache[key] = self._score(params)
        return self._cache[key]

    def _score(self, params) -> float:
        raise NotImplementedError


class _PooledScores(_CachedScores):
    """k-fold CV balanced accuracy on the pooled data (the emulated final federated training).

    Each configuration is scored once per model and dataset. ``baseline`` is ``b``, the default
    configuration's score; ``best`` is ``a*``: a centralised search of ``n_iter`` configurations
    with the local optimiser ``method`` (seed 0) on the k-fold split ``search_folds``. With
    ``folds`` other splits (the low-noise protocol, ``--scoring-repeats``), every score,
    ``b`` and ``a*`` included, is taken on ``folds``: ``a*`` is the search's best configuration
    scored out of sample, not the winner's-curse maximum of the scores it was chosen on.
    ``store`` keeps the scores under keys that name ``tag`` (model and dataset) and the folds.
    """

    def __init__(self, estimator, X, y, folds, n_jobs, *, default, space, n_iter, method, search_folds=None,
                 store=None, tag=""):
        super().__init__(store)
        self.estimator, self.X, self.y, self.n_jobs = estimator, X, y, n_jobs
        self.folds = search_folds if search_folds is not None else folds
        self._prefix = f"{tag}|{_folds_tag(self.folds)}|"
        searcher = make_local_search(method, space, seed=0)
        best_score, best_params = -np.inf, None
        for _ in range(n_iter):
            u = searcher.ask()
            params = space.to_params(u)
            score = self(params)
            searcher.tell(u, score)
            if score > best_score:  # a NaN (every fold failed) never wins
                best_score, best_params = score, params
        if search_folds is not None:  # score out of sample from now on
            self.folds = folds
            self._prefix = f"{tag}|{_folds_tag(folds)}|"
        self.best = self(best_params) if best_params is not None else float("nan")
        self.baseline = self(default)

    def _score(self, params) -> float:
        est = clone(self.estimator).set_params(**params)
        try:
            return float(cross_val_score(est, self.X, self.y, cv=self.folds, n_jobs=self.n_jobs,
                                         scoring="balanced_accuracy").mean())
        except ValueError:  # every fold failed
            return float("nan")


class _PaperFrameScores(_CachedScores):
    """``--paper-frame``: every pick scored as the paper scored it (``flora_replay``'s ``paper``
    frame: one ``StratifiedKFold(10, shuffle=True, random_state=5489)`` split of the pooled data,
    the estimator's ``random_state`` 5489, SVC and MLP data min-max scaled over the whole
    dataset); ``b`` is the default configuration's score there and ``a*`` the best score of the
    paper's 600 centralised evaluations (``flora_paper_runs``), taken on that same split.
    """

    def __init__(self, model, name, X, y, n_jobs, *, data_dir, default, space, store=None):
        super().__init__(store)
        self._frame = flora_replay.paper_frame(model, X, y, n_jobs)
        self._prefix = f"{model}|{name}|paper frame|"
        names = [n.rpartition("__")[2] for n in space.param_names]
        _, self.best = flora_replay.central_best(data_dir, model, name, names)
        self.baseline = self(default)

    def _score(self, params) -> float:
        return self._frame(flora_replay.unprefixed(params))


def _folds_tag(folds) -> str:
    """The folds' splitter with its settings (the key of the scores it gives)."""
    return f"{type(folds).__name__}({folds.get_n_splits()}, {getattr(folds, 'random_state', None)})"


def _load_store(path) -> dict:
    return json.loads(Path(path).read_text()) if path is not None and Path(path).is_file() else {}


def _save_store(path, store: dict) -> None:
    if path is not None:
        tmp = Path(f"{path}.tmp")
        tmp.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(store))
        tmp.replace(path)


def _replay(args) -> None:
    names = args.datasets or (QUICK_DATASETS if args.quick else DATASETS)
    repeats = args.replay_repeats if args.replay_repeats is not None else (0 if args.quick else 3)
    print(f"FLoRA replay of the paper's runs: models={' '.join(args.models)}, datasets={' '.join(names)}, "
          f"frames: paper" + (f" and {repeats} x stratified 10-fold" if repeats else ""))
    rows = []
    with threadpool_limits(1):
        for model in args.models:
            for name in names:
                if not flora_replay.available(args.data_dir, model, name):
                    print(f"{model} {name}: the paper has no run")
                    continue
                t0 = time.perf_counter()
                new = flora_replay.replay(args.data_dir, model, name, n_repeats=repeats, n_jobs=args.n_jobs)
                rows += new
                print(f"{model} {name} ({time.perf_counter() - t0:.0f} s): "
                      + ", ".join(f"{r['frame']} {r['surface']} {r['source']} {r['regret']:.2f}" for r in new),
                      flush=True)
    table = []
    for key in dict.fromkeys((r["model"], r["dataset"], r["frame"]) for r in rows):
        group = [r for r in rows if (r["model"], r["dataset"], r["frame"]) == key]
        line = {"model": key[0], "dataset": key[1], "frame": key[2],
                "b": f"{100 * group[0]['b']:.2f}", "a*": f"{100 * group[0]['a_star']:.2f}"}
        for r in group:
            line[f"{r['surface']} {r['source'][0]}"] = f"{r['regret']:.2f}"
        table.append(line)
    columns = [f"{s} {src}" for s in SURFACES for src in "fp"]
    print_table(table, ["model", "dataset", "frame", "b", "a*", *columns],
                title="Relative regret of fedsearch's (f) and the paper's (p) picks from the paper's own pairs")
    summary = []
    for model, frame in dict.fromkeys((r["model"], r["frame"]) for r in rows):
        for s in SURFACES:
            f, p = ([r["regret"] for r in rows if (r["model"], r["frame"], r["surface"], r["source"]) ==
                     (model, frame, s, src)] for src in ("fedsearch", "paper"))
            summary.append({"model": model, "frame": frame, "surface": s, "datasets": len(f),
                            "fedsearch": np.mean(f), "paper": np.mean(p),
                            "fedsearch better": f"{sum(a < b for a, b in zip(f, p))}/{len(f)}"})
    print_table(summary, ["model", "frame", "surface", "datasets", "fedsearch", "paper", "fedsearch better"],
                title="Mean relative regret over the datasets")
    write_runs(args, rows, name="flora_replay")


def _read_runs(paths) -> list[dict]:
    """The records of earlier runs' CSV files, numbers as numbers."""
    rows = []
    for path in paths:
        with open(path) as f:
            for r in csv.DictReader(f):
                for key in ("seed", "T", "folds", "parties"):
                    r[key] = int(r[key]) if r.get(key) not in (None, "") else r.get(key)
                for key in ("regret", "score", "baseline", "best", "gamma", "pmin", "pmax", "time", "cpu"):
                    r[key] = float(r[key]) if r.get(key) not in (None, "") else float("nan")
                r["best_params"] = json.loads(r["best_params"]) if r.get("best_params") else None
                rows.append(r)
    return rows


def run(args) -> None:
    if args.replay_paper:
        return _replay(args)
    if args.report:
        rows = _read_runs(args.report)
        names = args.datasets or list(dict.fromkeys(r["dataset"] for r in rows))
        return _report(args, [r for r in rows if r["dataset"] in names], names)
    if args.paper_frame and args.scoring_repeats > 1:
        raise SystemExit("--paper-frame scores on the paper's one split: leave --scoring-repeats at 1")
    quick = args.quick
    names = args.datasets or (QUICK_DATASETS if quick else DATASETS)
    n_iter = args.n_iter or (10 if quick else 100)
    k = args.folds or (3 if quick else 10)
    run_seeds = seeds(args, 3)
    print(f"FLoRA protocol: models={' '.join(args.models)}, p={args.parties}, split={args.split}"
          + (f" (alpha={args.alpha})" if args.split in ("label_skew", "quantity_skew") else "")
          + f", T={n_iter}, {k}-fold CV, balanced accuracy, local search={args.local_search}, "
          f"centralised search={args.central_search}, competitors={' '.join(args.competitors) or '-'}, "
          f"seeds={run_seeds}")
    rows, store = [], _load_store(args.cache)
    with threadpool_limits(1):  # one thread per process: HGB's OpenMP threads thrash a shared box
        for model in args.models:
            estimator, space, default = presets.get(model, scaled="minmax" if model != "hgb" and not args.raw_features else False)
            for key in estimator.get_params():  # HGB's early-stopping split, MLP's initialisation
                if key.endswith("random_state"):
                    estimator.set_params(**{key: 0})
            for name in names:
                t0 = time.perf_counter()
                data = load_benchmark(name, args.data_dir)
                X, y = data.data, data.target
                search_folds = StratifiedKFold(k, shuffle=True, random_state=0)
                tag = f"{model}{'-raw' if args.raw_features else ''}|{name}"  # a score depends on no more
                c0 = time.process_time()
                if args.paper_frame:
                    if not flora_replay.central_path(args.data_dir, model, name).is_file():
                        print(f"{model} {name}: the paper has no centralised search, so no paper frame; skipped")
                        continue
                    pooled = _PaperFrameScores(model, name, X, y, args.n_jobs, data_dir=args.data_dir,
                                               default=default, space=space, store=store)
                elif args.scoring_repeats > 1:  # low-noise: other splits, a* out of sample
                    folds = RepeatedStratifiedKFold(n_splits=k, n_repeats=args.scoring_repeats, random_state=1)
                    pooled = _PooledScores(estimator, X, y, folds, args.n_jobs, default=default, space=space,
                                           n_iter=n_iter, method=args.central_search, search_folds=search_folds,
                                           store=store, tag=tag)
                else:
                    pooled = _PooledScores(estimator, X, y, search_folds, args.n_jobs, default=default,
                                           space=space, n_iter=n_iter, method=args.central_search,
                                           store=store, tag=tag)
                _save_store(args.cache, store)
                print(f"{model} {name}: baseline {100 * pooled.baseline:.2f}, centralised best "
                      f"{100 * pooled.best:.2f} ({time.perf_counter() - t0:.0f} s, {time.process_time() - c0:.0f} s CPU)",
                      flush=True)
                for seed in run_seeds:
                    t0 = time.perf_counter()
                    try:
                        runs = _runs_of_one_split(model, name, seed, args, n_iter, k, estimator, space,
                                                  X, y, pooled)
                    except ValueError as exc:  # e.g. a skewed split left a party with one class
                        rows.append({"model": model, "dataset": name, "split": args.split, "seed": seed,
                                     "method": "-", "status": f"failed: {exc}"})
                        print(f"  seed {seed}: no run, {exc}", flush=True)
                        continue
                    if not runs:  # no FLoRA, no competitor, and the paper has no picks here
                        print(f"  seed {seed}: no method to score", flush=True)
                        continue
                    rows.extend(runs)
                    _save_store(args.cache, store)
                    print(f"  seed {seed}: gamma_p {runs[0]['gamma']:.3f}, regret "
                          + ", ".join(f"{_label(r, len(args.local_search) > 1)} {r['regret']:.2f}" for r in runs)
                          + f"  ({time.perf_counter() - t0:.0f} s)", flush=True)
    _report(args, rows, names)


def _methods(args) -> list[str]:
    """The printed methods: per local search, the surfaces, their validated picks and "alone";
    then the other competitors."""
    flora = [*SURFACES, *(f"{s}+v{k}" for s in SURFACES for k in args.n_validate)]
    flora += ["alone"] if "alone" in args.competitors else []
    several = len(args.local_search) > 1
    return ([f"{m}/{ls}" if several else m for ls in args.local_search for m in flora]
            + ([f"paper:{s}" for s in SURFACES] if args.paper_picks else [])
            + [c for c in args.competitors if c != "alone"])


def _label(row, several=True) -> str:
    """A record's method as printed: with its local search when there are several."""
    ls = row.get("local_search", "-")
    return f"{row['method']}/{ls}" if several and ls != "-" else row["method"]


def _mean_regret(rows, model, dataset, method, several) -> float:
    values = [r["regret"] for r in rows
              if r["model"] == model and r["dataset"] == dataset and _label(r, several) == method]
    return float(np.mean(values)) if values else float("nan")


def _with_interval(values) -> str:
    """The mean and, over two or more seeds, the half-width of its 95 % t-interval."""
    values = np.asarray(values, dtype=float)
    if values.size < 2:
        return f"{np.mean(values):.2f}" if values.size else "nan"
    half = stats.t.ppf(0.975, values.size - 1) * values.std(ddof=1) / np.sqrt(values.size)
    return f"{values.mean():.2f} ± {half:.2f}"


def _report(args, rows: list[dict], names) -> None:
    methods, several = _methods(args), len(args.local_search) > 1
    for model in args.models:
        paper = PAPER_TABLES[model] if args.split in ("iid", "stratified") else {}
        table = []
        for name in names:
            runs = [r for r in rows if r["model"] == model and r["dataset"] == name and r["status"] == "ok"]
            if not runs:
                table.append({"dataset": name, "seeds": 0})
                continue
            line = {"dataset": name, "seeds": len({r["seed"] for r in runs}),
                    "baseline": 100 * runs[0]["baseline"], "best": 100 * runs[0]["best"],
                    "gamma_p": float(np.mean([r["gamma"] for r in runs]))}
            ref = dict(zip(_PAPER_COLUMNS, paper[name])) if name in paper else {}
            for key in ("baseline", "best", "gamma_p"):
                line[key] = f"{line[key]:.2f}" + (f" ({ref[key]:.2f})" if ref else "")
            for m in methods:
                line[m] = _with_interval([r["regret"] for r in runs if _label(r, several) == m]) + (
                    f" ({ref[m]:.2f})" if m in ref else "")
            table.append(line)
        line = {"dataset": f"mean over {len(names)}"}
        shared = [n for n in names if n in paper]
        for m in methods:
            line[m] = f"{np.mean([_mean_regret(rows, model, n, m, several) for n in names]):.2f}"
            if m in _PAPER_COLUMNS and shared:
                line[m] += f" ({np.mean([paper[n][_PAPER_COLUMNS.index(m)] for n in shared]):.2f})"
        table.append(line)
        print_table(table, ["dataset", "seeds", "baseline", "best", "gamma_p", *methods],
                    title=f"{model}: relative regret, mean over seeds (± half-width of its 95 % t-interval)"
                          + (f" (paper's Table {_PAPER_TABLE_NUMBER[model]} in brackets)" if paper else "")
                          + "; baseline / best: pooled balanced accuracy %")
    print_table(_table3(args, rows, names), ["model", "method", "regret IQR", "W/T/L", "Wilcoxon stat, p"],
                title="Against the default, across datasets (as Table 3"
                      + ("; the paper's values in brackets: its seven datasets (six for SVM), p = 3, "
                         "T = 100" if args.split in ("iid", "stratified") else "") + ")")
    print_table(_paired(args, rows), ["model", "method", "runs", "regret", "minus plain", "minus first local search",
                                      "minus random", "minus paper", "score minus random, points"],
                title="Over every run (dataset x seed): mean relative regret ± 95 % t-interval, and the mean "
                      "paired difference to the same run's plain pick (same surface), to the first local "
                      "search's (same surface), to federated random search and to the paper's pick (same surface), with "
                      "the runs it is below in; and the pooled score's paired difference to federated random search "
                      "in points of balanced accuracy, with the runs it is above in (a regret divides by a* - b, "
                      "which can be tiny)")
    write_runs(args, rows)
    for model in args.models:
        plot_boxes(args, f"flora_regret_{model}",
                   {m: [r["regret"] for r in rows if r["model"] == model and _label(r, several) == m]
                    for m in methods},
                   ylabel="relative regret", reference=(1.0, "default configuration"),
                   title=f"FLoRA protocol, {model}, {args.split}: regret per run")


def _paired(args, rows) -> list[dict]:
    """Per model and method: the regret over every run and its paired differences (see the title)."""
    several, out = len(args.local_search) > 1, []
    for model in args.models:
        def runs(label, key="regret"):
            return {(r["dataset"], r["seed"]): r[key] for r in rows
                    if r["model"] == model and r["status"] == "ok" and _label(r, several) == label}

        for label in _methods(args):
            mine = runs(label)
            line = {"model": model, "method": label, "runs": len(mine), "regret": _with_interval(list(mine.values()))}
            # the pooled score itself, in points: a regret divides by a* - b, which can be tiny
            scores = {key: 100 * v for key, v in runs(label, "score").items()}
            if "random" in args.competitors and label != "random":
                other = {key: 100 * v for key, v in runs("random", "score").items()}
                diff = [scores[key] - other[key] for key in scores if key in other]
                if diff:
                    line["score minus random, points"] = _with_interval(diff) + f" ({sum(d > 0 for d in diff)}/{len(diff)} above)"
            method, _, ls = label.partition("/")
            refs = {"minus plain": method.partition("+v")[0] + (f"/{ls}" if ls else "") if "+v" in method else None,
                    "minus first local search": f"{method}/{args.local_search[0]}"
                    if ls and ls != args.local_search[0] else None,
                    "minus random": "random" if "random" in args.competitors and label != "random" else None,
                    "minus paper": f"paper:{method}" if args.paper_picks and method in SURFACES else None}
            for column, ref in refs.items():
                other = runs(ref) if ref else {}
                shared = [key for key in mine if key in other]
                if shared:
                    diff = [mine[key] - other[key] for key in shared]
                    line[column] = _with_interval(diff) + f" ({sum(d < 0 for d in diff)}/{len(diff)})"
            out.append(line)
    return out


def _table3(args, rows, names) -> list[dict]:
    """Table 3's rows: one per model and method, then "overall" across models."""
    out = []
    groups = [(m, [m]) for m in args.models] + ([("overall", args.models)] if len(args.models) > 1 else [])
    for label, models in groups:
        for method in _methods(args):
            regrets = [_mean_regret(rows, m, n, method, len(args.local_search) > 1) for m in models for n in names]
            c = compare_to_baseline(regrets)
            ref = PAPER_TABLE3.get(label, {}).get(method) if args.split in ("iid", "stratified") else None
            out.append({"model": label, "method": method,
                        "regret IQR": f"[{c['q1']:.2f}, {c['median']:.2f}, {c['q3']:.2f}]",
                        "W/T/L": f"{c['wins']}/{c['ties']}/{c['losses']}" + (f" ({ref[0]})" if ref else ""),
                        "Wilcoxon stat, p": f"{c['statistic']:g}, {c['pvalue']:.4f}"
                                            + (f" ({ref[1]}, {ref[2]:.4f})" if ref else "")})
    return out
