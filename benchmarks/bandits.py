"""X-armed bandit experiments of the Fed-PNE, PF-PNE and level-order papers on synthetic functions.

(a) Fed-PNE paper, Fig. 2 (a-b): Garland and DoubleSine, M = 10 parties with a consistent random
    perturbation each (App. E.2), 10 seeds. Average per-party cumulative regret on the global
    objective of Fed-PNE and of federated random search, each party spending T evaluations, against
    HCT (PyXAB, ``pip install fedsearch[bandits]``; App. E.1.2: nu1 = 1, rho = 0.75, binary
    partition) run T times on the global objective. One HCT evaluation of the global objective
    stands for the M parties' evaluations of one round averaged (Remark 4.1), so its observation
    noise is ``noise_std / sqrt(M)``.
(b) Fed-PNE paper, Fig. 3: Fed-PNE's average per-party cumulative regret as M grows.
(c) Level-order paper (003), Fig. 2: final loss ``f* - f(x(n))`` of the level-order bandit with
    m = 1, 4, 16 players on ``(sin(13x) sin(27x)/2 + 1)/2`` (n = 1600 steps) and Garland
    (n = 10000), every player evaluating the same function.
(d) Bytes per party of the pull protocol (issue 12's case: Garland, M = 10 parties, T = 5000 pulls
    each) for every X-armed strategy, the parties keeping their scores (the papers' protocol) or
    sharing each configuration's score (``share=True``, what ``share_evaluations`` sends).
(e) Scale: Fed-PNE with 1,000 parties and up to 10,000 pulls each; the strategy's server-side
    time, the wall time of the whole simulation (parties and message encoding included) and the
    number of rounds against log2 T.
(f) Scale of every X-armed strategy (Fed-PNE, level-order, PF-PNE) at 1,000 parties x 10,000
    pulls through ``simulate``: wall and process (CPU) seconds, the server's seconds, the peak of
    traced memory (``tracemalloc``, a second run) and the bytes per party. Targets: under 5 s and
    300 MB.
(g) DP-Fed-PNE's utility at party-level epsilons (``dp_epsilon``, ``dp_delta = 1e-5`` over the
    whole search, the noise ``sigma`` derived for ``T + 1`` releases per party, and the paper's
    per-release epsilon for that ``sigma``): simple and cumulative regret on Garland with M = 10 parties (shifted copies, values in [0, 1]), against no DP.
"""

from __future__ import annotations

import math
import os
import time
import tracemalloc

import numpy as np

from fedsearch.privacy import classic_gaussian_epsilon, gaussian_noise_for_epsilon
from fedsearch.research import synthetic
from fedsearch.research.simulate import simulate

from ._common import plot_curves, print_table, pyxab_hct, seeds, write_runs

PARTS = ("a", "b", "c", "d", "e", "f", "g")
OBJECTIVES_A = ("garland", "double_sine")
# label -> (strategy of fedsearch.research.simulate, its options); "hct" is PyXAB's, run on the global objective
METHODS_A = {"fedpne": ("fedpne", {}), "fed-pne-center": ("fedpne", {"pull": "center"}),
             "random": ("random", {}), "hct": None}
QUICK = {"n_iter": 1000, "parties_b": [1, 5, 10, 20], "players_c": [1, 4, 16],
         "steps_c": {"sine_product": 400, "garland": 2000}, "scale_parties": 100, "scale_pulls": [100, 1000],
         "epsilons_g": [1.0, 10.0, 100.0, 1000.0, 10000.0, None], "n_iter_g": 1000}
FULL = {"n_iter": 5000, "parties_b": [1, 5, 10, 20], "players_c": [1, 4, 16],
        "steps_c": {"sine_product": 1600, "garland": 10000}, "scale_parties": 1000,
        "scale_pulls": [100, 1000, 10000], "epsilons_g": [1.0, 10.0, 100.0, 1000.0, 10000.0, None], "n_iter_g": 5000}


def add_arguments(parser) -> None:
    parser.add_argument("--parts", nargs="+", default=list(PARTS), choices=PARTS,
                        help="experiments to run (default: all)")
    parser.add_argument("--n-iter", type=int, default=None,
                        help=f"T, evaluations per party in (a) and (b) (default {FULL['n_iter']}, quick {QUICK['n_iter']})")
    parser.add_argument("--parties", type=int, default=10, help="M in (a) (default 10)")
    parser.add_argument("--noise-std", type=float, default=0.1,
                        help="standard deviation of the Gaussian observation noise (default 0.1)")
    parser.add_argument("--scale-parties", type=int, default=None,
                        help=f"parties in (e) (default {FULL['scale_parties']}, quick {QUICK['scale_parties']})")


