"""Datasets for simulating a federation: the benchmark files, OpenML, and partitioners.

A federation is simulated by giving every sample a party label; the label array goes straight to
``fit``::

    data = load_benchmark("eeg_eye_state")
    parties = partition_label_skew(data.target, n_parties=5, alpha=0.5, random_state=0)
    search.fit(data.data, data.target, parties=parties)

Partitioners (each returns an int array of shape ``(n_samples,)`` with values ``0 .. n_parties-1``):

- :func:`partition_iid`: a uniformly random split into parties of (nearly) equal size;
- :func:`partition_label_skew`: per class, Dirichlet(alpha) proportions over the parties;
- :func:`partition_parity_skew`: FLoRA App. D.8 "imb1", half of the parties favour the even classes;
- :func:`partition_disjoint_labels`: FLoRA App. D.8 "imb2", each party sees its own classes only;
- :func:`partition_quantity_skew`: party sizes from Dirichlet(alpha), labels IID;
- :func:`partition_by_column`: a natural federation, such as Landmine's ``field``.

:func:`partition` dispatches on a split name (the ``--split`` option of the benchmarks).
"""

from __future__ import annotations

import csv
import gzip
import numbers
import os
from pathlib import Path

import numpy as np
from sklearn.utils import Bunch

from ._optional import import_optional
from ._validation import InvalidParameterError, instance_of, interval, options

__all__ = [
    "SPLITS",
    "default_data_dir",
    "list_benchmarks",
    "load_benchmark",
    "fetch_openml_parties",
    "partition",
    "partition_iid",
    "partition_label_skew",
    "partition_parity_skew",
    "partition_disjoint_labels",
    "partition_quantity_skew",
    "partition_by_column",
]

DATA_DIR_ENV = "FEDSEARCH_DATA_DIR"
SPLITS = ("iid", "label_skew", "parity_skew", "disjoint_labels", "quantity_skew")
_MAX_DRAWS = 1000


def _check(func: str, name: str, value, *constraints) -> None:
    """Raise the house error if ``value`` meets none of ``constraints``."""
    if any(c.accepts(value) for c in constraints):
        return
    descs = [c.description for c in constraints]
    expected = descs[0] if len(descs) == 1 else ", ".join(descs[:-1]) + " or " + descs[-1]
    raise InvalidParameterError(f"The {name!r} parameter of {func} must be {expected}. Got {value!r} instead.")


# --------------------------------------------------------------------------- benchmark files
def default_data_dir() -> Path:
    """Where the benchmark files are looked for when no ``data_dir`` is given.

    In order: the environment variable ``FEDSEARCH_DATA_DIR``; ``../shared/data`` next to the
    repository holding this package; ``../shared/data`` relative to the working directory. The
    first that exists wins; if none does, the first candidate is returned (and the loader's error
    names it).
    """
    if os.environ.get(DATA_DIR_ENV):
        return Path(os.environ[DATA_DIR_ENV])
    candidates = [Path(__file__).resolve().parents[1].parent / "shared" / "data",
                  Path.cwd().parent / "shared" / "data"]
    return next((c for c in candidates if c.is_dir()), candidates[0])


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
    _check("load_benchmark", "name", name, instance_of(str))
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



# --------------------------------------------------------------------------- partitioners
_POSITIVE_INT = interval(numbers.Integral, 1, None)
_POSITIVE_REAL = interval(numbers.Real, 0, None, closed="neither")
_NON_NEGATIVE_INT = interval(numbers.Integral, 0, None)


def _check_common(func, n_samples, n_parties, min_samples=0):
    _check(func, "n_parties", n_parties, _POSITIVE_INT)
    _check(func, "min_samples", min_samples, _NON_NEGATIVE_INT)
    if n_parties * max(min_samples, 1) > n_samples:
        raise ValueError(
            f"{func} cannot give each of {n_parties} parties at least {max(min_samples, 1)} "
            f"sample(s): there are only {n_samples} samples."
        )


def _check_labels(func, y) -> np.ndarray:
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"The 'y' parameter of {func} must be 1-D. Got shape {y.shape} instead.")
    if y.dtype.kind == "f" and np.isnan(y).any():
        raise ValueError(f"The 'y' parameter of {func} holds NaN.")
    return y


