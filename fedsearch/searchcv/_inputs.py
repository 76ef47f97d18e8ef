"""Turning ``fit``'s inputs into per-party datasets, and checking them before any work starts."""

from __future__ import annotations

import inspect
import numbers
import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone, is_classifier
from sklearn.model_selection import check_cv
from sklearn.utils import _safe_indexing, indexable
from sklearn.utils import get_tags
from sklearn.utils.multiclass import type_of_target

from ..party.dataset import PartyData, is_per_sample, n_samples
from ..space import Categorical, Distribution, Integer, SearchSpace

__all__ = ["split_parties", "check_parties", "check_fit_params", "check_estimator_params"]


def _n_features(X) -> int | None:
    shape = getattr(X, "shape", None)
    if shape is None:
        X = np.asarray(X, dtype=object)
        shape = X.shape
    return int(shape[1]) if len(shape) == 2 else None


def _is_row(r) -> bool:
    return isinstance(r, (list, tuple, np.ndarray)) and not isinstance(r, str)


def _is_dataset(X) -> bool:
    """A 2-D table (array, DataFrame, sparse matrix, or a list of rows that are lists)."""
    if sp.issparse(X) or (hasattr(X, "shape") and len(getattr(X, "shape")) == 2):
        return True
    return isinstance(X, (list, tuple)) and len(X) > 0 and all(
        _is_row(r) and len(r) > 0 and not any(_is_row(c) for c in r) for r in X)


def _per_party_sequence(X) -> bool:
    if isinstance(X, Mapping):
        return len(X) > 0 and all(_is_dataset(x) for x in X.values())
    return (isinstance(X, (list, tuple)) and len(X) > 0 and all(_is_dataset(x) for x in X))


def split_parties(X, y=None, parties=None, groups=None, fit_params=None) -> list[PartyData]:
    """Split ``fit``'s inputs into one :class:`PartyData` per party.

    Three forms are accepted: (a) one dataset with ``parties``, a party label per sample;
    (b) a list (or dict {party id: X}) of per-party datasets, with ``y`` a matching list / dict;
    (c) one dataset with ``parties=None``: a single party, id 0.
    """
    fit_params = fit_params or {}
    if _per_party_sequence(X):
        if parties is not None:
            raise ValueError(
                "Give either a list of per-party datasets X or a per-sample 'parties' array, not "
                "both. Got a list of X and parties of type " f"{type(parties).__name__}."
            )
        if isinstance(X, Mapping):
            ids, Xs = list(X.keys()), list(X.values())
        else:
            ids, Xs = list(range(len(X))), list(X)
        ys = _per_party(y, ids, "y", Xs)
        gs = _per_party(groups, ids, "groups", Xs)
        fps = [{} for _ in ids]
        for name, value in fit_params.items():
            for fp, v, x, i in zip(fps, _per_party_fit_param(value, ids, name), Xs, ids):
                _check_sample_length(name, v, n_samples(x), f"party {i!r}")
                fp[name] = v
        return [PartyData(i, x, yy, g, fp) for i, x, yy, g, fp in zip(ids, Xs, ys, gs, fps)]

    X, y, groups = indexable(X, y, groups)
    n = n_samples(X)
    for name, value in fit_params.items():
        _check_sample_length(name, value, n, "X")
    if parties is None:
        return [PartyData(0, X, y, groups, dict(fit_params))]
    labels = np.asarray(parties)
    if labels.ndim != 1 or len(labels) != n:
        raise ValueError(
            f"'parties' must hold one party label per sample of X: expected shape ({n},), "
            f"got shape {labels.shape}."
        )
    if labels.dtype.kind == "f" and np.isnan(labels).any():
        raise ValueError("'parties' contains NaN; every sample needs a party label.")
    ids = np.unique(labels)
    out = []
    for pid in ids:
        idx = np.flatnonzero(labels == pid)
        fp = {k: _safe_indexing(v, idx) if is_per_sample(v, n) else v for k, v in fit_params.items()}
        out.append(PartyData(
            pid.item() if isinstance(pid, np.generic) else pid,
            _safe_indexing(X, idx),
            None if y is None else _safe_indexing(y, idx),
            None if groups is None else _safe_indexing(groups, idx),
            fp,
        ))
    return out


def _per_party_fit_param(value, ids, name) -> list:
    """A fit parameter given per party: a list with one value per party, or {party id: value}."""
    if isinstance(value, Mapping) and set(value) == set(ids):
        return [value[i] for i in ids]
    if isinstance(value, (list, tuple)) and len(value) == len(ids):
        return list(value)
    shown = (f"a dict with keys {sorted(map(repr, value))}" if isinstance(value, Mapping)
             else f"{type(value).__name__}{' of length ' + str(len(value)) if hasattr(value, '__len__') else ''}")
    raise ValueError(
        f"With {len(ids)} per-party datasets, the fit parameter {name!r} must be given per party: a "
        f"list of {len(ids)} values (one per party, in the order of X) or a dict {{party id: value}} "
        f"with the keys of X. Got {shown} instead."
    )


