"""What crosses the party boundary: tasks (server to party) and replies (party to server).

Messages are small frozen dataclasses of numbers, strings and arrays of unit-cube points or
scores, never party data. :func:`encode` turns one into JSON bytes and :func:`decode` reads it
back, so that any transport can carry them and the federation can log their size.

The codec runs no pickle in either direction. Besides plain data it knows four kinds of objects,
each in a form that cannot execute code when read:

- a search space and its dimensions (``SetupTask.space``), frozen ``scipy.stats`` distributions
  as their name and arguments;
- an *unfitted* estimator or CV splitter (``SetupTask.estimator``, ``SetupTask.cv``) as its class
  path and constructor parameters; :func:`decode` builds only classes of the modules in
  :data:`TRUSTED_MODULES`;
- a *fitted* model (``FitReply.model``) through ``skops.io`` with an explicit list of trusted
  types (the optional ``skops`` extra); without it a fitted model cannot be encoded.

Examples
--------
>>> import numpy as np
>>> from fedsearch.messages import EvaluateTask, decode, encode
>>> task = EvaluateTask(np.array([[0.25, 0.5]]))
>>> decode(encode(task)).points.tolist()
[[0.25, 0.5]]
"""

from __future__ import annotations

import base64
import dataclasses
import importlib
import inspect
import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "Task", "Reply", "EvaluateTask", "EvaluateReply", "FitTask", "FitReply", "SetupTask", "SetupReply", "ErrorReply",
    "message", "encode", "decode", "jsonable", "message_size", "TRUSTED_MODULES", "ERROR_KINDS", "public_error",
]

_REGISTRY: dict[str, type] = {}

#: Module prefixes whose classes :func:`decode` may build (estimators, splitters,
#: distributions). A party that runs estimators of another library adds its prefix here.
TRUSTED_MODULES: list[str] = ["sklearn.", "scipy.stats.", "fedsearch.", "numpy."]


def message(cls):
    """Class decorator: a frozen dataclass that :func:`encode` / :func:`decode` know by name.

    Registration happens when the defining module is imported, so a worker process that
    unpickles a unit of work, or a remote party that imports the algorithm, knows the class.
    """
    cls = dataclass(frozen=True)(cls)
    register_type(cls)
    return cls


def register_type(cls: type) -> type:
    """Let the codec carry instances of the dataclass ``cls`` (by its name)."""
    _REGISTRY[cls.__name__] = cls
    return cls


class Task:
    """A unit of work the server asks of one party.

    ``cost`` is what the task spends of the party's evaluation budget (configurations
    cross-validated); the round loop checks it against the budget.
    """

    @property
    def cost(self) -> int:
        return 0


class Reply:
    """A party's answer to a task. ``error`` is set (a message) when the whole task failed, and
    ``kind`` (one of :data:`ERROR_KINDS`) says what failed."""

    error: str | None


#: What can fail at a party, each with the fixed text that crosses the boundary in its place:
#: a party's exception message may quote its data (an unknown category, a value out of range),
#: so a reply carries only the exception's type and this text (:func:`public_error`).
ERROR_KINDS = {
    "fit": "fitting or scoring the configuration failed at the party",
    "score": "a scorer returned a non-finite score at the party",
    "setup": "the party could not be set up (loading its data or applying the search's set-up failed)",
    "task": "the party could not run the task",
    "transport": "the party did not answer (not connected, timed out, or failed outside fedsearch's handler)",
    "final_fit": "the final fit failed at the party",
    "local_search": "the party's local search failed",
}


def public_error(exc: BaseException, kind: str, share: bool = False) -> str:
    """The message of ``exc`` that may cross the party boundary.

    Parameters
    ----------
    exc : BaseException
        The party's exception.
    kind : str
        What failed, a key of :data:`ERROR_KINDS`.
    share : bool, default=False
        Whether the party opted in to share its full messages (then ``"Type: message"``).

    Returns
    -------
    str
        ``"<exception type>: <the fixed text of kind>"``, which cannot hold a data value.
    """
    detail = str(exc) if share else f"{ERROR_KINDS[kind]} (the party keeps the message)"
    return f"{type(exc).__name__}: {detail}"


