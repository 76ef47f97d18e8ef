"""The mathematics of DP-FTS-DE, checked against the paper (002) and the implementation notes."""

import numpy as np
import pytest
from scipy.optimize import check_grad
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

from fedsearch.algorithms.dpftsde._acquisition import LinearFunction, PiecewiseFunction, maximise
from fedsearch.algorithms.dpftsde._features import FourierFeatures, posterior_sample
from fedsearch.algorithms.dpftsde._local import (
    KernelFit, _neg_log_marginal_likelihood, choose_point, fit_kernel, needs_refit, usable_scores)
from fedsearch.algorithms.dpftsde._mechanism import plain_aggregate, private_aggregate
from fedsearch.algorithms.dpftsde._regions import assign_regions, make_regions, region_index, region_weights
from fedsearch.algorithms.dpftsde._schedules import local_probability, weight_exponent


def rng(seed=0):
    return np.random.default_rng(seed)


# --- random Fourier features and the posterior sample (§2, eq. 2) -----------------------------

def test_features_have_unit_norm_times_sqrt_variance():
    f = FourierFeatures.draw(100, 3, 0.01, rng(), variance=2.0)
    Phi = f(rng(1).random((50, 3)))
    assert Phi.shape == (50, 100)
    np.testing.assert_allclose(np.linalg.norm(Phi, axis=1), np.sqrt(2.0))


def test_features_are_normalised_cosines_of_the_drawn_frequencies():
    f = FourierFeatures.draw(400, 2, 0.5, rng())
    x = np.array([0.2, 0.7])
    c = np.cos(f.frequencies @ x + f.offsets)
    np.testing.assert_allclose(f(x)[0], c / np.linalg.norm(c))
    # frequencies ~ N(0, ls^-2): empirical std 1 / 0.5 = 2
    assert np.std(f.frequencies) == pytest.approx(2.0, rel=0.1)
    # phi(x)'phi(x') approximates the SE kernel exp(-|x-x'|^2 / (2 ls^2))
    y = np.array([0.5, 0.4])
    assert f(x)[0] @ f(y)[0] == pytest.approx(np.exp(-np.sum((x - y) ** 2) / (2 * 0.25)), abs=0.1)


def test_gradient_of_a_sampled_function():
    f = FourierFeatures.draw(100, 2, 0.1, rng(), variance=0.7)
    w = rng(1).standard_normal(100)
    for x in rng(2).random((3, 2)):
        assert f.value_and_grad(x, w)[0] == pytest.approx((f(x) @ w)[0])
        assert check_grad(lambda x: f.value_and_grad(x, w)[0], lambda x: f.value_and_grad(x, w)[1], x) < 1e-4


def test_posterior_sample_without_data_is_the_prior():
    samples = np.array([posterior_sample(np.zeros((0, 20)), np.zeros(0), 1e-6, rng(s)) for s in range(2000)])
    np.testing.assert_allclose(samples.mean(axis=0), 0, atol=0.1)
    np.testing.assert_allclose(np.cov(samples.T), np.eye(20), atol=0.12)


def test_posterior_sample_has_the_posterior_mean_and_covariance():
    Phi = rng(1).standard_normal((6, 4))
    y = rng(2).standard_normal(6)
    lam = 0.5
    sigma = Phi.T @ Phi + lam * np.eye(4)
    samples = np.array([posterior_sample(Phi, y, lam, rng(s)) for s in range(4000)])
    np.testing.assert_allclose(samples.mean(axis=0), np.linalg.solve(sigma, Phi.T @ y), atol=0.03)
    np.testing.assert_allclose(np.cov(samples.T), lam * np.linalg.inv(sigma), atol=0.03)


# --- sub-regions, assignment, weights (§3.2, App. B) -----------------------------------------

def test_regions_match_the_papers_boxes():
    expected = [[[0, .5], [0, .5]], [[0, .5], [.5, 1]], [[.5, 1], [0, .5]], [[.5, 1], [.5, 1]]]
    np.testing.assert_array_equal(make_regions(2, 4), expected)  # App. B.2.1, D = 2
    np.testing.assert_array_equal(make_regions(3, 4)[:, 2], [[0, 1]] * 4)  # D = 3: third dim whole
    np.testing.assert_allclose(make_regions(1, 3)[:, 0], [[0, 1 / 3], [1 / 3, 2 / 3], [2 / 3, 1]])
    for d, P in [(2, 6), (3, 12), (2, 5), (1, 1)]:
        boxes = make_regions(d, P)
        assert boxes.shape == (P, d, 2)
        np.testing.assert_allclose(np.prod(boxes[:, :, 1] - boxes[:, :, 0], axis=1), 1 / P)
        X = rng().random((2000, d))
        counts = np.bincount(region_index(X, boxes), minlength=P)
        assert counts.min() > 2000 / P * 0.7  # every box is hit: they cover the cube


