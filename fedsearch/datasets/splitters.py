"""Party splitters: give every sample of one dataset a party label, to simulate a federation.

Each returns an int array of shape ``(n_samples,)`` with values ``0 .. n_parties-1``; the array
goes straight to ``fit(X, y, parties=...)``:

- :func:`split_iid`: a uniformly random split into parties of (nearly) equal size;
- :func:`split_label_skew`: per class, Dirichlet(alpha) proportions over the parties;
- :func:`split_parity_skew`: FLoRA App. D.8 "imb1", half of the parties favour the even classes;
- :func:`split_disjoint_labels`: FLoRA App. D.8 "imb2", each party sees its own classes only;
- :func:`split_quantity_skew`: party sizes from Dirichlet(alpha), labels IID;
- :func:`split_by_column`: a natural federation, such as Landmine's ``field``.

:func:`assign_parties` dispatches on a splitter name (the ``--split`` option of the benchmarks).
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import _validation as v

__all__ = ["SPLITTERS", "assign_parties", "split_iid", "split_label_skew", "split_parity_skew",
           "split_disjoint_labels", "split_quantity_skew", "split_by_column"]

#: the names :func:`assign_parties` knows
SPLITTERS = ("iid", "label_skew", "parity_skew", "disjoint_labels", "quantity_skew")
_MAX_DRAWS = 1000


_NON_NEGATIVE_INT = v.interval(numbers.Integral, 0, None)


def _check_common(func, n_samples, n_parties, min_samples=0):
    v.check_value(func, "n_parties", n_parties, v.POSITIVE_INT)
    v.check_value(func, "min_samples", min_samples, _NON_NEGATIVE_INT)
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


def split_iid(n_samples, n_parties, random_state=None) -> np.ndarray:
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
    >>> from fedsearch.datasets import split_iid
    >>> import numpy as np
    >>> np.bincount(split_iid(10, 3, random_state=0))
    array([4, 3, 3])
    """
    v.check_value("split_iid", "n_samples", n_samples, v.POSITIVE_INT)
    _check_common("split_iid", n_samples, n_parties)
    counts = [len(c) for c in np.array_split(np.arange(n_samples), n_parties)]
    labels = np.empty(n_samples, dtype=int)
    _fill(np.random.default_rng(random_state), np.arange(n_samples), counts, labels)
    return labels


def split_label_skew(y, n_parties, alpha=0.5, random_state=None, *, min_samples=1) -> np.ndarray:
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
    >>> from fedsearch.datasets import split_label_skew
    >>> y = np.repeat([0, 1], 50)
    >>> parties = split_label_skew(y, n_parties=4, alpha=0.1, random_state=0)
    >>> np.bincount(parties, minlength=4).sum()
    np.int64(100)
    """
    func = "split_label_skew"
    y = _check_labels(func, y)
    _check_common(func, len(y), n_parties, min_samples)
    v.check_value(func, "alpha", alpha, v.POSITIVE)
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


def split_parity_skew(y, n_parties, ratio=4.0, random_state=None, *, min_samples=1) -> np.ndarray:
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
    >>> from fedsearch.datasets import split_parity_skew
    >>> y = np.tile(np.arange(10), 100)
    >>> parties = split_parity_skew(y, n_parties=4, random_state=0)
    >>> bool(np.mean(y[parties == 0] % 2 == 0) > 0.7)
    True
    """
    func = "split_parity_skew"
    y = _check_labels(func, y)
    v.check_value(func, "n_parties", n_parties, v.interval(numbers.Integral, 2, None))
    _check_common(func, len(y), n_parties, min_samples)
    v.check_value(func, "ratio", ratio, v.POSITIVE)
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


def split_disjoint_labels(y, n_parties) -> np.ndarray:
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
    >>> from fedsearch.datasets import split_disjoint_labels
    >>> split_disjoint_labels(np.arange(10), n_parties=4)
    array([0, 0, 1, 1, 2, 2, 3, 3, 3, 3])
    """
    func = "split_disjoint_labels"
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


def split_quantity_skew(n_samples, n_parties, alpha=0.5, random_state=None, *, min_samples=1) -> np.ndarray:
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
    >>> from fedsearch.datasets import split_quantity_skew
    >>> sizes = np.bincount(split_quantity_skew(1000, 3, alpha=0.5, random_state=0))
    >>> int(sizes.sum()), bool(sizes.min() >= 1)
    (1000, True)
    """
    func = "split_quantity_skew"
    v.check_value(func, "n_samples", n_samples, v.POSITIVE_INT)
    _check_common(func, n_samples, n_parties, min_samples)
    v.check_value(func, "alpha", alpha, v.POSITIVE)
    rng = np.random.default_rng(random_state)
    counts = min_samples + rng.multinomial(n_samples - n_parties * min_samples,
                                           rng.dirichlet(np.full(n_parties, float(alpha))))
    labels = np.empty(n_samples, dtype=int)
    _fill(rng, np.arange(n_samples), counts, labels)
    return labels


def split_by_column(X, column) -> np.ndarray:
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
    >>> from fedsearch.datasets import split_by_column
    >>> split_by_column(np.array([[0.5, 1.0], [0.2, 2.0], [0.1, 1.0]]), 1)
    array([1, 2, 1])
    """
    func = "split_by_column"
    if hasattr(X, "columns") and not isinstance(column, numbers.Integral):
        if column not in X.columns:
            raise KeyError(f"{func}: no column {column!r} in {list(X.columns)}.")
        values = np.asarray(X[column])
    else:
        v.check_value(func, "column", column, v.instance_of(numbers.Integral))
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


def assign_parties(y, n_parties, *, split="iid", alpha=0.5, random_state=None, min_samples=1) -> np.ndarray:
    """The party of each sample for a split named in :data:`SPLITTERS`.

    ``"iid"`` (:func:`split_iid`), ``"label_skew"`` (:func:`split_label_skew`, Dirichlet
    ``alpha``), ``"parity_skew"`` (:func:`split_parity_skew`, FLoRA "imb1" with ratio 4),
    ``"disjoint_labels"`` (:func:`split_disjoint_labels`, FLoRA "imb2"), ``"quantity_skew"``
    (:func:`split_quantity_skew`, Dirichlet ``alpha``).

    Examples
    --------
    >>> import numpy as np
    >>> from fedsearch.datasets import assign_parties
    >>> assign_parties(np.repeat([0, 1], 5), 2, split="disjoint_labels")
    array([0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
    """
    v.check_value("assign_parties", "split", split, v.options(*SPLITTERS))
    y = _check_labels("partition", y)
    if split == "iid":
        return split_iid(len(y), n_parties, random_state)
    if split == "label_skew":
        return split_label_skew(y, n_parties, alpha, random_state, min_samples=min_samples)
    if split == "parity_skew":
        return split_parity_skew(y, n_parties, random_state=random_state, min_samples=min_samples)
    if split == "disjoint_labels":
        return split_disjoint_labels(y, n_parties)
    return split_quantity_skew(len(y), n_parties, alpha, random_state, min_samples=min_samples)