@message
class SetupTask(Task):
    """How the party is to evaluate configurations: sent once, before the first round.

    Parameters
    ----------
    estimator : estimator
        The unfitted base estimator (cloned for every fit).
    space : SearchSpace
        The shared search space; every incoming point is checked against it.
    cv : int, CV splitter or None
        The party's own cross-validation (None: 5-fold, stratified for classifiers).
    scoring : str, list of str, dict or None
        As in :func:`sklearn.model_selection.cross_validate` (callables cannot cross a wire).
    objective : str
        The metric the search optimises (``"score"`` for a single metric).
    error_score : "raise" or float
    return_train_score : bool
    """

    estimator: Any
    space: Any
    cv: Any = None
    scoring: Any = None
    objective: str = "score"
    error_score: Any = float("nan")
    return_train_score: bool = False


@message
class SetupReply(Reply):
    """A party is ready: its number of samples and CV splits (summaries only)."""

    n_samples: int
    n_splits: int
    error: str | None = None
    kind: str | None = None


@message
class EvaluateTask(Task):
    """Cross-validate (or, for a synthetic party, evaluate) each configuration of ``points``.

    Parameters
    ----------
    points : ndarray of shape (n_points, n_dims)
        Points of the unit cube; the party maps each to parameters with the shared space.
    noise_std : float, default=0.0
        Standard deviation of Gaussian noise the *party* adds to each objective score before
        replying (differential privacy, DP-Fed-PNE App. D.2). Never added on the server.
    seed : int or None, default=None
        Seed of that noise, so that runs are reproducible.
    """

    points: np.ndarray
    noise_std: float = 0.0
    seed: int | None = None

    def __post_init__(self):
        points = np.atleast_2d(np.asarray(self.points, dtype=float))
        object.__setattr__(self, "points", points)

    @property
    def cost(self) -> int:
        return len(self.points)


@message
class EvaluateReply(Reply):
    """Summaries of a party's evaluation of each point of an :class:`EvaluateTask`.

    Attributes
    ----------
    scores : ndarray of shape (n_points,)
        The objective: the party's mean CV score of each point (higher is better), NaN where the
        evaluation failed (whatever ``error_score``, which fills ``test_scores``).
    test_scores, train_scores : dict of str to ndarray of shape (n_points,)
        Mean test (train) score of each metric; ``train_scores`` is empty unless asked.
    std_scores : dict of str to ndarray of shape (n_points,)
        Standard deviation of the test score over the party's folds.
    fit_time, score_time : ndarray of shape (n_points,)
        Mean seconds per fold (0 for cached configurations).
    std_fit_time, std_score_time : ndarray of shape (n_points,) or None
        Their standard deviation over the party's folds (0 for cached configurations).
    n_samples : int
        The party's number of samples (for weighted aggregation).
    split_scores : dict of str to ndarray of shape (n_points, n_splits)
        The test score of each of the party's folds (empty under differential privacy).
    split_train_scores : dict of str to ndarray of shape (n_points, n_splits)
        The train score of each fold; empty unless asked.
    errors : tuple of str or None
        One entry per point: the failure's data-free message (:func:`public_error`), or None.
    error_kinds : tuple of str or None
        One entry per point: the kind of the failure (a key of :data:`ERROR_KINDS`), or None.
    cached : ndarray of bool of shape (n_points,)
        Whether the party answered from its cache (no new fit).
    """

    scores: np.ndarray
    n_samples: int
    test_scores: dict = field(default_factory=dict)
    std_scores: dict = field(default_factory=dict)
    train_scores: dict = field(default_factory=dict)
    fit_time: np.ndarray | None = None
    score_time: np.ndarray | None = None
    std_fit_time: np.ndarray | None = None
    std_score_time: np.ndarray | None = None
    split_scores: dict = field(default_factory=dict)
    split_train_scores: dict = field(default_factory=dict)
    errors: tuple = ()
    error_kinds: tuple = ()
    cached: np.ndarray | None = None
    error: str | None = None
    kind: str | None = None


