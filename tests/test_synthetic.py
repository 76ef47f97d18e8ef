import numpy as np
import pytest

from fedsearch.research import synthetic
from fedsearch.federation import InProcessFederation
from fedsearch.messages import ErrorReply, EvaluateTask
from fedsearch.research.synthetic import FunctionParty, Objective, global_objective, make_parties

GRID_1D = np.linspace(0, 1, 200_001)[:, None]
_g = np.linspace(0, 1, 401)
GRID_2D = np.stack(np.meshgrid(_g, _g, indexing="ij"), axis=-1).reshape(-1, 2)
GARLAND_MAX = 4 * (np.pi / 6) * (1 - np.pi / 6)  # at the cusp x = pi/6 where sin(60 x) = 0


def test_garland_true_maximum_is_not_one():
    f = synthetic.garland()
    assert f.maximizer[0] == pytest.approx(np.pi / 6, abs=1e-12)
    assert f.maximum == pytest.approx(GARLAND_MAX, abs=1e-7)
    assert f.maximum == pytest.approx(0.99777, abs=1e-5)
    assert GRID_1D.shape[0] and f(GRID_1D).max() <= f.maximum + 1e-12


def test_numerical_maximiser_finds_garland_cusp():
    f = synthetic.garland()
    blind = Objective(f.func, 1, "garland without its closed-form maximiser")
    assert blind.maximizer[0] == pytest.approx(np.pi / 6, abs=1e-9)
    assert blind.maximum == pytest.approx(GARLAND_MAX, abs=1e-7)


@pytest.mark.parametrize("make, grid", [
    (synthetic.garland, GRID_1D), (synthetic.double_sine, GRID_1D), (synthetic.sine_product, GRID_1D),
    (synthetic.himmelblau, GRID_2D), (synthetic.ackley, GRID_2D), (lambda: synthetic.rastrigin(2), GRID_2D),
])
def test_values_in_unit_interval_and_maximum_is_attained(make, grid):
    f = make()
    values = f(grid)
    assert values.shape == (len(grid),)
    assert values.min() >= -1e-12 and values.max() <= 1 + 1e-12
    assert values.max() <= f.maximum + 1e-9
    assert f(f.maximizer)[0] == pytest.approx(f.maximum)
    assert f.maximum - values.max() < 5e-3  # the grid gets close to the true maximum


@pytest.mark.parametrize("make", [synthetic.double_sine, synthetic.himmelblau, synthetic.ackley,
                                  lambda: synthetic.rastrigin(3)])
def test_normalisation_spans_zero_to_one(make):
    f = make()
    assert f.maximum == pytest.approx(1.0, abs=1e-12)
    X = GRID_1D if f.n_dims == 1 else (GRID_2D if f.n_dims == 2 else np.random.default_rng(0).random((10**5, 3)))
    assert f(X).min() < 0.05


def test_closed_forms():
    ds = synthetic.double_sine()
    np.testing.assert_allclose(ds(np.array([[0.0], [0.5], [1.0]])), [0.0, 1.0, 0.0], atol=1e-12)
    h = synthetic.himmelblau()
    # (5, 5) is the worst point of the square (g = 890); the four minima of g are maxima of f
    minima = (np.array([[3.0, 2.0], [-2.805118, 3.131312], [-3.779310, -3.283186], [3.584428, -1.848126]]) + 5) / 10
    np.testing.assert_allclose(h(minima), 1.0, atol=1e-9)
    assert h(np.array([[1.0, 1.0]]))[0] == pytest.approx(0.0)
    r = synthetic.rastrigin(10)
    assert r.maximum == pytest.approx(1.0) and np.all(r.maximizer == 0.5)
    assert r(np.full((1, 10), 0.5))[0] == pytest.approx(1.0)
    # separable: one dimension at a time
    x = np.random.default_rng(0).random((5, 10))
    np.testing.assert_allclose(r(x), sum(p(x[:, i]) for i, p in enumerate(r.parts)))


def test_points_shape():
    f = synthetic.himmelblau()
    assert f(np.array([0.8, 0.7])).shape == (1,)
    with pytest.raises(ValueError, match=r"shape \(n, 2\)"):
        f(np.zeros((3, 3)))


@pytest.mark.parametrize("n_parties", [1, 7])
def test_perturb_is_a_consistent_centred_offset(n_parties):
    f = synthetic.garland()
    parties = make_parties(f, n_parties, kind="perturb", random_state=3)
    X = np.random.default_rng(0).random((50, 1))
    offsets = np.array([(p.objective(X) - f(X)) for p in parties])
    # one constant per party (consistent over points), unit-normal scale, summing to zero
    np.testing.assert_allclose(offsets, offsets[:, :1] * np.ones((1, 50)), atol=1e-12)
    assert offsets[:, 0].sum() == pytest.approx(0.0, abs=1e-12)
    if n_parties > 1:
        assert offsets[:, 0].std() > 0.2
    g = global_objective(parties)
    np.testing.assert_allclose(g(X), f(X), atol=1e-12)
    assert g.maximum == pytest.approx(f.maximum, abs=1e-12)
    for p, off in zip(parties, offsets[:, 0]):
        assert p.objective.maximum == pytest.approx(f.maximum + off)
        np.testing.assert_allclose(p.objective.maximizer, f.maximizer)


