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
"""

from __future__ import annotations

import time

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

from ._common import plot_curves, print_table, seeds, write_runs

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


def add_arguments(parser) -> None:
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS),
                        help="rows to run (default: all five)")
    parser.add_argument("--sweep", action="store_true", help="also the paper's z and q sweeps of DP-FTS-DE")
    parser.add_argument("--iterations", type=int, default=None, help="BO iterations after the 10 initial "
                        "points (default 60, quick 5)")


def _parties(data, fields):
    space = SearchSpace(SPACE)
    split = StratifiedShuffleSplit(n_splits=1, test_size=0.5, random_state=0)
    return [Party(f, data.data[data.field == f], data.target[data.field == f], estimator=SVC(), space=space,
                  cv=split, scoring="roc_auc") for f in fields]


def _run(args, label, seed, parties, n_iter, n_init):
    name, options = {**METHODS, **SWEEP}[label]
    strategy = STRATEGIES[name](n_dims=2, n_parties=len(parties), n_iter=n_iter, n_init=n_init,
                                random_state=seed, **options)
    t0 = time.perf_counter()
    trace = simulate(strategy, parties, n_iter=n_iter, random_state=seed, n_jobs=args.n_jobs)
    wall = time.perf_counter() - t0
    best = np.array([np.fmax.accumulate(r) for r in trace.rewards])  # best AUC so far, per field
    row = {"method": label, "seed": seed, "wall": wall, "n_parties": len(parties),
           "one_minus_auc": float(np.mean(1 - best[:, -1])),
           "field_one_minus_auc": (1 - best[:, -1]).tolist(),
           "curve": {k: float(np.mean(1 - best[:, n_init - 1 + k])) for k in CHECKPOINTS if n_init - 1 + k < n_iter},
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
    """Per seed and method, the mean over fields of (method - baseline) and its standard error."""
    base = {r["seed"]: np.array(r["field_one_minus_auc"]) for r in rows if r["method"] == baseline}
    out = []
    for r in rows:
        if r["method"] == baseline or r["seed"] not in base:
            continue
        d = np.array(r["field_one_minus_auc"]) - base[r["seed"]]
        out.append({"method": r["method"], "seed": r["seed"], "minus_ts": float(d.mean()),
                    "se": float(d.std(ddof=1) / np.sqrt(len(d)))})
    return out


def run(args) -> list[dict]:
    data = load_benchmark("landmine", args.data_dir)
    fields = sorted(np.unique(data.field).tolist())
    iterations = args.iterations or (5 if args.quick else 60)
    n_init = 10
    parties = _parties(data, fields)
    labels = list(args.methods) + (list(SWEEP) if args.sweep else [])
    seeds_ = seeds(args, n_full=3)
    print(f"dpftsde: {len(fields)} parties (one per landmine field), linear C and gamma, {n_init} + {iterations} "
          f"evaluations per party, seeds {seeds_}, n_jobs={args.n_jobs}", flush=True)
    rows = []
    for seed in seeds_:
        for label in labels:
            rows.append(_run(args, label, seed, parties, n_init + iterations, n_init))
            r = rows[-1]
            print(f"  seed {seed} {label}: 1 - AUC {r['one_minus_auc']:.4f} (paper {r['paper']}) "
                  f"in {r['wall']:.0f} s", flush=True)
            write_runs(args, rows)  # after every run: a stopped suite keeps what it finished
    print_table(rows, ["method", "seed", "one_minus_auc", "paper", "epsilon", "clipped_fraction", "mean_selected",
                       "noise_on_f", "wall"], title="Landmine, 1 - best AUC after the BO iterations (mean over fields)")
    print_table(_paired(rows), ["method", "seed", "minus_ts", "se"],
                title="Paired with TS (same seed, same field): mean difference in 1 - AUC and its standard error")
    plot_curves(args, "dpftsde_convergence",
                {label: (list(CHECKPOINTS[:len(runs[0])]), runs) for label in labels
                 if (runs := [list(r["curve"].values()) for r in rows if r["method"] == label])},
                xlabel="BO iteration", ylabel="1 - best AUC so far (mean over fields)",
                title="Landmine, 29 fields")
    return rows