def _fill(rng, indices, counts, labels) -> None:
    """Give ``counts[j]`` of ``indices`` (in a random order) to party ``j``."""
    labels[rng.permutation(indices)] = np.repeat(np.arange(len(counts)), counts)


def _draw(func, rng, draw, n_parties, min_samples, hint) -> np.ndarray:
    """Repeat the random ``draw(rng)`` until every party has ``min_samples`` samples."""
    for _ in range(_MAX_DRAWS):
        labels = draw(rng)
        if np.bincount(labels, minlength=n_parties).min() >= min_samples:
            return labels
    raise ValueError(
        f"{func} left a party with fewer than min_samples={min_samples} samples in {_MAX_DRAWS} "
        f"random draws; {hint}"
    )


def partition_iid(n_samples, n_parties, random_state=None) -> np.ndarray:
    """Split ``n_samples`` samples uniformly at random into parties of (nearly) equal size.

    Parameters
    ----------
    n_samples : int
    n_parties : int
    random_state : int, numpy Generator or None, default=None

    Returns
    -------
    ndarray of int of shape (n_samples,)
        The party (``0 .. n_parties - 1``) of each sample; sizes differ by at most one.

    Examples
    --------
    >>> from fedsearch.datasets import partition_iid
    >>> import numpy as np
    >>> np.bincount(partition_iid(10, 3, random_state=0))
    array([4, 3, 3])
    """
    _check("partition_iid", "n_samples", n_samples, _POSITIVE_INT)
    _check_common("partition_iid", n_samples, n_parties)
    counts = [len(c) for c in np.array_split(np.arange(n_samples), n_parties)]
    labels = np.empty(n_samples, dtype=int)
    _fill(np.random.default_rng(random_state), np.arange(n_samples), counts, labels)
    return labels


def partition_label_skew(y, n_parties, alpha=0.5, random_state=None, *, min_samples=1) -> np.ndarray:
    """Label skew: each class is spread over the parties in Dirichlet(alpha) proportions.

    For every class ``c``, proportions ``q_c ~ Dir(alpha, ..., alpha)`` over the parties are drawn
    and the class's samples are dealt out by a multinomial draw with ``q_c``. Small ``alpha``
    (0.1) gives parties dominated by few classes; large ``alpha`` (100) is close to IID. The
    whole draw is repeated until every party has ``min_samples`` samples.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels.
    n_parties : int
    alpha : float, default=0.5
        Concentration of the Dirichlet distribution (> 0).
    random_state : int, numpy Generator or None, default=None
    min_samples : int, default=1
        Fewest samples a party may get.

    Returns
    -------
    ndarray of int of shape (n_samples,)
        The party of each sample.

    Examples
    --------
    >>> import numpy as np
    >>> from fedsearch.datasets import partition_label_skew
    >>> y = np.repeat([0, 1], 50)
    >>> parties = partition_label_skew(y, n_parties=4, alpha=0.1, random_state=0)
    >>> np.bincount(parties, minlength=4).sum()
    np.int64(100)
    """
    func = "partition_label_skew"
    y = _check_labels(func, y)
    _check_common(func, len(y), n_parties, min_samples)
    _check(func, "alpha", alpha, _POSITIVE_REAL)
    members = [np.flatnonzero(y_idx) for y_idx in _one_hot(y)]

    def draw(rng):
        labels = np.empty(len(y), dtype=int)
        for idx in members:
            _fill(rng, idx, rng.multinomial(len(idx), rng.dirichlet(np.full(n_parties, float(alpha)))), labels)
        return labels

    return _draw(func, np.random.default_rng(random_state), draw, n_parties, min_samples,
                 "raise alpha, or lower n_parties or min_samples.")


def _one_hot(y) -> np.ndarray:
    """Boolean membership of each sample in each class (classes in sorted order)."""
    classes, idx = np.unique(y, return_inverse=True)
    return idx[None, :] == np.arange(len(classes))[:, None]


