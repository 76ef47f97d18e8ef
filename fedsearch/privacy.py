"""Privacy accounting: the one home of fedsearch's accountants.

Two mechanisms are accounted here, both through Google's ``dp-accounting`` where it is asked for:

- the Poisson-subsampled Gaussian mechanism of DP-FTS-DE (:func:`subsampled_gaussian_epsilon`,
  :func:`noise_multiplier_for_epsilon`);
- composed Gaussian releases of sensitivity 1, DP-Fed-PNE's party-level guarantee
  (:func:`gaussian_epsilon`, :func:`gaussian_noise_for_epsilon`, and the per-release figures of
  the classic Gaussian mechanism the paper states, :func:`classic_gaussian_noise`,
  :func:`classic_gaussian_epsilon`).

Subsampled Gaussian
-------------------
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

Composed Gaussian releases
--------------------------
A DP-Fed-PNE party releases values clipped to ``[0, 1]`` plus ``N(0, sigma^2)``: Gaussian
mechanisms of sensitivity 1 *with respect to the party's whole dataset* (every release is a
function of all of it, so the releases of one party compose; the parties' data are disjoint, so
the guarantee of each party is its own). ``k`` such releases compose exactly (also adaptively)
to one Gaussian mechanism of sensitivity ``sqrt(k)``, i.e. ``mu``-GDP with ``mu = sqrt(k) / sigma``
(Dong, Roth, Su 2022, Cor. 3.3), whose tight ``(epsilon, delta)`` curve is the analytic Gaussian
mechanism's (Balle & Wang 2018, Thm. 8)::

    delta(epsilon) = Phi(-epsilon / mu + mu / 2) - e^epsilon Phi(-epsilon / mu - mu / 2).

``accountant="analytic"`` uses this closed form; ``"pld"`` and ``"rdp"`` are the subsampled
accountants above at sampling rate 1 (PLD agrees with the closed form up to its discretisation;
RDP is looser).
"""

from __future__ import annotations

import functools
import logging
import math
import numbers

import numpy as np
from scipy.optimize import brentq
from scipy.special import gammaln, logsumexp, xlog1py, xlogy
from scipy.stats import norm

from ._optional import import_optional
from ._validation import OPEN_UNIT, POSITIVE, InvalidParameterError, check_value, interval, options

__all__ = ["subsampled_gaussian_epsilon", "noise_multiplier_for_epsilon", "gaussian_epsilon",
           "gaussian_noise_for_epsilon", "classic_gaussian_noise", "classic_gaussian_epsilon",
           "GAUSSIAN_ACCOUNTANTS"]

ACCOUNTANTS = ("paper", "rdp", "pld")
#: the accountants of composed (not subsampled) Gaussian releases
GAUSSIAN_ACCOUNTANTS = ("analytic", "pld", "rdp")
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
    release = dpa.GaussianDpEvent(float(noise_multiplier))
    if sampling_rate < 1:
        release = dpa.PoissonSampledDpEvent(float(sampling_rate), release)
    event = dpa.SelfComposedDpEvent(release, int(rounds))
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


# --------------------------------------------------------------------------- composed Gaussian releases
def classic_gaussian_noise(epsilon: float, delta: float) -> float:
    """``sigma = sqrt(2 log(1.25 / delta)) / epsilon``: the classic Gaussian mechanism's noise for one
    release of sensitivity 1 (Dwork & Roth 2014, Thm. A.1; DP-Fed-PNE App. D.2, Theorem D.1);
    proven for ``epsilon < 1`` only."""
    return math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def classic_gaussian_epsilon(noise_std: float, delta: float) -> float:
    """The per-release ``epsilon`` of :func:`classic_gaussian_noise` for ``noise_std`` (its inverse;
    meaningful below 1 only)."""
    return math.sqrt(2.0 * math.log(1.25 / delta)) / noise_std


def _gdp_delta(epsilon: float, mu: float) -> float:
    """``delta(epsilon)`` of ``mu``-GDP (the analytic Gaussian mechanism, Balle & Wang 2018, Thm. 8)."""
    return norm.cdf(-epsilon / mu + mu / 2) - math.exp(epsilon + norm.logcdf(-epsilon / mu - mu / 2))


def gaussian_epsilon(noise_std, releases, delta, accountant="analytic") -> float:
    """The ``epsilon`` at ``delta`` of ``releases`` composed Gaussian releases of sensitivity 1.

    Parameters
    ----------
    noise_std : float
        ``sigma`` of each release (its noise multiplier: the sensitivity is 1).
    releases : int
        Number ``k >= 0`` of releases, composed (adaptively or not).
    delta : float
        Target delta in (0, 1).
    accountant : {"analytic", "pld", "rdp"}, default="analytic"
        The exact closed form, or ``dp-accounting``'s PLD or RDP accountant (the ``dp`` extra).

    Returns
    -------
    epsilon : float

    Examples
    --------
    >>> from fedsearch.privacy import gaussian_epsilon
    >>> round(gaussian_epsilon(10.0, 100, 1e-5), 3)   # mu = 1
    4.377
    """
    func = "gaussian_epsilon"
    check_value(func, "noise_std", noise_std, POSITIVE)
    check_value(func, "releases", releases, interval(numbers.Integral, 0, None))
    check_value(func, "delta", delta, OPEN_UNIT)
    check_value(func, "accountant", accountant, options(*GAUSSIAN_ACCOUNTANTS))
    if releases == 0:
        return 0.0
    if accountant != "analytic":
        return _epsilon(1.0, noise_std, releases, delta, accountant, "add_remove")
    mu = math.sqrt(releases) / noise_std
    if _gdp_delta(0.0, mu) <= delta:
        return 0.0
    high = 1.0
    while _gdp_delta(high, mu) > delta:
        high *= 2.0
    return float(brentq(lambda e: _gdp_delta(e, mu) - delta, 0.0, high, xtol=1e-10))


def gaussian_noise_for_epsilon(epsilon, releases, delta, accountant="analytic") -> float:
    """The smallest ``sigma`` such that ``releases`` composed Gaussian releases of sensitivity 1 are
    ``(epsilon, delta)``-DP: exact for ``"analytic"``; for ``"pld"`` and ``"rdp"`` the
    :func:`noise_multiplier_for_epsilon` search at sampling rate 1 (never above the target).

    Examples
    --------
    >>> from fedsearch.privacy import gaussian_epsilon, gaussian_noise_for_epsilon
    >>> sigma = gaussian_noise_for_epsilon(1.0, 101, 1e-5)
    >>> round(gaussian_epsilon(sigma, 101, 1e-5), 6)
    1.0
    """
    func = "gaussian_noise_for_epsilon"
    check_value(func, "epsilon", epsilon, POSITIVE)
    check_value(func, "releases", releases, interval(numbers.Integral, 1, None))
    check_value(func, "delta", delta, OPEN_UNIT)
    check_value(func, "accountant", accountant, options(*GAUSSIAN_ACCOUNTANTS))
    if accountant != "analytic":
        return noise_multiplier_for_epsilon(epsilon, 1.0, releases, delta, accountant)
    high = 1.0  # the mu of the target, then sigma = sqrt(k) / mu
    while _gdp_delta(epsilon, high) < delta:
        high *= 2.0
    mu = brentq(lambda m: _gdp_delta(epsilon, m) - delta, 1e-9, high, xtol=1e-12)
    return math.sqrt(releases) / float(mu)
