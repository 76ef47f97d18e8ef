"""FLoRA's loss surfaces along a slice of the search space, with the points the parties uploaded."""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..space import Categorical
from ._base import axes, ticker

__all__ = ["LossSurfaceDisplay"]

_STYLES = {"sgm": "-", "sgm+u": ":", "aplm": "--", "mplm": "-."}


def _ticks(dimension):
    """Tick positions on the unit-cube axis of ``dimension`` and the parameter values there:
    round values, decades for a parameter on a log scale."""
    if isinstance(dimension, Categorical):
        k = len(dimension.values)
        return (np.arange(k) + 0.5) / k, [str(v) for v in dimension.values]
    low, mid, high = (dimension.to_value(u) for u in (0.0, 0.5, 1.0))
    values = []
    if low > 0 and abs(mid - np.sqrt(low * high)) < abs(mid - (low + high) / 2):  # a log scale
        values = [v for v in ticker().LogLocator(numticks=7).tick_values(low, high) if low <= v <= high]
    if len(values) < 3:  # a linear scale, or less than three decades
        values = ticker().MaxNLocator(nbins=5, integer=dimension.discrete).tick_values(low, high)
        values = [v for v in values if low <= v <= high]
    return [dimension.to_unit(v) for v in values], [f"{v:g}" for v in values]