def partition_parity_skew(y, n_parties, ratio=4.0, random_state=None, *, min_samples=1) -> np.ndarray:
    """FLoRA's "imb1" label skew (App. D.8): half of the parties favour the even classes.

    Party ``j`` favours the classes whose rank among the sorted classes has the parity of ``j``
    (for digits 0-9: the even digits for parties 0, 2, ..., the odd digits for 1, 3, ...). Each
    sample goes to party ``j`` with probability proportional to ``ratio`` if ``j`` favours its
    class and to 1 otherwise, so a party is ``ratio`` times more likely to hold a favoured class
    (the paper: "4 times more probability"). With balanced classes the parties have about equal
    sizes (the paper: 500 images each).

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels.
    n_parties : int
        At least 2.
    ratio : float, default=4.0
        How much more likely a favoured class is (> 0; 1 is IID).
    random_state : int, numpy Generator or None, default=None
    min_samples : int, default=1
        Fewest samples a party may get (the draw is repeated until it holds).

    Returns
    -------
    ndarray of int of shape (n_samples,)

    Examples
    --------
    >>> import numpy as np
    >>> from fedsearch.datasets import partition_parity_skew
    >>> y = np.tile(np.arange(10), 100)
    >>> parties = partition_parity_skew(y, n_parties=4, random_state=0)
    >>> bool(np.mean(y[parties == 0] % 2 == 0) > 0.7)
    True
    """
    func = "partition_parity_skew"
    y = _check_labels(func, y)
    _check(func, "n_parties", n_parties, interval(numbers.Integral, 2, None))
    _check_common(func, len(y), n_parties, min_samples)
    _check(func, "ratio", ratio, _POSITIVE_REAL)
    parity = np.unique(y, return_inverse=True)[1] % 2
    # weight[g, j]: ratio where party j favours parity g (FLoRA App. D.8, "imb1"), 1 elsewhere
    weight = np.where(np.arange(n_parties)[None, :] % 2 == np.arange(2)[:, None], float(ratio), 1.0)
    prob = weight / weight.sum(axis=1, keepdims=True)

    def draw(rng):
        labels = np.empty(len(y), dtype=int)
        for g in (0, 1):
            members = parity == g
            labels[members] = rng.choice(n_parties, size=int(members.sum()), p=prob[g])
        return labels

    return _draw(func, np.random.default_rng(random_state), draw, n_parties, min_samples,
                 "use fewer parties.")


