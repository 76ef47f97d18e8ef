"""Privacy accounting for the Poisson-subsampled Gaussian mechanism.

One round of DP-FTS-DE (and of DP-FedAvg) selects each party independently with probability
``q``, sums the clipped vectors of the selected parties and adds Gaussian noise whose standard
deviation is ``z`` times the sensitivity. The privacy loss after ``T`` such rounds, for a given
``delta``, is computed by one of three accountants:

``"paper"``
    The moments accountant of Abadi et al. (2016) as the DP-FTS-DE paper used it: the Rényi
    divergence of the subsampled Gaussian at the integer orders 2..32 (Mironov, Talwar and
    Zhang 2019, binomial expansion), composed over ``T`` rounds, with the classic conversion
    ``epsilon = min_alpha [T RDP(alpha) - log(delta) / (alpha - 1)]``. It reproduces every
    epsilon the paper reports, and needs nothing beyond numpy and scipy.
``"rdp"``
    Google's ``dp-accounting`` Rényi accountant (fractional and integer orders, improved
    conversion): a tighter bound.
``"pld"``
    Google's ``dp-accounting`` privacy-loss-distribution accountant: the tightest bound, and the
    only one here that also handles the replace-one neighbouring relation.

``"rdp"`` and ``"pld"`` need the optional extra ``pip install 'fedsearch[dp]'``.
"""

from __future__ import annotations

import functools
import logging
import math
import numbers

import numpy as np
from scipy.special import gammaln, logsumexp, xlog1py, xlogy

from ._optional import import_optional
from ._validation import OPEN_UNIT, POSITIVE, InvalidParameterError, check_value, interval, options

__all__ = ["subsampled_gaussian_epsilon", "noise_multiplier_for_epsilon"]

ACCOUNTANTS = ("paper", "rdp", "pld")
NEIGHBORING = ("add_remove", "replace")

# The integer Rényi orders of the classic moments accountant; the paper's 14 epsilon values are
# all reached at orders 2 to 5 (notes §2.2).
_PAPER_ORDERS = np.arange(2, 33)
# dp-accounting's PLD grid step; 1e-3 keeps a pessimistic (valid) bound within 1e-5 of the
# default 1e-4 at the paper's settings, about ten times faster.
_PLD_DISCRETIZATION = 1e-3
# noise_multiplier_for_epsilon searches z in this range, to this relative precision.
_Z_RANGE = (1e-3, 1e4)
_Z_RTOL = 1e-3


def _check_common(func, sampling_rate, rounds, delta, accountant, neighboring) -> None:
    check_value(func, "sampling_rate", sampling_rate, interval(numbers.Real, 0, 1, closed="right"))
    check_value(func, "rounds", rounds, interval(numbers.Integral, 0, None))
    check_value(func, "delta", delta, OPEN_UNIT)
    check_value(func, "accountant", accountant, options(*ACCOUNTANTS))
    check_value(func, "neighboring", neighboring, options(*NEIGHBORING))
    if neighboring == "replace" and accountant != "pld":
        raise InvalidParameterError(
            f"The 'neighboring' parameter of {func} can be 'replace' only with accountant='pld'. "
            f"Got neighboring='replace' with accountant={accountant!r} instead."
        )


def _paper_rdp(sampling_rate: float, noise_multiplier: float) -> np.ndarray:
    """RDP of one Poisson-subsampled Gaussian at the integer orders 2..32.

    ``RDP(alpha) = log sum_k C(alpha, k) (1-q)^(alpha-k) q^k exp((k^2 - k) / (2 z^2)) / (alpha - 1)``
    (Mironov, Talwar, Zhang 2019, Sec. 3.3), in log space so that small ``z`` does not overflow.
    """
    q, z = float(sampling_rate), float(noise_multiplier)
    out = np.empty(len(_PAPER_ORDERS))
    for j, alpha in enumerate(_PAPER_ORDERS):
        k = np.arange(alpha + 1)
        log_terms = (gammaln(alpha + 1) - gammaln(k + 1) - gammaln(alpha - k + 1)
                     + xlog1py(alpha - k, -q) + xlogy(k, q) + (k * k - k) / (2 * z * z))
        out[j] = logsumexp(log_terms) / (alpha - 1)
    return out


