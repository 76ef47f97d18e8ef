"""The displays of fedsearch.plotting: what each one draws (the data in its artists), not pixels."""

import sys

import numpy as np
import pytest
from scipy.stats import loguniform
from sklearn.linear_model import LogisticRegression

from fedsearch import FederatedGridSearchCV, FedPNESearchCV, FLoRASearchCV

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from fedsearch.plotting import (  # noqa: E402
    LossSurfaceDisplay, PartyScoresDisplay, RegretDisplay, SearchProgressDisplay)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def parties(cancer):
    X, y = cancer
    return X[:, :6], y, np.array(["north", "south", "east"])[np.arange(len(y)) % 3]


@pytest.fixture(scope="module")
def grid(parties):
    X, y, site = parties
    return FederatedGridSearchCV(LogisticRegression(), {"C": [1e-3, 1e-2, 1e-1, 1.0]}, cv=2).fit(X, y, parties=site)


@pytest.fixture(scope="module")
def fedpne(parties):
    X, y, site = parties
    return FedPNESearchCV(LogisticRegression(), {"C": loguniform(1e-3, 1e1)}, n_iter=12, cv=2,
                          scoring="accuracy", random_state=0).fit(X, y, parties=site)


@pytest.fixture(scope="module")
def flora(parties):
    X, y, site = parties
    space = {"C": loguniform(1e-3, 1e1), "class_weight": [None, "balanced"]}
    return FLoRASearchCV(LogisticRegression(), space, n_iter=5, local_search="random", cv=2,
                         regressor=None, random_state=0).fit(X, y, parties=site)


def _columns(search, metric="score"):
    res = search.cv_results_
    return (np.asarray(res[f"mean_test_{metric}"], dtype=float),
            {pid: np.asarray(res[f"party_{pid}_test_{metric}"], dtype=float) for pid in search.party_ids_})


# --------------------------------------------------------------------------- progress
def test_progress_of_a_one_round_search(grid):
    federated, party = _columns(grid)
    display = SearchProgressDisplay.from_search(grid)
    assert display.line_.get_xdata().tolist() == [0]
    assert display.line_.get_ydata().tolist() == [federated.max()]
    assert set(display.party_lines_) == {"north", "south", "east"}
    for pid, line in display.party_lines_.items():
        assert line.get_ydata().tolist() == [party[pid].max()]
        assert line.get_label() == f"party {pid}"
    assert display.ax_.get_xlabel() == "round"
    assert display.figure_ is display.ax_.figure


def test_progress_by_evaluations_counts_every_party_evaluation(grid):
    federated, party = _columns(grid)
    display = SearchProgressDisplay.from_search(grid, x="evaluations")
    x, y = display.line_.get_xdata(), display.line_.get_ydata()
    assert x.tolist() == list(range(1, 3 * 4 + 1))  # 3 parties x 4 configurations
    # a configuration's federated score counts once its last party has evaluated it
    assert np.isnan(y[:8]).all() and np.allclose(y[8:], np.fmax.accumulate(federated))
    first, last = grid.party_ids_[0], grid.party_ids_[-1]  # parties evaluate in order
    y = display.party_lines_[first].get_ydata()
    assert np.allclose(y[:4], np.fmax.accumulate(party[first])) and np.all(y[4:] == y[3])
    assert np.isnan(display.party_lines_[last].get_ydata()[:8]).all()


def test_progress_over_rounds_is_the_running_best(fedpne):
    federated, party = _columns(fedpne)
    display = SearchProgressDisplay.from_search(fedpne)
    assert display.line_.get_xdata().tolist() == list(range(fedpne.n_rounds_)) == display.steps.tolist()
    y = display.line_.get_ydata()
    assert np.all(np.diff(y) >= 0) and y[-1] == np.nanmax(federated)
    for pid, line in display.party_lines_.items():
        assert line.get_ydata()[-1] == np.nanmax(party[pid])


def test_progress_of_flora_has_a_federated_score_only_after_validation(flora):
    display = SearchProgressDisplay.from_search(flora)
    assert display.steps.tolist() == [0, 1]
    y = display.line_.get_ydata()
    assert np.isnan(y[0]) and y[1] == pytest.approx(flora.best_score_)
    for pid, line in display.party_lines_.items():  # round 0: the best of each party's own search
        assert line.get_ydata()[0] == pytest.approx(np.nanmax(flora.local_results_[pid]["scores"]))


