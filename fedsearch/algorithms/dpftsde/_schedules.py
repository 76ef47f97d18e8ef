"""Schedules of DP-FTS-DE: the weights' temperature (App. B) and the probability p_t (Algo. 2 l.5)."""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

__all__ = ["weight_exponent", "local_probability", "P_SCHEDULES"]


def weight_exponent(round: int, region_weight: float = 15.0, constant_rounds: int = 10,
                    decay_rounds: int = 30) -> float:
    """The exponent a_t of the aggregate built in server round ``round`` (0 is the init round).

    App. B: a_t = a + 1 for the first ``constant_rounds`` rounds, then a linear decay to 1 over
    ``decay_rounds`` rounds, then 1 (uniform weights). The authors' code for the real-world
    experiments: rounds 0..9 use 16, rounds 10..39 use ``linspace(16, 1, 30)[round - 10]`` and
    round 39 on is uniform (notes §1.5). The synthetic schedule is (6, 5): 16 for t <= 5, then
    16, 12.25, 8.5, 4.75, 1.
    """
    top = region_weight + 1.0
    k = round - constant_rounds
    if k < 0:
        return top
    if k >= decay_rounds:
        return 1.0
    return float(np.linspace(top, 1.0, decay_rounds)[k])


def _one_over_t(iteration: int) -> float:
    return 1.0 - 1.0 / iteration


def _one_over_sqrt_t(iteration: int) -> float:
    return 1.0 - 1.0 / math.sqrt(iteration)


# 1 - p_t = 1/t for the real-world experiments, 1/sqrt(t) for the synthetic one (paper §5). The
# authors' code counts t from the first BO iteration: p = 0 there, then 0.5, 0.667, ... (notes §1.6).
P_SCHEDULES: dict[str, Callable[[int], float]] = {"1/t": _one_over_t, "1/sqrt(t)": _one_over_sqrt_t}


def local_probability(iteration: int, schedule="1/t") -> float:
    """p_t: the probability that a party follows its own GP at BO iteration ``iteration`` >= 1.

    ``schedule`` is a key of ``P_SCHEDULES`` or a callable of the iteration returning a number
    in [0, 1]. With probability 1 - p_t the party maximises the server's aggregate instead.
    """
    func = P_SCHEDULES[schedule] if isinstance(schedule, str) else schedule
    return float(func(iteration))