def _paper_epsilon(rdp: np.ndarray, rounds, delta: float) -> np.ndarray:
    """Classic RDP-to-(epsilon, delta) conversion, minimised over the orders; ``rounds`` may be an array."""
    rounds = np.asarray(rounds, dtype=float)[..., None]
    return np.min(rounds * rdp - math.log(delta) / (_PAPER_ORDERS - 1), axis=-1)


def _dp_accounting_epsilon(sampling_rate, noise_multiplier, rounds, delta, accountant, neighboring) -> float:
    dpa = import_optional("dp_accounting", "dp", f"accountant={accountant!r}")
    relation = (dpa.NeighboringRelation.ADD_OR_REMOVE_ONE if neighboring == "add_remove"
                else dpa.NeighboringRelation.REPLACE_ONE)
    event = dpa.SelfComposedDpEvent(
        dpa.PoissonSampledDpEvent(float(sampling_rate), dpa.GaussianDpEvent(float(noise_multiplier))), int(rounds))
    if accountant == "rdp":
        acc = dpa.rdp.RdpAccountant(neighboring_relation=relation)
    else:
        acc = dpa.pld.PLDAccountant(relation, value_discretization_interval=_PLD_DISCRETIZATION)
    # The RDP accountant logs a warning for every fractional order whose series does not converge
    # (it then leaves that order out, which is what we want): keep the user's log clean.
    absl = logging.getLogger("absl")
    level = absl.level
    absl.setLevel(logging.ERROR)
    try:
        acc.compose(event)
        return float(acc.get_epsilon(float(delta)))
    finally:
        absl.setLevel(level)


def _epsilon(sampling_rate, noise_multiplier, rounds, delta, accountant, neighboring) -> float:
    if rounds == 0:
        return 0.0
    if accountant == "paper":
        return float(_paper_epsilon(_paper_rdp(sampling_rate, noise_multiplier), rounds, delta))
    return _dp_accounting_epsilon(sampling_rate, noise_multiplier, rounds, delta, accountant, neighboring)


def _epsilon_curve(sampling_rate, noise_multiplier, rounds, delta, accountant="paper",
                   neighboring="add_remove") -> np.ndarray:
    """Epsilon after each of the rounds 1..``rounds`` (one accountant call per round for rdp/pld)."""
    if accountant == "paper":
        return _paper_epsilon(_paper_rdp(sampling_rate, noise_multiplier), np.arange(1, rounds + 1), delta)
    return np.array([_epsilon(sampling_rate, noise_multiplier, t, delta, accountant, neighboring)
                     for t in range(1, rounds + 1)])


def subsampled_gaussian_epsilon(sampling_rate, noise_multiplier, rounds, delta, accountant="paper",
                                *, neighboring="add_remove") -> float:
    """Privacy loss epsilon of ``rounds`` Poisson-subsampled Gaussian releases.

    Use it to plan a budget before a search: one DP-FTS-DE round is one release, with
    ``sampling_rate = q`` and ``noise_multiplier = z``; a search of ``n_iter`` evaluations per
    party with ``n_init`` initial points releases ``n_iter - n_init`` aggregates.

    Parameters
    ----------
    sampling_rate : float
        Probability ``q`` in (0, 1] that a party takes part in a round (Poisson subsampling).
    noise_multiplier : float
        Ratio ``z`` > 0 of the Gaussian noise's standard deviation to the sensitivity.
    rounds : int
        Number ``T`` >= 0 of releases, composed.
    delta : float
        Target delta in (0, 1). The paper uses ``1 / N**1.1`` for ``N`` parties; for a handful of
        parties that is far too large, choose e.g. ``1e-5``.
    accountant : {"paper", "rdp", "pld"}, default="paper"
        ``"paper"``: integer-order moments accountant with the classic conversion (reproduces the
        DP-FTS-DE paper). ``"rdp"`` and ``"pld"``: Google's ``dp-accounting`` (the optional extra
        ``fedsearch[dp]``), tighter.
    neighboring : {"add_remove", "replace"}, default="add_remove"
        Adjacent federations differ by the presence of one party (the paper's notion), or by
        the content of one party's data (``"replace"``, only with ``accountant="pld"``).

    Returns
    -------
    epsilon : float
        An upper bound on epsilon for the given delta (0 for zero rounds).

    Examples
    --------
    The landmine experiment of the paper: 29 parties, q = 0.35, z = 1, 60 rounds.

    >>> from fedsearch.privacy import subsampled_gaussian_epsilon
    >>> round(subsampled_gaussian_epsilon(0.35, 1.0, 60, delta=29 ** -1.1), 2)
    15.17
    """
    func = "subsampled_gaussian_epsilon"
    _check_common(func, sampling_rate, rounds, delta, accountant, neighboring)
    check_value(func, "noise_multiplier", noise_multiplier, POSITIVE)
    return _epsilon(sampling_rate, noise_multiplier, rounds, delta, accountant, neighboring)


