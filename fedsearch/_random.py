"""The one seeding policy.

``random_state`` takes what scikit-learn takes (None, an int, a ``RandomState``) and a numpy
``Generator``. An estimator turns it into a ``RandomState`` with :func:`check_random_state`
(a Generator is consumed like a RandomState instance is: a second ``fit`` draws anew); a
strategy turns whatever it is given into a ``Generator`` with :func:`as_generator`; an integer
seed for a sub-component is drawn with :func:`draw_seed`.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils import check_random_state as _sklearn_check_random_state

__all__ = ["check_random_state", "as_generator", "draw_seed"]


def check_random_state(seed) -> np.random.RandomState:
    """scikit-learn's ``check_random_state``, also accepting a numpy ``Generator``."""
    if isinstance(seed, np.random.Generator):
        return np.random.RandomState(int(seed.integers(2**32)))
    return _sklearn_check_random_state(seed)


def draw_seed(random_state) -> int:
    """An int seed in ``[0, 2**31 - 1)``: the seed itself when ``random_state`` is an int,
    otherwise one draw of its generator."""
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        return int(random_state)
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def as_generator(random_state) -> np.random.Generator:
    """A ``Generator`` for a strategy: seeded by an int or None, drawn from a ``RandomState``,
    or the ``Generator`` itself."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        random_state = draw_seed(random_state)
    return np.random.default_rng(random_state)
