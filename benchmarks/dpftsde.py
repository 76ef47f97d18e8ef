"""DP-FTS-DE on Landmine in the paper's protocol (002_*.txt §5.2, App. B.2; notes §3.2 and §4.8).

29 parties, one per landmine field; each field split once 50/50 (stratified, ``random_state=0``),
``SVC(C, gamma)`` trained on the first half and scored by ROC AUC on the second. The search space
is the authors' code's: *linear* ``C`` in [1e-4, 10] and ``gamma`` in [0.01, 10]. Every party
evaluates 10 initial points and then 60 BO iterations (70 evaluations); M = 100 shared features of
length scale 0.01, P = 4 sub-regions, S = 22. The metric is the paper's: ``1 - best AUC so far``
of each field after the 60 iterations, averaged over the fields.

Methods (one run of each per seed; every run of a seed shares the seed, so rows are paired field
by field): standard ``TS`` (no collaboration), ``FTS`` (server average, one region, no DP),
``FTS-DE`` (four regions, no DP), ``DP-FTS-DE`` at q = 0.35, z = 1, and the ablation
``DP-FTS-DE, random`` (the same p_t schedule, but a uniform random point instead of the
arg-max of the server's aggregate). ``--sweep`` adds the paper's z sweep (q = 0.35) and q sweep
(z = 1). The privacy loss of each DP row is the paper's accountant (δ = 29^-1.1, T = 60).

Runs are independent: ``--seeds``/``--methods`` split the design over processes (each with its
own ``--output``), and ``--merge A/dpftsde.csv B/dpftsde.csv ... --output DIR`` reports them
together (per-run table, per-method means with standard errors across seeds and fields, paired
differences with TS, DP-FTS-DE against its ablation and FTS-DE against FTS, convergence and sweep
plots) without running anything.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
from scipy.stats import uniform
from sklearn.model_selection import StratifiedShuffleSplit
from sklearn.svm import SVC

from fedsearch.datasets import load_benchmark
from fedsearch.party import Party
from fedsearch.privacy import subsampled_gaussian_epsilon
from fedsearch.research.simulate import simulate
from fedsearch.space import SearchSpace
from fedsearch.strategy import STRATEGIES

from ._common import plot_curves, print_table, read_runs, seeds, write_runs

# the authors' code: C = u (10 - 1e-4) + 1e-4, gamma = u (10 - 0.01) + 0.01
SPACE = {"C": uniform(1e-4, 10 - 1e-4), "gamma": uniform(0.01, 10 - 0.01)}
DP = dict(sampling_rate=0.35, noise_multiplier=1.0, clip=22.0)
# label -> (strategy name, options)
METHODS = {
    "TS": ("ts", {}),
    "DP-FTS-DE": ("dp-fts-de", DP),
    "DP-FTS-DE, random": ("dp-fts-de", {**DP, "server_branch": "random"}),
    "FTS-DE": ("fts-de", {}),
    "FTS": ("fts", {}),
}
SWEEP = {**{f"DP-FTS-DE z={z:g}": ("dp-fts-de", {**DP, "noise_multiplier": z}) for z in (1.6, 2, 3, 4)},
         **{f"DP-FTS-DE q={q:g}": ("dp-fts-de", {**DP, "sampling_rate": q}) for q in (0.1, 0.15, 0.2, 0.25)}}
# The paper's Fig. 3a (notes §3.2: the authors' notebook on their 10 uploaded runs), 1 - AUC after 60 iterations
PAPER = {"TS": 0.2375, "FTS": 0.2346, "FTS-DE": 0.2314, "DP-FTS-DE": 0.2319, "DP-FTS-DE z=1.6": 0.2327,
         "DP-FTS-DE z=2": 0.2332, "DP-FTS-DE z=3": 0.2358, "DP-FTS-DE z=4": 0.2373, "DP-FTS-DE q=0.1": 0.2376,
         "DP-FTS-DE q=0.15": 0.2373, "DP-FTS-DE q=0.2": 0.2336, "DP-FTS-DE q=0.25": 0.2349}
CHECKPOINTS = (0, 10, 20, 30, 40, 50, 60)  # BO iterations at which the curve is reported
# TS at those iterations, recomputed from the authors' results_ts.zip (notes §3.2)
PAPER_TS_CURVE = (0.3152, 0.2595, 0.2489, 0.2451, 0.2421, 0.2397, 0.2375)


def add_arguments(parser) -> None:
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=[*METHODS, *SWEEP],
                        help="rows to run (default: the five of the main table; a sweep point by its label)")
    parser.add_argument("--sweep", action="store_true", help="also the paper's z and q sweeps of DP-FTS-DE")
    parser.add_argument("--iterations", type=int, default=None, help="BO iterations after the 10 initial "
                        "points (default 60, quick 5)")
    parser.add_argument("--merge", nargs="+", type=Path, default=None, metavar="CSV",
                        help="run nothing: report the runs of earlier --output CSVs together (e.g. one process "
                             "per seed), and write them to --output as one CSV with the plots")


def _parties(data, fields):
    space = SearchSpace(SPACE)
    split = StratifiedShuffleSplit(n_splits=1, test_size=0.5, random_state=0)
    return [Party(f, data.data[data.field == f], data.target[data.field == f], estimator=SVC(), space=space,
                  cv=split, scoring="roc_auc") for f in fields]


def _run(args, label, seed, parties, n_iter, n_init):
    name, options = {**METHODS, **SWEEP}[label]
    strategy = STRATEGIES[name](n_dims=2, n_parties=len(parties), n_iter=n_iter, n_init=n_init,
                                random_state=seed, **options)
    t0, c0 = time.perf_counter(), time.process_time()
    trace = simulate(strategy, parties, n_iter=n_iter, random_state=seed, n_jobs=args.n_jobs)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    best = np.array([np.fmax.accumulate(r) for r in trace.rewards])  # best AUC so far, per field
    row = {"method": label, "seed": seed, "wall": wall, "cpu": cpu, "load_average": os.getloadavg()[0],
           "iterations": n_iter - n_init, "n_parties": len(parties),
           "one_minus_auc": float(np.mean(1 - best[:, -1])),
           "field_one_minus_auc": (1 - best[:, -1]).tolist(),
           "curve": {k: float(np.mean(1 - best[:, n_init - 1 + k])) for k in CHECKPOINTS if n_init - 1 + k < n_iter},
           "best_so_far": np.mean(1 - best[:, n_init - 1:], axis=0).tolist(),  # BO iteration 0, 1, ...
           "paper": PAPER.get(label), "bytes": int(trace.bytes_per_round.sum()), "status": "ok"}
    if strategy.dp and strategy.collaborative:
        rel = strategy.releases_
        row["epsilon"] = subsampled_gaussian_epsilon(strategy.sampling_rate, strategy.noise_multiplier,
                                                     strategy.n_releases, delta=len(parties) ** -1.1)
        row["clipped_fraction"] = sum(r["n_clipped"] for r in rel) / max(1, sum(r["n_selected"] for r in rel))
        row["mean_selected"] = float(np.mean([r["n_selected"] for r in rel]))
        # std of the noise on the shared function's value at any x (unit-norm features), first / last round
        row["noise_on_f"] = [float(rel[0]["noise_std"].max()), float(rel[-1]["noise_std"].max())]
    return row


def _paired(rows, baseline="TS"):
    """Per seed and method, the field-by-field difference with ``baseline`` (same seed, same number
    of iterations): ``difference`` (mean over fields), ``se`` (its standard error) and ``fields``."""
    base = {(r["seed"], r.get("iterations")): np.array(r["field_one_minus_auc"]) for r in rows
            if r["method"] == baseline}
    out = []
    for r in rows:
        key = (r["seed"], r.get("iterations"))
        if r["method"] == baseline or key not in base:
            continue
        d = np.array(r["field_one_minus_auc"]) - base[key]
        out.append({"method": r["method"], "baseline": baseline, "seed": r["seed"], "difference": float(d.mean()),
                    "se": float(d.std(ddof=1) / np.sqrt(len(d))), "fields": d})
    return out


def _pooled(paired):
    """Per method, its paired differences over all seeds: the mean, the standard error across fields
    (of each field's seed-averaged difference) and across seeds (of each seed's field-averaged one)."""
    out = []
    for method in dict.fromkeys(p["method"] for p in paired):
        D = np.array([p["fields"] for p in paired if p["method"] == method])  # seeds x fields
        by_field, by_seed = D.mean(axis=0), D.mean(axis=1)
        out.append({"method": method, "baseline": paired[0]["baseline"], "seeds": len(D),
                    "difference": float(D.mean()), "se_fields": float(by_field.std(ddof=1) / np.sqrt(len(by_field))),
                    "se_seeds": float(by_seed.std(ddof=1) / np.sqrt(len(by_seed))) if len(D) > 1 else None})
    return out


def _summary(rows):
    """Per method, over its seeds: the mean 1 - AUC and its standard errors across seeds and fields."""
    out = []
    for method in dict.fromkeys(r["method"] for r in rows):
        runs = [r for r in rows if r["method"] == method]
        F = np.array([r["field_one_minus_auc"] for r in runs])  # seeds x fields
        by_seed, by_field = F.mean(axis=1), F.mean(axis=0)
        row = {"method": method, "seeds": len(runs), "one_minus_auc": float(F.mean()),
               "se_seeds": float(by_seed.std(ddof=1) / np.sqrt(len(runs))) if len(runs) > 1 else None,
               "se_fields": float(by_field.std(ddof=1) / np.sqrt(len(by_field))), "paper": runs[0].get("paper"),
               "epsilon": runs[0].get("epsilon"), "cpu": float(np.mean([r.get("cpu") or np.nan for r in runs]))}
        for key in ("clipped_fraction", "mean_selected"):
            if runs[0].get(key) is not None:
                row[key] = float(np.mean([r[key] for r in runs]))
        out.append(row)
    return out


def _sweep_curves(rows, kind):
    """The z (or q) sweep as ``plot_curves`` input: 1 - AUC minus TS's, field by field (paired), averaged
    over the seeds that ran every point of the sweep, beside the paper's differences with its TS."""
    prefix = f"DP-FTS-DE {kind}="
    points = {DP["noise_multiplier" if kind == "z" else "sampling_rate"]: "DP-FTS-DE",
              **{float(label[len(prefix):]): label for label in SWEEP if label.startswith(prefix)}}
    by = {(r["method"], r["seed"]): np.array(r["field_one_minus_auc"]) for r in rows}
    seeds_ = [s for s in dict.fromkeys(r["seed"] for r in rows)
              if all((label, s) in by for label in [*points.values(), "TS"])]
    if not seeds_:
        return {}
    x = sorted(points)
    differences = np.array([np.mean([by[points[v], s] - by["TS", s] for s in seeds_], axis=0) for v in x]).T
    return {f"fedsearch ({len(seeds_)} seed{'s' if len(seeds_) > 1 else ''}; band: s.e. across fields)": (x, differences),
            "paper": (x, [PAPER[points[v]] - PAPER["TS"] for v in x]),
            "TS": (x, np.zeros(len(x)))}