def test_region_of_a_point_on_a_shared_face_is_the_lowest_index():
    boxes = make_regions(2, 4)
    np.testing.assert_array_equal(region_index([[0.5, 0.5], [0.2, 0.7], [0.7, 0.2], [1, 1], [0, 0]], boxes),
                                  [0, 1, 2, 3, 0])


def test_assignment_is_round_robin():
    a = assign_regions(29, 4)
    assert list(np.bincount(a)) == [8, 7, 7, 7]
    assert list(a[:6]) == [0, 1, 2, 3, 0, 1]


def test_weight_schedule_real_world():
    a = [weight_exponent(k) for k in range(45)]
    assert a[:11] == [16.0] * 11  # rounds 0..9 constant, round 10 is linspace(16, 1, 30)[0]
    assert a[11] == pytest.approx(16 - 15 / 29)
    assert a[38] == pytest.approx(1 + 15 / 29)
    assert a[39:] == [1.0] * 6


def test_weight_schedule_synthetic():
    a = [weight_exponent(t, constant_rounds=6, decay_rounds=5) for t in range(13)]
    assert a == pytest.approx([16] * 7 + [12.25, 8.5, 4.75, 1, 1, 1])


def test_weights_rows_sum_to_one_and_follow_the_papers_softmax():
    assignment = assign_regions(29, 4)
    for a_t in (16.0, 8.5, 1.0 + 1e-9):
        w = region_weights(assignment, 4, a_t)
        assert w.shape == (4, 29)
        np.testing.assert_allclose(w.sum(axis=1), 1.0)
        T = 15 / (a_t - 1)  # App. B: phi = softmax((a I + 1) / T), T = a / (a_t - 1)
        logits = (15 * (assignment[None, :] == np.arange(4)[:, None]) + 1) / T
        paper = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        np.testing.assert_allclose(w, paper, rtol=1e-10)
    w = region_weights(assignment, 4, 16.0)
    assert w[0, 0] / w[0, 1] == pytest.approx(np.exp(15))  # assigned vs not: exp(a_t - 1)
    assert w[0, assignment == 0].sum() > 0.9999  # at a_t = 16 the assigned parties hold the weight
    np.testing.assert_allclose(region_weights(assignment, 4, weight_exponent(39)), 1 / 29)


def test_p_schedule():
    assert [local_probability(j) for j in (1, 2, 3, 4)] == pytest.approx([0, 1 / 2, 2 / 3, 3 / 4])
    assert [local_probability(j, "1/sqrt(t)") for j in (1, 4)] == pytest.approx([0, 1 / 2])
    assert local_probability(7, lambda j: 1.0) == 1.0


# --- the server's mechanism (Algo. 1 l.5-11) --------------------------------------------------

def _party_vectors(n=29, m=100, seed=0):
    return rng(seed).standard_normal((n, m)) * np.linspace(1, 20, n)[:, None] / 10


def test_clipping_bound_and_unbiased_weighted_sum():
    omegas = _party_vectors()
    w = region_weights(assign_regions(29, 4), 4, 8.0)
    S, q = 22.0, 0.35
    rel = private_aggregate(omegas, np.ones(29, bool), w, rng(3), sampling_rate=q, clip=S, noise_multiplier=0.0)
    bound = S / np.sqrt(4)
    norms = np.linalg.norm(omegas, axis=1)
    np.testing.assert_array_equal(rel.clipped, rel.selected & (norms > bound))
    assert 0 < rel.clipped.sum() < rel.selected.sum()
    clipped = omegas / np.maximum(1, norms / bound)[:, None]
    assert np.all(np.linalg.norm(clipped, axis=1) <= bound + 1e-9)
    expected = (w[:, rel.selected] / q) @ clipped[rel.selected]  # divided by q, not by |S_t|
    np.testing.assert_allclose(rel.omega, expected)


