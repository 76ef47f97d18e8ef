"""Personalized federated search (PF-PNE): local regret on synthetic objectives, personal AUC on Landmine.

The local regret of PF-PNE on the paper's synthetic objectives, and each Landmine field's AUC with
its own configuration against the federation's.

Part 1 (``--part synthetic``), the setting of the PF-PNE paper (001_*.txt, Sec. 4 and App. C.2):
Garland (1-D), Himmelblau (2-D) and Rastrigin (10-D), normalised to [0, 1]; each party's local
objective is the function shifted by a zero-mean normal shift on every dimension
(:func:`fedsearch.research.synthetic.make_parties` with ``kind="shift"``; the paper does not state the
shifts' scale, ``--shift`` is in unit-cube coordinates), rewards carry Gaussian observation noise
(``--noise``). Measure: the average over parties of the *local* cumulative regret
``sum_t f_m* - f_m(x_{m,t})`` (PF-PNE Sec. 2.2). Methods at the same per-party budget ``T``:
PF-PNE (``Delta`` from ``--deltas``, 0.01 in the paper), Fed-PNE, per-party HCT (PyXAB, the
paper's single-party baseline, run on each party's objective without communication; optional:
``pip install PyXAB``) and per-party uniform random search. PF-PNE and Fed-PNE use the paper's
constants (``nu1 = 1, rho = 0.5, c = 0.1, c1 = 1``, App. C.1) and one fixed point per node
(``--pull center``, Remark 3.1). Also reported: the local regret of the final recommendations and
the communication (rounds and bytes that crossed the federation; PF-PNE's personal stage runs at
the parties, after one broadcast round whose replies are each party's recommendation alone, App.
C.4; its parties share their personal evaluations only to measure the regret, and the bytes are
those of a run where they keep them).

Part 2 (``--part landmine``): one party per landmine field (29), SVC rbf, ``C`` in [1e-4, 10],
``gamma`` in [0.01, 10] (log-uniform), each field's ROC AUC on its 50/50 split (the protocol of
the ``landmine`` suite). For every ``Delta`` of ``--landmine-deltas``, :class:`PFPNESearchCV`'s
``personal_results_``: each field's AUC with its own configuration and with the federation's.
The baseline is federated random search at the same budget: the federation's best candidate
against each field's best candidate among the same draws.
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.svm import SVC

from fedsearch.algorithms.fedpne import FedPNEStrategy
from fedsearch.algorithms.pfpne import PFPNEStrategy
from fedsearch.datasets import load_benchmark
from fedsearch.research.simulate import simulate
from fedsearch.research.synthetic import garland, himmelblau, make_parties, rastrigin

from ._common import plot_curves, print_table, pyxab_hct, unavailable_record, write_runs
from .landmine import SPACE, _split

OBJECTIVES = {"garland": garland, "himmelblau": himmelblau, "rastrigin": lambda: rastrigin(10)}
METHODS = ("pfpne", "fedpne", "hct", "random")
QUICK = {"n_iter": 1000, "seeds": 3, "budget": 60}
FULL = {"n_iter": 5000, "seeds": 10, "budget": 150}


def add_arguments(parser) -> None:
    parser.add_argument("--part", choices=["synthetic", "landmine", "both"], default="both",
                        help="which part to run (default: both)")
    parser.add_argument("--objectives", nargs="+", choices=list(OBJECTIVES), default=list(OBJECTIVES),
                        help="synthetic objectives (default: all three)")
    parser.add_argument("--methods", nargs="+", choices=list(METHODS), default=list(METHODS),
                        help="synthetic methods (default: all)")
    parser.add_argument("--n-iter", type=int, default=None,
                        help=f"evaluations per party, T (default {FULL['n_iter']}, quick {QUICK['n_iter']})")
    parser.add_argument("--parties", type=int, default=10, help="synthetic parties M (default 10)")
    parser.add_argument("--shift", type=float, default=0.05,
                        help="std of each party's shift per dimension, unit-cube units (default 0.05)")
    parser.add_argument("--noise", type=float, default=0.1, help="observation noise std (default 0.1)")
    parser.add_argument("--deltas", type=float, nargs="+", default=[0.01],
                        help="PF-PNE's Delta on the synthetic objectives (default 0.01, the paper's)")
    parser.add_argument("--pull", choices=["center", "uniform"], default="center",
                        help="where PF-PNE / Fed-PNE pull a node (default: its centre, the paper's)")
    parser.add_argument("--budget", type=int, default=None,
                        help=f"Landmine evaluations per field (default {FULL['budget']}, quick {QUICK['budget']})")
    parser.add_argument("--landmine-deltas", type=float, nargs="+", default=[0.01, 0.25],
                        help="PF-PNE's Delta on Landmine (default 0.01 0.25: with 29 parties and the paper's "
                             "0.01 the collaborative stage alone takes a small budget)")


def _seeds(args) -> list[int]:
    return list(args.seeds) if args.seeds else list(range(QUICK["seeds"] if args.quick else FULL["seeds"]))


# --------------------------------------------------------------------------- part 1: synthetic
def _hct_regrets(parties, n_iter: int, seed: int) -> tuple[list[np.ndarray], list[float]]:
    """Per-party HCT (PyXAB, the paper's constants ``nu = 1, rho = 0.5, c = 0.1, delta = 0.01``)
    on each party's noisy local objective, no communication: each party's instantaneous regrets,
    and the regret of its final point (PyXAB's ``get_last_point``)."""
    HCT, BinaryPartition = pyxab_hct()
    out, final = [], []
    legacy = np.random.get_state()  # PyXAB's partition draws split dimensions from the global RNG
    try:
        for m, party in enumerate(parties):
            f = party.objective
            rng = np.random.default_rng([seed, m])
            np.random.seed([seed, m])
            algo = HCT(nu=1.0, rho=0.5, c=0.1, delta=0.01, domain=[[0.0, 1.0]] * f.n_dims,
                       partition=BinaryPartition)
            points = np.empty((n_iter, f.n_dims))
            for t in range(1, n_iter + 1):
                x = np.asarray(algo.pull(t), dtype=float)
                algo.receive_reward(t, float(f(x[None, :])[0]) + party.noise_std * rng.standard_normal())
                points[t - 1] = x
            out.append(f.maximum - f(points))
            final.append(float(f.maximum - f(np.asarray(algo.get_last_point(), dtype=float)[None, :])[0]))
    finally:
        np.random.set_state(legacy)
    return out, final


def _synthetic_run(args, name, method, delta, seed, n_iter) -> tuple[dict, np.ndarray | None]:
    label = method if method != "pfpne" else f"pf-pne (Delta={delta:g})"
    base = {"part": "synthetic", "objective": name, "method": label, "seed": seed, "n_iter": n_iter,
            "n_parties": args.parties}
    parties = make_parties(OBJECTIVES[name](), args.parties, kind="shift", scale=args.shift,
                           noise_std=args.noise, random_state=seed)
    t0 = time.perf_counter()
    if method == "hct":
        try:
            regrets, final = _hct_regrets(parties, n_iter, seed)
        except ImportError as exc:
            return unavailable_record(str(exc), **base), None
        curve = np.cumsum(np.mean(regrets, axis=0))
        return {**base, "local_regret": float(curve[-1]), "simple_local_regret": float(np.mean(final)),
                "rounds": 0, "communicating_rounds": 0, "bytes": 0, "wall": time.perf_counter() - t0,
                "status": "ok"}, curve
    d = parties[0].objective.n_dims
    # PF-PNE's parties share their personal evaluations here, only so that their regret can be
    # measured; the bytes are those of the protocol (a second run, where they keep them)
    strategy = {"pfpne": lambda: PFPNEStrategy(d, args.parties, n_iter, gap=delta, pull=args.pull, share=True,
                                                random_state=seed),
                "fedpne": lambda: FedPNEStrategy(d, args.parties, n_iter, pull=args.pull, random_state=seed),
                "random": lambda: "random"}[method]()
    trace = simulate(strategy, parties, n_iter=n_iter, random_state=seed)
    talking, sent = list(range(trace.n_rounds)), trace.bytes_per_round
    if method == "random":  # each party sampling on its own needs no communication
        talking = []
    elif method == "pfpne":  # the collaborative rounds, then the broadcast and one recommendation per party
        kept = simulate(PFPNEStrategy(d, args.parties, n_iter, gap=delta, pull=args.pull, random_state=seed),
                        parties, n_iter=n_iter, random_state=seed)
        assert np.array_equal(kept.recommendations, trace.recommendations)
        sent = kept.bytes_per_round
    row = {**base, "local_regret": trace.cumulative_regret("local"),
           "simple_local_regret": trace.simple_regret("local"), "rounds": trace.n_rounds,
           "communicating_rounds": len(talking), "bytes": int(sent[talking].sum()),
           "wall": time.perf_counter() - t0, "status": "ok"}
    return row, trace.cumulative_regret("local", curve=True)


def run_synthetic(args) -> list[dict]:
    n_iter = args.n_iter or (QUICK["n_iter"] if args.quick else FULL["n_iter"])
    seeds_ = _seeds(args)
    print(f"synthetic: {args.parties} parties, T = {n_iter} evaluations each, shift std {args.shift:g}, "
          f"noise std {args.noise:g}, pull={args.pull}, seeds {seeds_}")
    rows, curves = [], {}
    for name in args.objectives:
        for method in args.methods:
            for delta in (args.deltas if method == "pfpne" else [None]):
                for seed in seeds_:
                    row, curve = _synthetic_run(args, name, method, delta, seed, n_iter)
                    rows.append(row)
                    if curve is not None:
                        curves.setdefault(name, {}).setdefault(row["method"], []).append(curve)
    return rows, curves


def summarise_synthetic(rows) -> list[dict]:
    """Mean and standard deviation over seeds of every (objective, method); prints the verdict."""
    ok = [r for r in rows if r.get("status") == "ok"]
    summary = []
    for name in dict.fromkeys(r["objective"] for r in ok):
        group = [r for r in ok if r["objective"] == name]
        for method in dict.fromkeys(r["method"] for r in group):
            runs = [r for r in group if r["method"] == method]
            regret = np.array([r["local_regret"] for r in runs])
            summary.append({"objective": name, "method": method, "seeds": len(runs),
                            "local_regret": float(regret.mean()),
                            "sd": float(regret.std(ddof=1)) if len(runs) > 1 else float("nan"),
                            "simple_local_regret": float(np.mean([r["simple_local_regret"] for r in runs])),
                            "communicating_rounds": float(np.mean([r["communicating_rounds"] for r in runs])),
                            "bytes": float(np.mean([r["bytes"] for r in runs]))})
    print_table(summary, ["objective", "method", "seeds", "local_regret", "sd", "simple_local_regret",
                          "communicating_rounds", "bytes"],
                title="Average local cumulative regret (mean over parties, then over seeds; lower is better)")
    print()
    for name in dict.fromkeys(s["objective"] for s in summary):
        group = sorted((s for s in summary if s["objective"] == name), key=lambda s: s["local_regret"])
        verdict = "yes" if group[0]["method"].startswith("pfpne") else "no"
        print(f"{name}: " + " < ".join(f"{s['method']} {s['local_regret']:.1f}" for s in group)
              + f"  -- PF-PNE lowest (as the paper reports)? {verdict}")
    return summary


# --------------------------------------------------------------------------- part 2: Landmine
def _landmine_row(base, method, fields, personal, common, search, wall) -> dict:
    personal, common = np.asarray(personal, dtype=float), np.asarray(common, dtype=float)
    gain = personal - common
    return {**base, "method": method, "personal_auc": float(np.nanmean(personal)),
            "global_auc": float(np.nanmean(common)), "gain": float(np.nanmean(gain)),
            "fields_better": int(np.sum(gain > 1e-12)), "fields_worse": int(np.sum(gain < -1e-12)),
            "global_params": search.best_params_, "rounds": search.n_rounds_,
            "communicating_rounds": len(getattr(search, "collaborative_rounds_", range(search.n_rounds_))),
            "wall": wall, "status": "ok",
            "field_auc_personal": dict(zip(fields, personal.tolist())),
            "field_auc_global": dict(zip(fields, common.tolist()))}


def run_landmine(args) -> list[dict]:
    from fedsearch import FederatedRandomizedSearchCV, PFPNESearchCV

    data = load_benchmark("landmine", args.data_dir)
    fields = np.unique(data.field).tolist()
    budget = args.budget or (QUICK["budget"] if args.quick else FULL["budget"])
    seeds_ = _seeds(args)[:1] if args.quick else _seeds(args)[:3]
    print(f"\nlandmine: {len(fields)} parties (one per field), SVC rbf, ROC AUC on each field's 50/50 split, "
          f"{budget} evaluations per field, seeds {seeds_}, n_jobs={args.n_jobs}")
    common = dict(cv=_split(), scoring="roc_auc", aggregate="mean", refit=False, n_jobs=args.n_jobs)
    rows = []
    for seed in seeds_:
        base = {"part": "landmine", "seed": seed, "budget_per_party": budget, "n_parties": len(fields)}
        for delta in args.landmine_deltas:
            t0 = time.perf_counter()
            search = PFPNESearchCV(SVC(), SPACE, n_iter=budget, gap=delta, pull=args.pull, random_state=seed,
                                   **common).fit(data.data, data.target, parties=data.field)
            res = search.personal_results_
            rows.append(_landmine_row(base, f"pf-pne (Delta={delta:g})", res["party"], res["personal_test_score"],
                                      res["global_test_score"], search, time.perf_counter() - t0))
        t0 = time.perf_counter()
        search = FederatedRandomizedSearchCV(SVC(), SPACE, n_iter=budget, random_state=seed, **common).fit(
            data.data, data.target, parties=data.field)
        res = search.cv_results_
        own = [float(np.nanmax(res[f"party_{f}_test_score"])) for f in fields]
        fed = [float(res[f"party_{f}_test_score"][search.best_index_]) for f in fields]
        rows.append(_landmine_row(base, "random (field's best draw)", fields, own, fed, search,
                                  time.perf_counter() - t0))
    print_table(rows, ["method", "seed", "personal_auc", "global_auc", "gain", "fields_better", "fields_worse",
                       "communicating_rounds", "rounds", "wall"],
                title="Landmine: mean over fields of each field's AUC with its own configuration (personal) "
                      "and with the federation's (global)")
    first = [r for r in rows if r["seed"] == seeds_[0]]
    per_field = [{"field": f, **{f"{r['method']} {kind}": r[f"field_auc_{kind}"][f] for r in first
                                 for kind in ("personal", "global")}} for f in fields]
    print_table(per_field, list(per_field[0]), title=f"Landmine, per field (seed {seeds_[0]})")
    return rows


# --------------------------------------------------------------------------- runner
def run(args) -> list[dict]:
    rows = []
    if args.part in ("synthetic", "both"):
        synthetic, curves = run_synthetic(args)
        rows += synthetic
        print_table(synthetic, ["objective", "method", "seed", "local_regret", "simple_local_regret",
                                "communicating_rounds", "rounds", "bytes", "wall", "status"],
                    title="Synthetic runs")
        summarise_synthetic(synthetic)
        for name, by_method in curves.items():
            plot_curves(args, f"personal_{name}", {m: (np.arange(1, len(c[0]) + 1), c) for m, c in by_method.items()},
                        xlabel="evaluations per party t", ylabel="average local cumulative regret",
                        title=f"{name}: {args.parties} shifted parties")
    if args.part in ("landmine", "both"):
        rows += run_landmine(args)
    write_runs(args, rows)
    return rows
