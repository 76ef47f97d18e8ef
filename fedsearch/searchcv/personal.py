"""The personal face of a search that finds a configuration per party (PF-PNE, DP-FTS-DE)."""

from __future__ import annotations

import numpy as np
from sklearn.utils.metaestimators import available_if

from ..messages import EvaluateReply, EvaluateTask, FitTask
from ..strategy import OneRound, run_rounds
from .base import _estimator_has
from .ensemble import PartyEnsemble

__all__ = ["PersonalSearchMixin", "PERSONAL_FINAL_FITS"]

PERSONAL_FINAL_FITS = ("local", "pooled", "ensemble")


class PersonalSearchMixin:
    """``final_fit="local"``, ``best_estimators_`` and ``predict(X, party=...)`` for a search
    whose strategy recommends a configuration per party (``strategy.recommend(party=p)``)."""

    def _final_fit(self, point, space, federation, strategy):
        if self.final_fit != "local":
            return super()._final_fit(point, space, federation, strategy)
        # each party fits its own configuration on its own data: only the configuration goes over
        return self._party_models(federation, {p: FitTask(strategy.recommend(party=p))
                                               for p in range(federation.n_parties)})

    def _personal_results(self, strategy, federation, space) -> dict:
        """One validation round: every party cross-validates its own and the federation's
        configuration; ``personal_results_`` compares them."""
        party_ids = list(federation.party_ids)
        own = [strategy.recommend(party=p) for p in range(len(party_ids))]
        common = strategy.recommend()
        comparison = OneRound({p: EvaluateTask(np.vstack([own[p], common])) for p in range(len(party_ids))})
        run_rounds(comparison, federation, start=federation.next_round)
        names, _ = self._metric_names()
        results = {"party": party_ids,
                   "params_personal": [space.to_params(u) for u in own],
                   "params_global": [space.to_params(common) for _ in party_ids]}
        for name in names:
            scores = np.full((len(party_ids), 2), np.nan)
            for p, reply in comparison.replies_.items():
                if isinstance(reply, EvaluateReply) and reply.error is None and name in reply.test_scores:
                    scores[p] = reply.test_scores[name]
            results[f"personal_test_{name}"] = scores[:, 0].tolist()
            results[f"global_test_{name}"] = scores[:, 1].tolist()
            results[f"gain_test_{name}"] = (scores[:, 0] - scores[:, 1]).tolist()
        return results

    @property
    def best_estimators_(self) -> dict:
        self._check_refitted("best_estimators_")
        if not isinstance(self.best_estimator_, PartyEnsemble):
            raise AttributeError(
                f"best_estimators_ exists only when each party fitted its own model (final_fit='local' "
                f"or 'ensemble'); this {type(self).__name__} was fitted with final_fit={self.final_fit!r}.")
        return dict(zip(self.party_ids_, self.best_estimator_.estimators_))

    def _model_of(self, party, method: str):
        """The final model serving ``party`` (None: the federation's)."""
        self._check_refitted(method)
        if party is None:
            return self.best_estimator_
        models = self.best_estimators_
        if party not in models:
            raise ValueError(f"Unknown party {party!r}; the parties are {list(models)}.")
        return models[party]

    @available_if(_estimator_has("predict"))
    def predict(self, X, party=None):
        """Predict with ``party``'s own model, or with the federation's final model (party=None)."""
        return self._model_of(party, "predict").predict(X)

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X, party=None):
        """Class probabilities of ``party``'s own model, or of the federation's (party=None)."""
        return self._model_of(party, "predict_proba").predict_proba(X)

    @available_if(_estimator_has("decision_function"))
    def decision_function(self, X, party=None):
        """Decision function of ``party``'s own model, or of the federation's (party=None)."""
        return self._model_of(party, "decision_function").decision_function(X)