def test_noise_std_per_region_is_z_max_weight_S_over_q():
    w = region_weights(assign_regions(29, 4), 4, 16.0)
    S, q, z = 22.0, 0.35, 1.6
    absent = np.zeros(29, bool)  # nobody replied: the release is the noise alone
    rel = private_aggregate(np.zeros((29, 20000)), absent, w, rng(4), sampling_rate=q, clip=S, noise_multiplier=z)
    expected = z * w.max(axis=1) * S / q
    np.testing.assert_allclose(rel.noise_std, expected)
    np.testing.assert_allclose(rel.omega.std(axis=1), expected, rtol=0.03)
    assert np.all(np.abs(rel.omega.mean(axis=1)) < 0.05 * expected)
    assert not rel.selected.any()


def test_empty_subsample_is_pure_noise():
    omegas = np.full((3, 5000), 100.0)
    w = region_weights(assign_regions(3, 1), 1, 1.0)
    rel = private_aggregate(omegas, np.ones(3, bool), w, rng(0), sampling_rate=1e-9, clip=1.0, noise_multiplier=1.0)
    assert not rel.selected.any()
    assert abs(rel.omega.mean()) < 0.1 * rel.noise_std[0]  # no trace of the parties' 100s
    assert rel.omega.std() == pytest.approx(1.0 / 3 * 1.0 / 1e-9, rel=0.05)


def test_poisson_subsampling_rate_and_unbiasedness():
    omegas = _party_vectors(n=10, m=8) / 10  # nothing clipped at S = 22
    w = region_weights(assign_regions(10, 2), 2, 4.0)
    q = 0.3
    releases = [private_aggregate(omegas, np.ones(10, bool), w, rng(s), sampling_rate=q, clip=22.0,
                                  noise_multiplier=0.0) for s in range(4000)]
    assert np.mean([r.selected.mean() for r in releases]) == pytest.approx(q, abs=0.01)
    mean = np.mean([r.omega for r in releases], axis=0)
    np.testing.assert_allclose(mean, w @ omegas, atol=0.05)


def test_subsample_draws_do_not_depend_on_who_replied():
    omegas = _party_vectors(n=10, m=8)
    w = region_weights(assign_regions(10, 2), 2, 4.0)
    present = np.ones(10, bool)
    present[[2, 5]] = False
    a = private_aggregate(omegas, np.ones(10, bool), w, rng(1), sampling_rate=0.5, clip=22.0, noise_multiplier=1.0)
    b = private_aggregate(omegas, present, w, rng(1), sampling_rate=0.5, clip=22.0, noise_multiplier=1.0)
    np.testing.assert_array_equal(b.selected, a.selected & present)


def test_plain_aggregate_is_the_weighted_sum():
    omegas = _party_vectors(n=6, m=5)
    w = region_weights(assign_regions(6, 2), 2, 16.0)
    rel = plain_aggregate(omegas, np.ones(6, bool), w)
    np.testing.assert_allclose(rel.omega, w @ omegas)  # no clipping, no /q, no noise
    assert rel.selected.all() and not rel.clipped.any() and not rel.noise_std.any()
    present = np.array([True, False, True, True, True, True])
    rel = plain_aggregate(omegas, present, w)
    w2 = w * present
    np.testing.assert_allclose(rel.omega, (w2 / w2.sum(axis=1, keepdims=True)) @ omegas)


# --- acquisition and the party's step (Algo. 2) ----------------------------------------------

def test_maximise_finds_the_maximum_of_a_smooth_function():
    f = FourierFeatures.draw(50, 2, 0.3, rng())
    func = LinearFunction(f, rng(1).standard_normal(50))
    grid = np.stack(np.meshgrid(np.linspace(0, 1, 301), np.linspace(0, 1, 301)), -1).reshape(-1, 2)
    x = maximise(func, 2, rng(2))
    assert func(x)[0] >= func(grid).max() - 1e-6
    assert np.all((x >= 0) & (x <= 1))


def test_piecewise_function_uses_each_regions_vector():
    f = FourierFeatures.draw(30, 2, 0.2, rng())
    regions = make_regions(2, 4)
    omega = rng(1).standard_normal((4, 30))
    func = PiecewiseFunction(f, omega, regions)
    X = rng(2).random((50, 2))
    idx = region_index(X, regions)
    np.testing.assert_allclose(func(X), [(f(x) @ omega[i])[0] for x, i in zip(X, idx)], atol=1e-12)
    value, grad = func.value_and_grad(X[0])
    assert value == pytest.approx(func(X[:1])[0])


def _history(n=12, seed=0):
    X = rng(seed).random((n, 2))
    return X, np.exp(-np.sum((X - 0.3) ** 2, axis=1) / 0.1)