def _report(args, rows) -> None:
    print_table(rows, ["method", "seed", "iterations", "one_minus_auc", "paper", "epsilon", "clipped_fraction",
                       "mean_selected", "noise_on_f", "wall", "cpu", "load_average"],
                title="Landmine, 1 - best AUC after the BO iterations (mean over fields), per run")
    print_table(_summary(rows), ["method", "seeds", "one_minus_auc", "se_seeds", "se_fields", "paper", "epsilon",
                                 "clipped_fraction", "mean_selected", "cpu"],
                title="Per method, over its seeds (standard errors across seeds and across fields)")
    for baseline in ("TS", "DP-FTS-DE, random", "FTS"):
        paired = _paired(rows, baseline)
        if baseline != "TS":  # the two comparisons that test the aggregate: DP against its ablation, DE
            paired = [p for p in paired if p["method"] == {"FTS": "FTS-DE"}.get(baseline, "DP-FTS-DE")]
        if paired:
            print_table(paired, ["method", "baseline", "seed", "difference", "se"],
                        title=f"Paired with {baseline} (same seed, same field): mean difference in 1 - AUC "
                              "and its standard error across fields")
            print_table(_pooled(paired), ["method", "baseline", "seeds", "difference", "se_fields", "se_seeds"],
                        title=f"Paired with {baseline}, over all seeds")
    write_runs(args, rows)
    if curves := {label: (np.arange(len(runs[0])), runs) for label in METHODS
                  if (runs := [r["best_so_far"] for r in rows if r["method"] == label and r.get("best_so_far")])}:
        curves["paper TS (authors' 10 runs)"] = (list(CHECKPOINTS), list(PAPER_TS_CURVE))
        plot_curves(args, "dpftsde_convergence", curves, xlabel="BO iteration",
                    ylabel="1 - best AUC so far (mean over fields)", title="Landmine, 29 fields (band: s.e. across seeds)")
    for kind, name in (("z", "noise multiplier z (q = 0.35)"), ("q", "sampling rate q (z = 1)")):
        if curves := _sweep_curves(rows, kind):
            plot_curves(args, f"dpftsde_{kind}_sweep", curves, xlabel=name,
                        ylabel="1 - AUC after 60 iterations, minus TS's", title="DP-FTS-DE on Landmine, paired with TS")


