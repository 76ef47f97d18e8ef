"""The ``"ensemble"`` final model: one model per party, predictions averaged on the server."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, is_classifier
from sklearn.utils.metaestimators import available_if

__all__ = ["PartyEnsemble"]


def _members_have(attr):
    return lambda self: all(hasattr(e, attr) for e in self.estimators_)


class PartyEnsemble(BaseEstimator):
    """Models fitted by each party on its own data, averaged by party size.

    Only fitted models cross the party boundary, never data. Classifiers combine their
    probabilities over the union of the parties' classes, aligned by label: the probability of a
    class is the size-weighted mean over the parties that hold that class (a party that never saw
    a class has no opinion on it, rather than a vote of 0), and each row is then normalised to
    sum to 1; so a class held by some parties only is still predicted. Without
    ``predict_proba`` they average decision functions or votes. Regressors (and ``transform``)
    average the members' outputs by party size.

    Parameters
    ----------
    estimators : list of fitted estimators
        One per party.
    weights : array-like of shape (n_parties,)
        The parties' sample counts.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from fedsearch.searchcv.ensemble import PartyEnsemble
    >>> X = np.array([[0.], [1.], [2.], [3.]]); y = np.array([0, 0, 1, 1])
    >>> members = [LogisticRegression().fit(X[:3], y[:3]), LogisticRegression().fit(X[1:], y[1:])]
    >>> PartyEnsemble(members, [3, 3]).predict([[0.], [3.]]).tolist()
    [0, 1]
    """

    def __init__(self, estimators, weights):
        self.estimators = estimators
        self.weights = weights

    @property
    def estimators_(self):
        return self.estimators

    @property
    def _w(self) -> np.ndarray:
        w = np.asarray(self.weights, dtype=float)
        return w / w.sum()

    @property
    def _is_classifier(self) -> bool:
        return is_classifier(self.estimators[0])

    def __sklearn_tags__(self):
        tags = self.estimators[0].__sklearn_tags__()
        return tags

    @property
    def classes_(self):
        if not self._is_classifier:
            raise AttributeError("A regressor ensemble has no classes_.")
        return np.unique(np.concatenate([e.classes_ for e in self.estimators]))

    @property
    def n_features_in_(self):
        return self.estimators[0].n_features_in_

    @property
    def feature_names_in_(self):
        """The feature names the members were fitted on (when fitted on DataFrames)."""
        return self.estimators[0].feature_names_in_

    def _aligned(self, method: str, X) -> np.ndarray:
        """Weighted mean of the members' per-class outputs, aligned on the union of classes."""
        classes = self.classes_
        out = None
        for w, est in zip(self._w, self.estimators):
            values = np.asarray(getattr(est, method)(X))
            if values.ndim == 1:  # binary decision_function: the score of the positive class
                values = np.column_stack([-values, values])
            if out is None:
                out = np.zeros((values.shape[0], len(classes)))
            out[:, np.searchsorted(classes, est.classes_)] += w * values
        return out

    @available_if(_members_have("predict_proba"))
    def predict_proba(self, X):
        """Probabilities over ``classes_``: per class, the weighted mean over the parties that
        hold it; rows normalised to sum to 1."""
        classes = self.classes_
        out, held = np.zeros((0, 0)), np.zeros(len(classes))
        for w, est in zip(self._w, self.estimators):
            proba = np.asarray(est.predict_proba(X))
            if not out.size:
                out = np.zeros((proba.shape[0], len(classes)))
            cols = np.searchsorted(classes, est.classes_)
            out[:, cols] += w * proba
            held[cols] += w
        out /= held
        return out / out.sum(axis=1, keepdims=True)

    @available_if(_members_have("predict_proba"))
    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba`."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    @available_if(_members_have("transform"))
    def transform(self, X):
        """The members' transforms of ``X``, averaged by party size."""
        return sum(w * np.asarray(e.transform(X), dtype=float) for w, e in zip(self._w, self.estimators))

    @available_if(_members_have("decision_function"))
    def decision_function(self, X):
        scores = self._aligned("decision_function", X)
        return scores[:, 1] if scores.shape[1] == 2 else scores

    def predict(self, X):
        if not self._is_classifier:
            return sum(w * np.asarray(e.predict(X), dtype=float) for w, e in zip(self._w, self.estimators))
        classes = self.classes_
        if all(hasattr(e, "predict_proba") for e in self.estimators):
            return classes[np.argmax(self.predict_proba(X), axis=1)]
        votes = None
        for w, est in zip(self._w, self.estimators):
            pred = np.asarray(est.predict(X))
            if votes is None:
                votes = np.zeros((len(pred), len(classes)))
            votes[np.arange(len(pred)), np.searchsorted(classes, pred)] += w
        return classes[np.argmax(votes, axis=1)]

    def score(self, X, y, sample_weight=None):
        mixin = ClassifierMixin if self._is_classifier else RegressorMixin
        return mixin.score(self, X, y, sample_weight=sample_weight)
