"""Replay of the FLoRA paper's own runs (``python -m benchmarks flora --replay-paper``).

``flora_paper_runs/`` holds, per model and dataset, every party's uploaded (configuration, score)
pairs, the centralised search behind ``a*`` and the configuration each of the paper's surfaces
recommended (``picks.csv``). The replay feeds the *paper's* pairs to fedsearch's
:class:`~fedsearch.algorithms.flora.surfaces.LossSurfaces` and scores fedsearch's picks and the
paper's picks side by side, in two frames:

- ``paper``: as the paper scored (its code, ``flora_paper_runs/README.md``): one
  ``StratifiedKFold(10, shuffle=True, random_state=5489)`` split of the whole dataset, the
  estimator's ``random_state=5489``, SVC and MLP data min-max scaled over the whole dataset
  before the split, ``b`` the default configuration's score and ``a*`` the best of the paper's
  600 centralised TPE evaluations (scored on that same split: a winner's-curse maximum);
- ``repeated``: ``n_repeats`` other stratified 10-fold splits (seeds 0, 1, ...; the scaling
  inside each fit): ``a*`` is the centralised search's best configuration (chosen on the paper's
  split) scored on these other splits, so it is estimated out of sample; ``b`` likewise.

The relative regret is ``(a* - a) / (a* - b)`` (§3). Only the scoring is re-done; the pairs,
the party split and the local searches are the paper's.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import RepeatedStratifiedKFold, StratifiedKFold, cross_val_score
from sklearn.preprocessing import MinMaxScaler

from fedsearch import presets
from fedsearch.algorithms.flora.surfaces import SURFACES, LossSurfaces
from fedsearch.datasets import load_benchmark
from fedsearch.research.metrics import relative_regret

PAPER_SEED = 5489
# the paper's model folders and run names -> fedsearch's presets and benchmark files
MODELS = {"hgb": "HGB", "svc": "SVM-prescale", "mlp": "MLP-adam-prescale"}
RUNS = {"pc3": "pc3", "pollen": "pollen", "electricity": "elec_norm", "sonar": "sonar",
        "heart_statlog": "heart_statlog", "oil_spill": "oil_spill", "eeg_eye_state": "eeg_eye"}
CENTRAL = {"pc3": "pc3_c", "pollen": "pollen_binaryClass", "electricity": "electricity-normalized_class",
           "sonar": "dataset_40_sonar_Class", "heart_statlog": "dataset_53_heart-statlog_class",
           "oil_spill": "oil_spill_class", "eeg_eye_state": "eeg_eye_state_Class"}


def runs_dir(data_dir) -> Path:
    return Path(data_dir) / "flora_paper_runs"


def run_name(dataset: str, parties: int = 3) -> str:
    return f"{RUNS[dataset]}_hp_bacc_iid{parties}p_F10"


def _read_pairs(path: Path, names) -> tuple[list[dict], np.ndarray]:
    with open(path) as f:
        rows = list(csv.reader(f))
    if rows[0][-1] == "label":
        header, rows = rows[0], rows[1:]
    else:  # pc3's HGB files have no header; their columns are in the space's order
        header = [*names, "label"]
    rows = [dict(zip(header, r)) for r in rows]
    params = [{n: _number(r[n]) for n in names} for r in rows]
    return params, np.array([-float(r["label"]) for r in rows])  # label = minus the CV score


def _number(text: str):
    value = float(text)
    return int(value) if value.is_integer() and "." not in text and "e" not in text.lower() else value


def available(data_dir, model: str, dataset: str, parties: int = 3) -> bool:
    """Whether the paper's run has both its uploaded pairs and its picks (HGB pc3 has no picks)."""
    return ((runs_dir(data_dir) / MODELS[model] / run_name(dataset, parties)).is_dir()
            and bool(paper_picks(data_dir, model, dataset, parties)))


def paper_pairs(data_dir, model: str, dataset: str, space, parties: int = 3) -> list[tuple]:
    """Each party's uploaded pairs as (unit-cube points, losses), the paper's files mapped
    through fedsearch's search space."""
    folder = runs_dir(data_dir) / MODELS[model] / run_name(dataset, parties)
    names = [n.rpartition("__")[2] for n in space.param_names]
    out = []
    for i in range(parties):
        path, = folder.glob(f"hp_*_pairs_data_*party_{i}.csv")  # pc3's files have their own name
        params, scores = _read_pairs(path, names)
        prefixed = [{p: q[n] for p, n in zip(space.param_names, names)} for q in params]
        points = np.array([space.to_unit(_clipped(space, q)) for q in prefixed])
        out.append((points, 1.0 - scores))
    return out


def _clipped(space, params: dict) -> dict:
    """The paper's hyperopt draws a few floats a hair outside the bounds it was given."""
    low, high = space.to_params(np.zeros(space.n_dims)), space.to_params(np.ones(space.n_dims))
    return {k: type(v)(min(max(v, low[k]), high[k])) for k, v in params.items()}


def paper_picks(data_dir, model: str, dataset: str, parties: int = 3) -> dict:
    """``{surface or "default": (params, paper-frame fold scores)}`` from ``picks.csv``."""
    run = run_name(dataset, parties)
    with open(runs_dir(data_dir) / "picks.csv") as f:
        return {r["surface"]: (json.loads(r["params"]), np.array(json.loads(r["skfold_scores"])))
                for r in csv.DictReader(f) if r["model"] == MODELS[model] and r["run"] == run}


