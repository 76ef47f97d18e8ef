"""What crosses the party boundary: tasks (server to party) and replies (party to server).

Messages are small frozen dataclasses of numbers, strings and arrays of unit-cube points or
scores, never party data. :func:`encode` turns one into JSON bytes, so that a real transport can
carry it and the federation can log its size; :func:`decode` reads it back.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import pickle
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Task", "Reply", "EvaluateTask", "EvaluateReply", "FitTask", "FitReply", "encode", "decode"]

_REGISTRY: dict[str, type] = {}


def message(cls):
    """Class decorator: a frozen dataclass that :func:`encode` / :func:`decode` know by name."""
    cls = dataclass(frozen=True)(cls)
    _REGISTRY[cls.__name__] = cls
    return cls


class Task:
    """A unit of work the server asks of one party. ``kind`` names the party method that runs it."""

    kind: str = ""


class Reply:
    """A party's answer to a task. ``error`` is set (a message) when the whole task failed."""

    error: str | None


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

    kind = "evaluate"

    def __post_init__(self):
        points = np.atleast_2d(np.asarray(self.points, dtype=float))
        object.__setattr__(self, "points", points)


@message
class EvaluateReply(Reply):
    """Summaries of a party's evaluation of each point of an :class:`EvaluateTask`.

    Attributes
    ----------
    scores : ndarray of shape (n_points,)
        The objective: the party's mean CV score of each point (higher is better), NaN where the
        evaluation failed and ``error_score`` is NaN.
    test_scores, train_scores : dict of str to ndarray of shape (n_points,)
        Mean test (train) score of each metric; ``train_scores`` is empty unless asked.
    std_scores : dict of str to ndarray of shape (n_points,)
        Standard deviation of the test score over the party's folds.
    fit_time, score_time : ndarray of shape (n_points,)
        Mean seconds per fold (0 for cached configurations).
    n_samples : int
        The party's number of samples (for weighted aggregation).
    errors : tuple of str or None
        One entry per point: the failure message, or None.
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
    errors: tuple = ()
    cached: np.ndarray | None = None
    error: str | None = None


@message
class FitTask(Task):
    """Fit the configuration ``point`` on the party's own data (the ``"ensemble"`` final fit)."""

    point: np.ndarray

    kind = "fit"


@message
class FitReply(Reply):
    """A party's fitted model: the only thing besides summaries that ever leaves a party, and
    only for ``final_fit="ensemble"``."""

    model: Any
    n_samples: int
    fit_time: float = 0.0
    error: str | None = None


# --------------------------------------------------------------------------- serialisation
def _to_json(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        fields = {f.name: _to_json(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
        return {"__message__": type(obj).__name__, **fields}
    if isinstance(obj, np.ndarray):
        return {"__array__": obj.tolist(), "dtype": obj.dtype.str}
    if hasattr(obj, "get_params") and hasattr(obj, "fit"):  # a fitted model (FitReply)
        return {"__model__": base64.b64encode(pickle.dumps(obj)).decode()}
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, dict):
        return {"__dict__": [[_to_json(k), _to_json(v)] for k, v in obj.items()]}
    if isinstance(obj, (list, tuple)):
        return [_to_json(v) for v in obj]
    if isinstance(obj, float) and obj != obj:
        return {"__float__": "nan"}
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    raise TypeError(f"{type(obj).__name__} cannot cross the party boundary: {obj!r}")


def _from_json(obj: Any) -> Any:
    if isinstance(obj, list):
        return tuple(_from_json(v) for v in obj)
    if not isinstance(obj, dict):
        return obj
    if "__array__" in obj:
        return np.array(obj["__array__"], dtype=np.dtype(obj["dtype"]))
    if "__model__" in obj:
        return pickle.loads(base64.b64decode(obj["__model__"]))
    if "__float__" in obj:
        return float(obj["__float__"])
    if "__dict__" in obj:
        return {_from_json(k): _from_json(v) for k, v in obj["__dict__"]}
    cls = _REGISTRY[obj["__message__"]]
    return cls(**{k: _from_json(v) for k, v in obj.items() if k != "__message__"})


def encode(msg) -> bytes:
    """Serialise a task or reply to JSON bytes (raises ``TypeError`` for anything else)."""
    return json.dumps(_to_json(msg), allow_nan=True, separators=(",", ":")).encode()


def decode(data: bytes):
    """Read back a message written by :func:`encode`."""
    return _from_json(json.loads(data))