def _check_sample_length(name, value, n, where) -> None:
    """A per-sample fit parameter (``sample_weight``) must have one entry per sample."""
    if name.split("__")[-1] == "sample_weight" and value is not None and hasattr(value, "__len__") \
            and not isinstance(value, (str, Mapping)) and n_samples(value) != n:
        raise ValueError(
            f"The fit parameter {name!r} must hold one value per sample of {where} ({n}). "
            f"Got {n_samples(value)} values instead."
        )


def _per_party(value, ids, name, Xs) -> list:
    if value is None:
        return [None] * len(ids)
    if isinstance(value, Mapping) and set(value) == set(ids):
        return [value[i] for i in ids]
    if isinstance(value, (list, tuple)) and len(value) == len(ids) and all(
        hasattr(v, "__len__") and n_samples(v) == n_samples(x) for v, x in zip(value, Xs)
    ):
        return list(value)
    raise ValueError(
        f"With a list of {len(ids)} per-party datasets, {name!r} must be a list of {len(ids)} arrays "
        f"of matching lengths ({[n_samples(x) for x in Xs]}). Got {type(value).__name__}"
        f"{' of length ' + str(len(value)) if hasattr(value, '__len__') else ''}."
    )


def check_parties(parties: Sequence[PartyData], estimator, cv) -> int:
    """Check the per-party datasets before any work starts; return the number of CV splits.

    Raises a ``ValueError`` naming the party, the value and what was expected, for: an empty party,
    different feature counts, column names, column dtypes (pandas categories), types of X or
    kinds of labels across parties, NaN or infinite labels, a single class in a classifier's
    party, and more CV folds than a party has samples (or members of a class).
    """
    first = parties[0]
    names0 = _columns(first.X)
    n_features0 = _n_features(first.X)
    label_kind0 = _label_kind(first.y)
    n_splits = None
    for party in parties:
        pid = party.party_id
        n = party.n_samples
        if n == 0:
            raise ValueError(f"Party {pid!r} has no samples (0 rows); every party needs data.")
        n_features = _n_features(party.X)
        if n_features == 0:
            raise ValueError(f"0 feature(s) (shape=({n}, 0)) while a minimum of 1 is required: X of "
                             f"party {pid!r} has no columns.")
        if n_features != n_features0:
            raise ValueError(
                f"Party {pid!r} has {n_features} features but party {first.party_id!r} has "
                f"{n_features0}; all parties must have the same features."
            )
        if _x_type(party.X) != _x_type(first.X):
            raise ValueError(
                f"Party {pid!r} gives X as {_x_type(party.X)} but party {first.party_id!r} as "
                f"{_x_type(first.X)}; give every party's X as the same type."
            )
        names = _columns(party.X)
        if names is not None and names0 is not None and list(names) != list(names0):
            raise ValueError(
                f"Party {pid!r} has columns {list(names)} but party {first.party_id!r} has "
                f"{list(names0)}; all parties must have the same feature names in the same order."
            )
        _check_dtypes(party, first)
        _check_values(party, estimator)
        y = party.y
        if y is not None:
            y_arr = np.asarray(y)
            if y_arr.dtype.kind in "fc" and np.isnan(y_arr.astype(complex)).any():
                raise ValueError(f"The labels y of party {pid!r} contain NaN; labels must be finite.")
            if y_arr.dtype.kind in "fc" and not np.isfinite(y_arr.astype(complex)).all():
                raise ValueError(f"The labels y of party {pid!r} contain infinity; labels must be finite.")
            if _label_kind(y) != label_kind0:
                raise ValueError(
                    f"The labels y of party {pid!r} are {_label_kind(y)} but those of party "
                    f"{first.party_id!r} are {label_kind0}; every party must label its samples alike."
                )
            target = type_of_target(y_arr) if is_classifier(estimator) else None
            if target in ("continuous", "continuous-multioutput", "unknown"):
                raise ValueError(f"Unknown label type: the labels y of party {pid!r} are {target}; a "
                                 f"classifier needs class labels.")
            if is_classifier(estimator):
                classes, counts = np.unique(y_arr, return_counts=True) if y_arr.ndim == 1 else (None, None)
                if classes is not None and len(classes) < 2:
                    raise ValueError(
                        f"Party {pid!r} has only one class in y ({classes.tolist()}); a classifier "
                        f"needs samples of at least two classes in every party."
                    )
        splitter = check_cv(cv, y, classifier=is_classifier(estimator))
        k = splitter.get_n_splits(party.X, y, party.groups)
        if isinstance(cv, numbers.Integral) or cv is None:
            if k > n:
                raise ValueError(
                    f"cv={k} folds but party {pid!r} has only {n} sample{'s' if n != 1 else ''}; "
                    f"each party needs at least {k} samples."
                )
            if y is not None and is_classifier(estimator) and type_of_target(y) in ("binary", "multiclass"):
                classes, counts = np.unique(np.asarray(y), return_counts=True)
                if counts.min() < k:
                    c = classes[counts.argmin()]
                    raise ValueError(
                        f"cv={k} stratified folds but party {pid!r} has only {counts.min()} "
                        f"member{'s' if counts.min() != 1 else ''} of class {c!r}; each class of each "
                        f"party needs at least {k} members (lower cv or merge parties)."
                    )
        if n_splits is None:
            n_splits = k
    return n_splits


