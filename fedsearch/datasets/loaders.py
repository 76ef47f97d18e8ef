"""Datasets of the benchmarks: the shared benchmark files and OpenML.

    data = load_benchmark("eeg_eye_state", data_dir="../shared/data")
    parties = split_label_skew(data.target, n_parties=5, alpha=0.5, random_state=0)
    search.fit(data.data, data.target, parties=parties)
"""

from __future__ import annotations

import csv
import gzip
import numbers
import os
from pathlib import Path

import numpy as np
from sklearn.utils import Bunch

from .. import _validation as v
from .._optional import import_optional
from .splitters import SPLITTERS, assign_parties

__all__ = ["DATA_DIR_ENV", "default_data_dir", "list_benchmarks", "load_benchmark", "fetch_openml_parties"]

DATA_DIR_ENV = "FEDSEARCH_DATA_DIR"


def default_data_dir() -> Path:
    """Where the benchmark files are looked for when no ``data_dir`` is given: the directory
    named by the environment variable ``FEDSEARCH_DATA_DIR``."""
    if not os.environ.get(DATA_DIR_ENV):
        raise ValueError(f"No data directory: pass data_dir=... or set the environment variable {DATA_DIR_ENV} "
                         f"to the directory of the <name>.csv.gz benchmark files.")
    return Path(os.environ[DATA_DIR_ENV])


def _resolve_dir(data_dir) -> Path:
    return Path(data_dir) if data_dir is not None else default_data_dir()


def list_benchmarks(data_dir=None) -> list[str]:
    """Names of the benchmark files (``<name>.csv.gz``) in ``data_dir``, sorted."""
    path = _resolve_dir(data_dir)
    return sorted(p.name[: -len(".csv.gz")] for p in path.glob("*.csv.gz"))


def load_benchmark(name, data_dir=None, *, shuffle=False, random_state=None) -> Bunch:
    """Load one benchmark dataset of the shared data directory (gzip CSV, no pandas needed).

    The format (``<name>.csv.gz``): one header row, numeric feature columns, then ``target``
    (0/1), then optional extra columns that are not features (Landmine's ``field``, the landmine
    field of each row: the natural party label).

    Parameters
    ----------
    name : str
        File name without ``.csv.gz``: ``"electricity"``, ``"eeg_eye_state"``, ``"heart_statlog"``,
        ``"oil_spill"``, ``"pc3"``, ``"pollen"``, ``"sonar"`` or ``"landmine"``.
    data_dir : str or path-like, default=None
        Directory holding the files (the benchmarks' ``--data-dir``). None: see
        :func:`default_data_dir` (environment variable ``FEDSEARCH_DATA_DIR``, else
        ``../shared/data``).
    shuffle : bool, default=False
        Permute the rows (all columns together). The files keep their source order, and in
        ``pollen`` (and ``sonar``) the rows are sorted by label: shuffle them, or use a
        partitioner (they all draw parties at random), before any split that follows row order,
        such as an unshuffled ``KFold``.
    random_state : int, numpy Generator or None, default=None
        Seed of the shuffle.

    Returns
    -------
    Bunch
        ``data`` (float ndarray of shape (n_samples, n_features)), ``target`` (int ndarray),
        ``feature_names``, ``name``, ``path``, and one int array per extra column under its name
        (``extra_names`` lists them; for Landmine: ``field``).

    Raises
    ------
    FileNotFoundError
        If the file is absent; the message names the path looked at and the ``--data-dir`` option.

    Examples
    --------
    >>> from fedsearch.datasets import load_benchmark
    >>> data = load_benchmark("landmine")  # doctest: +SKIP
    >>> data.data.shape, data.target.shape, data.field[:3]  # doctest: +SKIP
    ((14820, 9), (14820,), array([1, 1, 1]))
    """
    v.check_value("load_benchmark", "name", name, v.instance_of(str))
    path = _resolve_dir(data_dir) / f"{name}.csv.gz"
    if not path.is_file():
        found = list_benchmarks(path.parent) if path.parent.is_dir() else []
        hint = f" It holds: {', '.join(found)}." if found else ""
        raise FileNotFoundError(
            f"Benchmark dataset {name!r} not found: no file {path}.{hint} Point --data-dir (or the "
            f"data_dir argument, or the environment variable {DATA_DIR_ENV}) to the directory of "
            f"the benchmark .csv.gz files."
        )
    with gzip.open(path, "rt", newline="") as f:
        header = next(csv.reader(f))
        values = np.loadtxt(f, delimiter=",", dtype=float, ndmin=2)
    if "target" not in header:
        raise ValueError(f"{path} has no 'target' column (header: {header}).")
    t = header.index("target")
    if shuffle:
        values = values[np.random.default_rng(random_state).permutation(len(values))]
    bunch = Bunch(data=values[:, :t], target=values[:, t].astype(int), feature_names=header[:t],
                  extra_names=header[t + 1:], name=name, path=str(path))
    for j, extra in enumerate(header[t + 1:], start=t + 1):
        bunch[extra] = values[:, j].astype(int)
    return bunch


