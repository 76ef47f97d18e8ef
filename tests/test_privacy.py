import sys

import numpy as np
import pytest

from fedsearch.privacy import (
    _epsilon_curve,
    gaussian_epsilon,
    gaussian_noise_for_epsilon,
    noise_multiplier_for_epsilon,
    subsampled_gaussian_epsilon,
)

D_SYN = 200 ** -1.1  # the paper's delta = 1 / N^1.1
D_LAND = 29 ** -1.1

# Every epsilon the DP-FTS-DE paper reports (notes §2.2): (q, z, T, delta, epsilon).
PAPER_EPSILONS = [
    (0.15, 1.0, 40, D_SYN, 5.93),
    (0.25, 1.0, 40, D_SYN, 9.91),
    (0.50, 1.0, 40, D_SYN, 20.12),
    (0.25, 1.2, 40, D_SYN, 7.39),
    (0.25, 1.5, 40, D_SYN, 5.22),
    (0.35, 1.0, 60, D_LAND, 15.17),
    (0.35, 1.6, 60, D_LAND, 7.12),
    (0.35, 2.0, 60, D_LAND, 5.14),
    (0.35, 3.0, 60, D_LAND, 3.05),
    (0.35, 4.0, 60, D_LAND, 2.16),
    (0.10, 1.0, 60, D_LAND, 3.75),
    (0.15, 1.0, 60, D_LAND, 5.98),
    (0.20, 1.0, 60, D_LAND, 7.69),
    (0.25, 1.0, 60, D_LAND, 9.82),
]


@pytest.mark.parametrize("q, z, T, delta, expected", PAPER_EPSILONS)
def test_paper_accountant_reproduces_the_papers_epsilons(q, z, T, delta, expected):
    assert round(subsampled_gaussian_epsilon(q, z, T, delta), 2) == expected


def test_full_sampling_is_the_gaussian_mechanisms_rdp():
    # q = 1: RDP(alpha) = alpha / (2 z^2), classic conversion minimised over alpha = 2..32
    alphas = np.arange(2, 33)
    expected = np.min(10 * alphas / (2 * 2.0**2) - np.log(1e-5) / (alphas - 1))
    assert subsampled_gaussian_epsilon(1.0, 2.0, 10, 1e-5) == pytest.approx(expected)


def test_epsilon_grows_with_rounds_and_q_and_falls_with_z():
    base = subsampled_gaussian_epsilon(0.2, 1.5, 30, 1e-5)
    assert subsampled_gaussian_epsilon(0.2, 1.5, 31, 1e-5) > base
    assert subsampled_gaussian_epsilon(0.3, 1.5, 30, 1e-5) > base
    assert subsampled_gaussian_epsilon(0.2, 2.0, 30, 1e-5) < base
    assert subsampled_gaussian_epsilon(0.2, 1.5, 0, 1e-5) == 0.0


def test_epsilon_curve_per_round():
    curve = _epsilon_curve(0.35, 1.0, 60, D_LAND)
    assert curve.shape == (60,)
    assert np.all(np.diff(curve) > 0)
    assert curve[-1] == pytest.approx(subsampled_gaussian_epsilon(0.35, 1.0, 60, D_LAND))
    assert curve[9] == pytest.approx(subsampled_gaussian_epsilon(0.35, 1.0, 10, D_LAND))


def test_noise_multiplier_for_epsilon_is_the_smallest_that_meets_the_target():
    for target in (2.0, 5.0, 10.0):
        z = noise_multiplier_for_epsilon(target, 0.35, 60, D_LAND)
        assert subsampled_gaussian_epsilon(0.35, z, 60, D_LAND) <= target
        assert subsampled_gaussian_epsilon(0.35, z / 1.002, 60, D_LAND) > target


def test_unreachable_epsilon_is_an_error():
    # the classic conversion never goes below log(1/delta) / 31 = 0.371 for delta = 1e-5
    with pytest.raises(ValueError, match=r"No noise multiplier up to 10000 gives epsilon <= 0.1"):
        noise_multiplier_for_epsilon(0.1, 0.35, 60, 1e-5)