def _x_type(X) -> str:
    """The kind of container X is (DataFrame, ndarray, sparse matrix, list)."""
    return "sparse matrix" if sp.issparse(X) else type(X).__name__


def _label_kind(y) -> str | None:
    """Numbers, booleans or strings (labels of different kinds are different classes)."""
    if y is None:
        return None
    kind = np.asarray(y).dtype.kind
    if kind in "iuf":
        return "numbers"
    if kind == "b":
        return "booleans"
    if kind in "US":
        return "strings"
    values = np.asarray(y, dtype=object).ravel()
    kinds = {"strings" if isinstance(v, str) else "numbers" if isinstance(v, numbers.Number) else
             type(v).__name__ for v in values}
    return " and ".join(sorted(kinds))


def _check_values(party, estimator) -> None:
    """Complex, NaN or infinite features of a numeric party, refused here with a message that
    holds no value (inside a party's fit the estimator's own message would quote the data)."""
    if sp.issparse(party.X) and not get_tags(estimator).input_tags.sparse:
        raise TypeError(f"X of party {party.party_id!r} is a sparse matrix, which "
                        f"{type(estimator).__name__} does not accept; give dense data.")
    X = party.X.data if sp.issparse(party.X) else party.X
    if isinstance(X, np.ndarray) and X.dtype.kind == "O" and not get_tags(estimator).input_tags.string:
        try:
            X = X.astype(float)
        except (TypeError, ValueError):
            raise TypeError(f"X of party {party.party_id!r} holds objects that are not numbers, which "
                            f"{type(estimator).__name__} needs (each argument must be a string or a "
                            f"number).") from None
    if not isinstance(X, np.ndarray) or X.dtype.kind not in "fc":
        return
    if X.dtype.kind == "c":
        raise ValueError(f"Complex data not supported: X of party {party.party_id!r} is complex.")
    if not get_tags(estimator).input_tags.allow_nan and np.isnan(X).any():
        raise ValueError(f"Input X of party {party.party_id!r} contains NaN, which "
                         f"{type(estimator).__name__} does not accept.")
    if np.isinf(X).any():
        raise ValueError(f"Input X of party {party.party_id!r} contains infinity.")


def _check_dtypes(party, first) -> None:
    """The columns of DataFrame parties have the same dtypes (and categories) everywhere."""
    dtypes, dtypes0 = getattr(party.X, "dtypes", None), getattr(first.X, "dtypes", None)
    if dtypes is None or dtypes0 is None or not hasattr(dtypes, "items"):
        return
    for (col, d), d0 in zip(dtypes.items(), dtypes0.values):
        if str(d) != str(d0):
            raise ValueError(
                f"Column {col!r} of party {party.party_id!r} has dtype {d} but party "
                f"{first.party_id!r} has {d0}; every party's columns must have the same dtypes."
            )
        if str(d) == "category" and not (d.categories.equals(d0.categories) and d.ordered == d0.ordered):
            raise ValueError(
                f"Column {col!r} of party {party.party_id!r} is categorical with other categories "
                f"({len(d.categories)}) than at party {first.party_id!r} ({len(d0.categories)}); every "
                f"party's categorical columns must have the same categories (pandas.CategoricalDtype)."
            )


def _columns(X):
    cols = getattr(X, "columns", None)
    return None if cols is None else [str(c) for c in cols]


def _fit_accepts(estimator, name: str) -> tuple[bool, list[str]]:
    """Whether ``estimator.fit`` takes the parameter ``name`` (a Pipeline routes
    ``<step>__<param>`` to its step); and the names it does take."""
    steps = getattr(estimator, "named_steps", None)
    if steps is not None:
        step, _, sub = name.partition("__")
        if not sub or step not in steps:
            return False, [f"{s}__<param>" for s in steps]
        inner = steps[step]
        return (True, []) if inner is None or inner == "passthrough" else _fit_accepts(inner, sub)
    params = inspect.signature(estimator.fit).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return True, []
    names = [p for p in params if p not in ("X", "y", "Y")]
    return name in names, names