def test_progress_without_parties_and_on_given_axes(grid):
    fig, ax = plt.subplots()
    display = SearchProgressDisplay.from_search(grid, parties=False, ax=ax)
    assert display.ax_ is ax and display.figure_ is fig
    assert display.party_lines_ == {} and ax.get_lines() == [display.line_]
    again = display.plot()  # the same data on a new figure
    assert again.ax_ is not ax and again.line_.get_ydata().tolist() == display.best_scores.tolist()


def test_every_scored_configuration_is_placed_in_its_round(grid, fedpne, flora, parties):
    from fedsearch import LevelOrderSearchCV, PFPNESearchCV
    from fedsearch.plotting._progress import evaluations

    X, y, site = parties
    others = [cls(LogisticRegression(), {"C": loguniform(1e-3, 1e1)}, n_iter=8, cv=2, scoring="accuracy",
                  random_state=0).fit(X, y, parties=site) for cls in (LevelOrderSearchCV, PFPNESearchCV)]
    for search in [grid, fedpne, flora, *others]:
        rounds, party, rows = evaluations(search)
        assert np.all(np.diff(rounds) >= 0) and set(rounds) <= set(search.federation_log_["round"])
        for p, pid in enumerate(search.party_ids_):
            scored = np.flatnonzero(np.isfinite(search.cv_results_[f"party_{pid}_test_score"]))
            assert set(rows[party == p]) == set(scored), type(search).__name__


# --------------------------------------------------------------------------- party scores
def test_party_scores_draws_every_party_score_in_federated_order(grid):
    federated, party = _columns(grid)
    display = PartyScoresDisplay.from_search(grid)
    order = np.argsort(-federated, kind="stable")
    assert display.rows.tolist() == order.tolist()
    assert display.line_.get_xdata().tolist() == [1, 2, 3, 4]
    assert np.allclose(display.line_.get_ydata(), federated[order])
    for pid, scatter in display.scatters_.items():
        assert np.allclose(scatter.get_offsets(), np.column_stack([[1, 2, 3, 4], party[pid][order]]))
    table = np.array([party[pid][order] for pid in grid.party_ids_])
    assert np.allclose(display.disagreement, table.max(0) - table.min(0))
    segments = display.spread_.get_segments()
    assert np.allclose([s[:, 1] for s in segments], np.column_stack([table.min(0), table.max(0)]))


def test_party_scores_keeps_configurations_without_a_federated_score(flora):
    federated, party = _columns(flora)
    display = PartyScoresDisplay.from_search(flora)
    n = len(flora.cv_results_["params"])
    assert len(display.rows) == n  # every row was scored by some party
    assert display.rows[0] == flora.best_index_  # the only row every party scored comes first
    for pid, scatter in display.scatters_.items():  # a party's markers: the rows it scored
        assert len(scatter.get_offsets()) == np.isfinite(party[pid]).sum()
    assert np.isnan(display.disagreement[1:]).all()  # one party each: nothing to disagree on
    assert len(display.spread_.get_segments()) == 1


def test_metric_is_checked_and_defaults_to_refit(parties):
    X, y, site = parties
    search = FederatedGridSearchCV(LogisticRegression(), {"C": [0.01, 1.0]}, cv=2,
                                   scoring=["accuracy", "roc_auc"], refit="roc_auc").fit(X, y, parties=site)
    display = PartyScoresDisplay.from_search(search)
    assert display.metric == "roc_auc" and display.ax_.get_ylabel() == "roc_auc"
    assert SearchProgressDisplay.from_search(search, metric="accuracy").metric == "accuracy"
    with pytest.raises(ValueError, match=r"The 'metric' parameter of PartyScoresDisplay.from_search "
                                         r"must be a str among \['accuracy', 'roc_auc'\]. Got 'f1' instead."):
        PartyScoresDisplay.from_search(search, metric="f1")


# --------------------------------------------------------------------------- loss surfaces
def test_loss_surface_1d_slice_draws_each_surface_and_the_uploads(flora):
    display = LossSurfaceDisplay.from_search(flora, "C", resolution=50)
    space = flora._get_space()
    center = space.to_unit(flora.surface_params_[flora.surface])
    grid = np.linspace(0, 1, 50)
    points = np.tile(center, (50, 1))
    points[:, 0] = grid
    expected = flora.surfaces_.predict(points)
    assert set(display.lines_) == {"sgm", "sgm+u", "aplm", "mplm"}
    for s, line in display.lines_.items():
        assert np.allclose(line.get_xdata(), grid) and np.allclose(line.get_ydata(), expected[s])
        assert display.markers_[s].get_xdata()[0] == pytest.approx(space.to_unit(flora.surface_params_[s])[0])
    for pid, scatter in display.scatters_.items():
        r = flora.local_results_[pid]
        assert np.allclose(scatter.get_offsets(), np.column_stack([r["points"][:, 0], r["losses"]]))
    labels = [t.get_text() for t in display.ax_.get_xticklabels()]
    assert labels[0] == "0.001" and labels[-1] == "10"  # the unit axis, labelled in values of C
    assert display.ax_.get_xlabel() == "C" and display.contour_ is None