@message
class FitTask(Task):
    """Fit the configuration ``point`` on the party's own data (the ``"ensemble"`` final fit)."""

    point: np.ndarray


@message
class FitReply(Reply):
    """A party's fitted model: the only thing besides summaries that ever leaves a party, and
    only for ``final_fit="ensemble"`` (or PF-PNE's ``"local"``)."""

    model: Any
    n_samples: int
    fit_time: float = 0.0
    error: str | None = None
    kind: str | None = None


@message
class ErrorReply(Reply):
    """A party could not answer a task at all: the kind of the error (a key of
    :data:`ERROR_KINDS`) and its data-free message (:func:`public_error`)."""

    error: str
    kind: str = "task"


# --------------------------------------------------------------------------- serialisation
class _Unencodable(TypeError):
    pass


def _class_path(obj) -> str:
    cls = type(obj)
    return f"{cls.__module__}.{cls.__qualname__}"


def _is_fitted(obj) -> bool:
    return any(k.endswith("_") and not k.startswith("__") for k in vars(obj))


def _constructor_params(obj) -> dict:
    if hasattr(obj, "get_params"):
        return obj.get_params(deep=False)
    names = [p for p in inspect.signature(type(obj).__init__).parameters if p != "self"]
    return {name: getattr(obj, name) for name in names}


def _model_to_json(model) -> dict:
    try:
        from skops import io as sio
    except ImportError as exc:
        missing = _Unencodable(
            "A fitted model can cross the party boundary only in the skops format; install the "
            "optional extra: pip install 'fedsearch[skops]'."
        )
        missing.fedsearch_public = True  # a fixed text: a party may send it as it is
        raise missing from exc
    return {"__model__": base64.b64encode(sio.dumps(model)).decode()}


def _model_from_json(data: str):
    from skops import io as sio

    raw = base64.b64decode(data)
    untrusted = sio.get_untrusted_types(data=raw)
    refused = [t for t in untrusted if not any(t.startswith(m) for m in TRUSTED_MODULES)]
    if refused:
        raise TypeError(f"A model holds types that are not trusted: {refused}.")
    return sio.loads(raw, trusted=untrusted)


def _to_json(obj: Any, strict: bool) -> Any:
    if isinstance(obj, float) and obj != obj:
        return {"__float__": "nan"}
    if isinstance(obj, float) and obj in (float("inf"), float("-inf")):
        return {"__float__": "inf" if obj > 0 else "-inf"}
    if obj is None or isinstance(obj, (bool, int, float, str)):  # the common leaves first
        return obj
    if isinstance(obj, np.ndarray):
        if obj.dtype == object:
            return {"__list__": [_to_json(v, strict) for v in obj.tolist()]}
        # numbers as their little-endian bytes in base64: exact, and a third of decimal text
        data = np.ascontiguousarray(obj, dtype=obj.dtype.newbyteorder("<"))
        return {"__array__": base64.b64encode(data.tobytes()).decode(), "dtype": data.dtype.str,
                "shape": list(obj.shape)}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type) and type(obj).__name__ in _REGISTRY:
        fields = {f.name: _to_json(getattr(obj, f.name), strict) for f in dataclasses.fields(obj)}
        return {"__message__": type(obj).__name__, **fields}
    from .space import SearchSpace

    if isinstance(obj, SearchSpace):
        return {"__space__": [[_to_json(d, strict) for d in dims] for dims in obj._subspaces]}
    if isinstance(obj, np.generic):
        return _to_json(obj.item(), strict)
    if isinstance(obj, dict):
        return {"__dict__": [[_to_json(k, strict), _to_json(v, strict)] for k, v in obj.items()]}
    if isinstance(obj, (list, tuple)):
        return [_to_json(v, strict) for v in obj]
    if hasattr(obj, "dist") and hasattr(obj, "args") and hasattr(obj, "ppf"):  # frozen scipy.stats
        return {"__distribution__": obj.dist.name, "args": _to_json(list(obj.args), strict),
                "kwds": _to_json(dict(obj.kwds), strict)}
    try:
        if hasattr(obj, "fit") and _is_fitted(obj):
            return _model_to_json(obj)
        if hasattr(obj, "get_params") or hasattr(obj, "split"):  # an estimator or a CV splitter
            params = {k: _to_json(v, strict) for k, v in _constructor_params(obj).items()}
            return {"__object__": _class_path(obj), "params": params}
        raise _Unencodable(f"{type(obj).__name__} cannot cross the party boundary: {obj!r}")
    except _Unencodable:
        if strict:
            raise
        return {"__unencodable__": type(obj).__name__}