def check_fit_params(estimator, fit_params: Mapping, owner: str) -> None:
    """Refuse, before any work, a fit parameter the estimator's ``fit`` does not take.

    Parameters
    ----------
    estimator : estimator
        The search's base estimator.
    fit_params : dict
        The ``**fit_params`` of the search's ``fit``.
    owner : str
        The search's class name, for the message.
    """
    for name in fit_params:
        accepted, names = _fit_accepts(estimator, name)
        if not accepted:
            raise ValueError(
                f"The fit parameter {name!r} of {owner}.fit must be a parameter of the estimator's "
                f"fit ({type(estimator).__name__}.fit takes {names}). Got {name!r} instead."
            )


def _probe_values(dim) -> list:
    """Values of a dimension to show the estimator before any work: every listed value, the
    ends of an integer range, the median of a distribution."""
    if isinstance(dim, Categorical):
        return list(dim.values)
    if isinstance(dim, Integer):
        return [dim.low, dim.high]
    if isinstance(dim, Distribution):
        return [dim.to_value(0.5)]
    return []


class _DataTouched(BaseException):
    """Raised at a probing fit's first look at its data (a ``BaseException``, so that no handler
    inside the fit takes it for an error of its own)."""


class _NoData:
    """Stands in for ``X`` and ``y`` in a probing call of ``fit``: any use of it stops the fit."""

    def _stop(self, *args, **kwargs):
        raise _DataTouched

    __getattr__ = __len__ = __iter__ = __getitem__ = __array__ = __bool__ = _stop


def _sklearn_fit(estimator):
    """The ``fit`` that scikit-learn defines for ``estimator``'s class (a subclass's own ``fit``
    is passed over, so that no code of the user's runs), or None for another library's."""
    for cls in type(estimator).__mro__:
        if "fit" in vars(cls) and cls.__module__.startswith("sklearn."):
            return vars(cls)["fit"]
    return None


def _probe(estimator):
    """What scikit-learn's ``fit`` of ``estimator`` says of its parameters before it reads any data.

    Every scikit-learn estimator validates its parameters when ``fit`` starts, before it looks
    at ``X``; a refused value raises scikit-learn's parameter error, which is both a
    ``ValueError`` and a ``TypeError``. ``fit`` is called with stand-ins for ``X`` and ``y``
    that stop it at their first use, so nothing is fitted.

    Returns
    -------
    True, an exception or None
        True: the parameters were accepted (the fit went on to read the data); the parameter
        error: a value was refused; None: it cannot tell (not a scikit-learn fit, or it failed
        otherwise before reading the data, e.g. on a combination of values the fits will judge).
    """
    fit = _sklearn_fit(estimator)
    if fit is None:
        return None
    names = list(inspect.signature(fit).parameters)
    data = (_NoData(), _NoData()) if len(names) > 2 and names[2] in ("y", "Y") else (_NoData(),)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit(estimator, *data)
    except _DataTouched:
        return True
    except Exception as exc:  # noqa: BLE001 - judged below
        return exc if isinstance(exc, ValueError) and isinstance(exc, TypeError) else None
    return None


def _owner(estimator, prefix: str):
    """The part of ``estimator`` named ``prefix`` (itself for ``""``)."""
    return estimator.get_params(deep=True)[prefix] if prefix else estimator


def check_estimator_params(estimator, space: SearchSpace, owner: str) -> None:
    """Refuse, before any work, a value of the search space the estimator's own parameter
    validation refuses (a wrong-typed grid value would otherwise fail every fit).

    Each value is tried on a clone (``clone(estimator).set_params(name=value)``) whose
    scikit-learn ``fit`` is started on stand-in data that stops it before it reads anything
    (:func:`_probe`): the parameter validation every scikit-learn estimator runs first judges the
    value, and nothing is fitted. Estimators of other libraries, and parameters whose estimator
    already refuses its own values, are not checked.

    Parameters
    ----------
    estimator : estimator
        The search's base estimator.
    space : SearchSpace
        The search space.
    owner : str
        The search's class name, for the message.
    """
    for dims in space._subspaces:
        for dim in dims:
            # the estimator that owns the parameter (a pipeline's step, for "step__name")
            prefix = dim.name.rpartition("__")[0]
            if _probe(_owner(clone(estimator), prefix)) is not True:
                continue  # the estimator as given does not reach its data: nothing to compare
            for value in _probe_values(dim):
                target = _owner(clone(estimator).set_params(**{dim.name: value}), prefix)
                refused = _probe(target)
                if isinstance(refused, BaseException):
                    raise ValueError(
                        f"The search space of {owner} must hold values the estimator accepts. Got "
                        f"{dim.name}={value!r} instead, which {type(target).__name__} refuses: {refused}"
                    )