@pytest.mark.parametrize("kwargs, match", [
    (dict(sampling_rate=0.0), r"The 'sampling_rate' parameter of subsampled_gaussian_epsilon must be a float in the range \(0, 1\]. Got 0.0 instead."),
    (dict(sampling_rate=1.5), r"'sampling_rate' .* Got 1.5 instead"),
    (dict(noise_multiplier=0), r"The 'noise_multiplier' parameter of subsampled_gaussian_epsilon must be a float in the range \(0, inf\). Got 0 instead."),
    (dict(rounds=2.5), r"The 'rounds' parameter of subsampled_gaussian_epsilon must be an int in the range \[0, inf\). Got 2.5 instead."),
    (dict(delta=1.0), r"The 'delta' parameter .* must be a float in the range \(0, 1\). Got 1.0 instead."),
    (dict(accountant="moments"), r"The 'accountant' parameter .* must be one of \{'paper', 'rdp', 'pld'\}. Got 'moments' instead."),
    (dict(neighboring="replace"), r"'neighboring' parameter of subsampled_gaussian_epsilon can be 'replace' only with accountant='pld'"),
])
def test_validation_messages(kwargs, match):
    params = dict(sampling_rate=0.35, noise_multiplier=1.0, rounds=60, delta=1e-5) | kwargs
    with pytest.raises(ValueError, match=match):
        subsampled_gaussian_epsilon(**params)


def test_validation_of_the_calibration():
    with pytest.raises(ValueError, match=r"The 'epsilon' parameter of noise_multiplier_for_epsilon must be a float in the range \(0, inf\). Got -1 instead."):
        noise_multiplier_for_epsilon(-1, 0.35, 60, 1e-5)
    with pytest.raises(ValueError, match=r"The 'rounds' parameter of noise_multiplier_for_epsilon must be an int in the range \[1, inf\). Got 0 instead."):
        noise_multiplier_for_epsilon(5.0, 0.35, 0, 1e-5)


def test_modern_accountants_need_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "dp_accounting", None)
    with pytest.raises(ImportError, match=r"accountant='pld' needs the optional package 'dp_accounting': pip install 'fedsearch\[dp\]'"):
        subsampled_gaussian_epsilon(0.35, 1.0, 60, 1e-5, accountant="pld")


def test_modern_accountants_are_tighter_and_match_the_notes():
    pytest.importorskip("dp_accounting")
    paper = subsampled_gaussian_epsilon(0.35, 1.0, 60, D_LAND)
    rdp = subsampled_gaussian_epsilon(0.35, 1.0, 60, D_LAND, accountant="rdp")
    pld = subsampled_gaussian_epsilon(0.35, 1.0, 60, D_LAND, accountant="pld")
    assert (round(paper, 2), round(rdp, 2), round(pld, 2)) == (15.17, 13.50, 10.38)
    replace = subsampled_gaussian_epsilon(0.35, 1.0, 60, D_LAND, accountant="pld", neighboring="replace")
    assert round(replace, 1) == 21.4  # notes §2.3: protecting content costs about twice as much


@pytest.mark.slow
def test_calibration_with_pld_matches_the_notes():
    pytest.importorskip("dp_accounting")
    z = noise_multiplier_for_epsilon(5.0, 0.35, 60, D_LAND, accountant="pld")
    assert round(z, 2) == 1.52  # notes §2.2, calibration examples


# --------------------------------------------------------------------------- composed Gaussian releases (DP-Fed-PNE)
def test_composed_gaussian_releases_are_the_subsampled_accountants_at_rate_one():
    pytest.importorskip("dp_accounting")
    for accountant in ("rdp", "pld"):
        assert gaussian_epsilon(2.0, 10, 1e-5, accountant) == subsampled_gaussian_epsilon(1.0, 2.0, 10, 1e-5, accountant)
    # the closed form is tight: PLD agrees with it, RDP is looser
    exact = gaussian_epsilon(2.0, 10, 1e-5)
    assert gaussian_epsilon(2.0, 10, 1e-5, "pld") == pytest.approx(exact, rel=2e-3)
    assert gaussian_epsilon(2.0, 10, 1e-5, "rdp") > exact
    sigma = gaussian_noise_for_epsilon(3.0, 10, 1e-5, "rdp")
    assert gaussian_epsilon(sigma, 10, 1e-5, "rdp") <= 3.0 < gaussian_epsilon(sigma / 1.002, 10, 1e-5, "rdp")


def test_composed_gaussian_analytic_closed_form():
    # k releases of sigma are one Gaussian of sensitivity sqrt(k): only mu = sqrt(k) / sigma matters
    assert gaussian_epsilon(10.0, 100, 1e-5) == pytest.approx(gaussian_epsilon(1.0, 1, 1e-5), rel=1e-9)
    assert gaussian_epsilon(10.0, 0, 1e-5) == 0.0
    sigma = gaussian_noise_for_epsilon(0.5, 40, 1e-6)
    assert gaussian_epsilon(sigma, 40, 1e-6) == pytest.approx(0.5, rel=1e-8)
    with pytest.raises(ValueError, match=r"The 'accountant' parameter of gaussian_epsilon must be one of"):
        gaussian_epsilon(1.0, 3, 1e-5, accountant="paper")
    with pytest.raises(ValueError, match=r"The 'releases' parameter of gaussian_noise_for_epsilon must be an int"):
        gaussian_noise_for_epsilon(1.0, 0, 1e-5)
