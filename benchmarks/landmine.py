"""Landmine: one party per landmine field (29), SVC rbf, ROC AUC; global and personal results.

The setting of Fed-PNE (000_*.txt, §5 and App. E) and PF-PNE (001_*.txt, App. C), after Dai et al.
(2020): each field is split once 50/50, stratified, ``random_state=0`` (the FTS preprocessing; a
``StratifiedShuffleSplit`` with that seed gives the same split), the SVC is trained on the first
half and scored by ROC AUC on the second; ``gamma`` in [0.01, 10] and ``C`` in [1e-4, 10] (both
log-uniform here). The local objective is a field's AUC, the global objective the mean AUC over
the fields (``aggregate="mean"``).

Every search gets the same per-party budget (``--budget`` evaluations per field). For each
recommendation we report its global AUC (mean over fields, from the same split) and, for the
personalised searches, the mean AUC of each field's own configuration. "random, local best" is
the personal baseline that costs no extra fit: each field's best configuration among the
federated random search's candidates (each party tuning alone on the same draws). All scores are
measured on the halves the searches selected on, as in the papers' protocol.
"""

from __future__ import annotations

import time

import numpy as np
from scipy.stats import loguniform
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedShuffleSplit
from sklearn.svm import SVC
from sklearn.utils.parallel import Parallel, delayed

from fedsearch.datasets import load_benchmark

import fedsearch
from ._common import plot_boxes, print_table, search_record, seeds, write_runs

SPACE = {"C": loguniform(1e-4, 10), "gamma": loguniform(1e-2, 10)}
# method -> (estimator class name, extra constructor arguments)
METHODS = {
    "random": ("FederatedRandomizedSearchCV", {}),
    "fedpne": ("FedPNESearchCV", {}),
    "levelorder": ("LevelOrderSearchCV", {}),
    "pfpne": ("PFPNESearchCV", {}),
}


def add_arguments(parser) -> None:
    parser.add_argument("--budget", type=int, default=None,
                        help="evaluations per party (default 50, quick 8)")
    parser.add_argument("--fields", type=int, nargs="+", default=None, metavar="FIELD",
                        help="landmine fields (1..29) taking part (default: all)")
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS),
                        help="searches to run (default: all)")


def _split():
    return StratifiedShuffleSplit(n_splits=1, test_size=0.5, random_state=0)


def _field_auc(params, X, y) -> float:
    """AUC of ``SVC(**params)`` trained on the field's first half, scored on its second."""
    train, test = next(_split().split(X, y))
    model = SVC(**params).fit(X[train], y[train])
    return float(roc_auc_score(y[test], model.decision_function(X[test])))


def _aucs(jobs, fields, params_of_field, n_jobs) -> dict:
    """{field: AUC of its configuration} for ``params_of_field(field)``."""
    out = Parallel(n_jobs=n_jobs)(delayed(_field_auc)(params_of_field(f), *jobs[f]) for f in fields)
    return dict(zip(fields, out))


def _run_method(args, method, seed, budget, X, y, field, jobs, fields) -> list[dict]:
    name, extra = METHODS[method]
    base = {"method": method, "seed": seed, "budget_per_party": budget, "n_parties": len(fields)}
    search = getattr(fedsearch, name)(SVC(), SPACE, n_iter=budget, cv=_split(), scoring="roc_auc",
                                      aggregate="mean", n_jobs=args.n_jobs, refit=False, random_state=seed,
                                      **extra)
    t0 = time.perf_counter()
    search.fit(X, y, parties=field)
    wall = time.perf_counter() - t0
    glob = _aucs(jobs, fields, lambda f: search.best_params_, args.n_jobs)
    row = search_record(search, **base, wall=wall, global_auc=float(np.mean(list(glob.values()))))
    rows = [row]
    personal = getattr(search, "best_params_per_party_", None)
    if personal is not None:
        own = _aucs(jobs, fields, lambda f: personal[f], args.n_jobs)
        row["personal_auc"] = float(np.mean(list(own.values())))
        row["field_auc_personal"] = own
    row["field_auc_global"] = glob
    if method == "random":  # each field tuning alone on the same draws: its best candidate
        res = search.cv_results_
        local = {f: float(np.nanmax(res[f"party_{f}_test_score"])) for f in fields}
        rows.append({**base, "method": "random, local best", "personal_auc": float(np.mean(list(local.values()))),
                     "field_auc_personal": local, "status": "ok"})
    return rows


def run(args) -> list[dict]:
    data = load_benchmark("landmine", args.data_dir)
    fields = sorted(set(args.fields or np.unique(data.field).tolist()))
    keep = np.isin(data.field, fields)
    X, y, field = data.data[keep], data.target[keep], data.field[keep]
    jobs = {f: (X[field == f], y[field == f]) for f in fields}
    budget = args.budget or (8 if args.quick else 50)
    seeds_ = seeds(args, n_full=5)
    print(f"landmine: {len(fields)} parties (one per field), SVC rbf, ROC AUC on each field's 50/50 split, "
          f"{budget} evaluations per party, seeds {seeds_}, n_jobs={args.n_jobs}")
    # the default SVC() as a reference (this also starts the workers before any search is timed)
    default = _aucs(jobs, fields, lambda f: {}, args.n_jobs)
    rows = [{"method": "default SVC()", "n_parties": len(fields), "global_auc": float(np.mean(list(default.values()))),
             "field_auc_global": default, "status": "ok"}]
    for seed in seeds_:
        for method in args.methods:
            new = _run_method(args, method, seed, budget, X, y, field, jobs, fields)
            print(f"  seed {seed} {method}: " + "; ".join(
                f"global AUC {r['global_auc']:.4f} in {r['wall']:.1f} s" if "global_auc" in r else r["status"]
                for r in new[:1]), flush=True)
            rows += new
    print_table(rows, ["method", "seed", "global_auc", "personal_auc", "best_score", "best_params", "wall",
                       "rounds", "bytes", "status"],
                title="Landmine: global AUC = mean over fields of the recommendation's AUC; personal AUC = "
                      "mean over fields of each field's own configuration")
    write_runs(args, rows)
    ok = [r for r in rows if r.get("status") == "ok"]
    methods = list(dict.fromkeys(r["method"] for r in ok))
    plot_boxes(args, "landmine_auc",
               {f"{m} ({kind})": [r[f"{kind}_auc"] for r in ok if r["method"] == m and f"{kind}_auc" in r]
                for m in methods for kind in ("global", "personal")
                if any(f"{kind}_auc" in r for r in ok if r["method"] == m)},
               ylabel="mean AUC over fields", title="Landmine (29 fields), SVC rbf")
    return rows
