"""Shared numpydoc fragments of the search estimators: one text per parameter or attribute.

An estimator's docstring names the entries it shares (``docs.params("scoring", "n_jobs")``)
instead of copying or patching text.
"""

from __future__ import annotations

import re

__all__ = ["entries", "join", "common_params", "common_attributes"]

_SEARCH_TEXT = """
    estimator : estimator object
        The base estimator (a Pipeline works; its parameters are named ``step__param``).
    param_distributions : dict, list of dicts or SearchSpace
        Lists of values or frozen ``scipy.stats`` distributions per parameter name.
"""

_PARAMS_TEXT = """
    scoring : str, callable, list, tuple, set or dict, default=None
        How each party scores a configuration in its own cross-validation, as in
        :class:`~sklearn.model_selection.GridSearchCV` (None: the estimator's ``score``).
    n_jobs : int, default=None
        Workers for the flat fan-out of each round over (party, configuration, fold); ``-1``
        uses all cores. ``joblib.parallel_config(backend=...)`` moves the work to dask or ray.
    refit : bool, str or callable, default=True
        Fit a final model with the best configuration. For multi-metric scoring, the metric that
        selects it; a callable takes ``cv_results_`` and returns ``best_index_``.
    cv : int, cross-validation generator or iterable, default=None
        Each party's own cross-validation (None: 5-fold, stratified for classifiers).
    verbose : int, default=0
        1: a line per round with the best federated score so far; 2: also a line per party
        (configurations and fits, failures); 3: also a line per configuration a party
        evaluated; above 3, joblib's progress too. For live progress bars use
        ``set_callbacks(sklearn.callback.ProgressBar())`` (scikit-learn >= 1.9).
    pre_dispatch : int or str, default="2*n_jobs"
        As in joblib's ``Parallel``.
    error_score : "raise" or float, default=np.nan
        The score, in ``cv_results_``, of a configuration whose fit fails in a party (a warning
        names the party and the error's kind); such a configuration is never recommended, and
        ``fit`` raises when no configuration succeeded in every party. ``"raise"`` raises at the
        first failure, with the party named. A failure crosses the party boundary as its kind
        and exception type only (its message may quote the party's data): the full message
        stays in the party's ``errors_`` and log unless the party shares it.
    return_train_score : bool, default=False
        Also report training scores.
    random_state : int, RandomState instance or None, default=None
        Seed of the search; the same seed gives the same ``cv_results_`` for any ``n_jobs``.
    aggregate : {"weighted", "mean", "min"}, default="weighted"
        The federation's score of a configuration from the parties' mean CV scores: weighted by
        party size, plain mean, or the worst party.
    final_fit : {"pooled", "ensemble"} or None, default="pooled"
        How the final model is trained. ``"pooled"``: one model on the union of the parties'
        data; this is possible only because the data is in one process, and emulates one
        federated training of the chosen configuration (as the FLoRA paper does): outside a
        simulation, the data would have to leave the parties. ``"ensemble"``: each party fits
        the chosen configuration on its own data and the server averages the models'
        predictions weighted by party size; only fitted models cross the boundary (a model can
        still reveal facts about its training data). None: no final model.
    checkpoint : str, path-like or None, default=None
        A JSON file where the server records every finished round (the tasks and replies; no
        pickle). Started again with the same call after being stopped, the search replays the
        recorded rounds without asking any party and goes on from the first missing one, ending
        with the results of an uninterrupted run. A checkpoint of another search (estimator,
        space, parameters, parties or seed) is refused. Needs an int ``random_state``.
"""

_ATTRIBUTES_TEXT = """
    cv_results_ : dict of ndarray
        One row per configuration, loadable by ``pandas.DataFrame``: ``params``, masked
        ``param_<name>``, ``split<k>_test_<metric>`` (every party's folds, party after party),
        ``mean_test_<metric>`` (the federation's score, see ``aggregate``),
        ``std_test_<metric>`` (the spread over all those folds: with one party, exactly
        ``GridSearchCV``'s), ``rank_test_<metric>``, ``party_<id>_test_<metric>`` (each party's
        mean CV score), ``party_<id>_std_test_<metric>`` (its spread over its own folds),
        ``std_across_parties_test_<metric>`` (the spread of the parties' means),
        ``mean_fit_time``, ``std_fit_time``, ``mean_score_time``, ``std_score_time`` (seconds
        per fold: mean and spread over the folds of every party, as ``GridSearchCV``'s),
        ``std_across_parties_fit_time``, ``std_across_parties_score_time`` (the spread of the
        parties' mean times), ``n_failed_parties``, and the ``train`` columns with
        ``return_train_score``. With one party, every column of ``GridSearchCV`` is there with
        its values.
    best_estimator_ : estimator
        The final model (see ``final_fit``); absent when ``refit=False`` or ``final_fit=None``.
    best_score_ : float
        ``mean_test_<metric>`` of the best configuration.
    best_params_ : dict
        The best configuration.
    best_index_ : int
        Its row in ``cv_results_``.
    scorer_ : callable or dict
        The scorer(s) used by the parties.
    multimetric_ : bool
        Whether several metrics were scored.
    n_splits_ : int
        Number of CV splits in each party.
    refit_time_ : float
        Seconds spent fitting the final model.
    n_parties_ : int
        Number of parties.
    party_ids_ : list
        The parties' ids, in order (the ``<id>`` of the ``party_<id>_`` columns).
    party_sizes_ : dict
        Samples per party.
    n_rounds_ : int
        Communication rounds (including the final fit for ``final_fit="ensemble"``).
    federation_log_ : dict of list
        Every message: ``round``, ``party``, ``direction``, ``message``, ``bytes``; loadable by
        ``pandas.DataFrame``.
    transcript_ : list of tuple
        The messages themselves, ``(round, party, direction, message)``: proof of what crossed
        the party boundary.
    search_time_ : float
        Seconds spent searching.
    resumed_rounds_ : list of int
        The rounds replayed from ``checkpoint`` (not sent to the parties again).
    classes_ : ndarray
        Classes of the final model (classifiers).
    n_features_in_ : int
        Number of features seen by the final model.
"""




def entries(text: str) -> dict[str, str]:
    """Split a numpydoc section into ``{name: entry}`` (an entry starts at a 4-space line)."""
    parts = re.split(r"(?m)^(?=    \S)", text.strip("\n"))
    return {part.split(" :")[0].strip(): part.rstrip() + "\n" for part in parts if part.strip()}


#: the first entries of a search's Parameters: ``estimator`` and ``param_distributions``
SEARCH = entries(_SEARCH_TEXT)
PARAMS = entries(_PARAMS_TEXT)
ATTRIBUTES = entries(_ATTRIBUTES_TEXT)

def join(fragments: dict[str, str], *names: str) -> str:
    """The entries ``names`` of ``fragments`` (made by :func:`entries`), in the order given."""
    return "".join(fragments[n] for n in names)


def common_params(exclude=()) -> str:
    """The Parameters entries every search estimator shares, but ``exclude``."""
    return "".join(text for name, text in PARAMS.items() if name not in exclude)


def common_attributes() -> str:
    """The Attributes entries every search estimator shares."""
    return "".join(ATTRIBUTES.values())
