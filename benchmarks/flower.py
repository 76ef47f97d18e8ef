"""Flower transport: start-up time, per-round overhead against the in-process run, bytes per party.

Starts a real deployment on this machine's loopback (a Flower SuperLink and P parties, each
``python -m fedsearch.party`` reading its own CSV file, i.e. a SuperNode), then runs each search
twice on the same parties and seed: in this process (``InProcessFederation``) and over Flower
(``FlowerFederation``), and checks that both give the same ``cv_results_`` scores.

Reported: seconds until the SuperLink answers; seconds for a search's Flower run to start and
every party to answer (the first run right after the parties were started, so it includes their
registration; later runs find them connected); per round (the set-up is round -1, the final fit
the last round), the wall seconds of the exchange in process and over Flower and their
difference, the overhead; the bytes of fedsearch's JSON messages per party (task and reply).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np
from scipy.stats import loguniform
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import fedsearch
from fedsearch.federation import InProcessFederation
from fedsearch.party.dataset import PartyData

from ._common import print_table, write_runs

QUICK = {"n_samples": 300, "parties": 2, "methods": ["grid"]}
FULL = {"n_samples": 600, "parties": 3, "methods": ["grid", "flora", "fedpne"]}


def add_arguments(parser) -> None:
    parser.add_argument("--n-samples", type=int, default=None,
                        help=f"rows of make_classification (default {FULL['n_samples']}, quick {QUICK['n_samples']})")
    parser.add_argument("--parties", type=int, default=None,
                        help=f"IID parties (default {FULL['parties']}, quick {QUICK['parties']})")
    parser.add_argument("--methods", nargs="+", default=None, choices=FULL["methods"],
                        help=f"searches to run (default {FULL['methods']}, quick {QUICK['methods']})")


def _search(method: str, seed: int):
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=200))
    space = {"logisticregression__C": loguniform(1e-3, 1e2)}
    common = {"cv": 3, "scoring": "roc_auc", "final_fit": "ensemble"}
    if method == "grid":
        return fedsearch.FederatedGridSearchCV(model, {"logisticregression__C": [1e-3, 1e-2, 0.1, 1.0, 10.0]}, **common)
    if method == "flora":
        return fedsearch.FLoRASearchCV(model, space, n_iter=6, local_search="random", random_state=seed, **common)
    return fedsearch.FedPNESearchCV(model, space, n_iter=12, random_state=seed, **common)


class _TimedInProcess(InProcessFederation):
    """The in-process transport, timing each round's exchange as FlowerFederation does."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.round_times = {}

    def _exchange(self, round, tasks):
        t0 = time.perf_counter()
        replies = super()._exchange(round, tasks)
        self.round_times[round] = time.perf_counter() - t0
        return replies


def _bytes_per_party(log: dict, round_: int, direction: str) -> float:
    sizes = [b for r, d, b in zip(log["round"], log["direction"], log["bytes"]) if r == round_ and d == direction]
    return float(np.mean(sizes)) if sizes else 0.0


def run(args) -> None:
    from fedsearch.party._flower_client import load_party_data
    from fedsearch.federation.flower import FlowerFederation
    from fedsearch.federation.loopback import LoopbackDeployment

    settings = QUICK if args.quick else FULL
    n_samples = args.n_samples or settings["n_samples"]
    n_parties = args.parties or settings["parties"]
    methods = args.methods or settings["methods"]
    seed = (args.seeds or [0])[0]
    import pandas as pd

    X, y = make_classification(n_samples=n_samples, n_features=20, n_informative=8, random_state=seed)
    names = [chr(ord("a") + i) for i in range(n_parties)]
    rows, startup, searches = [], [], []
    with tempfile.TemporaryDirectory(prefix="fedsearch-bench-flower-") as tmp:
        files = {}
        for i, name in enumerate(names):
            frame = pd.DataFrame(X[i::n_parties], columns=[f"x{j}" for j in range(X.shape[1])])
            frame["label"] = y[i::n_parties]
            files[name] = Path(tmp) / f"{name}.csv"
            frame.to_csv(files[name], index=False)
        data = {name: load_party_data({"data": str(files[name]), "target": "label"}) for name in names}
        with LoopbackDeployment(Path(tmp) / "flower") as deployment:
            t0 = time.perf_counter()
            deployment.start_superlink()
            startup.append({"step": "SuperLink answers", "seconds": time.perf_counter() - t0})
            for name in names:
                deployment.start_party(name, data=files[name], target="label")
            for i, method in enumerate(methods):
                local_fed = _TimedInProcess(datasets=[PartyData(n, *data[n]) for n in names], n_jobs=args.n_jobs)
                t0 = time.perf_counter()
                local = _search(method, seed).fit(federation=local_fed)
                local_wall = time.perf_counter() - t0
                with FlowerFederation(names, deployment.superlink, insecure=True) as federation:
                    t0 = time.perf_counter()
                    remote = _search(method, seed).fit(federation=federation)
                    remote_wall = time.perf_counter() - t0
                same = bool(np.array_equal(local.cv_results_["mean_test_score"], remote.cv_results_["mean_test_score"],
                                           equal_nan=True))
                searches.append({"method": method, "rounds": remote.n_rounds_, "in_process_s": local_wall,
                                 "flower_s": remote_wall, "flower_start_s": federation.start_time,
                                 "same_scores": same, "same_best_params": local.best_params_ == remote.best_params_})
                what = "parties just started" if i == 0 else "parties connected"
                startup.append({"step": f"{method}: run started, every party answered ({what})",
                                "seconds": federation.start_time})
                log = remote.federation_log_
                for round_, seconds in federation.round_times.items():
                    kinds = sorted({m for r, d, m in zip(log["round"], log["direction"], log["message"])
                                    if r == round_ and d == "to_party"})
                    rows.append({
                        "method": method, "round": round_, "task": "+".join(kinds),
                        "in_process_s": local_fed.round_times[round_], "flower_s": seconds,
                        "overhead_s": seconds - local_fed.round_times[round_],
                        "task_bytes": _bytes_per_party(log, round_, "to_party"),
                        "reply_bytes": _bytes_per_party(log, round_, "to_server"),
                        "same_scores": same,
                    })
    print_table(startup, ["step", "seconds"], title=f"Start-up ({n_parties} parties on loopback)")
    print_table(rows, ["method", "round", "task", "in_process_s", "flower_s", "overhead_s", "task_bytes",
                       "reply_bytes", "same_scores"], title="Per round, per party bytes")
    print_table(searches, ["method", "rounds", "in_process_s", "flower_s", "flower_start_s", "same_scores",
                           "same_best_params"], title="Whole searches (rounds: n_rounds_, the set-up excluded)")
    overheads = [r["overhead_s"] for r in rows]
    print(f"\nper-round overhead over Flower: median {np.median(overheads):.1f} s "
          f"(min {np.min(overheads):.1f}, max {np.max(overheads):.1f}) over {len(rows)} rounds")
    write_runs(args, rows + searches + [{"method": "start-up", **s} for s in startup])