def fetch_openml_parties(data_id, n_parties, *, split="iid", alpha=0.5, random_state=None,
                         min_samples=1) -> Bunch:
    """An OpenML classification dataset, with a party label for every sample.

    Uses the ``openml`` package (``pip install fedsearch[openml]``) and its local cache: a
    dataset downloaded once is read from the cache afterwards, also offline (configure the cache
    directory with ``openml.config.set_root_cache_directory``). Categorical features become their
    integer codes (NaN stays NaN), classes become ``0 .. n_classes - 1``.

    Parameters
    ----------
    data_id : int
        OpenML dataset id (FLoRA's Table 6: 151 electricity, 1471 EEG eye state, 53 heart-statlog,
        311 oil spill, 871 pollen, 40 sonar, 1050 pc3).
    n_parties : int
    split : {"iid", "label_skew", "parity_skew", "disjoint_labels", "quantity_skew"}, default="iid"
        How samples are dealt to parties (see :func:`~fedsearch.datasets.assign_parties`).
    alpha : float, default=0.5
        Dirichlet concentration of ``"label_skew"`` and ``"quantity_skew"``.
    random_state : int, numpy Generator or None, default=None
        Seed of the partition.
    min_samples : int, default=1
        Fewest samples a party may get.

    Returns
    -------
    Bunch
        ``data``, ``target``, ``parties`` (ready for ``fit(data, target, parties=parties)``),
        ``target_names``, ``feature_names``, ``categorical`` (bool mask), ``name``, ``data_id``.

    Raises
    ------
    ImportError
        Without the ``openml`` package.
    ConnectionError
        When the dataset is not in the cache and the OpenML server cannot be reached.

    Examples
    --------
    >>> from fedsearch.datasets import fetch_openml_parties
    >>> sonar = fetch_openml_parties(40, n_parties=3, random_state=0)  # doctest: +SKIP
    >>> search.fit(sonar.data, sonar.target, parties=sonar.parties)  # doctest: +SKIP
    """
    v.check_value("fetch_openml_parties", "data_id", data_id, v.POSITIVE_INT)
    v.check_value("fetch_openml_parties", "split", split, v.options(*SPLITTERS))
    openml = import_optional("openml", "openml", "fetch_openml_parties")
    try:
        dataset = openml.datasets.get_dataset(data_id, download_data=True)
        X, y, categorical, names = dataset.get_data(target=dataset.default_target_attribute)
    except OSError as exc:  # requests' ConnectionError is an OSError
        raise ConnectionError(
            f"Could not fetch OpenML dataset {data_id}: it is not in openml's cache "
            f"({openml.config.get_cache_directory()}) and the OpenML server cannot be reached "
            f"({exc}). Fetch it once while online, or load local files with "
            f"fedsearch.datasets.load_benchmark(name, data_dir=...)."
        ) from exc
    columns = [X[c].cat.codes.to_numpy(dtype=float) if str(X[c].dtype) == "category" else X[c].to_numpy(dtype=float)
               for c in X.columns]
    data = np.column_stack(columns)
    for j, is_cat in enumerate(categorical):
        if is_cat:
            data[data[:, j] < 0, j] = np.nan  # pandas codes a missing category as -1
    target_names, target = np.unique(np.asarray(y).astype(str), return_inverse=True)
    parties = assign_parties(target, n_parties, split=split, alpha=alpha, random_state=random_state,
                        min_samples=min_samples)
    return Bunch(data=data, target=target, parties=parties, target_names=target_names,
                 feature_names=list(names), categorical=np.asarray(categorical, dtype=bool),
                 name=dataset.name, data_id=data_id)