def test_loss_surface_2d_slice_of_one_surface(flora):
    fig, ax = plt.subplots()
    display = LossSurfaceDisplay.from_search(flora, ["C", "class_weight"], surfaces="mplm", resolution=7, ax=ax)
    assert display.ax_ is ax and display.contour_ is not None and display.colorbar_ is not None
    assert display.values["mplm"].shape == (7, 7) and set(display.markers_) == {"mplm"}
    for pid, scatter in display.scatters_.items():
        assert np.allclose(scatter.get_offsets(), flora.local_results_[pid]["points"][:, :2])
    assert [t.get_text() for t in ax.get_yticklabels()] == ["None", "balanced"]
    # the default 2-D surface is the search's own
    assert set(LossSurfaceDisplay.from_search(flora, ["class_weight", "C"], resolution=5).values) == {"aplm"}


@pytest.mark.parametrize("kwargs, match", [
    ({"params": "gamma"}, r"The 'params' parameter .* must be one or two distinct names among \['C', 'class_weight'\]"),
    ({"params": ["C", "C"]}, r"one or two distinct names"),
    ({"params": ["C", "class_weight"], "surfaces": ["sgm", "aplm"]}, r"The 'surfaces' parameter .* must be one of"),
    ({"surfaces": "best"}, r"must be some of \['sgm', 'sgm\+u', 'aplm', 'mplm'\]. Got \['best'\] instead"),
])
def test_loss_surface_rejects_bad_slices(flora, kwargs, match):
    with pytest.raises(ValueError, match=match):
        LossSurfaceDisplay.from_search(flora, **kwargs)


def test_loss_surface_needs_flora(grid):
    with pytest.raises(ValueError, match="needs a fitted FLoRASearchCV .* Got FederatedGridSearchCV"):
        LossSurfaceDisplay.from_search(grid)


# --------------------------------------------------------------------------- regret
@pytest.fixture(scope="module")
def traces():
    from fedsearch.research.simulate import simulate
    from fedsearch.research.synthetic import garland, make_parties

    parties = make_parties(garland(), n_parties=3, kind="perturb", random_state=0)
    return {name: simulate(name, parties, n_iter=40, random_state=0) for name in ("random", "fedpne")}


def test_regret_draws_one_labelled_curve_per_trace(traces):
    display = RegretDisplay.from_trace(traces)
    assert list(display.lines_) == ["random", "fedpne"]
    for name, line in display.lines_.items():
        assert line.get_xdata().tolist() == list(range(1, 41))
        assert np.allclose(line.get_ydata(), traces[name].cumulative_regret(curve=True))
        assert line.get_label() == name
    assert [t.get_text() for t in display.ax_.get_legend().get_texts()] == ["random", "fedpne"]


def test_regret_adds_runs_to_an_axes_and_measures_local_regret(traces):
    first = RegretDisplay.from_trace(traces["random"], name="random", kind="local")
    second = RegretDisplay.from_trace(traces["fedpne"], name="fedpne", kind="local", ax=first.ax_)
    assert len(first.ax_.get_lines()) == 2 and second.figure_ is first.figure_
    assert np.allclose(second.lines_["fedpne"].get_ydata(), traces["fedpne"].cumulative_regret("local", curve=True))
    unnamed = RegretDisplay.from_trace(traces["random"])
    assert unnamed.ax_.get_legend() is None
    with pytest.raises(ValueError, match="Give 'name' for a single trace only"):
        RegretDisplay.from_trace(traces, name="both")
    with pytest.raises(ValueError, match=r"The 'kind' parameter of RegretDisplay must be a str among"):
        RegretDisplay({"a": [1.0]}, kind="simple")


# --------------------------------------------------------------------------- the optional extra
def test_missing_matplotlib_names_the_plot_extra(grid, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"fedsearch.plotting needs the optional package 'matplotlib': "
                                          r"pip install 'fedsearch\[plot\]'"):
        SearchProgressDisplay.from_search(grid)