def test_choose_point_with_p_one_never_reads_the_broadcast():
    X, y = _history()
    f = FourierFeatures.draw(100, 2, 0.01, rng())
    nan = np.full((4, 100), np.nan)
    x, local, kernel = choose_point(X, y, rng(1), p=1.0, features=f, omega_joint=nan, regions=make_regions(2, 4),
                                    kernel=None, n_candidates=200, n_restarts=3)
    assert local and np.all(np.isfinite(x)) and kernel.n_observations == 12


def test_choose_point_with_p_zero_maximises_the_broadcast():
    X, y = _history()
    f = FourierFeatures.draw(100, 2, 0.2, rng())
    regions = make_regions(2, 4)
    omega = rng(1).standard_normal((4, 100))
    x, local, kernel = choose_point(X, y, rng(2), p=0.0, features=f, omega_joint=omega, regions=regions,
                                    kernel=None, n_candidates=500, n_restarts=5)
    assert not local and kernel is None
    func = PiecewiseFunction(f, omega, regions)
    assert func(x)[0] >= func(rng(3).random((5000, 2))).max() - 1e-6


def test_choose_point_is_seeded():
    X, y = _history()
    f = FourierFeatures.draw(100, 2, 0.01, rng())
    omega = rng(1).standard_normal((4, 100))
    kw = dict(features=f, omega_joint=omega, regions=make_regions(2, 4), kernel=None, n_candidates=100, n_restarts=2)
    for p in (0.0, 1.0):
        a = choose_point(X, y, rng(7), p=p, **kw)
        b = choose_point(X, y, rng(7), p=p, **kw)
        np.testing.assert_array_equal(a[0], b[0])
        assert a[1:] == b[1:]
    assert not np.array_equal(choose_point(X, y, rng(8), p=0.0, **kw)[0], a[0])


def test_a_repeated_query_is_replaced_by_a_random_point():
    X, y = _history()
    calls = []

    def canonical(x):  # the first (optimised) point snaps onto an earlier query
        calls.append(x)
        return X[3].copy() if len(calls) == 1 else x

    f = FourierFeatures.draw(100, 2, 0.01, rng())
    x, _, _ = choose_point(X, y, rng(1), p=0.0, features=f, omega_joint=rng(2).standard_normal((4, 100)),
                           regions=make_regions(2, 4), kernel=None, n_candidates=50, n_restarts=1,
                           canonical=canonical)
    assert len(calls) == 2
    assert not np.any(np.all(X == x, axis=1))


def test_kernel_refit_every_five_observations():
    assert needs_refit(None, 10)
    k = KernelFit(0.2, 0.5, 1e-4, n_observations=10)
    assert [needs_refit(k, n) for n in (10, 11, 14, 15, 16)] == [False, False, False, True, True]


def test_failed_scores_count_as_the_worst_seen():
    np.testing.assert_array_equal(usable_scores([0.7, np.nan, 0.9]), [0.7, 0.7, 0.9])
    np.testing.assert_array_equal(usable_scores([np.nan]), [0.0])


def test_own_gp_fit_reaches_scikit_learns_optimum():
    X, y = _history(n=25, seed=3)
    y = y + 0.05 * rng(4).standard_normal(25)
    sq = np.sum((X[:, None] - X[None]) ** 2, axis=2)
    theta = np.log([0.3, 0.5, 0.01])
    assert check_grad(lambda t: _neg_log_marginal_likelihood(t, sq, y)[0],
                      lambda t: _neg_log_marginal_likelihood(t, sq, y)[1], theta) < 1e-4
    k = fit_kernel(X, y, rng(5))
    gp = GaussianProcessRegressor(ConstantKernel(0.1, (1e-3, 1e3)) * RBF(1.0, (1e-3, 1e3))
                                  + WhiteKernel(1e-6, (1e-9, 1.0)), n_restarts_optimizer=10, random_state=0).fit(X, y)
    ours = _neg_log_marginal_likelihood(np.log([k.length_scale, k.variance, k.noise]), sq, y)[0]
    assert ours <= -gp.log_marginal_likelihood_value_ + 1e-6


def test_random_server_branch_ignores_the_broadcast():
    X, y = _history()
    f = FourierFeatures.draw(100, 2, 0.01, rng())
    nan = np.full((4, 100), np.nan)
    x, local, _ = choose_point(X, y, rng(1), p=0.0, features=f, omega_joint=nan, regions=make_regions(2, 4),
                               kernel=None, server_branch="random")
    r = rng(1)
    r.random()  # the coin
    assert not local
    np.testing.assert_array_equal(x, r.random(2))
