"""Every configuration's score in every party: where the parties agree, and where they do not."""

from __future__ import annotations

import numpy as np

from ._base import axes, check_metric, party_scores, ticker

__all__ = ["PartyScoresDisplay"]


class PartyScoresDisplay:
    """Each party's CV score of every configuration, next to the federation's.

    One column per configuration, ordered by federated score (best first; configurations
    without one, such as FLoRA's local-search uploads, last, by their parties' mean score). A
    marker per party shows its own mean CV score; a grey bar spans the lowest to the highest
    party score, so long bars are the configurations the parties disagree on; a black line is
    the federated score (``mean_test_<metric>``, following the search's ``aggregate``).

    Build it with :meth:`from_search`; the constructor takes the scores themselves.

    Parameters
    ----------
    party_scores : dict of party id to array-like of shape (n_configurations,)
        Each party's score of each configuration, in display order (NaN: not evaluated).
    federated_scores : array-like of shape (n_configurations,)
        The federation's score of each configuration (NaN where it has none).
    rows : array-like of int of shape (n_configurations,) or None, default=None
        The row of ``cv_results_`` behind each column.
    metric : str, default="score"
        The metric's name (the y-axis label).

    Attributes
    ----------
    disagreement : ndarray of shape (n_configurations,)
        Highest minus lowest party score of each configuration (NaN with fewer than two).
    scatters_ : dict of party id to matplotlib PathCollection
        Each party's scores (only the configurations it evaluated).
    spread_ : matplotlib LineCollection
        The bars from the lowest to the highest party score.
    line_ : matplotlib Line2D
        The federated scores.
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure

    See Also
    --------
    SearchProgressDisplay : the best scores so far, by round.

    Examples
    --------
    >>> import numpy as np
    >>> import matplotlib.pyplot as plt
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from fedsearch import FederatedGridSearchCV
    >>> from fedsearch.plotting import PartyScoresDisplay
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> search = FederatedGridSearchCV(GaussianNB(), {"var_smoothing": [1e-1, 1e-3, 1e-9]},
    ...                                cv=2).fit(X[:, :5], y, parties=np.arange(len(y)) % 3)
    >>> display = PartyScoresDisplay.from_search(search)
    >>> len(display.line_.get_xdata()), sorted(display.scatters_)
    (3, [0, 1, 2])
    >>> [search.cv_results_["params"][r]["var_smoothing"] for r in display.rows]  # best first
    [1e-09, 0.001, 0.1]
    >>> plt.close(display.figure_)
    """

    def __init__(self, party_scores, federated_scores, *, rows=None, metric="score"):
        self.party_scores = {p: np.asarray(s, dtype=float) for p, s in party_scores.items()}
        self.federated_scores = np.asarray(federated_scores, dtype=float)
        self.rows = None if rows is None else np.asarray(rows, dtype=int)
        self.metric = metric
        low, high = self._range()
        self.disagreement = high - low

    def _range(self):
        """Lowest and highest party score of each configuration (NaN with fewer than two)."""
        table = np.array(list(self.party_scores.values())).reshape(len(self.party_scores), -1)
        enough = np.sum(np.isfinite(table), axis=0) >= 2
        low, high = np.full((2, table.shape[1]), np.nan)
        low[enough], high[enough] = np.nanmin(table[:, enough], axis=0), np.nanmax(table[:, enough], axis=0)
        return low, high

    @classmethod
    def from_search(cls, search, *, metric=None, ax=None):
        """Plot every configuration a fitted search scored, party by party.

        Parameters
        ----------
        search : fitted federated search estimator
            Any fedsearch ``*SearchCV`` after ``fit``.
        metric : str or None, default=None
            The metric to plot (None: the only one, or the refit metric).
        ax : matplotlib Axes or None, default=None
            Where to draw (None: a new figure).

        Returns
        -------
        PartyScoresDisplay
        """
        metric = check_metric(search, metric, "PartyScoresDisplay.from_search")
        scores = party_scores(search, metric)
        federated = np.asarray(search.cv_results_[f"mean_test_{metric}"], dtype=float)
        scored = np.flatnonzero(np.any(np.isfinite(scores), axis=0))
        fallback = np.nanmean(scores[:, scored], axis=0)
        has = np.isfinite(federated[scored])
        # best federated first; then the configurations without one, by their parties' mean
        order = np.lexsort((-fallback, -np.where(has, federated[scored], 0.0), ~has))
        rows = scored[order]
        return cls({pid: scores[p, rows] for p, pid in enumerate(search.party_ids_)}, federated[rows],
                   rows=rows, metric=metric).plot(ax=ax)

    def plot(self, ax=None):
        """Draw the scores.

        Parameters
        ----------
        ax : matplotlib Axes or None, default=None
            Where to draw (None: a new figure).

        Returns
        -------
        self
        """
        self.ax_, self.figure_ = axes(ax)
        x = np.arange(1, len(self.federated_scores) + 1)
        low, high = self._range()
        both = np.isfinite(low)
        self.spread_ = self.ax_.vlines(x[both], low[both], high[both], color="lightgrey", linewidth=6,
                                       label="spread over parties")
        self.scatters_ = {}
        for pid, scores in self.party_scores.items():
            seen = np.isfinite(scores)
            self.scatters_[pid] = self.ax_.scatter(x[seen], scores[seen], s=20, zorder=3, label=f"party {pid}")
        (self.line_,) = self.ax_.plot(x, self.federated_scores, color="black", marker="_", markersize=12,
                                      linewidth=1, zorder=4, label="federation")
        self.ax_.set(xlabel="configuration (best federated score first)", ylabel=self.metric)
        self.ax_.xaxis.set_major_locator(ticker().MaxNLocator(integer=True))
        self.ax_.legend(loc="lower left", fontsize="small")
        return self