def run(args) -> list[dict]:
    if args.merge:
        order = {label: i for i, label in enumerate([*METHODS, *SWEEP])}
        rows = sorted(read_runs(args.merge), key=lambda r: (order.get(r["method"], len(order)), r["seed"]))
        print(f"dpftsde: {len(rows)} runs read from {len(args.merge)} file(s)")
        _report(args, rows)
        return rows
    data = load_benchmark("landmine", args.data_dir)
    fields = sorted(np.unique(data.field).tolist())
    iterations = args.iterations or (5 if args.quick else 60)
    n_init = 10
    parties = _parties(data, fields)
    labels = list(dict.fromkeys(list(args.methods) + (list(SWEEP) if args.sweep else [])))
    seeds_ = seeds(args, n_full=3)
    print(f"dpftsde: {len(fields)} parties (one per landmine field), linear C and gamma, {n_init} + {iterations} "
          f"evaluations per party, seeds {seeds_}, n_jobs={args.n_jobs}", flush=True)
    rows = []
    for seed in seeds_:
        for label in labels:
            rows.append(_run(args, label, seed, parties, n_init + iterations, n_init))
            r = rows[-1]
            print(f"  seed {seed} {label}: 1 - AUC {r['one_minus_auc']:.4f} (paper {r['paper']}) "
                  f"in {r['wall']:.0f} s ({r['cpu']:.0f} CPU-s in this process)", flush=True)
            write_runs(args, rows)  # after every run: a stopped suite keeps what it finished
    _report(args, rows)
    return rows
