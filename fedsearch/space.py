"""The search space: one home for every conversion between parameters and the unit cube.

Every strategy in fedsearch speaks points of the unit cube ``[0, 1]^d``; every party and estimator
speaks parameter dicts. :class:`SearchSpace` maps one to the other. Each dimension goes through
its distribution's quantile function (``x = dist.ppf(u)``, ``u = dist.cdf(x)``), so uniform points
of the cube follow the user's prior and ``loguniform`` or ``randint`` need no special case. A list
of ``k`` values becomes ``k`` equal bins of ``[0, 1]``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from .messages import register_type

__all__ = ["SearchSpace", "Dimension", "Categorical", "Integer", "Distribution", "point_key"]


def point_key(u) -> tuple:
    """The cache key of a canonical point (see :meth:`SearchSpace.key`): its coordinates to 12
    decimals, so that float noise of a round trip does not split one configuration in two."""
    return tuple(np.round(np.asarray(u, dtype=float), 12))


class Dimension:
    """One parameter of the space, mapped to ``[0, 1]``."""

    name: str

    def to_value(self, u: float) -> Any:  # pragma: no cover - interface
        raise NotImplementedError

    def to_unit(self, value: Any) -> float:  # pragma: no cover - interface
        raise NotImplementedError

    def contains(self, value: Any) -> bool:  # pragma: no cover - interface
        raise NotImplementedError

    #: whether the dimension takes finitely many values (then rounding makes repeats common)
    discrete: bool = False


def _same(a: Any, b: Any) -> bool:
    """Equality of two parameter values: numbers by value (bools apart), NaN equal to NaN,
    anything else by type and ``==`` (identity for estimators)."""
    if a is b:
        return True
    if isinstance(a, (bool, np.bool_)) != isinstance(b, (bool, np.bool_)):
        return False
    if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
        return a == b or (a != a and b != b)
    if type(a) is not type(b):
        return False
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - arbitrary user objects with elementwise ==
        return False


@register_type
@dataclass(frozen=True, eq=False)
class Categorical(Dimension):
    """A list of ``k`` values: ``[0, 1]`` is cut into ``k`` equal bins, one per value."""

    name: str
    values: tuple

    discrete = True

    def to_value(self, u: float) -> Any:
        k = len(self.values)
        return self.values[min(int(math.floor(float(u) * k)), k - 1)]

    def index(self, value: Any) -> int:
        for i, v in enumerate(self.values):
            if _same(v, value):
                return i
        raise ValueError(f"{value!r} is not one of the values of {self.name!r}: {list(self.values)!r}")

    def to_unit(self, value: Any) -> float:
        return (self.index(value) + 0.5) / len(self.values)

    def contains(self, value: Any) -> bool:
        return any(_same(v, value) for v in self.values)


@register_type
@dataclass(frozen=True, eq=False)
class Distribution(Dimension):
    """A frozen ``scipy.stats`` distribution, mapped through its ``ppf`` and ``cdf``."""

    name: str
    dist: Any

    @property
    def discrete(self) -> bool:  # type: ignore[override]
        return isinstance(getattr(self.dist, "dist", None), stats.rv_discrete)

    def _bounds(self) -> tuple[float, float]:
        return tuple(float(b) for b in self.dist.support())

    def to_value(self, u: float) -> Any:
        u = float(np.clip(u, 0.0, 1.0))
        x = float(self.dist.ppf(u))
        if not math.isfinite(x):  # unbounded tails: step inside the support
            x = float(self.dist.ppf(np.clip(u, 1e-12, 1 - 1e-12)))
        low, high = self._bounds()
        x = min(max(x, low), high)  # a discrete ppf(0) lies one below the support
        if self.discrete:
            return int(round(x))
        return x

    def to_unit(self, value: Any) -> float:
        x = float(value)
        if self.discrete:
            # the middle of the cdf jump at x, so that ppf maps it back to x exactly
            return float(0.5 * (self.dist.cdf(x - 1) + self.dist.cdf(x)))
        return float(self.dist.cdf(x))

    def contains(self, value: Any) -> bool:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            return False
        low, high = self._bounds()
        if self.discrete and float(value) != int(value):
            return False
        return low <= float(value) <= high


@register_type
@dataclass(frozen=True, eq=False)
class Integer(Dimension):
    """Integers ``low..high``, each an equal bin of ``[0, 1]`` on a linear or log scale
    (``{"type": "int", "space": "log"}`` in ``api_config``)."""

    name: str
    low: int
    high: int
    log: bool = False

    discrete = True

    def _warp(self, x):
        return np.log(x) if self.log else np.asarray(x, dtype=float)

    def _unwarp(self, w):
        return np.exp(w) if self.log else w

    def to_value(self, u: float) -> int:
        lo, hi = self._warp(self.low), self._warp(self.high + 1)
        x = math.floor(float(self._unwarp(lo + float(u) * (hi - lo))))
        return int(min(max(x, self.low), self.high))

    def to_unit(self, value: Any) -> float:
        lo, hi = self._warp(self.low), self._warp(self.high + 1)
        a, b = self._warp(int(value)), self._warp(int(value) + 1)
        return float((0.5 * (a + b) - lo) / (hi - lo))

    def contains(self, value: Any) -> bool:
        return (
            isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))
            and self.low <= value <= self.high
        )


def _check_distribution(name: str, dist: Any) -> None:
    if isinstance(dist, (stats.rv_continuous, stats.rv_discrete)):  # the class, not frozen
        raise TypeError(
            f"The distribution of parameter {name!r} must be a frozen scipy.stats distribution, "
            f"with its arguments (e.g. scipy.stats.{dist.name}(...)). Got the unfrozen "
            f"scipy.stats.{dist.name} instead."
        )
    missing = [m for m in ("rvs", "ppf", "cdf") if not callable(getattr(dist, m, None))]
    if missing:
        raise TypeError(
            f"The distribution of parameter {name!r} must be a frozen scipy.stats distribution "
            f"with rvs, ppf and cdf (e.g. scipy.stats.loguniform(1e-3, 1)) or a list of values. "
            f"Got {dist!r} of type {type(dist).__name__}, which lacks {', '.join(missing)}."
        )


def _dimension(name: str, spec: Any) -> Dimension:
    if not isinstance(name, str) or not name:
        raise TypeError(f"Parameter names must be non-empty strings. Got {name!r}.")
    if isinstance(spec, (str, bytes)) or isinstance(spec, Mapping):
        raise TypeError(
            f"Parameter {name!r} must be a list of values or a frozen scipy.stats distribution. "
            f"Got {spec!r}."
        )
    if isinstance(spec, (Sequence, np.ndarray)):
        values = tuple(v.item() if isinstance(v, np.generic) else v for v in spec)
        if len(values) == 0:
            raise ValueError(f"Parameter {name!r} has an empty list of values; give at least one.")
        return Categorical(name, values)
    _check_distribution(name, spec)
    return Distribution(name, spec)


def _api_dimension(name: str, spec: Mapping) -> Dimension:
    """One entry of the FLoRA / Bayesmark ``api_config`` format (004_*.txt, App. D.2)."""
    kind = spec.get("type")
    if kind == "bool":
        return Categorical(name, (False, True))
    if kind == "cat":
        return Categorical(name, tuple(spec["values"]))
    if kind not in ("real", "int"):
        raise ValueError(
            f"api_config[{name!r}]['type'] must be one of 'real', 'int', 'cat', 'bool'. Got {kind!r}."
        )
    if "values" in spec:
        return Categorical(name, tuple(spec["values"]))
    low, high = spec["range"]
    warp = spec.get("space", "linear")
    if warp not in ("linear", "log", "logit"):
        raise ValueError(f"api_config[{name!r}]['space'] must be 'linear' or 'log'. Got {warp!r}.")
    if not low < high and not (kind == "int" and low == high):
        raise ValueError(f"api_config[{name!r}]['range'] must have low < high. Got {(low, high)!r}.")
    if kind == "int":
        return Integer(name, int(low), int(high), log=warp == "log")
    if warp == "log":
        return Distribution(name, stats.loguniform(low, high))
    return Distribution(name, stats.uniform(low, high - low))


class SearchSpace:
    """A search space over estimator parameters, mapped to the unit cube ``[0, 1]^d``.

    Parameters
    ----------
    spec : dict or list of dict
        scikit-learn style ``param_grid`` / ``param_distributions``: each key is a parameter name
        (Pipeline names such as ``"svc__C"`` work), each value a list of values or a frozen
        ``scipy.stats`` distribution (``loguniform``, ``randint``, ``uniform``...). A list of dicts
        is a union of sub-spaces; one extra cube coordinate then picks the sub-space.

    Attributes
    ----------
    dimensions : list of Dimension
        One per cube coordinate after the sub-space selector.
    n_dims : int
        ``d``, the dimension of the unit cube.

    Examples
    --------
    >>> from scipy.stats import loguniform
    >>> from fedsearch import SearchSpace
    >>> space = SearchSpace({"C": loguniform(1e-2, 1e2), "kernel": ["rbf", "linear"]})
    >>> space.n_dims
    2
    >>> params = space.to_params([0.5, 0.9])
    >>> round(params["C"], 6), params["kernel"]
    (1.0, 'linear')
    >>> space.to_unit({'C': 1.0, 'kernel': 'linear'}).round(3).tolist()
    [0.5, 0.75]
    """

    def __init__(self, spec):
        self._set_subspaces(self._as_subspaces(spec))

    @classmethod
    def from_subspaces(cls, subspaces) -> "SearchSpace":
        """A space from its dimensions: a list (one per sub-space) of lists of :class:`Dimension`."""
        space = cls.__new__(cls)
        space._set_subspaces([list(dims) for dims in subspaces])
        return space

    def _set_subspaces(self, subspaces) -> None:
        self._subspaces: list[list[Dimension]] = subspaces
        self._offsets = []
        offset = 1 if len(subspaces) > 1 else 0
        for dims in subspaces:
            self._offsets.append(offset)
            offset += len(dims)
        self.n_dims = offset
        self.dimensions = [d for dims in subspaces for d in dims]

    @staticmethod
    def _as_subspaces(spec) -> list[list[Dimension]]:
        if isinstance(spec, SearchSpace):
            return spec._subspaces
        if isinstance(spec, Mapping):
            spec = [spec]
        if not isinstance(spec, Sequence) or isinstance(spec, (str, bytes)):
            raise TypeError(
                f"The search space must be a dict or a list of dicts mapping parameter names to "
                f"lists or distributions. Got {spec!r} of type {type(spec).__name__}."
            )
        if len(spec) == 0:
            raise ValueError("The search space is empty: give at least one parameter.")
        subspaces = []
        for sub in spec:
            if not isinstance(sub, Mapping):
                raise TypeError(f"Each element of a list of search spaces must be a dict. Got {sub!r}.")
            subspaces.append([_dimension(name, sub[name]) for name in sub])
        if all(len(dims) == 0 for dims in subspaces):
            raise ValueError("The search space is empty: give at least one parameter.")
        return subspaces

    @classmethod
    def from_api_config(cls, api_config: Mapping) -> "SearchSpace":
        """Build a space from the FLoRA / Bayesmark ``api_config`` format (004_*.txt, App. D.2).

        Each entry is ``{"type": "real"|"int"|"cat"|"bool", "space": "linear"|"log",
        "range": (low, high)}`` or, for ``cat``, ``{"type": "cat", "values": [...]}``.

        Examples
        --------
        >>> space = SearchSpace.from_api_config({
        ...     "C": {"type": "real", "space": "log", "range": (0.01, 1000.0)},
        ...     "max_iter": {"type": "int", "space": "linear", "range": (10, 200)}})
        >>> params = space.to_params([0.5, 0.0])
        >>> round(params["C"], 4), params["max_iter"]
        (3.1623, 10)
        """
        if not isinstance(api_config, Mapping) or not api_config:
            raise ValueError(f"api_config must be a non-empty dict. Got {api_config!r}.")
        dims = []
        for name, spec in api_config.items():
            if not isinstance(spec, Mapping):
                raise TypeError(f"api_config[{name!r}] must be a dict. Got {spec!r}.")
            dims.append(_api_dimension(name, spec))
        return cls.from_subspaces([dims])

    # ------------------------------------------------------------------ conversions
    @property
    def n_subspaces(self) -> int:
        return len(self._subspaces)

    @property
    def param_names(self) -> list[str]:
        """All parameter names, in order of first appearance."""
        return list(dict.fromkeys(d.name for d in self.dimensions))

    @property
    def discrete(self) -> np.ndarray:
        """Boolean mask of the cube coordinates that take finitely many values."""
        mask = [True] if self.n_subspaces > 1 else []
        return np.array(mask + [d.discrete for d in self.dimensions], dtype=bool)

    def _subspace_of(self, u: np.ndarray) -> int:
        if self.n_subspaces == 1:
            return 0
        return min(int(math.floor(float(u[0]) * self.n_subspaces)), self.n_subspaces - 1)

    def to_params(self, u) -> dict:
        """The parameter dict of a point ``u`` of the unit cube."""
        u = self._check_point(u)
        s = self._subspace_of(u)
        off = self._offsets[s]
        return {d.name: d.to_value(u[off + j]) for j, d in enumerate(self._subspaces[s])}

    def to_unit(self, params: Mapping) -> np.ndarray:
        """A point of the unit cube whose parameters are ``params``.

        Coordinates that ``params`` does not use (other sub-spaces) are set to 0.5.
        """
        s = self._find_subspace(params)
        u = np.full(self.n_dims, 0.5)
        if self.n_subspaces > 1:
            u[0] = (s + 0.5) / self.n_subspaces
        off = self._offsets[s]
        for j, d in enumerate(self._subspaces[s]):
            u[off + j] = d.to_unit(params[d.name])
        return u

    def canonical(self, u) -> np.ndarray:
        """The representative point of ``u``'s configuration: ``to_unit(to_params(u))``.

        Two points with the same parameters (integer and categorical rounding) have the same
        canonical point, which makes it a key for caching evaluations.
        """
        return self.to_unit(self.to_params(u))

    def key(self, u) -> tuple:
        """The one cache key of ``u``'s configuration: :func:`point_key` of its canonical point."""
        return point_key(self.canonical(u))

    def contains(self, params: Mapping) -> bool:
        """Whether ``params`` is a configuration of this space."""
        try:
            self._find_subspace(params)
        except ValueError:
            return False
        return True

    def _find_subspace(self, params: Mapping) -> int:
        if not isinstance(params, Mapping):
            raise TypeError(f"params must be a dict. Got {params!r}.")
        for s, dims in enumerate(self._subspaces):
            if set(params) == {d.name for d in dims} and all(d.contains(params[d.name]) for d in dims):
                return s
        raise ValueError(f"{params!r} is not a configuration of this search space ({self!r}).")

    def _check_point(self, u) -> np.ndarray:
        u = np.asarray(u, dtype=float)
        if u.shape != (self.n_dims,):
            raise ValueError(f"A point of this space must have shape ({self.n_dims},). Got {u.shape}.")
        if not np.all(np.isfinite(u)) or np.any(u < 0) or np.any(u > 1):
            raise ValueError(f"A point of this space must lie in the unit cube [0, 1]^{self.n_dims}. Got {u}.")
        return u

    # ------------------------------------------------------------------ enumeration
    @property
    def is_finite(self) -> bool:
        """Whether every dimension is a list of values (a grid)."""
        return all(isinstance(d, Categorical) for d in self.dimensions)

    def grid(self) -> np.ndarray:
        """All points of a finite space, in the order of ``sklearn.model_selection.ParameterGrid``.

        Raises
        ------
        ValueError
            If a dimension is a distribution.
        """
        from sklearn.model_selection import ParameterGrid

        if not self.is_finite:
            raise ValueError("Only a space of lists of values can be enumerated as a grid.")
        grid = [{d.name: list(d.values) for d in dims} for dims in self._subspaces]
        return np.array([self.to_unit(p) for p in ParameterGrid(grid)]).reshape(-1, self.n_dims)

    def __repr__(self) -> str:
        def show(d):
            if isinstance(d, Categorical):
                return f"{d.name}={list(d.values)!r}"
            if isinstance(d, Integer):
                return f"{d.name}=int[{d.low}, {d.high}{', log' if d.log else ''}]"
            name = getattr(getattr(d.dist, "dist", None), "name", type(d.dist).__name__)
            args = ", ".join(f"{a:g}" if isinstance(a, numbers.Real) else repr(a) for a in getattr(d.dist, "args", ()))
            return f"{d.name}={name}({args})"

        subs = ["{" + ", ".join(show(d) for d in dims) + "}" for dims in self._subspaces]
        return f"SearchSpace({subs[0] if len(subs) == 1 else '[' + ', '.join(subs) + ']'})"
