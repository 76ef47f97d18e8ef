"""The progress of a search: the best score found so far, by round or by evaluations."""

from __future__ import annotations

import numpy as np

from ._base import axes, check_metric, party_scores

__all__ = ["SearchProgressDisplay"]

_XLABELS = {"round": "round", "evaluations": "evaluations (configurations cross-validated by a party)"}


def evaluations(search):
    """Every configuration a party cross-validated, in the order of ``search.transcript_``.

    A party evaluates the points of the task it was sent in the round of its reply, or, for a
    reply that carries its own points (FLoRA's local search), the points it uploads. Points are matched to the rows of
    ``cv_results_`` by the space's cache key; evaluations outside ``cv_results_`` (PF-PNE's
    personal validation) are left out.

    Returns
    -------
    rounds, parties, rows : ndarray of int of shape (n_evaluations,)
        The round of each evaluation, the index of its party in ``party_ids_`` and its row of
        ``cv_results_``.
    """
    space = search._get_space()
    rows = {space.key(space.to_unit(params)): i for i, params in enumerate(search.cv_results_["params"])}
    party_index = {pid: i for i, pid in enumerate(search.party_ids_)}
    sent, events = {}, []
    for round_, pid, direction, message in search.transcript_:
        if direction == "to_party":
            sent[round_, pid] = message
            continue
        points = getattr(message, "points", getattr(sent.get((round_, pid)), "points", None))
        for u in () if points is None else points:
            row = rows.get(space.key(u))
            if row is not None:
                events.append((round_, party_index[pid], row))
    return tuple(np.array(column, dtype=int) for column in zip(*events)) if events else (np.zeros(0, int),) * 3


class SearchProgressDisplay:
    """The best score a federated search had found after each round, or after each evaluation.

    Draws the best federated score (``mean_test_<metric>`` of the configurations every party
    had evaluated so far) and, for each party, the best of its own CV scores so far. A party
    whose line sits far above the federation's prefers configurations the others do not.

    Build it with :meth:`from_search`; the constructor takes the curves themselves.

    Parameters
    ----------
    steps : array-like of shape (n_steps,)
        The x values: round numbers, or cumulative counts of evaluations (one configuration
        cross-validated by one party).
    best_scores : array-like of shape (n_steps,)
        The federation's best score after each step (NaN before any configuration has a
        federated score).
    party_best_scores : dict of party id to array-like of shape (n_steps,)
        Each party's best own score after each step, by party id.
    x : {"round", "evaluations"}, default="round"
        What ``steps`` counts (the x-axis label).
    metric : str, default="score"
        The metric's name (the y-axis label).

    Attributes
    ----------
    line_ : matplotlib Line2D
        The federation's best score.
    party_lines_ : dict of party id to matplotlib Line2D
        Each party's best score, by party id (empty with ``parties=False``).
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure

    See Also
    --------
    PartyScoresDisplay : every configuration's score in every party.

    Examples
    --------
    >>> import numpy as np
    >>> import matplotlib.pyplot as plt
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from fedsearch import FedPNESearchCV
    >>> from fedsearch.plotting import SearchProgressDisplay
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> search = FedPNESearchCV(GaussianNB(), {"var_smoothing": [1e-9, 1e-3, 1e-1]},
    ...                         n_iter=6, cv=2, scoring="accuracy", random_state=0)
    >>> search = search.fit(X[:, :5], y, parties=np.arange(len(y)) % 2)
    >>> display = SearchProgressDisplay.from_search(search)
    >>> display.line_.get_xdata().tolist()    # the rounds
    [0, 1]
    >>> sorted(display.party_lines_)
    [0, 1]
    >>> plt.close(display.figure_)
    """

    def __init__(self, steps, best_scores, party_best_scores, *, x="round", metric="score"):
        if x not in _XLABELS:
            raise ValueError(f"The 'x' parameter of SearchProgressDisplay must be a str among "
                             f"{list(_XLABELS)}. Got {x!r} instead.")
        self.steps = np.asarray(steps)
        self.best_scores = np.asarray(best_scores, dtype=float)
        self.party_best_scores = {p: np.asarray(s, dtype=float) for p, s in party_best_scores.items()}
        self.x = x
        self.metric = metric

    @classmethod
    def from_search(cls, search, *, x="round", metric=None, parties=True, ax=None):
        """Plot the progress of a fitted search.

        Parameters
        ----------
        search : fitted federated search estimator
            Any fedsearch ``*SearchCV`` after ``fit``.
        x : {"round", "evaluations"}, default="round"
            Progress by communication round, or by evaluations (one configuration
            cross-validated by one party, counted in the order of the transcript).
        metric : str or None, default=None
            The metric to plot (None: the only one, or the refit metric).
        parties : bool, default=True
            Also draw each party's best score.
        ax : matplotlib Axes or None, default=None
            Where to draw (None: a new figure).

        Returns
        -------
        SearchProgressDisplay
        """
        if x not in _XLABELS:
            raise ValueError(f"The 'x' parameter of SearchProgressDisplay.from_search must be a str "
                             f"among {list(_XLABELS)}. Got {x!r} instead.")
        metric = check_metric(search, metric, "SearchProgressDisplay.from_search")
        federated = np.asarray(search.cv_results_[f"mean_test_{metric}"], dtype=float)
        scores = party_scores(search, metric)
        rounds, parties_, rows = evaluations(search)
        n = len(rows)
        # a configuration's federated score is known once its last party has evaluated it
        last = np.full(len(federated), -1)
        last[rows] = np.arange(n)
        new_federated = np.full(n, np.nan)
        known = last >= 0
        new_federated[last[known]] = federated[known]
        best = np.fmax.accumulate(new_federated) if n else new_federated
        party_best = {}
        for p, pid in enumerate(search.party_ids_):
            own = np.where(parties_ == p, scores[p, rows], np.nan)
            party_best[pid] = np.fmax.accumulate(own) if n else own
        if x == "round":
            steps = np.unique(rounds)
            at = np.searchsorted(rounds, steps, side="right") - 1  # the last evaluation of each round
        else:
            steps, at = np.arange(1, n + 1), np.arange(n)
        display = cls(steps, best[at], {p: b[at] for p, b in party_best.items()}, x=x, metric=metric)
        return display.plot(ax=ax, parties=parties)

    def plot(self, ax=None, *, parties=True):
        """Draw the curves.

        Parameters
        ----------
        ax : matplotlib Axes or None, default=None
            Where to draw (None: a new figure).
        parties : bool, default=True
            Also draw each party's best score.

        Returns
        -------
        self
        """
        self.ax_, self.figure_ = axes(ax)
        marker = "o" if self.x == "round" else None
        (self.line_,) = self.ax_.plot(self.steps, self.best_scores, drawstyle="steps-post", marker=marker,
                                      color="black", linewidth=2, label="federation")
        self.party_lines_ = {}
        if parties:
            for pid, best in self.party_best_scores.items():
                (self.party_lines_[pid],) = self.ax_.plot(self.steps, best, drawstyle="steps-post",
                                                          marker=marker, alpha=0.8, label=f"party {pid}")
        self.ax_.set(xlabel=_XLABELS[self.x], ylabel=f"best {self.metric} so far")
        if self.x == "round":
            self.ax_.set_xticks(self.steps)
        self.ax_.legend(loc="lower right")
        return self
