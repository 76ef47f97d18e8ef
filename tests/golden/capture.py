"""Capture (or check) the golden results: every estimator on one fixed small problem.

Run ``python tests/golden/capture.py`` to rewrite ``search_results.json``; only when a change of
behaviour is intended. ``tests/test_golden.py`` compares the package against that file.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from scipy.stats import loguniform
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import fedsearch

GOLDEN = Path(__file__).with_name("search_results.json")


def problem():
    X, y = load_breast_cancer(return_X_y=True)
    idx = np.random.default_rng(0).permutation(len(y))[:180]
    X, y = X[idx], y[idx]
    return [X[i::3] for i in range(3)], [y[i::3] for i in range(3)]


def searches():
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=200))
    space = {"logisticregression__C": loguniform(1e-3, 1e2)}
    grid = {"logisticregression__C": [0.001, 0.01, 0.1, 1.0, 10.0]}
    common = {"cv": 3, "random_state": 0, "scoring": "roc_auc"}
    return {
        "grid": fedsearch.FederatedGridSearchCV(model, grid, cv=3, scoring="roc_auc"),
        "random": fedsearch.FederatedRandomizedSearchCV(model, space, n_iter=6, **common),
        "flora": fedsearch.FLoRASearchCV(model, space, n_iter=6, local_search="bo", **common),
        "fedpne": fedsearch.FedPNESearchCV(model, space, n_iter=12, **common),
        "levelorder": fedsearch.LevelOrderSearchCV(model, space, n_iter=12, **common),
        "pfpne": fedsearch.PFPNESearchCV(model, space, n_iter=12, gap=0.3, **common),
    }


def summary(search) -> dict:
    results = search.cv_results_
    return {
        "params": [repr(sorted(p.items())) for p in results["params"]],
        "mean_test_score": [None if not np.isfinite(s) else float(s) for s in results["mean_test_score"]],
        "best_params": repr(sorted(search.best_params_.items())),
        "n_rounds": int(search.n_rounds_),
    }


def run() -> dict:
    Xs, ys = problem()
    return {name: summary(search.fit(Xs, ys)) for name, search in searches().items()}


if __name__ == "__main__":
    GOLDEN.write_text(json.dumps(run(), indent=1) + "\n")
    print(f"wrote {GOLDEN}")