def test_shift_moves_each_dimension():
    f = synthetic.himmelblau()
    parties = make_parties(f, 5, kind="shift", scale=0.05, random_state=0)
    X = np.random.default_rng(1).random((100, 2))
    shifts = []
    for p in parties:
        local = p.objective
        shift = local.maximizer - f.maximizer
        shifts.append(shift)
        np.testing.assert_allclose(local(X), f(np.clip(X - shift, 0, 1)), atol=1e-12)
        assert local.maximum == pytest.approx(1.0)
        assert local(GRID_2D).min() >= 0 and local(GRID_2D).max() <= 1
    shifts = np.array(shifts)
    assert np.all(np.abs(shifts) > 0) and np.all(np.abs(shifts) < 0.25)
    assert len(np.unique(shifts[:, 0])) == 5
    g = global_objective(parties)
    np.testing.assert_allclose(g(X), np.mean([p.objective(X) for p in parties], axis=0))
    assert g(GRID_2D).max() <= g.maximum + 1e-12
    assert g.maximum - g(GRID_2D).max() < 1e-3
    assert g.maximum < 1.0  # the parties disagree on where the optimum is


def test_shifted_maximum_outside_the_cube_is_computed():
    f = synthetic.double_sine()  # maximiser 0.5
    parties = make_parties(f, 3, kind="shift", scale=2.0, random_state=0)
    for p in parties:
        values = p.objective(GRID_1D)
        assert values.max() <= p.objective.maximum + 1e-12
        assert p.objective.maximum - values.max() < 1e-3


def test_shifted_rastrigin_global_maximum_is_exact_in_10d():
    parties = make_parties(synthetic.rastrigin(10), 4, kind="shift", random_state=0)
    g = global_objective(parties)
    x = g.maximizer
    rng = np.random.default_rng(0)
    # no coordinate-wise perturbation improves on the separable maximiser
    for _ in range(20):
        y = x.copy()
        i = rng.integers(10)
        y[i] = rng.random()
        assert g(y)[0] <= g.maximum + 1e-12


def test_make_parties_is_deterministic():
    f = synthetic.garland()
    a = make_parties(f, 4, kind="shift", random_state=5)
    b = make_parties(f, 4, kind="shift", random_state=5)
    c = make_parties(f, 4, kind="shift", random_state=6)
    task = EvaluateTask(np.linspace(0, 1, 9)[:, None])
    for pa, pb in zip(a, b):
        np.testing.assert_array_equal(pa.handle(task).scores, pb.handle(task).scores)
    assert not np.array_equal(a[0].objective.maximizer, c[0].objective.maximizer)


@pytest.mark.parametrize("kwargs, match", [
    ({"kind": "swap"}, "The 'kind' parameter of make_parties"),
    ({"n_parties": 0}, "The 'n_parties' parameter of make_parties"),
])
def test_make_parties_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_parties(synthetic.garland(), **{"n_parties": 2, **kwargs})


def test_function_party_noise():
    f = synthetic.garland()
    X = np.full((20_000, 1), 0.3)
    party = FunctionParty(f, noise_std=0.1, random_state=0)
    scores = party.handle(EvaluateTask(X)).scores
    assert scores.std() == pytest.approx(0.1, rel=0.05)
    assert scores.mean() == pytest.approx(f(X[:1])[0], abs=0.005)
    party.reset(0)
    np.testing.assert_array_equal(party.handle(EvaluateTask(X)).scores, scores)
    exact = FunctionParty(f).handle(EvaluateTask(X[:3])).scores
    np.testing.assert_array_equal(exact, f(X[:3]))


def test_function_party_dp_noise_is_seeded():
    f = synthetic.garland()
    X = np.full((20_000, 1), 0.3)
    party = FunctionParty(f)
    a = party.handle(EvaluateTask(X, noise_std=0.5, seed=1)).scores
    b = party.handle(EvaluateTask(X, noise_std=0.5, seed=1)).scores
    np.testing.assert_array_equal(a, b)
    assert (a - f(X)).std() == pytest.approx(0.5, rel=0.05)


def test_function_party_rejects_bad_points():
    party = FunctionParty(synthetic.himmelblau(), party_id="p")
    for points, why in (([[0.5, 1.5]], "outside the unit cube"), ([[0.5]], "2 dimensions")):
        with pytest.raises(ValueError, match=why):
            party.units(EvaluateTask(np.array(points)))
        reply = party.handle(EvaluateTask(np.array(points)))  # what goes back: an error, as data
        assert isinstance(reply, ErrorReply) and reply.kind == "task" and reply.error.startswith("ValueError: ")
        assert why not in reply.error and why in party.errors_[-1]["message"]  # kept at the party


def test_function_parties_through_the_federation():
    parties = make_parties(synthetic.garland(), 3, noise_std=0.0, random_state=0)
    fed = InProcessFederation(parties)
    X = np.array([[0.1], [0.9]])
    replies = fed.run_round(0, {p: EvaluateTask(X) for p in range(3)})
    for p, party in enumerate(parties):
        np.testing.assert_allclose(replies[p].scores, party.objective(X))
    assert fed.n_rounds == 1 and all(b > 0 for b in fed.log()["bytes"])