def central_path(data_dir, model: str, dataset: str) -> Path:
    """The file of the paper's centralised search of ``model`` on ``dataset`` (none for SVC on
    electricity)."""
    return runs_dir(data_dir) / MODELS[model] / "hpo_v_default" / (
        f"{CENTRAL[dataset]}_balanced_accuracy_k10_I30_R5_S4_full.csv")


def central_best(data_dir, model: str, dataset: str, names) -> tuple[dict, float]:
    """The paper's centralised search: its best configuration and its score (``a*``)."""
    params, scores = _read_pairs(central_path(data_dir, model, dataset), names)
    best = int(np.argmax(scores))
    return params[best], float(scores[best])


class Frame:
    """Balanced accuracy of a configuration under a fixed set of stratified 10-fold splits."""

    def __init__(self, estimator, X, y, splits, n_jobs=None):
        self.estimator, self.X, self.y, self.splits, self.n_jobs = estimator, X, y, splits, n_jobs

    def __call__(self, params: dict) -> float:
        est = clone(self.estimator).set_params(**params)
        return float(np.mean(cross_val_score(est, self.X, self.y, cv=self.splits, scoring="balanced_accuracy",
                                             n_jobs=self.n_jobs)))


def _seeded(estimator):
    """``estimator`` with every ``random_state`` at the paper's seed."""
    return estimator.set_params(**{k: PAPER_SEED for k in estimator.get_params() if k.endswith("random_state")})


def paper_frame(model: str, X, y, n_jobs=None) -> Frame:
    """The ``paper`` frame (see the module) on the pooled data ``X, y``: it takes the bare
    estimator's parameter names."""
    X = X if model == "hgb" else MinMaxScaler().fit_transform(X)  # once, before any split
    return Frame(_seeded(presets.get(model).estimator), X, y, list(
        StratifiedKFold(10, shuffle=True, random_state=PAPER_SEED).split(X, y)), n_jobs)


def frames(model: str, data_dir, dataset: str, n_repeats: int, n_jobs=None) -> dict:
    """The ``paper`` frame and, with ``n_repeats``, the ``repeated`` frame (see the module)."""
    data = load_benchmark(dataset, data_dir)
    X, y = data.data, data.target
    out = {"paper": paper_frame(model, X, y, n_jobs)}
    if n_repeats:  # scaled inside every fit
        estimator = _seeded(presets.get(model, scaled=False if model == "hgb" else "minmax").estimator)
        out["repeated"] = Frame(estimator, X, y, list(
            RepeatedStratifiedKFold(n_splits=10, n_repeats=n_repeats, random_state=0).split(X, y)), n_jobs)
    return out


def unprefixed(params: dict) -> dict:
    """``estimator``'s parameter names (``svc__C``) as the paper's (``C``)."""
    return {k.rpartition("__")[2]: v for k, v in params.items()}


def replay(data_dir, model: str, dataset: str, *, n_repeats=0, surfaces=SURFACES, seed=0, n_jobs=None,
           rescore_paper=False) -> list[dict]:
    """One row per (frame, surface, source): fedsearch's and the paper's pick, their score and regret.

    ``rescore_paper=False`` takes the paper's picks' paper-frame scores from ``picks.csv``
    (they re-evaluate bit for bit), except on oil spill, whose picks the paper scored with 5
    folds (its ``b`` and ``a*`` with 10): they are re-scored with 10; the other frames always
    score them.
    """
    space = presets.get(model).space
    pairs = paper_pairs(data_dir, model, dataset, space)
    ours = LossSurfaces(random_state=seed).fit(pairs).minimize(space, surfaces=surfaces)
    picks = paper_picks(data_dir, model, dataset)
    rescore_paper = rescore_paper or dataset == "oil_spill"  # its picks.csv scores used 5 folds, not 10
    best_params, best_paper = central_best(data_dir, model, dataset, space.param_names)
    rows = []
    for frame_name, frame in frames(model, data_dir, dataset, n_repeats, n_jobs).items():
        def score(params, paper_scores=None):
            if frame_name == "paper" and paper_scores is not None and not rescore_paper:
                return float(np.mean(paper_scores))
            return frame(params) if frame_name == "paper" else frame(prefixed(frame.estimator, params))

        b = score(*picks["default"])
        a_star = best_paper if frame_name == "paper" else score(best_params)
        for s in surfaces:
            for source, params in (("fedsearch", space.to_params(ours[s])), ("paper", picks[s][0])):
                a = score(params, picks[s][1] if source == "paper" else None)
                rows.append({"model": model, "dataset": dataset, "frame": frame_name, "surface": s,
                             "source": source, "params": unprefixed(params), "score": a, "b": b,
                             "a_star": a_star, "regret": relative_regret(a, a_star, b)})
    return rows


def prefixed(estimator, params: dict) -> dict:
    """The paper's parameter names (``C``) as ``estimator``'s (``svc__C`` in a pipeline)."""
    names = estimator.get_params()
    step = estimator.steps[-1][0] + "__" if hasattr(estimator, "steps") else ""
    return {(step + k if step + k in names else k): v for k, v in params.items()}