def _trusted_class(path: str) -> type:
    if not any(path.startswith(m) for m in TRUSTED_MODULES):
        raise TypeError(f"Refusing to build {path!r}: its module is not in "
                        f"fedsearch.messages.TRUSTED_MODULES ({TRUSTED_MODULES}).")
    module, _, name = path.rpartition(".")
    while module:
        try:
            obj = importlib.import_module(module)
            break
        except ImportError:  # a nested class: step up one level
            module, _, outer = module.rpartition(".")
            name = f"{outer}.{name}"
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def _from_json(obj: Any) -> Any:
    if isinstance(obj, list):
        return tuple(_from_json(v) for v in obj)
    if not isinstance(obj, dict):
        return obj
    if "__array__" in obj:
        data = np.frombuffer(base64.b64decode(obj["__array__"]), dtype=np.dtype(obj["dtype"]))
        return data.reshape(obj["shape"]).copy()
    if "__list__" in obj:
        return np.array([_from_json(v) for v in obj["__list__"]] + [None], dtype=object)[:-1]
    if "__float__" in obj:
        return float(obj["__float__"])
    if "__dict__" in obj:
        return {_from_json(k): _from_json(v) for k, v in obj["__dict__"]}
    if "__model__" in obj:
        return _model_from_json(obj["__model__"])
    if "__distribution__" in obj:
        from scipy import stats

        return getattr(stats, obj["__distribution__"])(*_from_json(obj["args"]), **_from_json(obj["kwds"]))
    if "__object__" in obj:
        params = {k: _from_json(v) for k, v in obj["params"].items()}
        params = {k: list(v) if isinstance(v, tuple) and k == "steps" else v for k, v in params.items()}
        return _trusted_class(obj["__object__"])(**params)
    if "__space__" in obj:
        from .space import SearchSpace

        return SearchSpace.from_subspaces([[_from_json(d) for d in dims] for dims in obj["__space__"]])
    if "__unencodable__" in obj:
        raise TypeError(f"A {obj['__unencodable__']} was not encoded and cannot be decoded.")
    cls = _REGISTRY[obj["__message__"]]
    return cls(**{k: _from_json(v) for k, v in obj.items() if k != "__message__"})


def jsonable(obj, strict: bool = True):
    """``obj`` as the plain JSON data :func:`encode` writes. With ``strict=False``, what no wire
    could carry is replaced by its type name instead of raising."""
    return _to_json(obj, strict)


def encode(msg) -> bytes:
    """Serialise a message to JSON bytes (raises ``TypeError`` for what cannot cross a wire)."""
    return json.dumps(_to_json(msg, strict=True), allow_nan=True, separators=(",", ":")).encode()


def decode(data: bytes):
    """Read back a message written by :func:`encode`; builds only trusted classes, no pickle."""
    return _from_json(json.loads(data))


def message_size(msg) -> int:
    """Bytes of ``msg`` as :func:`encode` writes it. What no wire could carry (a callable
    scorer of an in-process search, a model without skops) counts as its type name."""
    return len(json.dumps(_to_json(msg, strict=False), allow_nan=True, separators=(",", ":")))
