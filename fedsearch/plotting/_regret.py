"""Cumulative regret curves of simulated runs, as the bandit papers plot them."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ._base import axes

__all__ = ["RegretDisplay"]

_YLABELS = {"global": "average cumulative regret (global objective)",
            "local": "average cumulative regret (each party's own objective)"}


class RegretDisplay:
    """Average per-party cumulative regret after each evaluation, one curve per run.

    The regret of a pull is the gap between the objective's maximum and its value at the pulled
    point; the curve at ``t`` is the sum over a party's first ``t`` pulls, averaged over the
    parties (Fed-PNE Sec. 2.1 on the global objective, PF-PNE Sec. 2.2 on each party's own).
    A curve that flattens has stopped losing: the run has found the optimum's region.

    Build it with :meth:`from_trace`; the constructor takes the curves themselves.

    Parameters
    ----------
    curves : dict of str to array-like of shape (n_iter,)
        The cumulative regret after each pull index ``t = 1 .. n_iter``, by label.
    kind : {"global", "local"}, default="global"
        The objective the regret is measured on (the y-axis label).

    Attributes
    ----------
    lines_ : dict of str to matplotlib Line2D
        Each curve, by label.
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from fedsearch.plotting import RegretDisplay
    >>> from fedsearch.research.simulate import simulate
    >>> from fedsearch.research.synthetic import garland, make_parties
    >>> parties = make_parties(garland(), n_parties=4, kind="perturb", random_state=0)
    >>> traces = {name: simulate(name, parties, n_iter=64, random_state=0)
    ...           for name in ("random", "fedpne")}
    >>> display = RegretDisplay.from_trace(traces)
    >>> sorted(display.lines_), len(display.lines_["fedpne"].get_ydata())
    (['fedpne', 'random'], 64)
    >>> plt.close(display.figure_)
    """

    def __init__(self, curves, *, kind="global"):
        if kind not in _YLABELS:
            raise ValueError(f"The 'kind' parameter of RegretDisplay must be a str among {list(_YLABELS)}. "
                             f"Got {kind!r} instead.")
        self.curves = {str(label): np.asarray(c, dtype=float) for label, c in curves.items()}
        self.kind = kind

    @classmethod
    def from_trace(cls, trace, *, name=None, kind="global", ax=None):
        """Plot the cumulative regret of simulated runs.

        Parameters
        ----------
        trace : Trace or dict of str to Trace
            What :func:`~fedsearch.research.simulate.simulate` returned (on parties with a known
            objective), or several such traces by label.
        name : str or None, default=None
            The label of a single trace (None: no label). To add a run to an existing plot,
            pass its Axes as ``ax`` with a ``name``.
        kind : {"global", "local"}, default="global"
            Regret on the global objective (the mean of the parties' objectives) or on each
            party's own (PF-PNE's personalised measure).
        ax : matplotlib Axes or None, default=None
            Where to draw (None: a new figure).

        Returns
        -------
        RegretDisplay
        """
        if isinstance(trace, Mapping):
            if name is not None:
                raise ValueError("Give 'name' for a single trace only; a dict of traces is labelled by its keys.")
            traces = trace
        else:
            traces = {"" if name is None else name: trace}
        return cls({label: t.cumulative_regret(kind, curve=True) for label, t in traces.items()},
                   kind=kind).plot(ax=ax)

    def plot(self, ax=None):
        """Draw the curves.

        Parameters
        ----------
        ax : matplotlib Axes or None, default=None
            Where to draw (None: a new figure).

        Returns
        -------
        self
        """
        self.ax_, self.figure_ = axes(ax)
        self.lines_ = {}
        for label, curve in self.curves.items():
            (self.lines_[label],) = self.ax_.plot(np.arange(1, len(curve) + 1), curve,
                                                  label=label or None)
        self.ax_.set(xlabel="evaluations per party", ylabel=_YLABELS[self.kind])
        if any(self.ax_.get_legend_handles_labels()[1]):
            self.ax_.legend(loc="upper left")
        return self