class LossSurfaceDisplay:
    """FLoRA's loss surfaces along a 1-D or 2-D slice of the space, with the parties' uploads.

    FLoRA models the loss ``1 - score`` on the unit cube, where each parameter is on the scale
    of its distribution (a ``loguniform`` parameter on its log scale, a list of values as equal
    bins). The slice passes through the search's recommendation (the arg-min of its
    ``surface``): the shown parameters vary, the others stay at their recommended values. The
    axes are in those unit-cube coordinates, labelled with the parameter values.

    A 1-D slice draws every requested surface as a line (SGM, SGM+U, APLM, MPLM) with the
    pairs each party uploaded, ``(value, loss)``, as points. A 2-D slice draws one surface as
    filled contours with the uploaded configurations on top; give each surface its own Axes
    to compare them. A star marks each surface's arg-min (its recommendation), projected onto
    the slice; so are the uploaded points, which lie off the slice in the other parameters.

    Build it with :meth:`from_search`; the constructor takes the sliced values themselves.

    Parameters
    ----------
    grid : list of ndarray
        The unit-cube coordinates of the slice along each shown parameter (one or two arrays).
    values : dict of str to ndarray
        Each surface's predicted loss on the slice: shape ``(len(grid[0]),)`` for 1-D,
        ``(len(grid[1]), len(grid[0]))`` for 2-D.
    uploads : dict of party id to tuple of ndarray
        Each party's uploaded pairs: ``(points, losses)``, ``points`` of shape
        ``(n_pairs, len(grid))`` in the slice's coordinates.
    recommendations : dict of str to ndarray of shape (len(grid),)
        Each surface's arg-min in the slice's coordinates.
    param_names : list of str
        The shown parameters.
    ticks : list of tuple or None, default=None
        ``(positions, labels)`` of each shown parameter's axis (None: unit-cube coordinates).

    Attributes
    ----------
    lines_ : dict of str to matplotlib Line2D
        1-D: each surface's curve.
    contour_ : matplotlib QuadContourSet or None
        2-D: the surface's filled contours (None for 1-D).
    colorbar_ : matplotlib Colorbar or None
        2-D: its colour bar.
    scatters_ : dict of party id to matplotlib PathCollection
        Each party's uploaded points: ``(value, loss)`` in 1-D, ``(value 1, value 2)`` in 2-D.
    markers_ : dict of str to matplotlib Line2D
        Each surface's recommendation.
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure

    Examples
    --------
    >>> import numpy as np
    >>> import matplotlib.pyplot as plt
    >>> from scipy.stats import loguniform
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from fedsearch import FLoRASearchCV
    >>> from fedsearch.plotting import LossSurfaceDisplay
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> search = FLoRASearchCV(GaussianNB(), {"var_smoothing": loguniform(1e-9, 1e-1)},
    ...                        n_iter=4, local_search="random", cv=2, random_state=0)
    >>> search = search.fit(X[:, :5], y, parties=np.arange(len(y)) % 2)
    >>> display = LossSurfaceDisplay.from_search(search, "var_smoothing")
    >>> sorted(display.lines_)
    ['aplm', 'mplm', 'sgm', 'sgm+u']
    >>> display.scatters_[0].get_offsets().shape     # party 0's four uploaded pairs
    (4, 2)
    >>> plt.close(display.figure_)
    """

    def __init__(self, grid, values, uploads, recommendations, *, param_names, ticks=None):
        self.grid = [np.asarray(g, dtype=float) for g in grid]
        if len(self.grid) not in (1, 2):
            raise ValueError(f"A slice has one or two parameters. Got {len(self.grid)}.")
        self.values = {s: np.asarray(v, dtype=float) for s, v in values.items()}
        self.uploads = {p: (np.asarray(u, dtype=float), np.asarray(loss, dtype=float))
                        for p, (u, loss) in uploads.items()}
        self.recommendations = {s: np.asarray(r, dtype=float) for s, r in recommendations.items()}
        self.param_names = list(param_names)
        self.ticks = ticks

    @classmethod
    def from_search(cls, search, params=None, *, surfaces=None, resolution=None, ax=None):
        """Plot the loss surfaces of a fitted :class:`~fedsearch.FLoRASearchCV`.

        Parameters
        ----------
        search : fitted FLoRASearchCV
            A search with ``surfaces_``, ``surface_params_`` and ``local_results_``.
        params : str or list of str or None, default=None
            One parameter (a 1-D slice) or two (a 2-D slice); None: the first parameter.
        surfaces : str or list of str or None, default=None
            1-D: the surfaces to draw (None: all the regressor supports). 2-D: exactly one
            (None: the search's ``surface``).
        resolution : int or None, default=None
            Grid points along each shown parameter (None: 200 for 1-D, 40 for 2-D).
        ax : matplotlib Axes or None, default=None
            Where to draw (None: a new figure).

        Returns
        -------
        LossSurfaceDisplay
        """
        check_is_fitted(search, "cv_results_")
        if getattr(search, "surfaces_", None) is None:
            raise ValueError(f"LossSurfaceDisplay needs a fitted FLoRASearchCV whose loss surfaces "
                             f"were fitted (surfaces_). Got {type(search).__name__} without them.")
        space = search._get_space()
        if space.n_subspaces > 1:
            raise ValueError("LossSurfaceDisplay slices a space of one dict of parameters; this "
                             "search's space is a list of dicts.")
        names = [d.name for d in space.dimensions]
        params = names[:1] if params is None else [params] if isinstance(params, str) else list(params)
        unknown = [p for p in params if p not in names]
        if unknown or len(params) not in (1, 2) or len(set(params)) != len(params):
            raise ValueError(f"The 'params' parameter of LossSurfaceDisplay.from_search must be one or two "
                             f"distinct names among {names}. Got {params!r} instead.")
        available = list(search.surfaces_.surfaces_)
        if surfaces is None:
            surfaces = available if len(params) == 1 else [search.surface]
        surfaces = [surfaces] if isinstance(surfaces, str) else list(surfaces)
        if any(s not in available for s in surfaces) or not surfaces or (len(params) == 2 and len(surfaces) != 1):
            raise ValueError(f"The 'surfaces' parameter of LossSurfaceDisplay.from_search must be "
                             f"{'one' if len(params) == 2 else 'some'} of {available}. Got {surfaces!r} instead.")
        resolution = (200 if len(params) == 1 else 40) if resolution is None else int(resolution)

        idx = [names.index(p) for p in params]
        center = space.to_unit(search.surface_params_[search.surface])
        grid = [np.linspace(0.0, 1.0, resolution) for _ in idx]
        mesh = np.meshgrid(*grid)  # 2-D: shape (len(grid[1]), len(grid[0]))
        points = np.tile(center, (mesh[0].size, 1))
        for j, coords in zip(idx, mesh):
            points[:, j] = coords.ravel()
        predicted = search.surfaces_.predict(points, surfaces)
        values = {s: predicted[s].reshape(mesh[0].shape) for s in surfaces}
        uploads = {pid: (np.asarray(r["points"]).reshape(-1, space.n_dims)[:, idx], r["losses"])
                   for pid, r in search.local_results_.items()}
        recommendations = {s: space.to_unit(search.surface_params_[s])[idx] for s in surfaces}
        ticks = [_ticks(space.dimensions[j]) for j in idx]
        return cls(grid, values, uploads, recommendations, param_names=params, ticks=ticks).plot(ax=ax)

    def plot(self, ax=None):
        """Draw the slice.

        Parameters
        ----------
        ax : matplotlib Axes or None, default=None
            Where to draw (None: a new figure).

        Returns
        -------
        self
        """
        self.ax_, self.figure_ = axes(ax)
        self.lines_, self.markers_, self.scatters_ = {}, {}, {}
        self.contour_ = self.colorbar_ = None
        if len(self.grid) == 1:
            x = self.grid[0]
            for s, v in self.values.items():
                (self.lines_[s],) = self.ax_.plot(x, v, _STYLES.get(s, "-"), label=s.upper())
                r = self.recommendations[s][0]
                (self.markers_[s],) = self.ax_.plot([r], [np.interp(r, x, v)], "*", markersize=12,
                                                    color=self.lines_[s].get_color())
            for pid, (u, loss) in self.uploads.items():
                self.scatters_[pid] = self.ax_.scatter(u[:, 0], loss, s=15, alpha=0.7, label=f"party {pid}")
            self.ax_.set_ylabel("loss (1 - score)")
        else:
            (s, v), = self.values.items()
            self.contour_ = self.ax_.contourf(self.grid[0], self.grid[1], v, levels=15, cmap="viridis_r")
            self.colorbar_ = self.figure_.colorbar(self.contour_, ax=self.ax_, label=f"{s.upper()} loss")
            for pid, (u, _) in self.uploads.items():
                self.scatters_[pid] = self.ax_.scatter(u[:, 0], u[:, 1], s=15, edgecolors="white",
                                                       linewidths=0.5, label=f"party {pid}")
            r = self.recommendations[s]
            (self.markers_[s],) = self.ax_.plot([r[0]], [r[1]], "*", markersize=15, color="red",
                                                markeredgecolor="white", label=f"{s.upper()} arg-min")
            self.ax_.set_ylabel(self.param_names[1])
            self.ax_.set_title(s.upper())
        self.ax_.set_xlabel(self.param_names[0])
        if self.ticks is not None:
            self.ax_.set_xticks(*self.ticks[0])
            if len(self.grid) == 2:
                self.ax_.set_yticks(*self.ticks[1])
        self.ax_.legend(loc="best", fontsize="small")
        return self