def _settings(args) -> dict:
    s = dict(QUICK if args.quick else FULL)
    if args.n_iter:
        s["n_iter"] = args.n_iter
    if args.scale_parties:
        s["scale_parties"] = args.scale_parties
    return s


def _checkpoints(n_iter: int) -> list[int]:
    return sorted({max(1, n_iter // 10), max(1, n_iter // 2), n_iter})


def _hct_curve(pyxab, objective, n_iter: int, noise_std: float, seed: int) -> np.ndarray:
    """Cumulative regret of PyXAB's HCT on ``objective`` after each of ``n_iter`` pulls."""
    hct, partition = pyxab
    rng = np.random.default_rng(seed)
    algo = hct(nu=1.0, rho=0.75, domain=[[0.0, 1.0]] * objective.n_dims, partition=partition)
    regret = np.empty(n_iter)
    for t in range(1, n_iter + 1):
        x = np.asarray(algo.pull(t), dtype=float)[None]
        value = objective(x)[0]
        algo.receive_reward(t, value + rng.normal(0.0, noise_std))
        regret[t - 1] = objective.maximum - value
    return np.cumsum(regret)


def _summary(rows, keys, value):
    """Mean and standard deviation of ``value`` over the rows sharing ``keys``."""
    groups: dict[tuple, list] = {}
    for r in rows:
        groups.setdefault(tuple(r[k] for k in keys), []).append(r)
    out = []
    for key, rs in groups.items():
        v = np.array([r[value] for r in rs], dtype=float)
        out.append({**dict(zip(keys, key)), "seeds": len(rs), f"{value}_mean": v.mean(),
                    f"{value}_std": v.std(ddof=1) if len(v) > 1 else 0.0,
                    **{k: np.mean([r[k] for r in rs]) for k in rs[0] if k.startswith("R@") or k in ("rounds", "simple_regret")}})
    return out


def part_a(args, s, runs) -> None:
    T, M, sigma = s["n_iter"], args.parties, args.noise_std
    try:
        pyxab = pyxab_hct()
    except ImportError as exc:
        pyxab = None
        print(f"(a) HCT rows skipped: {exc}")
    cps = _checkpoints(T)
    rows, curves = [], {}
    for name in OBJECTIVES_A:
        base = synthetic.OBJECTIVES[name]()
        for seed in seeds(args, 10):
            parties = synthetic.make_parties(base, M, kind="perturb", noise_std=sigma, random_state=seed)
            for method, spec in METHODS_A.items():
                if spec is None:
                    if pyxab is None:
                        continue
                    curve = _hct_curve(pyxab, synthetic.global_objective(parties), T, sigma / math.sqrt(M), seed)
                    extra = {"rounds": T, "simple_regret": float("nan")}
                else:
                    trace = simulate(spec[0], parties, T, random_state=seed, **spec[1])
                    curve = trace.cumulative_regret(curve=True)
                    extra = {"rounds": trace.n_rounds, "simple_regret": trace.simple_regret()}
                curves.setdefault(name, {}).setdefault(method, []).append(curve)
                rows.append({"part": "a", "objective": name, "method": method, "M": M, "T": T, "seed": seed,
                             "regret": float(curve[-1]), **{f"R@{c}": float(curve[c - 1]) for c in cps}, **extra})
    runs.extend(rows)
    table = _summary(rows, ["objective", "method"], "regret")
    print_table(table, ["objective", "method", "seeds", *[f"R@{c}" for c in cps], "regret_std", "rounds", "simple_regret"],
                title=f"(a) average per-party cumulative regret on the global objective, M = {M}, T = {T}, "
                      f"noise {sigma} (HCT: one learner on the global objective, noise {sigma}/sqrt(M)); "
                      "means over seeds")
    if pyxab is not None:
        for name in OBJECTIVES_A:
            hc = {r["seed"]: r["regret"] for r in rows if r["objective"] == name and r["method"] == "hct"}
            for method in ("fedpne", "fed-pne-center"):
                pne = {r["seed"]: r["regret"] for r in rows if r["objective"] == name and r["method"] == method}
                wins = sum(pne[k] < hc[k] for k in pne)
                print(f"(a) {name}: {method} below HCT in {wins}/{len(pne)} seeds "
                      f"(mean {np.mean(list(pne.values())):.1f} vs {np.mean(list(hc.values())):.1f})")
    for name, by_method in curves.items():
        plot_curves(args, f"bandits_a_{name}", {m: (np.arange(1, T + 1), c) for m, c in by_method.items()},
                    xlabel="evaluations per party", ylabel="average cumulative regret", title=f"{name}, M = {M}")


def part_b(args, s, runs) -> None:
    T, sigma = s["n_iter"], args.noise_std
    cps = _checkpoints(T)
    rows = []
    for name in OBJECTIVES_A:
        base = synthetic.OBJECTIVES[name]()
        for M in s["parties_b"]:
            for seed in seeds(args, 10):
                parties = synthetic.make_parties(base, M, kind="perturb", noise_std=sigma, random_state=seed)
                trace = simulate("fedpne", parties, T, random_state=seed)
                curve = trace.cumulative_regret(curve=True)
                rows.append({"part": "b", "objective": name, "method": "fedpne", "M": M, "T": T, "seed": seed,
                             "regret": float(curve[-1]), **{f"R@{c}": float(curve[c - 1]) for c in cps},
                             "rounds": trace.n_rounds, "simple_regret": trace.simple_regret()})
    runs.extend(rows)
    print_table(_summary(rows, ["objective", "M"], "regret"),
                ["objective", "M", "seeds", *[f"R@{c}" for c in cps], "regret_std", "rounds", "simple_regret"],
                title=f"(b) Fed-PNE: average per-party cumulative regret (global objective) as M grows, T = {T}")


def part_c(args, s, runs) -> None:
    sigma = args.noise_std
    rows, table = [], []
    for name, n in s["steps_c"].items():
        base = synthetic.OBJECTIVES[name]()
        budgets = [n // 8, n // 4, n // 2, n]  # the x-axis of the paper's Fig. 2, sampled
        for m in s["players_c"]:
            cell = {"objective": name, "M": m}
            for budget in budgets:
                group = []
                for seed in seeds(args, 10):
                    # identical players (scale 0): the distributed, not federated, setting of the paper
                    parties = synthetic.make_parties(base, m, kind="perturb", scale=0.0, noise_std=sigma,
                                                     random_state=seed)
                    trace = simulate("levelorder", parties, budget, random_state=seed)
                    group.append({"part": "c", "objective": name, "method": "levelorder", "M": m, "T": budget,
                                  "seed": seed, "loss": trace.simple_regret(), "rounds": trace.n_rounds,
                                  "used": int(trace.n_evaluations.max())})
                rows.extend(group)
                cell[f"loss@{budget}"] = np.mean([g["loss"] for g in group])
            cell.update(seeds=len(group), loss_std=np.std([g["loss"] for g in group], ddof=1) if len(group) > 1 else 0.0,
                        rounds=np.mean([g["rounds"] for g in group]), used=np.mean([g["used"] for g in group]))
            table.append(cell)
    runs.extend(rows)
    for name, n in s["steps_c"].items():
        cols = [f"loss@{b}" for b in (n // 8, n // 4, n // 2, n)]
        print_table([t for t in table if t["objective"] == name], ["objective", "M", "seeds", *cols, "loss_std", "rounds", "used"],
                    title=f"(c) level-order bandit on {name}: loss f* - f(x(n)) after n steps per player with m players "
                          f"(means over seeds; loss_std, rounds and 'used' = evaluations a player spent, at n = {n}; "
                          "the last level gets the remainder of the budget)")


def part_d(args, s, runs) -> None:
    M, T = 10, 5000
    rows = []
    parties = synthetic.make_parties(synthetic.garland(), M, kind="perturb", noise_std=args.noise_std, random_state=0)
    for name in ("fedpne", "levelorder", "pfpne"):
        for share in (False, True):
            trace = simulate(name, parties, T, random_state=0, share=share)
            rows.append({"part": "d", "objective": "garland", "method": name, "M": M, "T": T, "seed": 0,
                         "share": share, "rounds": trace.n_rounds, "bytes_per_party": trace.bytes_per_round.sum() / M})
    runs.extend(rows)
    print_table(rows, ["method", "share", "M", "T", "rounds", "bytes_per_party"],
                title="(d) bytes per party (both directions, as encoded), Garland; before issue 12 every pulled "
                      "point went down and every reward up")


def part_e(args, s, runs) -> None:
    M, sigma = s["scale_parties"], args.noise_std
    rows = []
    base = synthetic.garland()
    for T in s["scale_pulls"]:
        parties = synthetic.make_parties(base, M, kind="perturb", noise_std=sigma, random_state=0)
        t0 = time.perf_counter()
        trace = simulate("fedpne", parties, T, random_state=0)
        wall = time.perf_counter() - t0
        assert trace.n_evaluations.max() <= T
        rows.append({"part": "e", "objective": "garland", "method": "fedpne", "M": M, "T": T, "seed": 0,
                     "server_time": trace.server_time, "wall_time": wall, "rounds": trace.n_rounds,
                     "log2_T": math.log2(T), "MB": trace.bytes_per_round.sum() / 1e6,
                     "regret_per_pull": trace.cumulative_regret() / T, "simple_regret": trace.simple_regret()})
    runs.extend(rows)
    print_table(rows, ["M", "T", "rounds", "log2_T", "server_time", "wall_time", "MB", "regret_per_pull", "simple_regret"],
                title=f"(e) scale: Fed-PNE, {M} parties, Garland; seconds (server = configure + aggregate + "
                      "recommend; wall = whole simulation incl. parties and JSON encoding of every message)")


def part_f(args, s, runs) -> None:
    M, T = 1000, 10_000
    rows = []
    parties = synthetic.make_parties(synthetic.garland(), M, kind="perturb", noise_std=args.noise_std, random_state=0)
    for name in ("fedpne", "levelorder", "pfpne"):
        t0, c0 = time.perf_counter(), time.process_time()
        trace = simulate(name, parties, T, random_state=0)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        tracemalloc.start()
        simulate(name, parties, T, random_state=0)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        rows.append({"part": "f", "objective": "garland", "method": name, "M": M, "T": T, "seed": 0,
                     "wall_time": wall, "cpu_time": cpu, "server_time": trace.server_time, "peak_MB": peak / 1e6,
                     "rounds": trace.n_rounds, "KB_per_party": trace.bytes_per_round.sum() / M / 1e3,
                     "pulls": int(trace.n_evaluations.max())})
    runs.extend(rows)
    print_table(rows, ["method", "M", "T", "pulls", "rounds", "wall_time", "cpu_time", "server_time", "peak_MB",
                       "KB_per_party"],
                title="(f) scale of the X-armed strategies, Garland (wall = whole simulate, cpu = its process "
                      "time, which other jobs on the machine inflate less; peak = tracemalloc peak of a second "
                      f"run; targets 5 s and 300 MB; load average {os.getloadavg()[0]:.1f} at the end)")


def part_g(args, s, runs) -> None:
    T, M = s["n_iter_g"], 10
    rows = []
    for eps in s["epsilons_g"]:
        simple, cumulative = [], []
        for seed in seeds(args, 5)[:5] if not args.quick else range(3):
            parties = synthetic.make_parties(synthetic.garland(), M, kind="shift", noise_std=args.noise_std,
                                             random_state=seed)
            dp = {} if eps is None else {"dp_epsilon": eps, "dp_delta": 1e-5}
            trace = simulate("fedpne", parties, T, random_state=seed, **dp)
            simple.append(trace.simple_regret())
            cumulative.append(trace.cumulative_regret() / T)
        sigma = 0.0 if eps is None else gaussian_noise_for_epsilon(eps, T + 1, 1e-5)
        rows.append({"part": "g", "objective": "garland", "method": "fedpne", "M": M, "T": T,
                     "epsilon": "none" if eps is None else eps, "delta": "-" if eps is None else 1e-5,
                     "sigma": sigma, "release_epsilon": classic_gaussian_epsilon(sigma, 1e-5) if sigma else "-",
                     "simple_regret": float(np.mean(simple)), "regret_per_pull": float(np.mean(cumulative)),
                     "seeds": len(simple)})
    runs.extend(rows)
    print_table(rows, ["epsilon", "delta", "sigma", "release_epsilon", "M", "T", "seeds", "simple_regret",
                       "regret_per_pull"],
                title="(g) DP-Fed-PNE utility at party-level (epsilon, delta) over the whole search, Garland "
                      "(shifted parties), means over seeds")


def run(args) -> None:
    s = _settings(args)
    runs: list[dict] = []
    for part in args.parts:
        {"a": part_a, "b": part_b, "c": part_c, "d": part_d, "e": part_e, "f": part_f, "g": part_g}[part](args, s, runs)
    write_runs(args, runs)