def partition_disjoint_labels(y, n_parties) -> np.ndarray:
    """FLoRA's "imb2" label skew (App. D.8): each party holds its own classes, no class is shared.

    With ``k`` classes in sorted order, parties ``0 .. n_parties - 2`` get ``k // n_parties``
    consecutive classes each and the last party gets the rest: for 10 digits and 4 parties,
    2, 2, 2 and 4 classes, as in the paper. A party holding a single class cannot be scored
    with most classification metrics; use it with at least two classes per party.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels; at least ``n_parties`` classes.
    n_parties : int

    Returns
    -------
    ndarray of int of shape (n_samples,)

    Examples
    --------
    >>> import numpy as np
    >>> from fedsearch.datasets import partition_disjoint_labels
    >>> partition_disjoint_labels(np.arange(10), n_parties=4)
    array([0, 0, 1, 1, 2, 2, 3, 3, 3, 3])
    """
    func = "partition_disjoint_labels"
    y = _check_labels(func, y)
    _check_common(func, len(y), n_parties)
    class_rank = np.unique(y, return_inverse=True)[1]
    n_classes = int(class_rank.max()) + 1
    if n_classes < n_parties:
        raise ValueError(
            f"{func} needs at least as many classes as parties: {n_classes} classes for "
            f"{n_parties} parties."
        )
    return np.minimum(class_rank // (n_classes // n_parties), n_parties - 1)


def partition_quantity_skew(n_samples, n_parties, alpha=0.5, random_state=None, *, min_samples=1) -> np.ndarray:
    """Quantity skew: party sizes follow Dirichlet(alpha) proportions; samples are dealt at random.

    Each party first gets ``min_samples`` samples; the remaining ones are dealt by a multinomial
    draw with proportions ``q ~ Dir(alpha, ..., alpha)``. Labels stay IID.

    Parameters
    ----------
    n_samples : int
    n_parties : int
    alpha : float, default=0.5
        Concentration (> 0): small values give very unequal sizes.
    random_state : int, numpy Generator or None, default=None
    min_samples : int, default=1
        Fewest samples a party gets.

    Returns
    -------
    ndarray of int of shape (n_samples,)

    Examples
    --------
    >>> import numpy as np
    >>> from fedsearch.datasets import partition_quantity_skew
    >>> sizes = np.bincount(partition_quantity_skew(1000, 3, alpha=0.5, random_state=0))
    >>> int(sizes.sum()), bool(sizes.min() >= 1)
    (1000, True)
    """
    func = "partition_quantity_skew"
    _check(func, "n_samples", n_samples, _POSITIVE_INT)
    _check_common(func, n_samples, n_parties, min_samples)
    _check(func, "alpha", alpha, _POSITIVE_REAL)
    rng = np.random.default_rng(random_state)
    counts = min_samples + rng.multinomial(n_samples - n_parties * min_samples,
                                           rng.dirichlet(np.full(n_parties, float(alpha))))
    labels = np.empty(n_samples, dtype=int)
    _fill(rng, np.arange(n_samples), counts, labels)
    return labels


def partition_by_column(X, column) -> np.ndarray:
    """A natural federation: the party of each sample is its value in ``column``.

    Parameters
    ----------
    X : array-like or pandas DataFrame of shape (n_samples, n_columns)
    column : int or str
        Column index, or name for a DataFrame. Drop the column from the features afterwards if
        it only identifies the site.

    Returns
    -------
    ndarray of shape (n_samples,)
        The column's values (integers when they are whole numbers), used as party ids.

    Examples
    --------
    >>> import numpy as np
    >>> from fedsearch.datasets import partition_by_column
    >>> partition_by_column(np.array([[0.5, 1.0], [0.2, 2.0], [0.1, 1.0]]), 1)
    array([1, 2, 1])
    """
    func = "partition_by_column"
    if hasattr(X, "columns") and not isinstance(column, numbers.Integral):
        if column not in X.columns:
            raise KeyError(f"{func}: no column {column!r} in {list(X.columns)}.")
        values = np.asarray(X[column])
    else:
        _check(func, "column", column, instance_of(numbers.Integral))
        X = np.asarray(X)
        if X.ndim != 2 or not -X.shape[1] <= column < X.shape[1]:
            raise ValueError(f"{func}: column {column} is not a column of an array of shape {X.shape}.")
        values = X[:, column]
    if values.dtype.kind == "f":
        if np.isnan(values).any():
            raise ValueError(f"{func}: column {column!r} holds NaN; every sample needs a party.")
        if np.all(values == np.round(values)):
            values = values.astype(int)
    return values


def partition(y, n_parties, *, split="iid", alpha=0.5, random_state=None, min_samples=1) -> np.ndarray:
    """The party of each sample for a split named in :data:`SPLITS`.

    ``"iid"`` (:func:`partition_iid`), ``"label_skew"`` (:func:`partition_label_skew`, Dirichlet
    ``alpha``), ``"parity_skew"`` (:func:`partition_parity_skew`, FLoRA "imb1" with ratio 4),
    ``"disjoint_labels"`` (:func:`partition_disjoint_labels`, FLoRA "imb2"), ``"quantity_skew"``
    (:func:`partition_quantity_skew`, Dirichlet ``alpha``).

    Examples
    --------
    >>> import numpy as np
    >>> from fedsearch.datasets import partition
    >>> partition(np.repeat([0, 1], 5), 2, split="disjoint_labels")
    array([0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
    """
    _check("partition", "split", split, options(*SPLITS))
    y = _check_labels("partition", y)
    if split == "iid":
        return partition_iid(len(y), n_parties, random_state)
    if split == "label_skew":
        return partition_label_skew(y, n_parties, alpha, random_state, min_samples=min_samples)
    if split == "parity_skew":
        return partition_parity_skew(y, n_parties, random_state=random_state, min_samples=min_samples)
    if split == "disjoint_labels":
        return partition_disjoint_labels(y, n_parties)
    return partition_quantity_skew(len(y), n_parties, alpha, random_state, min_samples=min_samples)


# --------------------------------------------------------------------------- OpenML
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
        How samples are dealt to parties (see :func:`partition`).
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
    _check("fetch_openml_parties", "data_id", data_id, _POSITIVE_INT)
    _check("fetch_openml_parties", "split", split, options(*SPLITS))
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
    parties = partition(target, n_parties, split=split, alpha=alpha, random_state=random_state,
                        min_samples=min_samples)
    return Bunch(data=data, target=target, parties=parties, target_names=target_names,
                 feature_names=list(names), categorical=np.asarray(categorical, dtype=bool),
                 name=dataset.name, data_id=data_id)
