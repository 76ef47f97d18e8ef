"""Party-level accounting of DP-Fed-PNE: every value a party releases composes.

A party's release is a node mean (or the validation score) clipped to ``[0, 1]`` plus
``N(0, sigma^2)``: a Gaussian mechanism of sensitivity 1 *with respect to the party's whole
dataset* (every release is a function of all of it, so the releases of one party compose; the
parties' data are disjoint, so the guarantee of each party is its own). ``k`` Gaussian releases
of noise ``sigma`` compose exactly (also adaptively) to one Gaussian mechanism of sensitivity
``sqrt(k)``, i.e. ``mu``-GDP with ``mu = sqrt(k) / sigma`` (Dong, Roth, Su 2022, Cor. 3.3), whose
tight ``(epsilon, delta)`` curve is the analytic Gaussian mechanism's (Balle & Wang 2018, Thm. 8):

    delta(epsilon) = Phi(-epsilon / mu + mu / 2) - e^epsilon Phi(-epsilon / mu - mu / 2).

``accountant="analytic"`` uses this closed form; ``"pld"`` and ``"rdp"`` ask Google's
``dp-accounting`` (the optional ``dp`` extra) for the same composition (PLD agrees with the
closed form up to its discretisation; RDP is looser).
"""

from __future__ import annotations

import math

from scipy.optimize import brentq
from scipy.stats import norm

from ..._optional import import_optional

__all__ = ["ACCOUNTANTS", "paper_noise_std", "paper_epsilon", "party_epsilon", "noise_for_target"]

ACCOUNTANTS = ("analytic", "pld", "rdp")


def paper_noise_std(epsilon: float, delta: float) -> float:
    """``sigma = sqrt(2 log(1.25 / delta)) / epsilon``: DP-Fed-PNE's noise for one release
    (App. D.2, Theorem D.1, the classic Gaussian mechanism; proven for ``epsilon < 1``)."""
    return math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def paper_epsilon(noise_std: float, delta: float) -> float:
    """The per-release ``epsilon`` the paper states for ``noise_std``: the inverse of
    :func:`paper_noise_std` (meaningful below 1 only)."""
    return math.sqrt(2.0 * math.log(1.25 / delta)) / noise_std


def _gaussian_delta(epsilon: float, mu: float) -> float:
    return norm.cdf(-epsilon / mu + mu / 2) - math.exp(epsilon + norm.logcdf(-epsilon / mu - mu / 2))


def party_epsilon(noise_std: float, n_releases: int, delta: float, accountant: str = "analytic") -> float:
    """The ``epsilon`` at ``delta`` of ``n_releases`` Gaussian releases of sensitivity 1.

    Examples
    --------
    >>> from fedsearch.algorithms.fedpne.privacy import party_epsilon
    >>> round(party_epsilon(10.0, 100, 1e-5), 3)   # mu = 1
    4.377
    """
    if n_releases <= 0:
        return 0.0
    if accountant == "analytic":
        mu = math.sqrt(n_releases) / noise_std
        if _gaussian_delta(0.0, mu) <= delta:
            return 0.0
        high = 1.0
        while _gaussian_delta(high, mu) > delta:
            high *= 2.0
        return float(brentq(lambda e: _gaussian_delta(e, mu) - delta, 0.0, high, xtol=1e-10))
    dp = import_optional("dp_accounting", "dp", f"The {accountant!r} accountant of DP-Fed-PNE")
    event = dp.SelfComposedDpEvent(dp.GaussianDpEvent(noise_std), int(n_releases))
    if accountant == "pld":
        from dp_accounting.pld import pld_privacy_accountant
        acc = pld_privacy_accountant.PLDAccountant()
    else:
        from dp_accounting import rdp
        acc = rdp.RdpAccountant()
    acc.compose(event)
    return float(acc.get_epsilon(delta))


def noise_for_target(epsilon: float, delta: float, n_releases: int, accountant: str = "analytic") -> float:
    """The smallest ``sigma`` such that ``n_releases`` releases are ``(epsilon, delta)``-DP.

    Examples
    --------
    >>> from fedsearch.algorithms.fedpne.privacy import noise_for_target, party_epsilon
    >>> sigma = noise_for_target(1.0, 1e-5, 101)
    >>> round(party_epsilon(sigma, 101, 1e-5), 6)
    1.0
    """
    if accountant == "analytic":  # the mu of the target, then sigma = sqrt(k) / mu
        high = 1.0
        while _gaussian_delta(epsilon, high) < delta:
            high *= 2.0
        mu = brentq(lambda m: _gaussian_delta(epsilon, m) - delta, 1e-9, high, xtol=1e-12)
        return math.sqrt(n_releases) / float(mu)
    low, high = 1e-3, 1.0
    while party_epsilon(high, n_releases, delta, accountant) > epsilon:
        low, high = high, high * 2.0
    return float(brentq(lambda s: party_epsilon(s, n_releases, delta, accountant) - epsilon, low, high,
                        xtol=1e-4 * high))