def noise_multiplier_for_epsilon(epsilon, sampling_rate, rounds, delta, accountant="paper",
                                 *, neighboring="add_remove") -> float:
    """Smallest noise multiplier ``z`` whose privacy loss after ``rounds`` is at most ``epsilon``.

    Bisection on ``log z`` over [1e-3, 1e4] to a relative precision of 1e-3, always returning
    the end of the bracket that meets the target, so ``subsampled_gaussian_epsilon`` of the
    result is never above ``epsilon``.

    Parameters
    ----------
    epsilon : float
        Target epsilon > 0.
    sampling_rate, rounds, delta, accountant, neighboring
        As in :func:`subsampled_gaussian_epsilon`; ``rounds`` must be at least 1.

    Returns
    -------
    noise_multiplier : float

    Raises
    ------
    ValueError
        When even ``z = 1e4`` does not reach ``epsilon``: the classic conversion of the
        ``"paper"`` accountant never goes below ``log(1/delta) / 31``.

    Examples
    --------
    >>> from fedsearch.privacy import noise_multiplier_for_epsilon, subsampled_gaussian_epsilon
    >>> z = noise_multiplier_for_epsilon(5.0, 0.35, 60, delta=1e-5)
    >>> round(z, 2), subsampled_gaussian_epsilon(0.35, z, 60, delta=1e-5) <= 5.0
    (3.09, True)
    """
    func = "noise_multiplier_for_epsilon"
    check_value(func, "epsilon", epsilon, POSITIVE)
    _check_common(func, sampling_rate, rounds, delta, accountant, neighboring)
    check_value(func, "rounds", rounds, interval(numbers.Integral, 1, None))

    @functools.lru_cache(maxsize=None)
    def eps(z):
        return _epsilon(sampling_rate, z, rounds, delta, accountant, neighboring)

    # Bracket from z = 1 outwards (an accountant is slow far from the answer, PLD above all at
    # tiny z), keeping eps(lo) > epsilon >= eps(hi); epsilon decreases with z.
    z_min, z_max = _Z_RANGE
    lo = hi = 1.0
    if eps(hi) <= epsilon:
        while eps(lo) <= epsilon:
            if lo <= z_min:
                return lo
            hi, lo = lo, max(lo / 2, z_min)
    else:
        while eps(hi) > epsilon:
            if hi >= z_max:
                raise ValueError(
                    f"No noise multiplier up to {z_max:g} gives epsilon <= {epsilon!r} with "
                    f"accountant={accountant!r} (sampling_rate={sampling_rate!r}, rounds={rounds!r}, "
                    f"delta={delta!r}); epsilon at z={z_max:g} is {eps(z_max):.4g}."
                )
            lo, hi = hi, min(hi * 2, z_max)
    while hi / lo > 1 + _Z_RTOL:
        mid = math.sqrt(lo * hi)
        if eps(mid) <= epsilon:
            hi = mid
        else:
            lo = mid
    return hi
