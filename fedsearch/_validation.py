"""The one validation mechanism, for estimators, strategies and functions, with one message
template (scikit-learn's):

``The 'n_iter' parameter of FLoRASearchCV must be an int in the range [1, inf). Got 0 instead.``
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

__all__ = ["InvalidParameterError", "Constraint", "interval", "options", "instance_of", "check_value",
           "validate_params"]


class InvalidParameterError(ValueError, TypeError):
    """A constructor parameter has a value it cannot take (a ``ValueError`` and a ``TypeError``)."""


@dataclass(frozen=True)
class Constraint:
    accepts: Callable[[Any], bool]
    description: str


def _is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_))


def _is_real(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))


def interval(kind: type, low=None, high=None, closed: str = "both") -> Constraint:
    """Numbers of ``kind`` (``numbers.Integral`` or ``numbers.Real``) in a range."""
    is_kind = _is_int if kind is numbers.Integral else _is_real
    left = closed in ("left", "both")
    right = closed in ("right", "both")

    def accepts(v):
        if not is_kind(v) or (kind is numbers.Real and np.isnan(v)):
            return False
        if low is not None and (v < low or (v == low and not left)):
            return False
        return high is None or not (v > high or (v == high and not right))

    lo = "-inf" if low is None else f"{low}"
    hi = "inf" if high is None else f"{high}"
    brackets = ("[" if left and low is not None else "(", "]" if right and high is not None else ")")
    name = "an int" if kind is numbers.Integral else "a float"
    return Constraint(accepts, f"{name} in the range {brackets[0]}{lo}, {hi}{brackets[1]}")


def options(*values) -> Constraint:
    """One of the given strings (or other values compared by ``==``)."""
    def accepts(v):
        return isinstance(v, str) and v in values if all(isinstance(o, str) for o in values) else v in values

    return Constraint(accepts, f"one of {{{', '.join(repr(o) for o in values)}}}")


def instance_of(*types: type, description: str | None = None) -> Constraint:
    """An instance of one of ``types``."""
    names = " or ".join(t.__name__ for t in types)
    return Constraint(lambda v: isinstance(v, types) and not (
        bool not in types and isinstance(v, (bool, np.bool_))), description or f"an instance of {names}")


REAL = Constraint(_is_real, "a float (NaN allowed)")
NONE = Constraint(lambda v: v is None, "None")
BOOLEAN = Constraint(lambda v: isinstance(v, (bool, np.bool_)), "a bool")
CALLABLE = Constraint(callable, "a callable")
POSITIVE = interval(numbers.Real, 0, None, closed="neither")
POSITIVE_INT = interval(numbers.Integral, 1, None)
OPEN_UNIT = interval(numbers.Real, 0, 1, closed="neither")
RANDOM_STATE = Constraint(
    lambda v: v is None or _is_int(v) and 0 <= v < 2**32 or isinstance(v, (np.random.RandomState, np.random.Generator)),
    "an int in the range [0, 4294967295], a numpy RandomState or Generator, or None",
)


def check_value(owner: str, name: str, value, *constraints: Constraint) -> None:
    """Raise :class:`InvalidParameterError` unless ``value`` meets one of ``constraints``.

    ``owner`` names the class or function the parameter belongs to, in the message:
    ``The 'nu1' parameter of FedPNEStrategy must be a float in the range (0, inf). Got 0 instead.``
    """
    if any(c.accepts(value) for c in constraints):
        return
    descs = [c.description for c in constraints]
    expected = descs[0] if len(descs) == 1 else ", ".join(descs[:-1]) + " or " + descs[-1]
    raise InvalidParameterError(f"The {name!r} parameter of {owner} must be {expected}. Got {value!r} instead.")


def validate_params(obj) -> None:
    """Check every parameter of ``obj`` (an estimator) listed in its ``_parameter_constraints``."""
    for name, constraints in obj._parameter_constraints.items():
        check_value(type(obj).__name__, name, getattr(obj, name), *constraints)
